package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.FaultInjection.Fault;
import dev.shardberg.coordinator.FaultInjection.Point;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random failures (in a writer, between the coordinator's snapshot and the checkpoint's completion,
 * before and after the Iceberg commit, a conflict reported by the catalog, another committer
 * changing the table between the coordinator's checks and its metadata swap) under a restart
 * strategy, with insert-only initial load on (the sink's default). Whatever fails, the table must
 * end equal to the script, and no checkpoint id may be committed twice. Table maintenance runs all
 * the while (compaction, expiry, manifest rewrites; the faults hit its commits and files too):
 * every compaction snapshot still in the history reads exactly its parent's rows. Run more seeds
 * with {@code -Dfault.seeds=N}.
 */
class ShardbergSinkFaultInjectionTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  @TempDir Path warehouse;

  static Stream<Long> seeds() {
    long base = Long.getLong("fault.seed.base", 20261130L);
    return LongStream.range(0, Integer.getInteger("fault.seeds", 4)).mapToObj(i -> base + i);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void tableEqualsTheScriptWhateverFails(long seed) throws Exception {
    run(seed, DeleteMode.EQUALITY);
  }

  /**
   * The same with {@code target.delete-mode: position} on format v3: the writers own their
   * partitions (their index restored with the checkpoint the job restarts from), delete by position
   * and compact their own partitions from two files on, under the same faults; and between two
   * steps (once every earlier step is committed) another tool compacts one shard, as an external
   * compaction would: the owners of that shard read its partitions again. Also: no equality delete
   * is ever added, and each data file carries at most one deletion vector.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void tableEqualsTheScriptWhateverFailsWhenOwnersDeleteByPosition(long seed) throws Exception {
    run(seed, DeleteMode.POSITION);
  }

  private void run(long seed, DeleteMode mode) throws Exception {
    Random random = new Random(seed);
    List<List<Change>> steps = randomChangelog(random, 6);
    List<Fault> faults = randomFaults(random);
    // with deletes by position: another tool compacts one shard before a random step
    int foreignBeforeStep = mode == DeleteMode.POSITION ? 2 + random.nextInt(steps.size() - 2) : -1;
    int foreignShard = random.nextInt(4);
    FaultInjection.arm(faults);
    String context = "seed " + seed + " (delete-mode " + mode + "), faults " + faults;
    if (foreignBeforeStep >= 0) {
      context +=
          ", foreign compaction of shard " + foreignShard + " before step " + foreignBeforeStep;
    }
    System.out.println("Fault-injection run: " + context);

    Table table = TestTables.create(warehouse, 3);
    if (mode == DeleteMode.POSITION) {
      table.updateProperties().set(org.apache.iceberg.TableProperties.FORMAT_VERSION, "3").commit();
    }
    Configuration config = new Configuration();
    config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 20);
    config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.enableCheckpointing(100);
    env.getCheckpointConfig().setTolerableCheckpointFailureNumber(0);
    DataStream<RowData> changes =
        env.addSource(
                new ScriptedChangelogSource(
                    steps,
                    foreignBeforeStep,
                    new ForeignCompactionGate(warehouse.toString(), "faults", foreignShard)),
                "scripted changelog",
                InternalTypeInfo.of(TestTables.ROW_TYPE))
            .setParallelism(1);
    changes
        .addSink(new FaultInjection.SnapshotFailingSink())
        .name("snapshot failer")
        .setParallelism(1);
    ShardbergSink.forRowData(changes)
        .tableLoader(new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse)))
        .tableName(TestTables.TABLE_NAME)
        .rowType(TestTables.ROW_TYPE)
        .equalityColumns(TestTables.EQUALITY_COLUMNS)
        .pipelineId("faults")
        .writeParallelism(2)
        .insertOnlyInitialLoad(true) // the default, stated: the changelog keeps its contract
        .maintenance(MaintenanceSettings.from(maintenanceUnderFaults()))
        .deleteMode(mode)
        .append();
    env.execute("fault injection, seed " + seed);

    context += ", fired " + FaultInjection.fired();
    System.out.println("Fault-injection result: " + context);
    assertThat(FaultInjection.fired()).as("no fault fired: %s", context).isNotEmpty();
    assertThat(TestTables.read(table))
        .as("table after %s", context)
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    assertThat(TestTables.committedCheckpoints(table))
        .as("committed checkpoint ids after %s", context)
        .doesNotHaveDuplicates()
        .isSorted();
    TestTables.assertEachCommitAppliesNewSteps(table, "faults", steps);
    if (mode == DeleteMode.POSITION) {
      for (Snapshot snapshot : table.snapshots()) {
        assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
            .as("equality deletes added by snapshot %d after %s", snapshot.snapshotId(), context)
            .isEqualTo("0");
      }
      try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
          table.newScan().planFiles()) {
        for (org.apache.iceberg.FileScanTask task : tasks) {
          assertThat(task.deletes())
              .as("deletes of %s after %s", task.file().location(), context)
              .hasSizeLessThanOrEqualTo(1);
        }
      }
    }
    for (Snapshot compaction : MaintenanceWithIngestTest.compactions(table)) {
      if (compaction.parentId() != null && table.snapshot(compaction.parentId()) != null) {
        assertThat(MaintenanceWithIngestTest.rowsAt(table, compaction.snapshotId()))
            .as(
                "rows of compaction snapshot %d against its parent after %s",
                compaction.snapshotId(), context)
            .containsExactlyInAnyOrderElementsOf(
                MaintenanceWithIngestTest.rowsAt(table, compaction.parentId()));
      }
    }
  }

  /**
   * Once the pipeline has committed every step before the gated one, compacts one shard as another
   * tool would (its own Iceberg commit, no pipeline id); a commit that loses a race is tried again.
   */
  private static final class ForeignCompactionGate implements ScriptedChangelogSource.Gate {
    private static final long serialVersionUID = 1L;
    private final String warehouse;
    private final String pipelineId;
    private final int shard;
    private boolean done;

    ForeignCompactionGate(String warehouse, String pipelineId, int shard) {
      this.warehouse = warehouse;
      this.pipelineId = pipelineId;
      this.shard = shard;
    }

    @Override
    public boolean open() {
      return true;
    }

    @Override
    public boolean open(long stepsBeforeCheckpoint) {
      if (done || stepsBeforeCheckpoint < 0) {
        return true;
      }
      Table table = TestTables.load(Path.of(warehouse));
      long committed =
          PipelineProgress.read(table, pipelineId)
              .map(PipelineProgress::flinkCheckpointId)
              .orElse(-1L);
      if (committed < stepsBeforeCheckpoint) {
        return false;
      }
      try {
        // the first shard from the drawn one that holds rows
        for (int i = 0; i < 4; i++) {
          int compacted = (shard + i) % 4;
          int rows = ForeignCommits.compactShard(table, compacted);
          if (rows > 0) {
            System.out.println(
                "Foreign compaction of shard " + compacted + ": " + rows + " rows rewritten");
            break;
          }
        }
      } catch (org.apache.iceberg.exceptions.ValidationException
          | org.apache.iceberg.exceptions.CommitFailedException e) {
        return false; // raced with a commit of the pipeline: again
      }
      done = true;
      return true;
    }
  }

  /**
   * Maintenance runs beside the faults (which also hit its commits and its files): compaction and
   * expiry every 100 ms, manifests rewritten from 4 on. Orphan removal needs a listing FileIO,
   * which the faulty one is not.
   */
  private static Configuration maintenanceUnderFaults() {
    Configuration maintenance = new Configuration();
    maintenance.set(MaintenanceOptions.INTERVAL, Duration.ofMillis(100));
    maintenance.set(MaintenanceOptions.COMPACTION_MIN_SMALL_FILES, 2);
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE, Duration.ZERO);
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST, 5);
    maintenance.set(MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS, 4);
    maintenance.set(MaintenanceOptions.ORPHAN_FILES_ENABLED, false);
    return maintenance;
  }

  /**
   * Steps of valid changes on 4 shards x 8 ids: inserts, updates, deletes, moves between shards. An
   * INSERT only ever targets a key its shard does not hold, as a snapshot read or a live insert
   * does.
   */
  private static List<List<Change>> randomChangelog(Random random, int stepCount) {
    Map<Long, Integer> shardOf = new HashMap<>();
    Map<Long, String> nameOf = new HashMap<>();
    List<List<Change>> steps = new ArrayList<>();
    int version = 0;
    for (int s = 0; s < stepCount; s++) {
      List<Change> step = new ArrayList<>();
      int changes = 1 + random.nextInt(10);
      for (int c = 0; c < changes; c++) {
        long id = random.nextInt(8);
        String name = "v" + (++version);
        Integer shard = shardOf.get(id);
        if (shard == null) {
          int target = random.nextInt(4);
          step.add(Change.insert(target, id, name));
          shardOf.put(id, target);
          nameOf.put(id, name);
          continue;
        }
        switch (random.nextInt(3)) {
          case 0 -> {
            step.add(Change.updateBefore(shard, id, nameOf.get(id)));
            step.add(Change.updateAfter(shard, id, name));
            nameOf.put(id, name);
          }
          case 1 -> {
            step.add(Change.delete(shard, id, nameOf.get(id)));
            shardOf.remove(id);
            nameOf.remove(id);
          }
          default -> {
            int target = (shard + 1 + random.nextInt(3)) % 4;
            step.add(Change.delete(shard, id, nameOf.get(id)));
            step.add(Change.insert(target, id, name));
            shardOf.put(id, target);
            nameOf.put(id, name);
          }
        }
      }
      steps.add(step);
    }
    return steps;
  }

  /** Two or three faults at distinct points, early enough in the run to fire. */
  private static List<Fault> randomFaults(Random random) {
    List<Point> points =
        new ArrayList<>(
            List.of(
                Point.WRITER_FILE,
                Point.BETWEEN_SNAPSHOT_AND_COMPLETION,
                Point.BEFORE_COMMIT,
                Point.AFTER_COMMIT,
                Point.COMMIT_CONFLICT,
                Point.LANDED_BUT_REPORTED_CONFLICT,
                Point.AT_SWAP));
    java.util.Collections.shuffle(points, random);
    int count = 2 + random.nextInt(2);
    List<Fault> faults = new ArrayList<>();
    for (Point point : points.subList(0, count)) {
      int occurrence =
          switch (point) {
            case WRITER_FILE -> 1 + random.nextInt(12);
            case BETWEEN_SNAPSHOT_AND_COMPLETION -> 1 + random.nextInt(4);
            default -> 1 + random.nextInt(4);
          };
      faults.add(new Fault(point, occurrence));
    }
    return faults;
  }
}
