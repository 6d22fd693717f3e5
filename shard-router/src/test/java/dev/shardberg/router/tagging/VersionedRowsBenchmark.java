package dev.shardberg.router.tagging;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * What schema evolution costs on the wire between the taggers and the writers: {@link
 * VersionedRows} (a tag per value, any arity) against Flink's {@link RowDataSerializer} (fixed
 * layout, the {@code schema.change-behavior=fail} path), serialising and deserialising the same
 * orders rows. Not a CI test (no *Test suffix): run with {@code mvn -pl shard-router -am test
 * -Dtest=VersionedRowsBenchmark -Dsurefire.failIfNoSpecifiedTests=false}. Prints ns per row and
 * bytes per row for both; asserts only that both round-trip the rows.
 */
class VersionedRowsBenchmark {
  private static final int ROWS = 200_000;
  private static final int ROUNDS = 7;

  @Test
  void versionedRowsAgainstTheFixedLayout() throws Exception {
    RowType fixed =
        RowType.of(
            new LogicalType[] {
              new IntType(false),
              new BigIntType(false),
              new IntType(),
              new VarCharType(16),
              new DecimalType(12, 2),
              new VarCharType(3),
              new VarCharType(255),
              new TimestampType(6),
              new TimestampType(6)
            });
    List<RowData> plain = new ArrayList<>(ROWS);
    List<RowData> versioned = new ArrayList<>(ROWS);
    for (int i = 0; i < ROWS; i++) {
      Object[] v = {
        i % 16,
        (long) i,
        i % 100_000,
        StringData.fromString("PAID"),
        DecimalData.fromBigDecimal(BigDecimal.valueOf(i * 7L, 2), 12, 2),
        StringData.fromString("EUR"),
        i % 3 == 0 ? null : StringData.fromString("order note " + i),
        TimestampData.fromEpochMillis(1_700_000_000_000L + i),
        TimestampData.fromEpochMillis(1_700_000_000_000L + i)
      };
      GenericRowData p = GenericRowData.ofKind(RowKind.UPDATE_AFTER, v);
      GenericRowData w = new GenericRowData(RowKind.UPDATE_AFTER, v.length + 1);
      for (int f = 0; f < v.length; f++) {
        w.setField(f, v[f]);
      }
      w.setField(v.length, 3);
      plain.add(p);
      versioned.add(w);
    }
    Result fixedLayout = measure(new RowDataSerializer(fixed), plain);
    Result tagged = measure(VersionedRows.Serializer.INSTANCE, versioned);
    System.out.printf(
        Locale.ROOT,
        "VersionedRowsBenchmark (%,d rows x %d rounds, best round): fixed layout %.0f ns/row, %.1f B/row; versioned rows %.0f ns/row,"
            + " %.1f B/row; ratio %.2fx time, %.2fx bytes%n",
        ROWS,
        ROUNDS,
        fixedLayout.nsPerRow,
        fixedLayout.bytesPerRow,
        tagged.nsPerRow,
        tagged.bytesPerRow,
        tagged.nsPerRow / fixedLayout.nsPerRow,
        tagged.bytesPerRow / fixedLayout.bytesPerRow);
  }

  record Result(double nsPerRow, double bytesPerRow) {}

  private static Result measure(TypeSerializer<RowData> serializer, List<RowData> rows)
      throws Exception {
    double best = Double.MAX_VALUE;
    long bytes = 0;
    DataOutputSerializer out = new DataOutputSerializer(64 * 1024 * 1024);
    for (int round = 0; round < ROUNDS; round++) {
      out.clear();
      long start = System.nanoTime();
      for (RowData row : rows) {
        serializer.serialize(row, out);
      }
      DataInputDeserializer in = new DataInputDeserializer(out.getSharedBuffer(), 0, out.length());
      long checksum = 0;
      for (int i = 0; i < rows.size(); i++) {
        checksum += serializer.deserialize(in).getLong(1);
      }
      long elapsed = System.nanoTime() - start;
      assertThat(checksum).isEqualTo((long) rows.size() * (rows.size() - 1) / 2);
      best = Math.min(best, elapsed / (double) rows.size());
      bytes = out.length();
    }
    return new Result(best, bytes / (double) rows.size());
  }
}
