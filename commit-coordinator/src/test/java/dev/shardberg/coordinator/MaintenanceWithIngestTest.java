package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.coordinator.maintenance.TableHealth;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Maintenance inside the job, concurrent with ingest that keeps updating and deleting, on a real
 * MiniCluster and a real table on disk: compaction (with the partitions' delete files dropped),
 * snapshot expiry and manifest rewrite commit between checkpoint commits. No restarts are allowed,
 * so any commit failure (a CommitFailedException between ingest and maintenance included) fails the
 * test. Between cycles the partitions' recent files are merged after checkpoint commits. Every
 * compaction and merge snapshot reads exactly the rows of its parent, and the table ends equal to
 * the changelog.
 */
class MaintenanceWithIngestTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  @TempDir Path warehouse;

  @Test
  void compactionBetweenCheckpointCommitsKeepsEveryRowAndDropsTheDeleteFiles() throws Exception {
    List<List<Change>> steps = updateHeavyChangelog(new Random(14), 30);
    Table table = TestTables.create(warehouse, 2);

    Configuration maintenance = new Configuration();
    // merges run only between cycles: a cycle every 3 s leaves commits between cycles even where a
    // commit takes a second (a loaded machine; with 1 s every commit began a cycle and none merged)
    maintenance.set(MaintenanceOptions.INTERVAL, Duration.ofSeconds(3));
    maintenance.set(MaintenanceOptions.COMPACTION_MERGE_MIN_FILES, 3);
    maintenance.set(MaintenanceOptions.COMPACTION_MIN_SMALL_FILES, 2);
    maintenance.set(MaintenanceOptions.COMPACTION_MAX_PARTITIONS_PER_CYCLE, 3);
    maintenance.set(MaintenanceOptions.COMPACTION_TARGET_FILE_SIZE, MemorySize.parse("1mb"));
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE, Duration.ZERO);
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST, 1000); // keep it all to check
    maintenance.set(MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS, 4);
    maintenance.set(MaintenanceOptions.ORPHAN_FILES_ENABLED, false); // TableMaintenanceTest

    Configuration config = new Configuration();
    config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.enableCheckpointing(100);
    String location = warehouse.toString();
    // Half-way, wait until a compaction that dropped delete files landed: the rest of the
    // changelog then updates and deletes rows that compaction rewrote.
    ScriptedChangelogSource.Gate compacted =
        () ->
            compactions(TestTables.load(Path.of(location))).stream()
                .anyMatch(s -> removedDeleteFiles(s) > 0);
    DataStream<RowData> changes =
        env.addSource(
                new ScriptedChangelogSource(steps, steps.size() / 2, compacted),
                "scripted changelog",
                InternalTypeInfo.of(TestTables.ROW_TYPE))
            .setParallelism(1);
    ShardbergSink.forRowData(changes)
        .tableLoader(TestTables.loader(warehouse))
        .tableName(TestTables.TABLE_NAME)
        .rowType(TestTables.ROW_TYPE)
        .equalityColumns(TestTables.EQUALITY_COLUMNS)
        .pipelineId("maintained")
        .writeParallelism(2)
        .maintenance(MaintenanceSettings.from(maintenance))
        .append();
    env.execute("maintenance with ingest");

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    assertThat(TestTables.committedCheckpoints(table)).doesNotHaveDuplicates().isSorted();
    TestTables.assertEachCommitAppliesNewSteps(table, "maintained", steps);
    List<Snapshot> compactions = compactions(table);
    assertThat(compactions).isNotEmpty();
    List<Snapshot> merges = rewrites(table, "merge");
    assertThat(merges).as("recent files merged between cycles").isNotEmpty();
    assertThat(merges)
        .as("a merge that folded equality deletes into one file for the base files")
        .anyMatch(s -> addedDeleteFiles(s) > 0 && removedDeleteFiles(s) > 1);
    assertThat(merges)
        .as("a merge after a compaction: base files from the compaction, recent ones merged")
        .anyMatch(s -> s.sequenceNumber() > compactions.get(0).sequenceNumber());
    List<Snapshot> rewrites = new ArrayList<>(compactions);
    rewrites.addAll(merges);
    for (Snapshot rewrite : rewrites) {
      assertThat(rowsAt(table, rewrite.snapshotId()))
          .as(
              "rows of %s snapshot %d against its parent",
              rewrite.summary().get(TableHealth.MAINTENANCE), rewrite.snapshotId())
          .containsExactlyInAnyOrderElementsOf(rowsAt(table, rewrite.parentId()));
    }
    Snapshot lastCompaction = compactions.get(compactions.size() - 1);
    assertThat(table.snapshot(lastCompaction.parentId()).summary())
        .as("a compaction commits between two checkpoint commits")
        .containsKey(SnapshotSummaryKeys.CHECKPOINT_ID);
  }

  /** Compaction snapshots in the current ancestry, oldest first. */
  static List<Snapshot> compactions(Table table) {
    return rewrites(table, "compaction");
  }

  /**
   * Maintenance snapshots of one kind (compaction, merge) in the current ancestry, oldest first.
   */
  static List<Snapshot> rewrites(Table table, String kind) {
    table.refresh();
    List<Snapshot> found = new ArrayList<>();
    for (Snapshot s = table.currentSnapshot();
        s != null;
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (kind.equals(s.summary().get(TableHealth.MAINTENANCE))) {
        found.add(0, s);
      }
    }
    return found;
  }

  static int removedDeleteFiles(Snapshot snapshot) {
    return Integer.parseInt(snapshot.summary().getOrDefault("removed-delete-files", "0"));
  }

  static int addedDeleteFiles(Snapshot snapshot) {
    return Integer.parseInt(snapshot.summary().getOrDefault("added-delete-files", "0"));
  }

  static Set<TestTables.Row> rowsAt(Table table, long snapshotId) {
    return TestTables.readAt(table, snapshotId);
  }

  /**
   * Inserts 3 shards x 12 ids in the first step, then updates (most), deletes and re-inserts; an
   * INSERT only ever targets a key its shard does not hold.
   */
  static List<List<Change>> updateHeavyChangelog(Random random, int stepCount) {
    Map<Long, String> nameOf = new HashMap<>();
    Map<Long, Integer> shardOf = new HashMap<>();
    List<List<Change>> steps = new ArrayList<>();
    List<Change> first = new ArrayList<>();
    for (long id = 0; id < 36; id++) {
      int shard = (int) (id % 3);
      first.add(Change.insert(shard, id, "v0"));
      nameOf.put(id, "v0");
      shardOf.put(id, shard);
    }
    steps.add(first);
    int version = 0;
    for (int s = 1; s < stepCount; s++) {
      List<Change> step = new ArrayList<>();
      for (int c = 0; c < 8; c++) {
        long id = random.nextInt(36);
        String name = "v" + (++version);
        Integer shard = shardOf.get(id);
        if (shard == null) {
          int target = (int) (id % 3);
          step.add(Change.insert(target, id, name));
          shardOf.put(id, target);
          nameOf.put(id, name);
        } else if (random.nextInt(5) == 0) {
          step.add(Change.delete(shard, id, nameOf.remove(id)));
          shardOf.remove(id);
        } else {
          step.add(Change.updateBefore(shard, id, nameOf.get(id)));
          step.add(Change.updateAfter(shard, id, name));
          nameOf.put(id, name);
        }
      }
      steps.add(step);
    }
    return steps;
  }
}
