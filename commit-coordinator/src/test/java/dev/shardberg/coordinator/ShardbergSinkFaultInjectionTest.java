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
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
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
 * every compaction snapshot still in the history reads exactly its parent's rows. Between two steps
 * (once every earlier step is committed) another tool deletes about half of one shard's rows with
 * its own row-level delete (position deletes on v2, deletion vectors on v3); the model takes it as
 * a step of its own. Run more seeds with {@code -Dfault.seeds=N}.
 */
class ShardbergSinkFaultInjectionTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(3)
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
   * The same with {@code target.delete-mode: position}, on format v3 for even seeds and v2 for odd
   * ones: the writers own their partitions (their index restored with the checkpoint the job
   * restarts from), delete by position and compact their own partitions from two files on, under
   * the same faults; and between two steps (once every earlier step is committed, or, for every
   * other pair of seeds, while the steps before are in flight: their commits held back a little,
   * each commit then checked partition by partition) another tool compacts one shard, as an
   * external compaction would, and (as in both modes) another tool's row-level delete removes rows
   * of a shard: the owners of the shard read its partitions again. Also: no equality delete is ever
   * added, and each data file carries at most one delete file of the pipeline's: a deletion vector
   * on v3, a position-delete file naming it alone on v2.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void tableEqualsTheScriptWhateverFailsWhenOwnersDeleteByPosition(long seed) throws Exception {
    run(seed, DeleteMode.POSITION);
  }

  /**
   * The same with deletes by position on RocksDB (incremental checkpoints), the state backend of
   * most production clusters: the owners' index, vectors and held changes are read from RocksDB as
   * copies, so a change made to a value read from state and not written back would be lost there (a
   * row left behind at its next upsert: a duplicate) while the heap backend, which hands out its
   * own objects, would never show it. Fewer seeds in CI ({@code -Dfault.rocksdb.seeds=N} for more).
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("rocksDbSeeds")
  void tableEqualsTheScriptWhateverFailsWhenOwnersDeleteByPositionOnRocksDb(long seed)
      throws Exception {
    rocksDb = true;
    run(seed, DeleteMode.POSITION);
  }

  static Stream<Long> rocksDbSeeds() {
    long base = Long.getLong("fault.seed.base", 20261204L);
    return LongStream.range(0, Integer.getInteger("fault.rocksdb.seeds", 2))
        .mapToObj(i -> base + i);
  }

  /** Whether this run's jobs keep their state in RocksDB (else Flink's default, the heap). */
  private boolean rocksDb;

  private void run(long seed, DeleteMode mode) throws Exception {
    Random random = new Random(seed);
    List<List<Change>> steps = randomChangelog(random, 6);
    List<Fault> faults = randomFaults(random);
    // another tool deletes rows of one shard between two steps (a row-level DELETE): in the
    // model it is a step of its own, which the source emits as an empty one
    int deleteAt = 2 + random.nextInt(steps.size() - 2);
    List<Change> foreignDeletes =
        foreignDeletes(random, Change.expectedRows(steps.subList(0, deleteAt)));
    Map<Integer, ScriptedChangelogSource.Gate> gates = new HashMap<>();
    List<List<Change>> emitted = new ArrayList<>(steps);
    if (!foreignDeletes.isEmpty()) {
      steps.add(deleteAt, foreignDeletes);
      emitted.add(deleteAt, List.of());
      gates.put(deleteAt, new ForeignDeleteGate(warehouse.toString(), "faults", foreignDeletes));
    }
    // with deletes by position: another tool also compacts one shard before another step
    int foreignBeforeStep = -1;
    int foreignShard = random.nextInt(4);
    // every other pair of seeds: the compaction does not wait for the pipeline's commit of the
    // steps before, whose commits are held back a little, so it lands while the owners' changes are
    // in flight (carried over by key, the shard's next changes held until they land)
    boolean inFlight = mode == DeleteMode.POSITION && (seed / 2) % 2 == 1;
    if (mode == DeleteMode.POSITION) {
      do {
        foreignBeforeStep = 2 + random.nextInt(steps.size() - 2);
      } while (gates.containsKey(foreignBeforeStep));
      gates.put(
          foreignBeforeStep,
          new ForeignCompactionGate(warehouse.toString(), "faults", foreignShard, inFlight));
    }
    // the job is stopped with a savepoint before a random step and resumed from it with one
    // writer more (each owner's partitions move with their key groups)
    int rescaleAt;
    do {
      rescaleAt = 1 + random.nextInt(steps.size() - 1);
    } while (gates.containsKey(rescaleAt));
    String run = "seed-" + seed + "-" + mode;
    gates.put(rescaleAt, new RescaleGate(run));
    FaultInjection.arm(faults);
    if (inFlight) {
      FaultInjection.delayDataCommits(500);
    }
    // deletes by position run on format v3 (deletion vectors) for even seeds and on v2
    // (position-delete files) for odd ones: the owners compact both
    int formatVersion = mode == DeleteMode.POSITION && seed % 2 == 0 ? 3 : 2;
    String context =
        "seed "
            + seed
            + " (delete-mode "
            + mode
            + ", format v"
            + formatVersion
            + (rocksDb ? ", state on RocksDB" : "")
            + "), faults "
            + faults;
    context += ", rescaled from 2 to 3 writers before step " + rescaleAt;
    if (!foreignDeletes.isEmpty()) {
      context += ", foreign delete of " + foreignDeletes + " as step " + deleteAt;
    }
    if (foreignBeforeStep >= 0) {
      context +=
          ", foreign compaction of shard "
              + foreignShard
              + " before step "
              + foreignBeforeStep
              + (inFlight ? " while the steps before are in flight (data commits delayed)" : "");
    }
    System.out.println("Fault-injection run: " + context);

    Table table = TestTables.create(warehouse, 3);
    if (formatVersion != 2) {
      table
          .updateProperties()
          .set(org.apache.iceberg.TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
          .commit();
    }
    LogCapture owners =
        new LogCapture(PartitionOwner.class.getName(), org.apache.logging.log4j.Level.INFO);
    LogCapture commits =
        new LogCapture(CheckpointCommitter.class.getName(), org.apache.logging.log4j.Level.INFO);
    try {
      runJobs(run, context, emitted, gates, mode, rescaleAt);
    } finally {
      owners.close();
      commits.close();
    }
    System.out.println(
        "Fault-injection run: "
            + owners.lines().stream()
                .filter(l -> l.message().contains("holds the partition's next changes"))
                .count()
            + " partition wait(s) for the owners' own commit, "
            + commits.lines().stream()
                .filter(l -> l.message().contains("carried over by key"))
                .count()
            + " checkpoint(s) carried over by key");
    context += ", fired " + FaultInjection.fired();
    check(table, context, steps, mode, formatVersion, inFlight);
  }

  /** The job, stopped with a savepoint before step {@code rescaleAt} and resumed rescaled. */
  private void runJobs(
      String run,
      String context,
      List<List<Change>> emitted,
      Map<Integer, ScriptedChangelogSource.Gate> gates,
      DeleteMode mode,
      int rescaleAt)
      throws Exception {
    JobClient first =
        job(restartsAndCheckpoints(null), emitted, gates, mode, 2)
            .executeAsync("fault injection, " + run);
    while (!RescaleGate.paused(run)) {
      if (first.getJobStatus().get().isGloballyTerminalState()) {
        first.getJobExecutionResult().get(); // rethrows why it ended
        throw new AssertionError("The job ended before step " + rescaleAt + ": " + context);
      }
      Thread.sleep(20);
    }
    String savepoint = stopWithSavepoint(first, warehouse.resolve("savepoints"), context);
    RescaleGate.release(run);
    System.out.println("Rescale: stopped with savepoint " + savepoint + ", resumed with 3 writers");
    job(restartsAndCheckpoints(savepoint), emitted, gates, mode, 3)
        .execute("fault injection, " + run + ", rescaled");
  }

  /** What every run must end with, whatever failed on the way. */
  private static void check(
      Table table,
      String context,
      List<List<Change>> steps,
      DeleteMode mode,
      int formatVersion,
      boolean inFlight)
      throws Exception {
    System.out.println("Fault-injection result: " + context);
    assertThat(FaultInjection.fired()).as("no fault fired: %s", context).isNotEmpty();
    assertThat(TestTables.read(table))
        .as("table after %s", context)
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    assertThat(TestTables.committedCheckpoints(table))
        .as("committed checkpoint ids after %s", context)
        .doesNotHaveDuplicates()
        .isSorted();
    if (inFlight) {
      // a partition of the compacted shard may wait a commit or two while the others go on
      TestTables.assertEachCommitAppliesNewStepsPerPartition(table, "faults", steps);
    } else {
      TestTables.assertEachCommitAppliesNewSteps(table, "faults", steps);
    }
    if (mode == DeleteMode.POSITION) {
      for (Snapshot snapshot : table.snapshots()) {
        assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
            .as("equality deletes added by snapshot %d after %s", snapshot.snapshotId(), context)
            .isEqualTo("0");
      }
      try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
          table.newScan().planFiles()) {
        for (org.apache.iceberg.FileScanTask task : tasks) {
          // the other tool's row-level delete on v2 writes position-delete files of its own,
          // which stay until an owner merges them into its next one for the data file
          List<org.apache.iceberg.DeleteFile> owners =
              task.deletes().stream()
                  .filter(d -> !d.location().contains(ForeignCommits.FOREIGN_DELETE_PREFIX))
                  .toList();
          assertThat(owners)
              .as("deletes of %s after %s", task.file().location(), context)
              .hasSizeLessThanOrEqualTo(1)
              .allMatch(
                  d ->
                      formatVersion >= 3
                          ? org.apache.iceberg.util.ContentFileUtil.isDV(d)
                          : task.file()
                              .location()
                              .equals(
                                  org.apache.iceberg.util.ContentFileUtil
                                      .referencedDataFileLocation(d)));
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

    /** Whether to compact without waiting for the pipeline's commit of the steps before. */
    private final boolean inFlight;

    ForeignCompactionGate(String warehouse, String pipelineId, int shard, boolean inFlight) {
      this.warehouse = warehouse;
      this.pipelineId = pipelineId;
      this.shard = shard;
      this.inFlight = inFlight;
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
      if (committed < stepsBeforeCheckpoint && !inFlight) {
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
   * Stops the job with a savepoint as an operator would: again while a fault's restart makes the
   * attempt fail (a savepoint is a checkpoint: the faults hit it too).
   */
  private static String stopWithSavepoint(JobClient job, Path directory, String context)
      throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return job.stopWithSavepoint(
                false, directory.toUri().toString(), SavepointFormatType.CANONICAL)
            .get();
      } catch (java.util.concurrent.ExecutionException e) {
        // the savepoint was taken, then a fault failed the job while it stopped (e.g. the commit
        // of the savepoint's checkpoint): Flink says the savepoint is consistent; resume from it
        java.util.Optional<String> taken =
            org.apache.flink.util.ExceptionUtils.findThrowable(
                    e,
                    org.apache.flink.runtime.scheduler.stopwithsavepoint
                        .StopWithSavepointStoppingException.class)
                .map(
                    org.apache.flink.runtime.scheduler.stopwithsavepoint
                            .StopWithSavepointStoppingException
                        ::getSavepointPath);
        if (taken.isEmpty()) {
          taken =
              org.apache.flink.util.ExceptionUtils.findThrowableWithMessage(
                      e, "A savepoint has been created at: ")
                  .map(Throwable::getMessage)
                  .map(
                      m -> {
                        String rest =
                            m.substring(m.indexOf("A savepoint has been created at: ") + 33);
                        int end = rest.indexOf(", but");
                        return end < 0 ? rest.trim() : rest.substring(0, end).trim();
                      });
        }
        if (taken.isPresent()) {
          System.out.println("Stopped with savepoint " + taken.get() + ", the job failed after it");
          return taken.get();
        }
        if (attempt >= 20 || job.getJobStatus().get().isGloballyTerminalState()) {
          throw new AssertionError("Cannot stop the job with a savepoint: " + context, e);
        }
        System.out.println("Stop with savepoint failed (" + e.getCause() + "), again");
        Thread.sleep(200);
      }
    }
  }

  private Configuration restartsAndCheckpoints(String savepoint) {
    Configuration config = new Configuration();
    // a checkpoint here takes milliseconds; one that hangs (a CI run of the RocksDB seeds once
    // spent ~10 minutes, Flink's default timeout, in one stop with savepoint) fails after a minute
    // and the stop is tried again
    config.set(
        org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTING_TIMEOUT,
        Duration.ofMinutes(1));
    if (rocksDb) {
      config.set(org.apache.flink.configuration.StateBackendOptions.STATE_BACKEND, "rocksdb");
      config.set(org.apache.flink.configuration.CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
      config.set(
          org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTS_DIRECTORY,
          warehouse.resolve("rocksdb-checkpoints").toUri().toString());
    }
    config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 20);
    config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
    if (savepoint != null) {
      config.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    return config;
  }

  /** The job of one run: the scripted source, the snapshot failer and the sink under faults. */
  private StreamExecutionEnvironment job(
      Configuration config,
      List<List<Change>> emitted,
      Map<Integer, ScriptedChangelogSource.Gate> gates,
      DeleteMode mode,
      int writers) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.enableCheckpointing(100);
    env.getCheckpointConfig().setTolerableCheckpointFailureNumber(0);
    DataStream<RowData> changes =
        env.addSource(
                new ScriptedChangelogSource(emitted, gates),
                "scripted changelog",
                InternalTypeInfo.of(TestTables.ROW_TYPE))
            .uid("scripted-changelog")
            .setParallelism(1);
    changes
        .addSink(new FaultInjection.SnapshotFailingSink())
        .name("snapshot failer")
        .uid("snapshot-failer")
        .setParallelism(1);
    ShardbergSink.forRowData(changes)
        .tableLoader(new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse)))
        .tableName(TestTables.TABLE_NAME)
        .rowType(TestTables.ROW_TYPE)
        .equalityColumns(TestTables.EQUALITY_COLUMNS)
        .pipelineId("faults")
        .writeParallelism(writers)
        .insertOnlyInitialLoad(true) // the default, stated: the changelog keeps its contract
        .maintenance(MaintenanceSettings.from(maintenanceUnderFaults()))
        .deleteMode(mode)
        .append();
    return env;
  }

  /**
   * Holds the source before its step until the test has stopped the job with a savepoint: the first
   * job pauses here; the job resumed from the savepoint passes. Keyed by run, in this JVM (the
   * MiniCluster's).
   */
  private static final class RescaleGate implements ScriptedChangelogSource.Gate {
    private static final long serialVersionUID = 1L;
    private static final java.util.Set<String> PAUSED =
        java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final java.util.Set<String> RELEASED =
        java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final String run;

    RescaleGate(String run) {
      this.run = run;
    }

    static boolean paused(String run) {
      return PAUSED.contains(run);
    }

    static void release(String run) {
      RELEASED.add(run);
    }

    @Override
    public boolean open() {
      if (RELEASED.contains(run)) {
        return true;
      }
      PAUSED.add(run);
      return false;
    }
  }

  /**
   * The rows a row-level {@code DELETE} by another tool removes from {@code rows} (the table once
   * the steps before it are committed): about half of the rows of the first shard from a random one
   * that holds any, at least one; none when the table is empty.
   */
  private static List<Change> foreignDeletes(Random random, java.util.Set<TestTables.Row> rows) {
    int first = random.nextInt(4);
    for (int i = 0; i < 4; i++) {
      int shard = (first + i) % 4;
      List<TestTables.Row> ofShard =
          rows.stream()
              .filter(r -> r.shard() == shard)
              .sorted(java.util.Comparator.comparingLong(TestTables.Row::id))
              .toList();
      if (ofShard.isEmpty()) {
        continue;
      }
      List<Change> deletes = new ArrayList<>();
      for (TestTables.Row row : ofShard) {
        if (random.nextBoolean()) {
          deletes.add(Change.delete(row.shard(), row.id(), row.name()));
        }
      }
      if (deletes.isEmpty()) {
        TestTables.Row row = ofShard.get(random.nextInt(ofShard.size()));
        deletes.add(Change.delete(row.shard(), row.id(), row.name()));
      }
      return deletes;
    }
    return List.of();
  }

  /**
   * Once the pipeline has committed every step before the gated one, deletes rows as another tool's
   * row-level {@code DELETE} would (deletion vectors on v3, position deletes on v2; its own
   * commit); a commit that loses a race is tried again. Rows already gone are skipped, so a run
   * restored from before the gate deletes nothing twice.
   */
  private static final class ForeignDeleteGate implements ScriptedChangelogSource.Gate {
    private static final long serialVersionUID = 1L;
    private final String warehouse;
    private final String pipelineId;
    private final List<List<Long>> keys;
    private boolean done;

    ForeignDeleteGate(String warehouse, String pipelineId, List<Change> deletes) {
      this.warehouse = warehouse;
      this.pipelineId = pipelineId;
      this.keys = deletes.stream().map(d -> List.of((long) d.shard(), d.id())).toList();
    }

    @Override
    public boolean open() {
      return true;
    }

    @Override
    public boolean open(long stepsBeforeCheckpoint) {
      if (done) {
        return true;
      }
      if (stepsBeforeCheckpoint < 0) {
        return false; // not known yet: the rows to delete may not be in the table
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
        int rows = ForeignCommits.deleteRows(table, keys);
        System.out.println("Foreign delete of " + keys + ": " + rows + " rows deleted");
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
