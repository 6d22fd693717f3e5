package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BucketColumnTest {
  static final ShardSchema LEDGER =
      new ShardSchema(
              List.of(
                  MySqlColumn.of("tenant_id", "int", false),
                  MySqlColumn.of("entry_id", "bigint", false)),
              List.of("tenant_id", "entry_id"))
          .withKeySample(Map.of("tenant_id", 8L, "entry_id", 30_000L));

  @Test
  void theSampleChoosesForANewTable() {
    assertThat(BucketColumn.resolve(null, LEDGER, Optional.empty()))
        .isEqualTo(
            new BucketColumn(
                "entry_id",
                "the key column with the most distinct values in a sample (tenant_id 8, entry_id 30000); set target.key-column to choose another"));
  }

  @Test
  void anExistingTableKeepsTheColumnOfItsSpec() {
    assertThat(BucketColumn.resolve(null, LEDGER, Optional.of("tenant_id")))
        .isEqualTo(new BucketColumn("tenant_id", "from the existing table's partition spec"));
  }

  @Test
  void theConfigWins() {
    assertThat(BucketColumn.resolve("tenant_id", LEDGER, Optional.of("entry_id")))
        .isEqualTo(new BucketColumn("tenant_id", "from target.key-column"));
  }

  @Test
  void aSingleKeyColumnNeedsNoSample() {
    ShardSchema orders =
        new ShardSchema(List.of(MySqlColumn.of("id", "bigint", false)), List.of("id"));
    assertThat(BucketColumn.resolve(null, orders, Optional.empty()))
        .isEqualTo(new BucketColumn("id", "the only key column"));
  }
}
