package dev.shardberg.coordinator.owner;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A key encodes the same whether it comes from a Flink row (what the writer sees) or from an
 * Iceberg record (what {@link CommittedRows} reads from the table): otherwise an owner that learned
 * a partition from the table would not find the rows' keys, and an update would leave the committed
 * copy behind.
 */
class KeyCodecTest {
  private static final Schema KEY =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.optional(3, "code", Types.StringType.get()),
          Types.NestedField.optional(4, "amount", Types.DecimalType.of(38, 10)),
          Types.NestedField.optional(5, "at", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(6, "day", Types.DateType.get()),
          Types.NestedField.optional(7, "raw", Types.BinaryType.get()));

  private final KeyCodec codec = new KeyCodec(KEY.asStruct());

  @Test
  void aKeyFromAFlinkRowAndFromAnIcebergRecordEncodeTheSame() {
    BigDecimal amount = new BigDecimal("1234567890123456789012345678.0123456789");
    LocalDateTime at = LocalDateTime.of(2026, 12, 2, 23, 59, 59, 123_456_000);
    LocalDate day = LocalDate.of(1, 1, 1);
    byte[] raw = {0, 1, (byte) 0xff};

    GenericRowData row =
        GenericRowData.of(
            7,
            Long.MAX_VALUE,
            StringData.fromString("é-key"),
            DecimalData.fromBigDecimal(amount, 38, 10),
            TimestampData.fromLocalDateTime(at),
            (int) day.toEpochDay(),
            raw);
    Record record = GenericRecord.create(KEY);
    record.set(0, 7);
    record.set(1, Long.MAX_VALUE);
    record.set(2, "é-key");
    record.set(3, amount);
    record.set(4, at);
    record.set(5, day);
    record.set(6, ByteBuffer.wrap(raw));

    String fromRow =
        codec.encode(new RowDataWrapper(FlinkSchemaUtil.convert(KEY), KEY.asStruct()).wrap(row));
    String fromRecord = codec.encode(new InternalRecordWrapper(KEY.asStruct()).wrap(record));
    assertThat(fromRow).isEqualTo(fromRecord);
  }

  @Test
  void differentKeysAndNullsEncodeDifferently() {
    Record a = GenericRecord.create(KEY);
    a.set(0, 1);
    a.set(1, 12L);
    Record b = a.copy();
    b.set(1, 1L);
    b.set(2, "2"); // "1"+"2" must not meet "12"
    Record c = a.copy();
    c.set(2, ""); // empty string is not null
    InternalRecordWrapper wrapper = new InternalRecordWrapper(KEY.asStruct());
    Set<String> encoded = new HashSet<>();
    for (Record r : List.of(a, b, c)) {
      encoded.add(codec.encode(wrapper.copyFor(r)));
    }
    assertThat(encoded).hasSize(3);
  }
}
