package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.Change.delete;
import static dev.shardberg.coordinator.Change.insert;
import static dev.shardberg.coordinator.Change.updateAfter;
import static dev.shardberg.coordinator.Change.updateBefore;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Scripted changelogs through the whole sink on a MiniCluster; the table read back with Iceberg's
 * generic reader must equal the script's final state exactly.
 */
class ShardbergSinkScenarioTest {
  static final int WRITERS = 2;

  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(WRITERS)
              .build());

  @TempDir Path warehouse;

  static Stream<Arguments> scenarios() {
    return Stream.of(
        Arguments.of(
            "+I/-U/+U/-D on one key within one checkpoint",
            List.of(
                List.of(
                    insert(1, 1, "a"),
                    updateBefore(1, 1, "a"),
                    updateAfter(1, 1, "b"),
                    updateBefore(1, 1, "b"),
                    updateAfter(1, 1, "c"),
                    insert(1, 2, "x"),
                    updateBefore(1, 2, "x"),
                    updateAfter(1, 2, "y"),
                    delete(1, 2, "y")))),
        Arguments.of(
            "+I/-U/+U/-D on the same keys across checkpoints",
            List.of(
                List.of(insert(1, 1, "a"), insert(1, 2, "b")),
                List.of(updateBefore(1, 1, "a"), updateAfter(1, 1, "a2")),
                List.of(delete(1, 2, "b")),
                List.of(insert(1, 2, "b-again")),
                List.of(
                    updateBefore(1, 2, "b-again"), updateAfter(1, 2, "b3"), delete(1, 1, "a2")))),
        Arguments.of(
            "insert and delete of a key in one checkpoint",
            List.of(
                List.of(insert(2, 5, "gone"), delete(2, 5, "gone"), insert(2, 6, "kept")),
                List.of(delete(2, 6, "kept"), insert(2, 6, "reborn")),
                List.of(insert(2, 7, "t"), delete(2, 7, "t")))),
        Arguments.of(
            "key moved between shards",
            List.of(
                List.of(insert(1, 7, "on-1")),
                List.of(delete(1, 7, "on-1"), insert(2, 7, "on-2")),
                List.of(delete(2, 7, "on-2"), insert(1, 7, "back-on-1"), insert(3, 7, "also-3")))),
        Arguments.of("many shards x buckets", manyShardsTimesBuckets()));
  }

  /**
   * 16 shards x 20 keys in 5 buckets (80 partitions): inserts, then updates and deletes, then
   * re-inserts.
   */
  private static List<List<Change>> manyShardsTimesBuckets() {
    List<Change> inserts = new ArrayList<>();
    List<Change> changes = new ArrayList<>();
    List<Change> reinserts = new ArrayList<>();
    for (int shard = 0; shard < 16; shard++) {
      for (long id = 0; id < 20; id++) {
        inserts.add(insert(shard, id, "v1"));
        if (id % 3 == 0) {
          changes.add(updateBefore(shard, id, "v1"));
          changes.add(updateAfter(shard, id, "v2"));
        }
        if (id % 5 == 0) {
          changes.add(delete(shard, id, id % 3 == 0 ? "v2" : "v1"));
          if (id % 10 == 0) {
            reinserts.add(insert(shard, id, "v3"));
          }
        }
      }
    }
    return List.of(inserts, changes, reinserts);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void tableEqualsTheScriptsFinalState(String name, List<List<Change>> steps) throws Exception {
    Table table = TestTables.create(warehouse, 5);
    // these scenarios send INSERT for keys that exist (upsert semantics), which insert-only
    // initial load reserves for snapshot reads; InsertOnlyInitialLoadTest covers that mode.
    // The writers close their files one after the other on the task thread here
    // (target.close-concurrency 1); the owner scenarios below close them 8 at a time (the default).
    run(name, steps, sink -> sink.closeConcurrency(1));

    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    List<Long> committed = TestTables.committedCheckpoints(table);
    assertThat(committed).doesNotHaveDuplicates().isSorted();
    assertThat(committed.size()).isBetween(1, steps.size());
    TestTables.assertEachCommitAppliesNewSteps(table, "scenario", steps);
  }

  static Stream<Arguments> ownerScenarios() {
    return scenarios()
        .flatMap(
            scenario ->
                Stream.of(2, 3)
                    .map(version -> Arguments.of(version, scenario.get()[0], scenario.get()[1])));
  }

  /**
   * The same scripts with {@code target.delete-mode: position} (issue 28): every writer owns its
   * partitions and deletes rows by position. After every commit the table equals the script up to
   * that checkpoint; no snapshot adds an equality delete; on format v3 each data file carries at
   * most one delete file, a deletion vector, and on v2 at most one position-delete file, which
   * names that data file alone.
   */
  @ParameterizedTest(name = "v{0}: {1}")
  @MethodSource("ownerScenarios")
  @SuppressWarnings("unchecked")
  void asPartitionOwnersTheWritersDeleteByPositionOnly(int formatVersion, String name, Object steps)
      throws Exception {
    List<List<Change>> script = (List<List<Change>>) steps;
    Table table = TestTables.create(warehouse, 5);
    table
        .updateProperties()
        .set(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
        .commit();

    run(name, script, sink -> sink.deleteMode(DeleteMode.POSITION));

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    TestTables.assertEachCommitAppliesNewSteps(table, "scenario", script);
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
          .as("equality deletes added by snapshot %s", snapshot.snapshotId())
          .isEqualTo("0");
    }
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        if (formatVersion >= 3) {
          assertThat(task.deletes())
              .as("deletes of %s", task.file().location())
              .hasSizeLessThanOrEqualTo(1);
          assertThat(task.deletes()).allMatch(org.apache.iceberg.util.ContentFileUtil::isDV);
        } else {
          assertThat(task.deletes())
              .as("deletes of %s", task.file().location())
              .hasSizeLessThanOrEqualTo(1)
              .noneMatch(org.apache.iceberg.util.ContentFileUtil::isDV)
              .allMatch(d -> namesOnly(d, task.file()));
        }
      }
    }
  }

  /** A position-delete file that names one data file, {@code file}: merged and replaced as one. */
  private static boolean namesOnly(org.apache.iceberg.DeleteFile delete, DataFile file) {
    return file.location()
        .equals(org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(delete));
  }

  /**
   * A table written by key first (equality deletes, format v2), upgraded to v3, then written by a
   * new run in position mode without state: each owner learns its partitions from the table on
   * their first change (rows under equality deletes not counted), updates and deletes committed
   * rows by position, and adds no equality delete of its own.
   */
  @Test
  void ownersLearnPartitionsATableAlreadyHoldsWithItsEqualityDeletes() throws Exception {
    Table table = TestTables.create(warehouse, 5);
    List<List<Change>> byKey =
        List.of(
            List.of(insert(1, 1, "a"), insert(1, 2, "b"), insert(2, 3, "c"), insert(2, 4, "d")),
            List.of(updateBefore(1, 1, "a"), updateAfter(1, 1, "a2"), delete(2, 4, "d")));
    run("by key", byKey, sink -> sink);
    table.refresh();
    long byKeyEnd = table.currentSnapshot().snapshotId();
    assertThat(addedEqualityDeletes(table)).isPositive();
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();

    List<List<Change>> byPosition =
        List.of(
            List.of(updateBefore(1, 1, "a2"), updateAfter(1, 1, "a3"), delete(1, 2, "b")),
            List.of(insert(2, 4, "d-again"), updateBefore(2, 3, "c"), updateAfter(2, 3, "c2")),
            List.of(delete(1, 1, "a3")));
    run("by position", byPosition, sink -> sink.deleteMode(DeleteMode.POSITION));

    List<List<Change>> all = new ArrayList<>(byKey);
    all.addAll(byPosition);
    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(all));
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      if (snapshot.sequenceNumber() > table.snapshot(byKeyEnd).sequenceNumber()) {
        assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
            .as("equality deletes added by snapshot %s", snapshot.snapshotId())
            .isEqualTo("0");
      }
    }
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        assertThat(
                task.deletes().stream()
                    .filter(org.apache.iceberg.util.ContentFileUtil::isDV)
                    .count())
            .as("deletion vectors of %s", task.file().location())
            .isLessThanOrEqualTo(1);
      }
    }
  }

  static Stream<Arguments> foreignCommits() {
    return Stream.of(2, 3)
        .flatMap(
            version ->
                Stream.of(
                    Arguments.of(version, "a foreign compaction of shard 1", true, false),
                    Arguments.of(
                        version, "a foreign compaction, then the history expired", true, true),
                    Arguments.of(version, "the history expired", false, true)));
  }

  /**
   * The owners' index is a cache of the table: between two checkpoints someone else compacts shard
   * 1 (its rows move to new files, the deletes by position go with the old ones) and/or expires the
   * history the owners last checked from. The next changes to shard 1 find the rows where they are
   * now: no key twice, no deleted row back, after every commit. (Without the check, the deletes
   * name the files the compaction removed and the rewritten copies stay: duplicate keys.)
   */
  @ParameterizedTest(name = "v{0}: {1}")
  @MethodSource("foreignCommits")
  void ownersReadAPartitionAgainAfterAnotherCommitterChangedIt(
      int formatVersion, String name, boolean compact, boolean expire) throws Exception {
    Table table = TestTables.create(warehouse, 2);
    table
        .updateProperties()
        .set(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
        .commit();
    List<Change> load = new ArrayList<>();
    for (long id = 1; id <= 6; id++) {
      load.add(insert(1, id, "a"));
    }
    load.add(insert(2, 1, "a"));
    load.add(insert(2, 2, "a"));
    List<List<Change>> script =
        List.of(
            load,
            List.of(updateBefore(1, 1, "a"), updateAfter(1, 1, "b"), insert(2, 3, "a")),
            List.of(
                updateBefore(1, 1, "b"),
                updateAfter(1, 1, "c"),
                delete(1, 2, "a"),
                updateBefore(1, 3, "a"),
                updateAfter(1, 3, "c"),
                updateBefore(2, 1, "a"),
                updateAfter(2, 1, "c")),
            List.of(delete(1, 1, "c"), insert(1, 2, "again"), delete(2, 3, "a")));

    run(
        name,
        script,
        sink -> sink.deleteMode(DeleteMode.POSITION),
        2,
        new ForeignCommitGate(
            warehouse.toString(), Change.expectedRows(script.subList(0, 2)), compact, expire));

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    if (compact) {
      assertThat(table.snapshots())
          .as("the foreign compaction is in the table's history")
          .anyMatch(
              s ->
                  "replace".equals(s.operation())
                      && !s.summary().containsKey(SnapshotSummaryKeys.PIPELINE_ID));
    }
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
          .as("equality deletes added by snapshot %s", snapshot.snapshotId())
          .isEqualTo("0");
      if (snapshot.summary().containsKey(SnapshotSummaryKeys.PIPELINE_ID)) {
        TestTables.readAt(table, snapshot.snapshotId()); // each key once after every commit
      }
    }
  }

  /**
   * Another tool compacts a shard while its owners' changes are in flight (their checkpoint taken,
   * its commit not landed): the coordinator carries that checkpoint over by key, and the owners
   * hold the shard's next changes until it has landed, then read the partitions again and write
   * them. The coordinator's commit of step 2 is held back until the compaction has landed and a
   * writer holds changes of step 3. The table equals the script at the end, each key once after
   * every commit, no equality delete. Before, the commit was refused and the writer stopped the job
   * ("… are not committed yet").
   */
  @ParameterizedTest(name = "v{0}")
  @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3})
  void ownersHoldAShardsChangesWhileTheirCommitIsInFlightAndAnotherToolCompactsIt(int formatVersion)
      throws Exception {
    Table table = TestTables.create(warehouse, 2);
    table
        .updateProperties()
        .set(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
        .commit();
    List<Change> load = new ArrayList<>();
    for (long id = 1; id <= 6; id++) {
      load.add(insert(1, id, "a"));
    }
    load.add(insert(2, 1, "a"));
    load.add(insert(2, 2, "a"));
    List<List<Change>> script =
        List.of(
            load,
            List.of(updateBefore(1, 1, "a"), updateAfter(1, 1, "b"), insert(2, 3, "a")),
            List.of(
                updateBefore(1, 1, "b"),
                updateAfter(1, 1, "c"),
                delete(1, 2, "a"),
                updateBefore(1, 3, "a"),
                updateAfter(1, 3, "c"),
                updateBefore(2, 1, "a"),
                updateAfter(2, 1, "c")),
            List.of(
                updateBefore(1, 1, "c"),
                updateAfter(1, 1, "d"),
                updateBefore(1, 3, "c"),
                updateAfter(1, 3, "d"),
                insert(1, 2, "again"),
                delete(1, 4, "a"),
                updateBefore(2, 2, "a"),
                updateAfter(2, 2, "d")),
            List.of(
                delete(1, 5, "a"),
                updateBefore(1, 6, "a"),
                updateAfter(1, 6, "e"),
                insert(1, 7, "new")));
    String run = "in-flight-v" + formatVersion;
    try (LogCapture owners =
            new LogCapture(PartitionOwner.class.getName(), org.apache.logging.log4j.Level.INFO);
        LogCapture commits =
            new LogCapture(
                CheckpointCommitter.class.getName(), org.apache.logging.log4j.Level.INFO)) {
      HeldCommits.reset(run);
      HeldCommits.OWNER_LOGS.put(run, owners);
      java.util.Map<Integer, ScriptedChangelogSource.Gate> gates =
          java.util.Map.of(
              2,
              new HoldNextCommitGate(
                  warehouse.toString(), Change.expectedRows(script.subList(0, 2)), run),
              3,
              new InFlightCompactionGate(
                  warehouse.toString(), Change.expectedRows(script.subList(0, 2)), run));
      Configuration config = new Configuration();
      config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
      env.enableCheckpointing(100);
      DataStream<RowData> changes =
          env.addSource(
                  new ScriptedChangelogSource(script, gates),
                  "scripted changelog",
                  InternalTypeInfo.of(TestTables.ROW_TYPE))
              .setParallelism(1);
      ShardbergSink.forRowData(changes)
          .tableLoader(new HeldCommits(TestTables.loader(warehouse), run))
          .tableName(TestTables.TABLE_NAME)
          .rowType(TestTables.ROW_TYPE)
          .equalityColumns(TestTables.EQUALITY_COLUMNS)
          .pipelineId("scenario")
          .writeParallelism(WRITERS)
          .insertOnlyInitialLoad(false)
          .deleteMode(DeleteMode.POSITION)
          .append();
      env.execute("in-flight foreign compaction, v" + formatVersion);

      assertThat(owners.lines())
          .as("a writer held changes of the compacted shard until its commit landed")
          .anyMatch(l -> l.message().contains("holds the partition's next changes"))
          .anyMatch(l -> l.message().contains("writes the changes it held"));
      assertThat(commits.lines())
          .as("the coordinator carried the in-flight checkpoint over by key")
          .anyMatch(l -> l.message().contains("carried over by key"));
    } finally {
      HeldCommits.reset(run);
    }

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
          .as("equality deletes added by snapshot %s", snapshot.snapshotId())
          .isEqualTo("0");
      TestTables.readAt(table, snapshot.snapshotId()); // each key once after every commit
    }
  }

  /**
   * A loader whose tables hold their next commit of rows back once armed, until released (static:
   * the MiniCluster's tasks run in the test's JVM; keyed by run).
   */
  private static final class HeldCommits extends ForwardingTableLoader {
    private static final long serialVersionUID = 1L;
    private static final java.util.Map<String, java.util.concurrent.CountDownLatch> ARMED =
        new java.util.concurrent.ConcurrentHashMap<>();

    /** The test's capture of the owners' log, by run: the release waits for their hold. */
    static final java.util.Map<String, LogCapture> OWNER_LOGS =
        new java.util.concurrent.ConcurrentHashMap<>();

    private static final java.util.Set<String> WAITING =
        java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final java.util.Map<String, java.util.concurrent.CountDownLatch> RELEASE =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final String run;

    HeldCommits(TableLoader delegate, String run) {
      super(delegate);
      this.run = run;
    }

    static void reset(String run) {
      java.util.concurrent.CountDownLatch release = RELEASE.remove(run);
      if (release != null) {
        release.countDown();
      }
      ARMED.remove(run);
      WAITING.remove(run);
      OWNER_LOGS.remove(run);
    }

    /** The next commit waits until {@link #release}. */
    static void arm(String run) {
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      RELEASE.put(run, release);
      ARMED.put(run, release);
    }

    static boolean waiting(String run) {
      return WAITING.contains(run);
    }

    static void release(String run) {
      java.util.concurrent.CountDownLatch release = RELEASE.get(run);
      if (release != null) {
        release.countDown();
      }
    }

    @Override
    TableOperations wrap(TableOperations operations, String tableName) {
      return new ForwardingTableOperations(operations) {
        @Override
        public void commit(TableMetadata base, TableMetadata metadata) {
          org.apache.iceberg.Snapshot added = metadata.currentSnapshot();
          boolean rows =
              added != null
                  && (base == null || base.snapshot(added.snapshotId()) == null)
                  && added.summary().containsKey(SnapshotSummaryKeys.PIPELINE_ID)
                  && Long.parseLong(added.summary().getOrDefault("added-data-files", "0")) > 0;
          // only a commit of the pipeline's rows is held (not a heartbeat or maintenance)
          java.util.concurrent.CountDownLatch held = rows ? ARMED.remove(run) : null;
          if (held != null) {
            WAITING.add(run);
            try {
              if (!held.await(2, java.util.concurrent.TimeUnit.MINUTES)) {
                throw new IllegalStateException("The held commit was never released");
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
          }
          super.commit(base, metadata);
        }
      };
    }

    @Override
    TableLoader cloneWith(TableLoader clonedDelegate) {
      return new HeldCommits(clonedDelegate, run);
    }
  }

  /** Once the steps before it are committed, arms the hold of the pipeline's next commit. */
  private static final class HoldNextCommitGate implements ScriptedChangelogSource.Gate {
    private static final long serialVersionUID = 1L;
    private final String warehouse;
    private final java.util.HashSet<String> before;
    private final String run;

    HoldNextCommitGate(String warehouse, java.util.Set<TestTables.Row> before, String run) {
      this.warehouse = warehouse;
      this.before = new java.util.HashSet<>();
      before.forEach(row -> this.before.add(row.toString()));
      this.run = run;
    }

    @Override
    public boolean open() {
      java.util.HashSet<String> now = new java.util.HashSet<>();
      TestTables.read(TestTables.load(Path.of(warehouse))).forEach(r -> now.add(r.toString()));
      if (!now.equals(before)) {
        return false;
      }
      HeldCommits.arm(run);
      return true;
    }
  }

  /**
   * Once the pipeline's commit of the step before is held back: another tool compacts shard 1 (the
   * held step's changes not in the table yet); the commit is released once a writer holds changes
   * of the shard (or after a minute: the test then fails on the missing hold).
   */
  private static final class InFlightCompactionGate implements ScriptedChangelogSource.Gate {
    private static final long serialVersionUID = 1L;
    private final String warehouse;
    private final java.util.HashSet<String> before;
    private final String run;
    private boolean done;

    InFlightCompactionGate(String warehouse, java.util.Set<TestTables.Row> before, String run) {
      this.warehouse = warehouse;
      this.before = new java.util.HashSet<>();
      before.forEach(row -> this.before.add(row.toString()));
      this.run = run;
    }

    @Override
    public boolean open() {
      if (done) {
        return true;
      }
      if (!HeldCommits.waiting(run)) {
        return false;
      }
      Table table = TestTables.load(Path.of(warehouse));
      java.util.HashSet<String> now = new java.util.HashSet<>();
      TestTables.read(table).forEach(r -> now.add(r.toString()));
      assertThat(now).as("the held step is not committed yet").isEqualTo(before);
      assertThat(ForeignCommits.compactShard(table, 1)).isEqualTo(6);
      Thread release =
          new Thread(
              () -> {
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(1);
                LogCapture owners = HeldCommits.OWNER_LOGS.get(run);
                try {
                  while (System.nanoTime() < until
                      && owners.lines().stream()
                          .noneMatch(l -> l.message().contains("holds the partition's next"))) {
                    Thread.sleep(20);
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } finally {
                  HeldCommits.release(run);
                }
              },
              "release-held-commit");
      release.setDaemon(true);
      release.start();
      done = true;
      return true;
    }
  }

  /**
   * The owners compact their own partitions: a partition that got three data files is rewritten —
   * live rows only, its delete files dropped with them — and the rewrite is committed with a
   * checkpoint's rows, by the one coordinator. The table equals the script after every commit, each
   * key once; data files were removed by the pipeline's own commits; each partition ends with few
   * files; no equality delete anywhere; each data file has at most one delete file: a deletion
   * vector on v3, a position-delete file naming it alone on v2 (before, owners did not compact v2
   * tables: their position-delete files named several data files).
   */
  @ParameterizedTest(name = "v{0}")
  @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3})
  void ownersCompactTheirPartitionsInTheCheckpointsCommit(int formatVersion) throws Exception {
    Table table = TestTables.create(warehouse, 2);
    table
        .updateProperties()
        .set(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
        .commit();
    List<List<Change>> script = new ArrayList<>();
    List<Change> load = new ArrayList<>();
    java.util.Map<List<Long>, String> live = new java.util.HashMap<>();
    for (long id = 1; id <= 12; id++) {
      for (int shard = 1; shard <= 2; shard++) {
        load.add(insert(shard, id, "v0"));
        live.put(List.of((long) shard, id), "v0");
      }
    }
    script.add(load);
    for (int step = 1; step <= 9; step++) {
      List<Change> changes = new ArrayList<>();
      for (long id = step % 3 + 1; id <= 12; id += 3) {
        List<Long> key = List.of(1L, id);
        String before = live.get(key);
        if (before == null) {
          changes.add(insert(1, id, "v" + step));
          live.put(key, "v" + step);
        } else if (id % 4 == step % 4) {
          changes.add(delete(1, id, before));
          live.remove(key);
        } else {
          changes.add(updateBefore(1, id, before));
          changes.add(updateAfter(1, id, "v" + step));
          live.put(key, "v" + step);
        }
      }
      script.add(changes);
    }
    Configuration maintenance = ownersCompactFrom(3);

    run(
        "owners compact",
        script,
        sink ->
            sink.deleteMode(DeleteMode.POSITION)
                .maintenance(
                    dev.shardberg.coordinator.maintenance.MaintenanceSettings.from(maintenance)));

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    TestTables.assertEachCommitAppliesNewSteps(table, "scenario", script);
    long removedByOwners = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
          .as("equality deletes added by snapshot %s", snapshot.snapshotId())
          .isEqualTo("0");
      if (snapshot.summary().containsKey(SnapshotSummaryKeys.PIPELINE_ID)) {
        TestTables.readAt(table, snapshot.snapshotId()); // each key once after every commit
        removedByOwners +=
            Long.parseLong(snapshot.summary().getOrDefault("deleted-data-files", "0"));
      }
    }
    assertThat(removedByOwners).as("data files the owners' compaction removed").isPositive();
    java.util.Map<String, Integer> filesPerPartition = new java.util.HashMap<>();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        filesPerPartition.merge(
            table.spec().partitionToPath(task.file().partition()), 1, Integer::sum);
        assertThat(task.deletes()).hasSizeLessThanOrEqualTo(1);
        assertThat(task.deletes())
            .as("deletes of %s", task.file().location())
            .allMatch(
                d ->
                    formatVersion >= 3
                        ? org.apache.iceberg.util.ContentFileUtil.isDV(d)
                        : namesOnly(d, task.file()));
      }
    }
    assertThat(filesPerPartition.values())
        .as("data files per partition after 10 checkpoints, compacted at 3")
        .allMatch(files -> files <= 3);
  }

  /**
   * The owners leave a large data file with few deleted rows as it is and compact only the small
   * files around it: a partition loaded with one large file (2,000 rows) then updated a few rows at
   * a time is compacted several times without the large file being read or rewritten (its deletion
   * vector grows instead); once half of its rows are deleted, the next compaction rewrites it. The
   * table equals the script after every commit; no equality delete; at most one DV per data file.
   */
  @Test
  void ownersLeaveALargeFileWithFewDeletedRowsAndRewriteItOnceManyAreDeleted() throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    java.util.Random random = new java.util.Random(28);
    java.util.Map<Long, String> live = new java.util.TreeMap<>();
    List<List<Change>> script = new ArrayList<>();
    List<Change> load = new ArrayList<>();
    for (long id = 1; id <= 2_000; id++) {
      // names that do not compress: the load's file is far over the small-file size below
      String name = java.util.HexFormat.of().formatHex(randomBytes(random, 32));
      load.add(insert(1, id, name));
      live.put(id, name);
    }
    script.add(load);
    for (int step = 1; step <= 11; step++) {
      List<Change> changes = new ArrayList<>();
      if (step == 7) {
        for (long id = 1_001; id <= 2_000; id++) {
          changes.add(delete(1, id, live.remove(id)));
        }
      } else {
        for (long id = step * 10L + 1; id <= step * 10L + 3; id++) {
          String after = "v" + step;
          changes.add(updateBefore(1, id, live.get(id)));
          changes.add(updateAfter(1, id, after));
          live.put(id, after);
        }
      }
      script.add(changes);
    }
    Configuration maintenance = ownersCompactFrom(3);
    maintenance.set(
        dev.shardberg.coordinator.maintenance.MaintenanceOptions.COMPACTION_TARGET_FILE_SIZE,
        org.apache.flink.configuration.MemorySize.parse("32kb"));

    run(
        "owners leave large files",
        script,
        sink ->
            sink.deleteMode(DeleteMode.POSITION)
                .maintenance(
                    dev.shardberg.coordinator.maintenance.MaintenanceSettings.from(maintenance)));

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    TestTables.assertEachCommitAppliesNewSteps(table, "scenario", script);
    List<org.apache.iceberg.Snapshot> commits = new ArrayList<>();
    for (org.apache.iceberg.Snapshot snapshot :
        org.apache.iceberg.util.SnapshotUtil.ancestorsOf(
            table.currentSnapshot().snapshotId(), table::snapshot)) {
      commits.add(0, snapshot);
    }
    DataFile loaded = null;
    List<String> compactionsBeforeTheDelete = new ArrayList<>();
    String rewrittenBy = null;
    for (org.apache.iceberg.Snapshot snapshot : commits) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0")).isEqualTo("0");
      if (loaded == null) {
        for (DataFile file : snapshot.addedDataFiles(table.io())) {
          if (file.recordCount() == 2_000) {
            loaded = file;
          }
        }
        continue;
      }
      List<String> removed = new ArrayList<>();
      snapshot.removedDataFiles(table.io()).forEach(f -> removed.add(f.location()));
      if (removed.isEmpty()) {
        continue;
      }
      boolean beforeTheDelete =
          TestTables.readAt(table, snapshot.snapshotId()).stream().anyMatch(r -> r.id() == 1_500);
      if (beforeTheDelete) {
        compactionsBeforeTheDelete.add(snapshot.snapshotId() + " removed " + removed);
        assertThat(removed)
            .as("files an owner compaction removed while the large file had few deleted rows")
            .doesNotContain(loaded.location());
      } else if (rewrittenBy == null && removed.contains(loaded.location())) {
        rewrittenBy = "snapshot " + snapshot.snapshotId();
      }
    }
    assertThat(loaded).as("the load's one large data file").isNotNull();
    assertThat(loaded.fileSizeInBytes()).isGreaterThan(32 * 1024);
    assertThat(compactionsBeforeTheDelete)
        .as("owner compactions of the small files while the large one had few deleted rows")
        .isNotEmpty();
    assertThat(rewrittenBy)
        .as("the large file rewritten by a compaction once half of its rows were deleted")
        .isNotNull();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        assertThat(task.deletes()).hasSizeLessThanOrEqualTo(1);
      }
    }
  }

  /**
   * The owners rewrite off the record path: a rewrite starts at one barrier and is handed over at
   * the next, while the writer goes on with the rows in between. A row of a file being rewritten
   * that is updated or deleted meanwhile is deleted from the new file by position, in the commit
   * that adds it (the delete carried to its new place): here every step updates rows of the files
   * the previous barrier began to rewrite. The table equals the script after every commit, each key
   * once; some commit adds an owner's rewritten file together with a deletion vector on it; no
   * equality delete; at most one DV per data file.
   */
  @Test
  void ownersRewriteBetweenBarriersAndCarryTheDeletesThatArriveMeanwhile() throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    java.util.Map<Long, String> live = new java.util.TreeMap<>();
    List<List<Change>> script = new ArrayList<>();
    List<Change> load = new ArrayList<>();
    for (long id = 1; id <= 20; id++) {
      load.add(insert(1, id, "v0"));
      live.put(id, "v0");
    }
    script.add(load);
    for (int step = 1; step <= 9; step++) {
      List<Change> changes = new ArrayList<>();
      for (long id : List.of(2L * step - 1, 2L * step, 20L)) {
        if (id == 2L * step && step % 3 == 0) {
          changes.add(delete(1, id, live.remove(id)));
        } else {
          String after = "v" + step;
          changes.add(updateBefore(1, id, live.get(id)));
          changes.add(updateAfter(1, id, after));
          live.put(id, after);
        }
      }
      script.add(changes);
    }

    run(
        "owners carry deletes",
        script,
        sink ->
            sink.deleteMode(DeleteMode.POSITION)
                .maintenance(
                    dev.shardberg.coordinator.maintenance.MaintenanceSettings.from(
                        ownersCompactFrom(3))));

    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    TestTables.assertEachCommitAppliesNewSteps(table, "scenario", script);
    List<String> carried = new ArrayList<>();
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0")).isEqualTo("0");
      if (!snapshot.removedDataFiles(table.io()).iterator().hasNext()) {
        continue; // not an owner's rewrite
      }
      java.util.Set<String> added = new java.util.HashSet<>();
      snapshot.addedDataFiles(table.io()).forEach(f -> added.add(f.location()));
      for (org.apache.iceberg.DeleteFile vector : snapshot.addedDeleteFiles(table.io())) {
        String file = org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(vector);
        if (added.contains(file)) {
          carried.add(snapshot.snapshotId() + ": " + vector.recordCount() + " row(s) of " + file);
        }
      }
    }
    assertThat(carried)
        .as("rows deleted while their file was rewritten, deleted from the new file it adds")
        .isNotEmpty();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        assertThat(task.deletes()).hasSizeLessThanOrEqualTo(1);
      }
    }
  }

  /**
   * A table written with equality deletes, then written by the owners (the switch of {@code
   * target.delete-mode}), upgraded to format v3 with the switch or left at v2: the equality delete
   * of the first run applies to the load's one large data file, which has few deleted rows; the
   * owners' first compaction of the partition rewrites it all the same, so no equality delete
   * applies to any live file afterwards. The table equals both scripts applied in order. (Before,
   * owners compacted v3 tables only, and on v2 the equality deletes stayed.)
   */
  @ParameterizedTest(name = "then format v{0}")
  @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3})
  void aLargeFileAnEqualityDeleteStillAppliesToIsRewrittenByItsOwnersFirstCompaction(
      int formatVersion) throws Exception {
    Table table = TestTables.create(warehouse, 1); // format v2, as the equality mode writes it
    java.util.Random random = new java.util.Random(30);
    java.util.Map<Long, String> live = new java.util.TreeMap<>();
    List<List<Change>> byKey = new ArrayList<>();
    List<Change> load = new ArrayList<>();
    for (long id = 1; id <= 2_000; id++) {
      String name = java.util.HexFormat.of().formatHex(randomBytes(random, 32));
      load.add(insert(1, id, name));
      live.put(id, name);
    }
    byKey.add(load);
    byKey.add(updates(live, 1, 1));
    run("equality deletes first", byKey, sink -> sink.deleteMode(DeleteMode.EQUALITY));
    table.refresh();
    assertThat(eqDeletesApplying(table)).as("equality deletes after the first run").isPositive();
    table
        .updateProperties()
        .set(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
        .commit();

    List<List<Change>> byPosition = new ArrayList<>();
    for (int step = 2; step <= 6; step++) {
      byPosition.add(updates(live, step, step));
    }
    Configuration maintenance = ownersCompactFrom(3);
    maintenance.set(
        dev.shardberg.coordinator.maintenance.MaintenanceOptions.COMPACTION_TARGET_FILE_SIZE,
        org.apache.flink.configuration.MemorySize.parse("32kb"));
    run(
        "then by position",
        byPosition,
        sink ->
            sink.deleteMode(DeleteMode.POSITION)
                .maintenance(
                    dev.shardberg.coordinator.maintenance.MaintenanceSettings.from(maintenance)));

    List<List<Change>> both = new ArrayList<>(byKey);
    both.addAll(byPosition);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(both));
    assertThat(eqDeletesApplying(table))
        .as("equality deletes applying to live files after the owners' compaction")
        .isZero();
  }

  /**
   * A table written by key on format v2 whose first run updated a row twice in one checkpoint (the
   * older version deleted by position in its own new file), then upgraded to v3 and written by the
   * owners: their first deletion vector on that file must hold the positions the v2 position-delete
   * file deleted, since a v3 reader that finds a vector for a data file ignores the file's
   * position-delete files. The table equals both scripts, each key once. (Before, the vector held
   * only the owners' own positions: the row's first version came back beside its last.)
   */
  @Test
  void aTableUpgradedFromV2KeepsTheRowsItsPositionDeletesRemovedOnceItsOwnersWriteVectors()
      throws Exception {
    Table table = TestTables.create(warehouse, 1); // format v2, as the equality mode writes it
    List<List<Change>> byKey =
        List.of(
            List.of(
                insert(1, 1, "v0"),
                insert(1, 2, "v0"),
                insert(1, 3, "v0"),
                updateBefore(1, 1, "v0"),
                updateAfter(1, 1, "v1")));
    run("by key on v2", byKey, sink -> sink.deleteMode(DeleteMode.EQUALITY));
    table.refresh();
    assertThat(positionDeletesApplying(table)).as("position deletes after the first run").isOne();
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();

    List<List<Change>> byPosition =
        List.of(
            List.of(updateBefore(1, 2, "v0"), updateAfter(1, 2, "v2")),
            List.of(delete(1, 3, "v0")));
    run("by position on v3", byPosition, sink -> sink.deleteMode(DeleteMode.POSITION));

    List<List<Change>> both = new ArrayList<>(byKey);
    both.addAll(byPosition);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(both));
  }

  /** Position-delete files (not vectors) applying to the table's live data files now. */
  private static long positionDeletesApplying(Table table) throws java.io.IOException {
    return deletesApplying(
        table,
        d ->
            d.content() == org.apache.iceberg.FileContent.POSITION_DELETES
                && !org.apache.iceberg.util.ContentFileUtil.isDV(d));
  }

  /** Three rows of shard 1 updated, ids from {@code step * 10 + 1}. */
  private static List<Change> updates(java.util.Map<Long, String> live, int step, int version) {
    List<Change> changes = new ArrayList<>();
    for (long id = step * 10L + 1; id <= step * 10L + 3; id++) {
      String after = "v" + version;
      changes.add(updateBefore(1, id, live.get(id)));
      changes.add(updateAfter(1, id, after));
      live.put(id, after);
    }
    return changes;
  }

  /** Equality delete files applying to the table's live data files now. */
  private static long eqDeletesApplying(Table table) throws java.io.IOException {
    return deletesApplying(
        table, d -> d.content() == org.apache.iceberg.FileContent.EQUALITY_DELETES);
  }

  /** Delete files matching {@code kind} applying to the table's live data files now. */
  private static long deletesApplying(
      Table table, java.util.function.Predicate<org.apache.iceberg.DeleteFile> kind)
      throws java.io.IOException {
    table.refresh();
    long count = 0;
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        count += task.deletes().stream().filter(kind).count();
      }
    }
    return count;
  }

  /**
   * With more partitions due than an owner may compact at one barrier ({@code
   * max-partitions-per-cycle} 1), the one with the most files goes first: every partition gets its
   * turn and none keeps growing. Three partitions (one shard, three buckets) on two writers, each
   * partition a new file at every checkpoint, compaction from two files: after twelve checkpoints
   * no partition holds more than four data files. (Before, the partitions were taken in the order
   * of the checkpoint's files, and one partition compacted at every second barrier kept the other
   * of its writer waiting.)
   */
  @Test
  void ownersTakeThePartitionWithTheMostFilesFirstSoNoneWaitsForEver() throws Exception {
    Table table = TestTables.create(warehouse, 3);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    org.apache.iceberg.transforms.Transform<Long, Integer> bucket =
        org.apache.iceberg.transforms.Transforms.bucket(3);
    java.util.function.Function<Long, Integer> bucketOf =
        bucket.bind(org.apache.iceberg.types.Types.LongType.get());
    java.util.Map<Integer, List<Long>> idsByBucket = new java.util.TreeMap<>();
    for (long id = 1; idsByBucket.values().stream().mapToInt(List::size).sum() < 12; id++) {
      List<Long> ids = idsByBucket.computeIfAbsent(bucketOf.apply(id), b -> new ArrayList<>());
      if (ids.size() < 4) {
        ids.add(id);
      }
    }
    java.util.Map<Long, String> live = new java.util.TreeMap<>();
    List<List<Change>> script = new ArrayList<>();
    List<Change> load = new ArrayList<>();
    idsByBucket.values().forEach(ids -> ids.forEach(id -> load.add(insert(1, id, "v0"))));
    idsByBucket.values().forEach(ids -> ids.forEach(id -> live.put(id, "v0")));
    script.add(load);
    for (int step = 1; step <= 12; step++) {
      List<Change> changes = new ArrayList<>();
      for (List<Long> ids : idsByBucket.values()) {
        long id = ids.get(step % ids.size());
        changes.add(updateBefore(1, id, live.get(id)));
        changes.add(updateAfter(1, id, "v" + step));
        live.put(id, "v" + step);
      }
      script.add(changes);
    }
    Configuration maintenance = ownersCompactFrom(2);
    maintenance.set(
        dev.shardberg.coordinator.maintenance.MaintenanceOptions
            .COMPACTION_MAX_PARTITIONS_PER_CYCLE,
        1);

    run(
        "owners take turns",
        script,
        sink ->
            sink.deleteMode(DeleteMode.POSITION)
                .maintenance(
                    dev.shardberg.coordinator.maintenance.MaintenanceSettings.from(maintenance)));

    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(script));
    TestTables.assertEachCommitAppliesNewSteps(table, "scenario", script);
    java.util.Map<String, Integer> filesPerPartition = new java.util.TreeMap<>();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        filesPerPartition.merge(
            table.spec().partitionToPath(task.file().partition()), 1, Integer::sum);
      }
    }
    assertThat(filesPerPartition).hasSize(3);
    assertThat(filesPerPartition.values())
        .as("data files per partition after 13 checkpoints: %s", filesPerPartition)
        .allMatch(files -> files <= 4);
  }

  /** Maintenance for the owners' compaction: from {@code minFiles} files, no periodic job work. */
  private static Configuration ownersCompactFrom(int minFiles) {
    Configuration maintenance = new Configuration();
    maintenance.set(dev.shardberg.coordinator.maintenance.MaintenanceOptions.ENABLED, true);
    maintenance.set(
        dev.shardberg.coordinator.maintenance.MaintenanceOptions.INTERVAL,
        java.time.Duration.ofHours(1));
    maintenance.set(
        dev.shardberg.coordinator.maintenance.MaintenanceOptions.COMPACTION_MIN_SMALL_FILES,
        minFiles);
    return maintenance;
  }

  private static byte[] randomBytes(java.util.Random random, int length) {
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  /**
   * Before step 2: waits until the first two steps are in the table, then compacts shard 1 and/or
   * expires every snapshot but the current one, as another tool on the table would.
   */
  private static final class ForeignCommitGate implements ScriptedChangelogSource.Gate {
    private static final long serialVersionUID = 1L;
    private final String warehouse;
    private final java.util.HashSet<String> before; // rows as text: a Row is not serializable
    private final boolean compact;
    private final boolean expire;
    private boolean done;

    ForeignCommitGate(
        String warehouse, java.util.Set<TestTables.Row> before, boolean compact, boolean expire) {
      this.warehouse = warehouse;
      this.before = text(before);
      this.compact = compact;
      this.expire = expire;
    }

    @Override
    public boolean open() {
      if (done) {
        return true;
      }
      Table table = TestTables.load(Path.of(warehouse));
      if (!text(TestTables.read(table)).equals(before)) {
        return false;
      }
      if (compact) {
        assertThat(ForeignCommits.compactShard(table, 1)).isEqualTo(6);
      }
      if (expire) {
        table.refresh();
        table
            .expireSnapshots()
            .expireOlderThan(System.currentTimeMillis() + 1)
            .retainLast(1)
            .commit();
        table.refresh();
        assertThat(table.snapshots()).hasSize(1);
      }
      done = true;
      return true;
    }

    private static java.util.HashSet<String> text(java.util.Set<TestTables.Row> rows) {
      java.util.HashSet<String> text = new java.util.HashSet<>();
      rows.forEach(row -> text.add(row.toString()));
      return text;
    }
  }

  private static long addedEqualityDeletes(Table table) {
    long total = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      total += Long.parseLong(snapshot.summary().getOrDefault("added-equality-deletes", "0"));
    }
    return total;
  }

  /** Runs {@code steps} through the sink (as {@code mode} sets it up) to the end of the script. */
  private void run(
      String name,
      List<List<Change>> steps,
      java.util.function.UnaryOperator<ShardbergSink.Builder> mode)
      throws Exception {
    run(name, steps, mode, -1, () -> true);
  }

  /** The same, waiting before step {@code gateBeforeStep} until {@code gate} opens. */
  private void run(
      String name,
      List<List<Change>> steps,
      java.util.function.UnaryOperator<ShardbergSink.Builder> mode,
      int gateBeforeStep,
      ScriptedChangelogSource.Gate gate)
      throws Exception {
    Configuration config = new Configuration();
    config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.enableCheckpointing(100);
    DataStream<RowData> changes =
        env.addSource(
                new ScriptedChangelogSource(steps, gateBeforeStep, gate),
                "scripted changelog",
                InternalTypeInfo.of(TestTables.ROW_TYPE))
            .setParallelism(1);
    mode.apply(
            ShardbergSink.forRowData(changes)
                .tableLoader(TestTables.loader(warehouse))
                .tableName(TestTables.TABLE_NAME)
                .rowType(TestTables.ROW_TYPE)
                .equalityColumns(TestTables.EQUALITY_COLUMNS)
                .pipelineId("scenario")
                .writeParallelism(WRITERS)
                .insertOnlyInitialLoad(false))
        .append();
    env.execute(name);
  }
}
