package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChunkKeyColumnTest {
  static final List<MySqlColumn> COLUMNS =
      List.of(
          MySqlColumn.of("id", "bigint", false),
          MySqlColumn.of("tenant_id", "int", false),
          MySqlColumn.of("entry_id", "bigint", false));

  static ShardPlan plan(ShardSchema schema) {
    return new ShardPlan(
        Map.of("a", List.of(new ShardTable("a", "ledger", "entries_0", 0))), schema);
  }

  @Test
  void tablesWithoutPrimaryKeyAreSplitByTheBucketColumn() {
    ShardSchema noPk =
        new ShardSchema(
                COLUMNS,
                List.of("tenant_id", "entry_id"),
                "UNIQUE INDEX uq_entry (tenant_id, entry_id)",
                List.of(),
                Map.of())
            .withKeySample(Map.of("tenant_id", 3L, "entry_id", 500L));
    assertThat(MySqlSources.chunkKeyColumn(plan(noPk), TableLayout.derive(noPk)))
        .isEqualTo("entry_id");
  }

  @Test
  void tablesWithAPrimaryKeyKeepFlinkCdcsDefault() {
    ShardSchema pkBeside =
        new ShardSchema(
            COLUMNS,
            List.of("tenant_id", "entry_id"),
            "UNIQUE INDEX uq_entry (tenant_id, entry_id)",
            List.of("id"),
            Map.of());
    assertThat(MySqlSources.chunkKeyColumn(plan(pkBeside), TableLayout.derive(pkBeside))).isNull();
  }
}
