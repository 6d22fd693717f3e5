package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.coordinator.maintenance.TableHealth;
import dev.shardberg.coordinator.maintenance.TableMaintainer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.relocated.com.google.common.util.concurrent.MoreExecutors;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A truncate of a shard's partitions in the middle of a checkpoint (a MySQL TRUNCATE TABLE of the
 * shard): the partition's committed rows and the rows written earlier in the checkpoint go, the
 * rows written after the truncate stay, other shards are untouched — also across a schema switch
 * earlier in the same checkpoint and with keys that come back after the truncate.
 */
class DeltaTaskWriterTruncateTest {
  private static final int BUCKETS = 3;

  @TempDir Path warehouse;

  @Test
  void aTruncatedShardKeepsOnlyTheRowsWrittenAfterTheTruncate() throws Exception {
    Table table = TestTables.create(warehouse, BUCKETS);
    DeltaTaskWriter.Factory factory =
        DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, Set.of(1, 2), 0, 0);
    DeltaTaskWriter first = factory.create();
    for (long id = 1; id <= 9; id++) {
      first.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, id, "old-" + id));
      first.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, id, "other-" + id));
    }
    commit(table, first.complete());
    first.close();

    DeltaTaskWriter second = factory.create();
    second.upsert(
        TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "before-truncate")); // same checkpoint, before
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 20, "before-truncate"));
    second.deleteKey(TestTables.row(RowKind.DELETE, 1, 2, null));
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 1, "other-changed"));
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
      second.truncate(PartitionKeySelector.partitionOf(table.spec(), table.schema(), 1, bucket), 1);
    }
    second.upsert(
        TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "after")); // a key that was there before
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 30, "after"));
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 30, "after-again"));
    WriteResult files = second.complete();
    assertThat(
            List.of(files.deleteFiles()).stream()
                .filter(f -> f.content() == FileContent.EQUALITY_DELETES)
                .filter(f -> f.equalityFieldIds().equals(List.of(1))))
        .as("one shard-only equality delete per truncated partition")
        .hasSize(BUCKETS);
    commit(table, files);
    second.close();

    List<String> expected =
        new ArrayList<>(
            List.of("1|1|after|null", "1|30|after-again|null", "2|1|other-changed|null"));
    for (long id = 2; id <= 9; id++) {
      expected.add("2|" + id + "|other-" + id + "|null");
    }
    assertThat(read(table)).containsExactlyInAnyOrderElementsOf(expected);

    // rows written later land normally; the truncate's deletes do not apply to them
    DeltaTaskWriter third = factory.create();
    third.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 40, "later"));
    third.deleteKey(TestTables.row(RowKind.DELETE, 1, 30, null));
    commit(table, third.complete());
    third.close();
    expected.remove("1|30|after-again|null");
    expected.add("1|40|later|null");
    assertThat(read(table)).containsExactlyInAnyOrderElementsOf(expected);
    factory.close();
  }

  @Test
  void filesClosedByASchemaSwitchEarlierInTheCheckpointAreDroppedToo() throws Exception {
    Table table = TestTables.create(warehouse, BUCKETS);
    DeltaTaskWriter.Factory factory =
        DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, Set.of(1, 2), 0, 0);
    factory = factory.forSchema(table.schema(), FlinkSchemaUtil.convert(table.schema()));
    DeltaTaskWriter writer = factory.create();
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "old-schema"));
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 1, "old-schema"));
    table.updateSchema().addColumn("extra", Types.IntegerType.get()).commit();
    table.refresh();
    Schema evolved = table.schema();
    DeltaTaskWriter.Factory newer = factory.forSchema(evolved, FlinkSchemaUtil.convert(evolved));
    writer.evolve(newer); // closes the data files of schema 0 into the writer's result
    writer.upsert(row(1, 2, "new-schema", 5));
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
      writer.truncate(PartitionKeySelector.partitionOf(table.spec(), evolved, 1, bucket), 1);
    }
    writer.upsert(row(1, 3, "after", 7));
    commit(table, writer.complete());
    writer.close();
    newer.close();

    assertThat(read(table)).containsExactlyInAnyOrder("1|3|after|7", "2|1|old-schema|null");
  }

  @Test
  void mergesOfRecentFilesAfterEachCommitKeepTheTruncateAndTheRowsAroundIt() throws Exception {
    Table table = TestTables.create(warehouse, BUCKETS);
    DeltaTaskWriter.Factory factory =
        DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, Set.of(1, 2), 0, 0);
    List<String> expected = new ArrayList<>();
    DeltaTaskWriter first = factory.create();
    for (long id = 1; id <= 9; id++) {
      first.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, id, "old-" + id));
      first.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, id, "other-" + id));
      expected.add("2|" + id + "|other-" + id + "|null");
    }
    commit(table, first.complete());
    first.close();

    DeltaTaskWriter second = factory.create(); // updates of both shards: merged after the commit
    for (long id = 1; id <= 9; id += 2) {
      second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, id, "new-" + id));
      second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, id, "other-new-" + id));
      expected.remove("2|" + id + "|other-" + id + "|null");
      expected.add("2|" + id + "|other-new-" + id + "|null");
    }
    commit(table, second.complete());
    second.close();
    for (long id = 2; id <= 9; id += 2) {
      expected.add("1|" + id + "|old-" + id + "|null");
    }
    for (long id = 1; id <= 9; id += 2) {
      expected.add("1|" + id + "|new-" + id + "|null");
    }
    assertThat(mergeNow(table)).as("both shards had recent files").isGreaterThan(0);
    assertThat(read(table)).containsExactlyInAnyOrderElementsOf(expected);

    DeltaTaskWriter third = factory.create(); // shard 1 truncated between an update and new rows
    third.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 2, "before-truncate"));
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
      third.truncate(PartitionKeySelector.partitionOf(table.spec(), table.schema(), 1, bucket), 1);
    }
    third.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 3, "after"));
    third.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 2, "other-changed"));
    commit(table, third.complete());
    third.close();
    expected.removeIf(r -> r.startsWith("1|"));
    expected.add("1|3|after|null");
    expected.remove("2|2|other-2|null");
    expected.add("2|2|other-changed|null");
    assertThat(read(table)).containsExactlyInAnyOrderElementsOf(expected);
    mergeNow(table);
    assertThat(read(table))
        .as("after the merge that met the truncate")
        .containsExactlyInAnyOrderElementsOf(expected);

    DeltaTaskWriter fourth = factory.create(); // keys back after the truncate, and a delete
    fourth.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "back"));
    fourth.deleteKey(TestTables.row(RowKind.DELETE, 1, 3, null));
    fourth.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 5, "other-again"));
    commit(table, fourth.complete());
    fourth.close();
    expected.remove("1|3|after|null");
    expected.add("1|1|back|null");
    expected.remove("2|5|other-new-5|null");
    expected.add("2|5|other-again|null");
    mergeNow(table);
    assertThat(read(table))
        .as("after the next merge")
        .containsExactlyInAnyOrderElementsOf(expected);
    factory.close();
  }

  /** One merge of the recent files, committed at once; returns the partitions merged. */
  private int mergeNow(Table table) throws Exception {
    org.apache.flink.configuration.Configuration config =
        new org.apache.flink.configuration.Configuration();
    config.set(MaintenanceOptions.INTERVAL, java.time.Duration.ofDays(1));
    config.set(MaintenanceOptions.COMPACTION_MERGE_MIN_FILES, 3);
    config.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_ENABLED, false);
    config.set(MaintenanceOptions.ORPHAN_FILES_ENABLED, false);
    try (TableMaintainer maintainer =
        new TableMaintainer(
            TestTables.loader(warehouse),
            TestTables.TABLE_NAME,
            MaintenanceSettings.from(config),
            MoreExecutors.newDirectExecutorService(),
            System::currentTimeMillis,
            new UnregisteredMetricsGroup())) {
      table.refresh();
      maintainer.afterCommits(
          table,
          NoopCommitGuard.INSTANCE,
          java.time.Duration.ofSeconds(5),
          TableMaintainer.CoordinatorView.idle());
      assertThat(
              maintainer.commitFinished(
                  table, NoopCommitGuard.INSTANCE, java.time.Duration.ofSeconds(5)))
          .isTrue();
    }
    table.refresh();
    org.apache.iceberg.Snapshot current = table.currentSnapshot();
    return "merge".equals(current.summary().get(TableHealth.MAINTENANCE))
        ? Integer.parseInt(current.summary().getOrDefault("changed-partition-count", "0"))
        : 0;
  }

  private static void commit(Table table, WriteResult files) {
    RowDelta delta = table.newRowDelta();
    List.of(files.dataFiles()).forEach(delta::addRows);
    List.of(files.deleteFiles()).forEach(delta::addDeletes);
    delta.commit();
  }

  private static GenericRowData row(int shard, long id, String name, Integer extra) {
    return GenericRowData.ofKind(
        RowKind.UPDATE_AFTER, shard, id, StringData.fromString(name), extra);
  }

  private static List<String> read(Table table) throws Exception {
    table.refresh();
    boolean extra = table.schema().findField("extra") != null;
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(
            r.getField("shard_number")
                + "|"
                + r.getField("id")
                + "|"
                + r.getField("name")
                + "|"
                + (extra ? r.getField("extra") : null));
      }
    }
    return rows;
  }
}
