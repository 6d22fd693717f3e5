package dev.shardberg.job.verify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;

/**
 * The row-level part of verify: key, rendering and the first differing column (per-type rendering:
 * MySqlTypeTest).
 */
class CanonicalRowTest {

  static final List<MySqlColumn> COLUMNS =
      List.of(
          MySqlColumn.of("tenant", "int", false),
          MySqlColumn.of("id", "bigint", false),
          MySqlColumn.of("price", "float", true),
          MySqlColumn.of("made", "year", true),
          MySqlColumn.of("took", "time(6)", true));
  static final TableLayout LAYOUT =
      TableLayout.derive(new ShardSchema(COLUMNS, List.of("tenant", "id")));

  private static Record record(int tenant, long id, Float price, Integer year, Long micros) {
    Record r = GenericRecord.create(LAYOUT.icebergSchema());
    r.setField(TableLayout.SHARD_COLUMN, 3);
    r.setField("tenant", tenant);
    r.setField("id", id);
    r.setField("price", price);
    r.setField("made", year);
    r.setField("took", micros);
    return r;
  }

  @Test
  void namesTheKeyAndTheFirstDifferingColumn() {
    CanonicalRow canonical =
        new CanonicalRow(LAYOUT.icebergSchema(), COLUMNS, TableLayout.SHARD_COLUMN);
    List<String> a = canonical.values(record(7, 42L, 707.14288330078125f, 0, -3_020_399_000_000L));
    List<String> b =
        canonical.values(
            record(7, 42L, Math.nextUp(707.14288330078125f), 2000, -3_020_399_000_000L));
    assertThat(canonical.key(a)).isEqualTo("tenant=7, id=42");
    assertThat(canonical.render(a))
        .isEqualTo("tenant=7, id=42, price=707.1429 (0x4430c925), made=0, took=-838:59:59.000000");
    assertThat(canonical.columnName(canonical.firstDifference(a, b))).isEqualTo("price");
    assertThat(canonical.firstDifference(a, a)).isEqualTo(-1);
    assertThat(canonical.values(record(7, 1L, null, null, null)))
        .containsExactly("7", "1", CanonicalRow.NULL, CanonicalRow.NULL, CanonicalRow.NULL);
  }

  @Test
  void aTableWhoseColumnsAreNotTheShardsIsRefused() {
    assertThatThrownBy(
            () ->
                new CanonicalRow(
                    LAYOUT.icebergSchema(), COLUMNS.subList(0, 4), TableLayout.SHARD_COLUMN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot verify table: its columns [tenant, id, price, made, took] are not the shards' columns [tenant, id, price, made]; the table and the shards differ in schema (run validate)");
  }
}
