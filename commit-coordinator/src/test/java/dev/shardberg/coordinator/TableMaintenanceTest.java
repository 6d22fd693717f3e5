package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.MaintenanceWithIngestTest.rewrites;
import static dev.shardberg.coordinator.TestTables.row;
import static org.apache.flink.types.RowKind.DELETE;
import static org.apache.flink.types.RowKind.INSERT;
import static org.apache.flink.types.RowKind.UPDATE_AFTER;
import static org.apache.flink.types.RowKind.UPDATE_BEFORE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.OperatorHarnesses.Coordinator;
import dev.shardberg.coordinator.OperatorHarnesses.Writer;
import dev.shardberg.coordinator.TestTables.Row;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.coordinator.maintenance.TableHealth;
import dev.shardberg.coordinator.maintenance.TableMaintainer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.relocated.com.google.common.util.concurrent.MoreExecutors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Maintenance against real tables on disk, the real writer and coordinator in operator harnesses: a
 * compaction whose inputs changed under it is dropped and done again later, never failing; expiry
 * and orphan removal never delete what the table or a pending checkpoint references, so a restore
 * from a checkpoint taken just before them commits it.
 */
class TableMaintenanceTest {
  private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(5);
  private static final TableMaintainer.CoordinatorView NOTHING_PENDING =
      TableMaintainer.CoordinatorView.idle();

  @TempDir Path warehouse;
  private Table table;

  @BeforeEach
  void createTable() {
    table = TestTables.create(warehouse, 1);
  }

  private static void commit(Coordinator coordinator, long checkpoint, WriterResult result)
      throws Exception {
    coordinator.add(result);
    coordinator.harness.snapshot(checkpoint, checkpoint);
    coordinator.harness.notifyOfCompletedCheckpoint(checkpoint);
  }

  /**
   * Checkpoint 1 inserts keys 1..3 of shard 1 ("a", "b", "c"); checkpoint 2 updates 1 to "a2",
   * deletes 2.
   */
  private static void commitInsertsThenAnUpdateAndADelete(Writer writer, Coordinator coordinator)
      throws Exception {
    commit(
        coordinator,
        1,
        writer.checkpoint(
            1, row(INSERT, 1, 1, "a"), row(INSERT, 1, 2, "b"), row(INSERT, 1, 3, "c")));
    commit(
        coordinator,
        2,
        writer.checkpoint(
            2,
            row(UPDATE_BEFORE, 1, 1, "a"),
            row(UPDATE_AFTER, 1, 1, "a2"),
            row(DELETE, 1, 2, "b")));
  }

  /**
   * Maintenance after every checkpoint, no compaction, orphan removal of files older than a day.
   */
  private static Configuration orphanRemovalEveryCheckpoint() {
    Configuration config = new Configuration();
    config.set(MaintenanceOptions.INTERVAL, Duration.ofMillis(1));
    config.set(MaintenanceOptions.COMPACTION_ENABLED, false);
    config.set(MaintenanceOptions.ORPHAN_FILES_INTERVAL, Duration.ofMillis(1));
    config.set(MaintenanceOptions.ORPHAN_FILES_MIN_AGE, Duration.ofDays(1));
    return config;
  }

  private static Configuration compactionOnly() {
    Configuration config = new Configuration();
    config.set(MaintenanceOptions.INTERVAL, Duration.ofMillis(1));
    config.set(MaintenanceOptions.COMPACTION_MIN_SMALL_FILES, 2);
    config.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_ENABLED, false);
    config.set(MaintenanceOptions.ORPHAN_FILES_ENABLED, false);
    config.set(MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS, 0);
    return config;
  }

  @Test
  void aCompactionWhoseInputsChangedIsDroppedThenDoneAgainOnTheNewSnapshot() throws Exception {
    try (Writer writer = new Writer(TestTables.loader(warehouse));
        Coordinator coordinator =
            new Coordinator(
                TestTables.loader(warehouse), new JobID(), CommitGuardFactory.none(), 10)) {
      coordinator.harness.open();
      commitInsertsThenAnUpdateAndADelete(writer, coordinator);
    }
    table.refresh();
    // The maintenance thread is the caller's (a direct executor): compaction plans and rewrites
    // inside afterCommits, and its commit waits for the next afterCommits, like between
    // checkpoints.
    AtomicLong now = new AtomicLong(1_000);
    try (TableMaintainer maintainer =
        new TableMaintainer(
            TestTables.loader(warehouse),
            TestTables.TABLE_NAME,
            MaintenanceSettings.from(compactionOnly()),
            MoreExecutors.newDirectExecutorService(),
            now::get,
            new UnregisteredMetricsGroup())) {
      now.addAndGet(10);
      maintainer.afterCommits(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT, NOTHING_PENDING);
      assertThat(compactions(table)).isEmpty(); // rewritten, not committed yet

      // Meanwhile another committer deletes one of the data files the compaction rewrote.
      DataFile gone = table.currentSnapshot().addedDataFiles(table.io()).iterator().next();
      table.newDelete().deleteFile(gone).commit();
      Set<Row> expected = TestTables.read(table);

      now.addAndGet(10);
      maintainer.afterCommits(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT, NOTHING_PENDING);
      assertThat(compactions(table)).as("the first compaction is dropped").isEmpty();
      assertThat(TestTables.read(table)).containsExactlyInAnyOrderElementsOf(expected);

      now.addAndGet(10); // the same call planned the next one on the new snapshot; it commits now
      maintainer.afterCommits(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT, NOTHING_PENDING);
      assertThat(compactions(table)).hasSize(1);
      assertThat(TestTables.read(table)).containsExactlyInAnyOrderElementsOf(expected);
      TableHealth health = TableHealth.of(table, 1);
      assertThat(health.deleteFiles()).as("the partition's delete files went with it").isZero();
      assertThat(health.dataFiles()).isEqualTo(1);
      assertThat(health.byShard().get(1).lastCompactionMillis()).isPresent();
    }
  }

  /**
   * The bench's long run once failed as "compaction failed": the job was cancelled while a
   * compaction commit ran in the coordinator's mailbox, and Flink's interrupt of the task thread
   * reached Iceberg's retry wait. An interrupt is the job stopping: the commit propagates it and
   * counts nothing.
   */
  @Test
  void aCompactionCommitInterruptedWhileIcebergWaitsToRetryIsNotAFailureAndTheTableIsAsBefore()
      throws Exception {
    try (Writer writer = new Writer(TestTables.loader(warehouse));
        Coordinator coordinator =
            new Coordinator(
                TestTables.loader(warehouse), new JobID(), CommitGuardFactory.none(), 10)) {
      coordinator.harness.open();
      commitInsertsThenAnUpdateAndADelete(writer, coordinator);
    }
    // A long retry wait: the interrupt finds the commit in it (the test never waits for it).
    table.updateProperties().set(TableProperties.COMMIT_MIN_RETRY_WAIT_MS, "30000").commit();
    table.refresh();
    long snapshotBefore = table.currentSnapshot().snapshotId();
    Set<Row> rowsBefore = TestTables.read(table);
    assertThat(rowsBefore).containsExactlyInAnyOrder(new Row(1, 1, "a2"), new Row(1, 3, "c"));

    TableLoader faulty = new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse));
    faulty.open();
    Table committing =
        faulty.loadTable(); // the coordinator's table: its commits go through the fault
    MaintenanceCounters counters = new MaintenanceCounters();
    AtomicLong now = new AtomicLong(1_000);
    try (faulty;
        LogCapture log =
            new LogCapture(TableMaintainer.class, org.apache.logging.log4j.Level.INFO);
        TableMaintainer maintainer =
            new TableMaintainer(
                TestTables.loader(warehouse),
                TestTables.TABLE_NAME,
                MaintenanceSettings.from(compactionOnly()),
                MoreExecutors.newDirectExecutorService(),
                now::get,
                counters)) {
      now.addAndGet(10);
      maintainer.afterCommits(committing, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT, NOTHING_PENDING);
      assertThat(maintainer.hasRewriteInFlight())
          .as("a compaction is written, not committed yet")
          .isTrue();

      FaultInjection.arm(
          List.of(
              new FaultInjection.Fault(FaultInjection.Point.COMMIT_CONFLICT_THEN_INTERRUPTED, 1)));
      try {
        assertThatThrownBy(
                () -> maintainer.commitFinished(committing, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT))
            .isInstanceOf(InterruptedException.class)
            .hasMessage(
                "Compaction commit of table hadoop.shop.orders was interrupted (the job is stopping)")
            .hasRootCauseInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted())
            .as("the thread's interrupt status is kept")
            .isTrue();
      } finally {
        Thread.interrupted(); // this test's thread goes on
      }
      assertThat(FaultInjection.fired()).as("the fault fired").hasSize(1);
      assertThat(FaultInjection.interruptedInRetryWait())
          .as("the interrupt found Iceberg's retry wait")
          .isTrue();
      assertThat(counters.count("compactionsFailed")).as("compactionsFailed").isZero();
      assertThat(counters.count("compactionsDropped")).as("compactionsDropped").isZero();
      assertThat(counters.count("compactions")).as("compactions").isZero();
      assertThat(maintainer.hasRewriteInFlight()).as("kept, as when the lock is not free").isTrue();
      assertThat(log.warnings()).as("WARN and ERROR lines of maintenance").isEmpty();
      assertThat(log.lines())
          .extracting(LogCapture.Line::message)
          .containsExactly(
              "Compaction commit of table hadoop.shop.orders was interrupted: the job is stopping; not a failure");
    }
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId())
        .as("nothing committed")
        .isEqualTo(snapshotBefore);
    assertThat(compactions(table)).isEmpty();
    assertThat(TestTables.read(table)).containsExactlyInAnyOrderElementsOf(rowsBefore);
  }

  /** Keeps the counters maintenance registers, by name, its groups flattened. */
  static final class MaintenanceCounters extends UnregisteredMetricsGroup {
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    long count(String name) {
      Counter counter = counters.get(name);
      assertThat(counter).as("counter %s among %s", name, counters.keySet()).isNotNull();
      return counter.getCount();
    }

    @Override
    public Counter counter(String name) {
      return counters.computeIfAbsent(name, n -> new SimpleCounter());
    }

    @Override
    public <C extends Counter> C counter(String name, C counter) {
      counters.put(name, counter);
      return counter;
    }

    @Override
    public MetricGroup addGroup(String name) {
      return this;
    }

    @Override
    public MetricGroup addGroup(String key, String value) {
      return this;
    }
  }

  @Test
  void aMergeOfRecentFilesKeepsEveryRowWhileEqualityDeletesCommittedAfterItsSnapshotStillApply()
      throws Exception {
    Configuration config = compactionOnly();
    config.set(MaintenanceOptions.INTERVAL, Duration.ofDays(1)); // no cycle: merges only
    config.set(MaintenanceOptions.COMPACTION_MERGE_MIN_FILES, 3);
    AtomicLong now = new AtomicLong(1_000);
    try (Writer writer = new Writer(TestTables.loader(warehouse));
        Coordinator coordinator =
            new Coordinator(
                TestTables.loader(warehouse), new JobID(), CommitGuardFactory.none(), 10);
        TableMaintainer maintainer =
            new TableMaintainer(
                TestTables.loader(warehouse),
                TestTables.TABLE_NAME,
                MaintenanceSettings.from(config),
                MoreExecutors.newDirectExecutorService(),
                now::get,
                new UnregisteredMetricsGroup())) {
      coordinator.harness.open();
      // The base: what a first checkpoint (or a compaction) wrote.
      commit(
          coordinator,
          1,
          writer.checkpoint(
              1,
              row(INSERT, 1, 1, "a"),
              row(INSERT, 1, 2, "b"),
              row(INSERT, 1, 3, "c"),
              row(INSERT, 1, 4, "d")));
      // Recent checkpoints: updates, a delete, a key changed twice in one checkpoint (a position
      // delete).
      commit(
          coordinator,
          2,
          writer.checkpoint(
              2,
              row(UPDATE_BEFORE, 1, 1, "a"),
              row(UPDATE_AFTER, 1, 1, "a2"),
              row(DELETE, 1, 2, "b")));
      commit(
          coordinator,
          3,
          writer.checkpoint(
              3,
              row(UPDATE_BEFORE, 1, 3, "c"),
              row(UPDATE_AFTER, 1, 3, "c2"),
              row(UPDATE_BEFORE, 1, 3, "c2"),
              row(UPDATE_AFTER, 1, 3, "c3"),
              row(UPDATE_BEFORE, 1, 1, "a2"),
              row(UPDATE_AFTER, 1, 1, "a3"),
              row(INSERT, 1, 2, "b2")));
      table.refresh();
      Set<Row> planned = TestTables.read(table);
      TableHealth before = TableHealth.of(table, 1);
      assertThat(before.dataFiles()).isEqualTo(3);
      assertThat(before.deleteFiles()).isGreaterThanOrEqualTo(3);

      maintainer.afterCommits(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT, NOTHING_PENDING);
      assertThat(rewrites(table, "merge")).as("written, not committed yet").isEmpty();
      // Meanwhile ingest commits: its equality deletes (of keys in the base and in the merged
      // files) carry higher sequence numbers than the merge's files and must still apply to them.
      commit(
          coordinator,
          4,
          writer.checkpoint(
              4,
              row(UPDATE_BEFORE, 1, 1, "a3"),
              row(UPDATE_AFTER, 1, 1, "a4"),
              row(UPDATE_BEFORE, 1, 4, "d"),
              row(UPDATE_AFTER, 1, 4, "d2"),
              row(DELETE, 1, 2, "b2")));
      table.refresh();
      Set<Row> expected = TestTables.read(table);
      assertThat(expected).isNotEqualTo(planned);

      assertThat(maintainer.commitFinished(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT)).isTrue();
      List<Snapshot> merges = rewrites(table, "merge");
      assertThat(merges).hasSize(1);
      Snapshot merge = merges.get(0);
      assertThat(merge.summary())
          .containsEntry("deleted-data-files", "2")
          .containsEntry("added-data-files", "1")
          .containsEntry("added-equality-delete-files", "1");
      assertThat(MaintenanceWithIngestTest.rowsAt(table, table.currentSnapshot().snapshotId()))
          .containsExactlyInAnyOrderElementsOf(expected);
      assertThat(MaintenanceWithIngestTest.rowsAt(table, merge.snapshotId()))
          .as("the merge snapshot reads its parent's rows")
          .containsExactlyInAnyOrderElementsOf(
              MaintenanceWithIngestTest.rowsAt(table, merge.parentId()));
      TableHealth after = TableHealth.of(table, 1);
      assertThat(after.dataFiles()).as("base + merged + checkpoint 4's").isEqualTo(3);

      // The next checkpoint's merge folds the merged files and checkpoint 4's into one again.
      commit(
          coordinator,
          5,
          writer.checkpoint(5, row(UPDATE_BEFORE, 1, 3, "c3"), row(UPDATE_AFTER, 1, 3, "c4")));
      maintainer.afterCommits(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT, NOTHING_PENDING);
      assertThat(maintainer.commitFinished(table, NoopCommitGuard.INSTANCE, LOCK_TIMEOUT)).isTrue();
      table.refresh();
      assertThat(rewrites(table, "merge")).hasSize(2);
      assertThat(MaintenanceWithIngestTest.rowsAt(table, table.currentSnapshot().snapshotId()))
          .as("every key once, its latest version")
          .containsExactlyInAnyOrder(
              new Row(1, 1L, "a4"), new Row(1, 3L, "c4"), new Row(1, 4L, "d2"));
      TableHealth last = TableHealth.of(table, 1);
      assertThat(last.dataFiles()).as("the base and one merged file").isEqualTo(2);
      assertThat(last.deleteFiles()).as("one merged equality-delete file").isEqualTo(1);
    }
  }

  @Test
  void expiryAndOrphanRemovalKeepWhatAPendingCheckpointNeedsSoItsRestoreCommitsIt()
      throws Exception {
    Configuration config = orphanRemovalEveryCheckpoint();
    config.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE, Duration.ZERO);
    config.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST, 1);
    MaintenanceSettings settings = MaintenanceSettings.from(config);
    JobID job = new JobID();
    OperatorSubtaskState takenBeforeMaintenance;
    Path metadata = warehouse.resolve("shop/orders/metadata");
    Path data = warehouse.resolve("shop/orders/data");
    String firstManifestList;
    try (Writer writer = new Writer(TestTables.loader(warehouse));
        Coordinator coordinator =
            new Coordinator(
                TestTables.loader(warehouse),
                job,
                CommitGuardFactory.none(),
                10,
                3,
                OperatorHarnesses.PIPELINE,
                settings)) {
      coordinator.harness.open();
      commit(coordinator, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a"), row(INSERT, 1, 2, "b")));
      table.refresh();
      firstManifestList = table.currentSnapshot().manifestListLocation();
      commit(
          coordinator,
          2,
          writer.checkpoint(2, row(UPDATE_BEFORE, 1, 1, "a"), row(UPDATE_AFTER, 1, 1, "a2")));

      // Checkpoint 3 is taken (its files and temporary manifests are staged), its completion never
      // arrives; make it look a day old, like one stuck while ZooKeeper was away.
      WriterResult third = writer.checkpoint(3, row(DELETE, 1, 2, "b"), row(INSERT, 1, 3, "c"));
      coordinator.add(third);
      takenBeforeMaintenance = coordinator.harness.snapshot(3, 3);
      List<Path> neededByCheckpoint3 = new ArrayList<>(filesNamed(metadata, "-3-"));
      java.util.Arrays.stream(third.files().dataFiles())
          .forEach(f -> neededByCheckpoint3.add(Path.of(f.location())));
      java.util.Arrays.stream(third.files().deleteFiles())
          .forEach(f -> neededByCheckpoint3.add(Path.of(f.location())));
      assertThat(neededByCheckpoint3).hasSizeGreaterThanOrEqualTo(3);
      // Orphans: a temporary manifest of a checkpoint that never completed, a data file of a failed
      // write; both old.
      Path neverCompleted =
          Files.writeString(metadata.resolve("shardberg-maintained-0000-9-data-0-x.avro"), "x");
      Path failedWrite = Files.writeString(data.resolve("00000-0-failed-00001.parquet"), "x");
      for (Path p :
          Stream.concat(neededByCheckpoint3.stream(), Stream.of(neverCompleted, failedWrite))
              .toList()) {
        Files.setLastModifiedTime(
            p, FileTime.fromMillis(System.currentTimeMillis() - Duration.ofDays(2).toMillis()));
      }

      // Maintenance runs after every completed checkpoint; a repeated notice of 2 triggers it.
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                coordinator.harness.notifyOfCompletedCheckpoint(2);
                return !Files.exists(neverCompleted) && !Files.exists(failedWrite);
              });
      assertThat(neededByCheckpoint3).allMatch(Files::exists);
      table.refresh();
      assertThat(table.snapshots()).hasSize(1);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> !Files.exists(Path.of(java.net.URI.create(firstManifestList).getPath())));
      assertThat(coordinator.pending()).containsExactly(3L);
    }

    // Killed; restored from the checkpoint taken just before expiry and orphan removal.
    try (Coordinator restored =
        new Coordinator(TestTables.loader(warehouse), new JobID(), CommitGuardFactory.none(), 10)) {
      restored.harness.initializeState(takenBeforeMaintenance);
      restored.harness.open();
      assertThat(restored.pending()).isEmpty();
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "a2"), new Row(1, 3, "c"));
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(2L, 3L);
  }

  /**
   * A writer's files reach the coordinator for a checkpoint the coordinator has not taken yet (an
   * aborted checkpoint's results wait for the next one; a slow barrier): orphan removal keeps them
   * even when they are older than its minimum age, and the checkpoint that stages them commits
   * them.
   */
  @Test
  void orphanRemovalKeepsTheWritersFilesTheCoordinatorCollectedButHasNotStagedYet()
      throws Exception {
    Configuration config = orphanRemovalEveryCheckpoint();
    config.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_ENABLED, false);
    MaintenanceSettings settings = MaintenanceSettings.from(config);
    Path data = warehouse.resolve("shop/orders/data");
    try (Writer writer = new Writer(TestTables.loader(warehouse));
        Coordinator coordinator =
            new Coordinator(
                TestTables.loader(warehouse),
                new JobID(),
                CommitGuardFactory.none(),
                10,
                3,
                OperatorHarnesses.PIPELINE,
                settings)) {
      coordinator.harness.open();
      commit(coordinator, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a"), row(INSERT, 1, 2, "b")));

      WriterResult collected =
          writer.checkpoint(
              2,
              row(UPDATE_BEFORE, 1, 1, "a"),
              row(UPDATE_AFTER, 1, 1, "a2"),
              row(INSERT, 1, 3, "c"));
      coordinator.add(
          collected); // received; checkpoint 2's snapshot has not reached the coordinator
      List<Path> collectedFiles = new ArrayList<>();
      java.util.Arrays.stream(collected.files().dataFiles())
          .forEach(f -> collectedFiles.add(Path.of(f.location())));
      java.util.Arrays.stream(collected.files().deleteFiles())
          .forEach(f -> collectedFiles.add(Path.of(f.location())));
      assertThat(collectedFiles).hasSizeGreaterThanOrEqualTo(2);
      Path failedWrite = Files.writeString(data.resolve("00000-0-failed-00001.parquet"), "x");
      for (Path p : Stream.concat(collectedFiles.stream(), Stream.of(failedWrite)).toList()) {
        Files.setLastModifiedTime(
            p, FileTime.fromMillis(System.currentTimeMillis() - Duration.ofDays(2).toMillis()));
      }

      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                coordinator.harness.notifyOfCompletedCheckpoint(1);
                return !Files.exists(failedWrite);
              });
      assertThat(collectedFiles).allMatch(Files::exists);

      coordinator.harness.snapshot(2, 2);
      coordinator.harness.notifyOfCompletedCheckpoint(2);
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "a2"), new Row(1, 2, "b"), new Row(1, 3, "c"));
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);
  }

  private static List<Path> filesNamed(Path dir, String part) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(p -> p.getFileName().toString().startsWith("shardberg-"))
          .filter(p -> p.getFileName().toString().contains(part))
          .filter(p -> p.getFileName().toString().endsWith(".avro"))
          .toList();
    }
  }

  static List<Snapshot> compactions(Table table) {
    return MaintenanceWithIngestTest.compactions(table);
  }
}
