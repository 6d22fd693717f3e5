package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.coordinator.DeleteMode;
import dev.shardberg.job.config.ConfigException;
import dev.shardberg.job.config.ConfigLoader;
import dev.shardberg.job.config.ShardbergConfig;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code target.delete-mode} unset: deletes by position for a table the job creates, the mode an
 * existing table records ({@code shardberg.delete-mode}), deletes by key for a table without it (a
 * table an older version wrote by key must not switch by an upgrade); the mode a start writes in is
 * recorded in the table. Real Hadoop catalog tables.
 */
class DeleteModesTest {
  @TempDir Path warehouse;

  private ShardbergConfig config(String deleteMode) {
    String yaml =
        """
        pipeline:
          id: orders
        sources:
          - name: a
            host: db-a
            user: cdc
            password-env: PW_A
            server-id-range: 5400-5403
        tables:
          database-pattern: shop
          table-pattern: 'orders_(?<shard>\\d+)'
        target:
          catalog:
            type: hadoop
            warehouse: %s
          namespace: shop
          table: orders
        %s
        """
            .formatted(warehouse.toUri(), deleteMode == null ? "" : "  delete-mode: " + deleteMode);
    return ConfigLoader.parse(yaml, "test.yaml", Map.of("PW_A", "pw")::get);
  }

  private ShardbergConfig resolve(ShardbergConfig config) {
    return DeleteModes.resolve(
        config, Catalogs.loader(config.target().catalog()), Catalogs.identifier(config.target()));
  }

  private Table createTable(ShardbergConfig config, Map<String, String> properties) {
    Catalog catalog = Catalogs.open(config.target().catalog());
    try {
      Schema schema =
          new Schema(
              Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
              Types.NestedField.required(2, "id", Types.LongType.get()));
      return catalog.createTable(
          Catalogs.identifier(config.target()), schema, PartitionSpec.unpartitioned(), properties);
    } finally {
      Catalogs.close(catalog);
    }
  }

  @Test
  void aTableTheJobCreatesIsWrittenByPositionAndNothingIsWrittenBeforeItDoes() {
    ShardbergConfig unset = config(null);
    assertThat(unset.target().deleteModeSet()).isFalse();
    ShardbergConfig resolved = resolve(unset);
    assertThat(resolved.target().deleteMode()).isEqualTo(DeleteMode.POSITION);
    Catalog catalog = Catalogs.open(unset.target().catalog());
    try {
      assertThat(catalog.tableExists(TableIdentifier.of("shop", "orders"))).isFalse();
    } finally {
      Catalogs.close(catalog);
    }
  }

  @Test
  void anExistingTableWithoutTheRecordIsWrittenByKeyAndRecordsIt() {
    ShardbergConfig unset = config(null);
    Table table = createTable(unset, Map.of());
    assertThat(resolve(unset).target().deleteMode()).isEqualTo(DeleteMode.EQUALITY);
    table.refresh();
    assertThat(table.properties()).containsEntry(DeleteModes.PROPERTY, "equality");
    assertThat(resolve(unset).target().deleteMode()).isEqualTo(DeleteMode.EQUALITY);
  }

  @Test
  void anExistingTableKeepsTheModeItRecordsAndAModeSetIsRecorded() {
    ShardbergConfig unset = config(null);
    Table table = createTable(unset, Map.of(DeleteModes.PROPERTY, "position"));
    assertThat(resolve(unset).target().deleteMode()).isEqualTo(DeleteMode.POSITION);

    // an operator switches it back by key explicitly: recorded, so a later start without the key
    // stays by key
    assertThat(resolve(config("equality")).target().deleteMode()).isEqualTo(DeleteMode.EQUALITY);
    table.refresh();
    assertThat(table.properties()).containsEntry(DeleteModes.PROPERTY, "equality");
    assertThat(resolve(unset).target().deleteMode()).isEqualTo(DeleteMode.EQUALITY);
  }

  @Test
  void aRecordThatIsNoModeIsRefusedNamingTheProperty() {
    ShardbergConfig unset = config(null);
    createTable(unset, Map.of(DeleteModes.PROPERTY, "by-key"));
    assertThatThrownBy(() -> resolve(unset))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("table property shardberg.delete-mode is 'by-key'")
        .hasMessageContaining("Set target.delete-mode");
  }

  /** What the local run's console says of the mode it writes in, and why when the key is unset. */
  @Test
  void theConsoleSaysHowAStartWritesAndWhereTheModeCameFromWhenTheKeyIsUnset() {
    assertThat(DeleteModes.describe(DeleteMode.EQUALITY, false))
        .isEqualTo("updates and deletes by key (equality deletes)");
    assertThat(DeleteModes.describe(DeleteMode.POSITION, false))
        .isEqualTo("updates and deletes by position (the writers own their partitions)");
    assertThat(DeleteModes.describe(DeleteMode.POSITION, true))
        .startsWith("updates and deletes by position (the writers own their partitions); ")
        .contains("target.delete-mode unset: position for a table the job creates")
        .endsWith("(shardberg.delete-mode)");
    assertThat(DeleteModes.describe(DeleteMode.EQUALITY, true))
        .startsWith("updates and deletes by key (equality deletes); target.delete-mode unset: ")
        .contains("equality for a table written before deletes by position became the default")
        .contains("docs/owner-write-path.md");
  }

  @Test
  void anUnresolvedModeIsNeverTakenForOne() {
    assertThatThrownBy(() -> config(null).target().deleteMode())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("target.delete-mode is not set");
  }
}
