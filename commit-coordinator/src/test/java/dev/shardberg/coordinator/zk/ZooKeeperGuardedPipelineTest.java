package dev.shardberg.coordinator.zk;

import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.ROOT;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.observer;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.options;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.CommitGuardFactory;
import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.coordinator.LogCapture;
import dev.shardberg.coordinator.ShardbergSink;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.coordinator.maintenance.TableHealth;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.logging.log4j.Level;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The coordinator's HA mode end to end: real Flink MiniCluster jobs built with {@link
 * ShardbergSink}, synthetic changelog sources, a real Iceberg table (Hadoop catalog on disk) and a
 * real ZooKeeper server. Every job runs without restarts, so a failure is final and visible.
 */
class ZooKeeperGuardedPipelineTest {
  @org.junit.jupiter.api.BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    dev.shardberg.coordinator.zk.ZooKeeperTestSupport.neverExitTheJvm();
  }

  private static final TableIdentifier ID = TableIdentifier.of(Namespace.of("shop"), "orders");
  private static final String TABLE_NAME = "hadoop.shop.orders";
  private static final int BATCHES = 4;
  private static final int ROWS_PER_SHARD = 3;
  private static final int[] SHARDS_A = {0, 1, 2, 3};
  private static final int[] SHARDS_B = {4, 5, 6, 7};
  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);

  /**
   * Keeps the metrics of finished jobs, so a test reads the coordinator's histograms after the job.
   */
  private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setConfiguration(METRICS.addToConfiguration(new Configuration()))
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(6)
              .build());

  @TempDir Path warehouse;
  private TestingServer zooKeeper;
  private CatalogLoader catalogLoader;
  private ExecutorService executor;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    zooKeeper = ZooKeeperTestSupport.startServer();
    executor = Executors.newCachedThreadPool();
    catalogLoader =
        CatalogLoader.hadoop(
            "hadoop",
            new org.apache.hadoop.conf.Configuration(),
            Map.of(
                "warehouse", warehouse.toString(),
                "metrics-reporter-impl", CommitAttemptsReporter.class.getName()));
    Schema schema =
        new Schema(SharedTableWorkload.SCHEMA.columns(), Set.of(1, 2)); // shard_number, id
    catalogLoader
        .loadCatalog()
        .createTable(
            ID,
            schema,
            PartitionSpec.builderFor(schema).identity("shard_number").bucket("id", 2).build(),
            Map.of(
                TableProperties.FORMAT_VERSION, "2",
                TableProperties.COMMIT_NUM_RETRIES, "60"));
    CommitAttemptsReporter.reset();
  }

  @AfterEach
  void tearDown() throws Exception {
    Collections.reverse(toClose);
    for (AutoCloseable closeable : toClose) {
      closeable.close();
    }
    executor.shutdownNow();
    zooKeeper.close();
  }

  @Test
  void twoPipelinesAndMaintenanceShareOneTableWithoutAnyConflict() throws Exception {
    ZooKeeperOptions zk = options(zooKeeper.getConnectString());
    Run run = runTwoPipelinesWithMaintenance(new ZooKeeperCommitGuardFactory(zk), zk);

    System.out.printf("with lock: %s%n", run);
    assertThat(run.swapHeld).as("a maintenance swap was held for a pipeline commit").isTrue();
    assertThat(run.tableMovedWhileHeld)
        .as("a pipeline committed inside maintenance's lock")
        .isFalse();
    assertThat(run.retriedAttempts).as("Iceberg commit attempts retried on a stale base").isZero();
    assertThat(run.maintenanceConflicts).as("CommitFailedExceptions in maintenance").isZero();
    assertThat(run.lockTimeouts).isZero();
    assertThat(run.maintenanceCommits).isPositive();
    assertThat(readRows()).isEqualTo(expectedRowsOfBoth());
    assertEachCommitAddsTheNextBatch("orders-a", SHARDS_A, BATCHES);
    assertEachCommitAddsTheNextBatch("orders-b", SHARDS_B, BATCHES);
  }

  /**
   * Issue 14 in HA mode: pipeline A runs table maintenance inside its coordinator, pipeline B
   * commits to the same table; every commit (both pipelines' checkpoints, A's compactions, expiry
   * and manifest rewrites) holds the table's ZooKeeper lock, so none is ever retried on a stale
   * base. A waits half-way until a compaction landed, so the later batches update rewritten rows.
   */
  @Test
  void maintenanceInsideOnePipelineAndASecondPipelineShareOneTableWithoutAnyRetry()
      throws Exception {
    ZooKeeperOptions zk = options(zooKeeper.getConnectString());
    Configuration maintenance = new Configuration();
    maintenance.set(MaintenanceOptions.INTERVAL, Duration.ofMillis(100));
    maintenance.set(MaintenanceOptions.COMPACTION_MIN_SMALL_FILES, 2);
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST, 1000);
    maintenance.set(MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS, 4);
    maintenance.set(MaintenanceOptions.ORPHAN_FILES_ENABLED, false);
    String sourceA = uniqueName("a");
    int batches = 6;
    // the coordinator's INFO line per commit, with its duration (the class is package-private)
    LogCapture coordinatorLog =
        closeLater(new LogCapture("dev.shardberg.coordinator.CheckpointCommitter", Level.INFO));
    JobClient a =
        startPipeline(
            "orders-a",
            sourceA,
            SHARDS_A,
            batches,
            batches / 2,
            new ZooKeeperCommitGuardFactory(zk),
            MaintenanceSettings.from(maintenance));
    JobClient b =
        startPipeline(
            "orders-b",
            uniqueName("b"),
            SHARDS_B,
            batches,
            -1,
            new ZooKeeperCommitGuardFactory(zk),
            MaintenanceSettings.disabled());
    whileRunning(a).until(() -> !compactions().isEmpty());
    BatchPerCheckpointSource.progress(sourceA).release.countDown();
    a.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    b.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    assertThat(CommitAttemptsReporter.RETRIED_ATTEMPTS.get())
        .as("Iceberg commit attempts retried on a stale base (CommitFailedException)")
        .isZero();
    Set<String> expected =
        new TreeSet<>(BatchPerCheckpointSource.expectedRows(SHARDS_A, batches, ROWS_PER_SHARD));
    expected.addAll(BatchPerCheckpointSource.expectedRows(SHARDS_B, batches, ROWS_PER_SHARD));
    assertThat(readRows()).isEqualTo(expected);
    assertEachCommitAddsTheNextBatch("orders-a", SHARDS_A, batches);
    assertEachCommitAddsTheNextBatch("orders-b", SHARDS_B, batches);
    assertCommitHistograms(b, "orders-b", coordinatorLog);
    Table table = table();
    for (Snapshot compaction : compactions()) {
      assertThat(readRows(table, compaction.snapshotId()))
          .as("rows of compaction snapshot %d against its parent", compaction.snapshotId())
          .isEqualTo(readRows(table, compaction.parentId()));
    }
  }

  /**
   * Issue 26, item 2: the documented set-up of two pipelines on one table, with expiry ON in the
   * one that maintains: A keeps only what is younger than 3 s (retain-last 1), while B's initial
   * load (every batch inserts new keys into B's empty shards, so every checkpoint holds insert-only
   * rows) runs far longer. B's checks start where the last one held, and B publishes the oldest
   * snapshot they still need, which A's expiry keeps. Before, B's check walked back to its writers'
   * scan and B stopped for good once A expired it (the older test of this pair keeps the whole
   * history, which hid it).
   */
  @Test
  void aSecondPipelinesLongInitialLoadSurvivesTheFirstPipelinesSnapshotExpiry() throws Exception {
    ZooKeeperOptions zk = options(zooKeeper.getConnectString());
    Configuration maintenance = new Configuration();
    maintenance.set(MaintenanceOptions.INTERVAL, Duration.ofMillis(100));
    maintenance.set(MaintenanceOptions.COMPACTION_ENABLED, false);
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST, 1);
    maintenance.set(MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE, Duration.ofSeconds(3));
    maintenance.set(MaintenanceOptions.ORPHAN_FILES_ENABLED, false);
    int batchesA = 30;
    int batchesB = 40; // checkpoints every 200 ms: well past A's max-age
    JobClient a =
        startPipeline(
            "orders-a",
            uniqueName("a"),
            SHARDS_A,
            batchesA,
            -1,
            new ZooKeeperCommitGuardFactory(zk),
            MaintenanceSettings.from(maintenance));
    JobClient b =
        startPipeline(
            "orders-b",
            uniqueName("b"),
            SHARDS_B,
            batchesB,
            -1,
            new ZooKeeperCommitGuardFactory(zk),
            MaintenanceSettings.disabled());
    a.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    b.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    Set<String> expected =
        new TreeSet<>(BatchPerCheckpointSource.expectedRows(SHARDS_A, batchesA, ROWS_PER_SHARD));
    expected.addAll(BatchPerCheckpointSource.expectedRows(SHARDS_B, batchesB, ROWS_PER_SHARD));
    assertThat(readRows()).isEqualTo(expected);
    Table table = table();
    long oldestKept = Long.MAX_VALUE;
    for (Snapshot snapshot : table.snapshots()) {
      oldestKept = Math.min(oldestKept, snapshot.sequenceNumber());
    }
    assertThat(oldestKept)
        .as("sequence number of the oldest snapshot left: A's expiry ran")
        .isGreaterThan(1);
  }

  /**
   * The coordinator's commit-duration and lock-wait histograms (issue 16), read from its operator
   * metric group: exactly the durations the coordinator logged for its commits (data and
   * heartbeat), one each, and one lock wait per commit attempt that got the ZooKeeper lock.
   */
  private static void assertCommitHistograms(
      JobClient job, String pipelineId, LogCapture coordinatorLog) {
    // the coordinator's "shardberg" group of this job (by group: identifiers of chained operators
    // collide)
    Map<String, Metric> metrics = new java.util.HashMap<>();
    METRICS
        .getMetricsByGroup()
        .forEach(
            (group, byName) -> {
              if (job.getJobID().toString().equals(group.getAllVariables().get("<job_id>"))
                  && group.getMetricIdentifier("x").endsWith(".shardberg.x")) {
                byName.forEach((name, metric) -> metrics.put(".shardberg." + name, metric));
              }
            });
    long commits =
        counter(metrics, ".shardberg.commits") + counter(metrics, ".shardberg.heartbeatCommits");
    List<Long> logged = loggedCommitMillis(coordinatorLog, pipelineId);
    assertThat(logged)
        .as("commits logged by the coordinator of %s", pipelineId)
        .hasSize((int) commits);
    Histogram durations = (Histogram) metric(metrics, ".shardberg.commitDurationMs");
    assertThat(durations.getCount()).as("commitDurationMs values").isEqualTo(commits);
    assertThat(durations.getStatistics().getValues())
        .as("commitDurationMs values: the logged commit durations")
        .containsExactlyInAnyOrder(logged.stream().mapToLong(Long::longValue).toArray());
    Histogram lockWaits = (Histogram) metric(metrics, ".shardberg.lockWaitMs");
    long attempts =
        commits
            + counter(metrics, ".shardberg.commitRetries")
            + counter(metrics, ".shardberg.checkpointsAlreadyCommitted");
    assertThat(lockWaits.getCount())
        .as("lockWaitMs values: one per attempt under the lock")
        .isEqualTo(attempts);
  }

  /**
   * The durations the coordinator logged per commit of {@code pipelineId} (data and heartbeat), in
   * ms.
   */
  private static List<Long> loggedCommitMillis(LogCapture log, String pipelineId) {
    List<Long> millis = new ArrayList<>();
    for (LogCapture.Line line : log.lines()) {
      List<Object> args = line.arguments();
      if (line.format().startsWith("Committed checkpoint ") && pipelineId.equals(args.get(2))) {
        millis.add(((Number) args.get(9)).longValue());
      } else if (line.format().startsWith("Committed heartbeat ")
          && pipelineId.equals(args.get(0))) {
        millis.add(((Number) args.get(4)).longValue());
      }
    }
    return millis;
  }

  private static Metric metric(Map<String, Metric> metrics, String suffix) {
    List<Metric> found = new ArrayList<>();
    metrics.forEach(
        (id, m) -> {
          if (id.endsWith(suffix)) {
            found.add(m);
          }
        });
    assertThat(found).as("metrics ending in %s among %s", suffix, metrics.keySet()).hasSize(1);
    return found.get(0);
  }

  private static long counter(Map<String, Metric> metrics, String suffix) {
    return ((Counter) metric(metrics, suffix)).getCount();
  }

  private List<Snapshot> compactions() {
    Table table = table();
    List<Snapshot> found = new ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      if ("compaction".equals(s.summary().get(TableHealth.MAINTENANCE))) {
        found.add(s);
      }
    }
    return found;
  }

  private static Set<String> readRows(Table table, long snapshotId) throws IOException {
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      return rowsOnceEach(records, "snapshot " + snapshotId);
    }
  }

  /**
   * "shard|id|payload" of every row, sorted; fails at once on a key (shard, id) read twice, which a
   * set of rows would hide (a checkpoint committed twice duplicates keys).
   */
  private static Set<String> rowsOnceEach(CloseableIterable<Record> records, String where) {
    Map<String, String> byKey = new java.util.HashMap<>();
    for (Record r : records) {
      String key = r.getField("shard_number") + "|" + r.getField("id");
      String row = key + "|" + r.getField("payload");
      String before = byKey.put(key, row);
      if (before != null) {
        throw new IllegalStateException(
            String.format(
                "Key %s is in the table twice at %s: %s and %s", key, where, before, row));
      }
    }
    return new TreeSet<>(byKey.values());
  }

  /**
   * The same run without the lock: nothing keeps a pipeline from committing between maintenance's
   * refresh and its swap. The run makes that certain once (maintenance holds its first swap until a
   * pipeline has committed; with the lock that cannot happen), so Iceberg retries that maintenance
   * commit on its stale base; how many more races happen depends on scheduling (printed). Every row
   * still lands exactly once.
   */
  @Test
  void withoutTheLockTheSameRunRetriesOnStaleBases() throws Exception {
    Run run = runTwoPipelinesWithMaintenance(CommitGuardFactory.none(), null);

    System.out.printf("without lock: %s%n", run);
    assertThat(run.swapHeld).as("a maintenance swap was held for a pipeline commit").isTrue();
    assertThat(run.tableMovedWhileHeld)
        .as("a pipeline committed between maintenance's refresh and swap")
        .isTrue();
    assertThat(run.retriedAttempts + run.maintenanceConflicts)
        .as(
            "stale-base retries: Iceberg's retried attempts + CommitFailedExceptions in maintenance")
        .isPositive();
    assertThat(readRows()).isEqualTo(expectedRowsOfBoth());
    assertEachCommitAddsTheNextBatch("orders-a", SHARDS_A, BATCHES);
    assertEachCommitAddsTheNextBatch("orders-b", SHARDS_B, BATCHES);
  }

  @Test
  void samePipelineStartedTwiceOnlyTheNewerCommitsAndTheOlderStopsWithTheFencingMessage()
      throws Exception {
    ZooKeeperOptions zk = options(zooKeeper.getConnectString());
    CommitGuardFactory guard = new ZooKeeperCommitGuardFactory(zk);
    String firstSource = uniqueName("first");
    int held = 2;
    JobClient first = startPipeline("orders", firstSource, SHARDS_A, BATCHES, held, guard);
    Set<String> firstBatches =
        BatchPerCheckpointSource.expectedRows(SHARDS_A, held, ROWS_PER_SHARD);
    whileRunning(first).until(() -> readRows().equals(firstBatches));
    List<Long> epochsBefore = epochsOf("orders");
    assertThat(epochsBefore).containsOnly(1L);

    JobClient second = startPipeline("orders", uniqueName("second"), SHARDS_A, BATCHES, -1, guard);
    CuratorFramework observer = closeLater(observer(zooKeeper.getConnectString()));
    whileRunning(second)
        .until(
            () ->
                "2"
                    .equals(
                        new String(
                            observer.getData().forPath(ROOT + "/pipelines/orders/epoch"), UTF_8)));
    BatchPerCheckpointSource.progress(firstSource).release.countDown();

    assertThatThrownBy(
            () -> first.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        .hasStackTraceContaining(
            "Cannot commit to table 'hadoop.shop.orders': another instance of pipeline 'orders'"
                + " started with epoch 2 (this instance has epoch 1), so this instance stops"
                + " committing for good.");
    second.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    assertThat(readRows())
        .isEqualTo(BatchPerCheckpointSource.expectedRows(SHARDS_A, BATCHES, ROWS_PER_SHARD));
    List<Long> epochs = epochsOf("orders");
    int firstOfSecond = epochs.indexOf(2L);
    assertThat(firstOfSecond).as("the newer instance committed").isPositive();
    assertThat(epochs.subList(0, firstOfSecond)).containsOnly(1L);
    assertThat(epochs.subList(firstOfSecond, epochs.size()))
        .as("nothing of the older instance after the newer one started")
        .containsOnly(2L);
    assertCheckpointsCommittedOnceInOrder("orders");
  }

  @Test
  void zooKeeperLostInsideTheLockAndASessionExpiredLoseNothingAndCommitsResume() throws Exception {
    ZooKeeperOptions zk = options(zooKeeper.getConnectString());
    String hook = uniqueName("hook");
    String source = uniqueName("source");
    CountDownLatch zooKeeperStopped = new CountDownLatch(1);
    AtomicBoolean expireNext = new AtomicBoolean();
    CountDownLatch sessionExpired = new CountDownLatch(1);
    HookedGuardFactory.register(
        hook,
        (guard, call) -> {
          if (call == 2) { // second commit attempt: the lock is held, the commit not yet made
            zooKeeper.stop();
            await().atMost(JOB_TIMEOUT).until(() -> !guard.canCommit());
            zooKeeperStopped.countDown();
          } else if (expireNext.compareAndSet(true, false)) {
            long before = guard.connectionInterruptions();
            guard
                .client()
                .getZookeeperClient()
                .getZooKeeper()
                .getTestable()
                .injectSessionExpiration();
            await().atMost(JOB_TIMEOUT).until(() -> guard.connectionInterruptions() > before);
            sessionExpired.countDown();
          }
        });
    int batches = 8;
    // The source holds before its last batch until the session has expired after the restart: a job
    // whose input ended before the guard reconnected would leave nothing to commit in that window.
    JobClient job =
        startPipeline(
            "orders", source, SHARDS_A, batches, batches - 1, new HookedGuardFactory(zk, hook));

    assertThat(zooKeeperStopped.await(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    // Checkpoints keep completing while ZooKeeper is down; nothing is committed meanwhile.
    BatchPerCheckpointSource.Progress progress = BatchPerCheckpointSource.progress(source);
    long checkpointsAtStop = progress.completedCheckpoints.get();
    whileRunning(job).until(() -> progress.completedCheckpoints.get() >= checkpointsAtStop + 2);
    int snapshotsWhileDown = snapshotCount();
    whileRunning(job).until(() -> progress.completedCheckpoints.get() >= checkpointsAtStop + 4);
    assertThat(snapshotCount()).isEqualTo(snapshotsWhileDown);
    assertThat(job.getJobStatus().get()).isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);

    expireNext.set(true); // the first commit after the restart loses its session inside the lock
    zooKeeper.restart();
    assertThat(sessionExpired.await(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    progress.release.countDown();
    job.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    assertThat(readRows())
        .isEqualTo(BatchPerCheckpointSource.expectedRows(SHARDS_A, batches, ROWS_PER_SHARD));
    assertEachCommitAddsTheNextBatch("orders", SHARDS_A, batches);
  }

  // --- running pipelines ---

  private record Run(
      long pipelineCommits,
      long maintenanceCommits,
      long retriedAttempts,
      long maintenanceConflicts,
      long lockTimeouts,
      boolean swapHeld,
      boolean tableMovedWhileHeld,
      Duration elapsed,
      String maintenanceLockWaitsMs) {}

  private Run runTwoPipelinesWithMaintenance(CommitGuardFactory guard, ZooKeeperOptions zk)
      throws Exception {
    long start = System.nanoTime();
    // Pipeline A holds before its last batch until maintenance holds its first swap: a pipeline
    // commit is then due while maintenance is between its refresh and its swap.
    String sourceA = uniqueName("a");
    JobClient a = startPipeline("orders-a", sourceA, SHARDS_A, BATCHES, BATCHES - 1, guard);
    JobClient b = startPipeline("orders-b", uniqueName("b"), SHARDS_B, BATCHES, -1, guard);
    Table maintained = catalogLoader.loadCatalog().loadTable(ID);
    SwapHeldOnce held =
        new SwapHeldOnce(
            ((HasTableOperations) maintained).operations(),
            BatchPerCheckpointSource.progress(sourceA).release,
            // with the lock the pipeline waits for it: no move to wait for, a few seconds show it
            zk == null ? JOB_TIMEOUT : Duration.ofSeconds(3));
    AtomicBoolean jobsRunning = new AtomicBoolean(true);
    AtomicLong conflicts = new AtomicLong();
    AtomicLong lockTimeouts = new AtomicLong();
    ZooKeeperTableLock lock =
        zk == null ? null : closeLater(ZooKeeperTableLock.open(zk, TABLE_NAME));
    Histogram maintenanceLockWaits = SharedTableWorkload.lockWaitHistogram();
    Future<Long> maintenance =
        executor.submit(
            () ->
                // Maintenance that rests 500 ms between rounds, as a real run does. A loop that
                // commits back to back starves any optimistic committer without the lock: the
                // coordinator's transactional commit (data + progress record in one swap) takes
                // ~300 ms from refresh to swap on a loaded 2-core box, longer than a bare RowDelta,
                // and lost every retry to a spinning loop.
                SharedTableWorkload.maintain(
                    new BaseTable(held, maintained.name(), new CommitAttemptsReporter()),
                    lock,
                    jobsRunning::get,
                    conflicts,
                    lockTimeouts,
                    Duration.ofMillis(500),
                    maintenanceLockWaits));
    try {
      a.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      b.getJobExecutionResult().get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } finally {
      jobsRunning.set(false);
    }
    long maintenanceCommits = maintenance.get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    long pipelineCommits =
        CommittedCheckpoints.history(table(), "orders-a", Integer.MAX_VALUE).size()
            + CommittedCheckpoints.history(table(), "orders-b", Integer.MAX_VALUE).size();
    return new Run(
        pipelineCommits,
        maintenanceCommits,
        CommitAttemptsReporter.RETRIED_ATTEMPTS.get(),
        conflicts.get(),
        lockTimeouts.get(),
        held.held.get(),
        held.moved.get(),
        Duration.ofNanos(System.nanoTime() - start),
        lock == null ? null : SharedTableWorkload.describe(maintenanceLockWaits.getStatistics()));
  }

  private JobClient startPipeline(
      String pipelineId,
      String sourceName,
      int[] shards,
      int batches,
      int holdBefore,
      CommitGuardFactory guard)
      throws Exception {
    return startPipeline(
        pipelineId, sourceName, shards, batches, holdBefore, guard, MaintenanceSettings.disabled());
  }

  private JobClient startPipeline(
      String pipelineId,
      String sourceName,
      int[] shards,
      int batches,
      int holdBefore,
      CommitGuardFactory guard,
      MaintenanceSettings maintenance)
      throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    env.configure(conf);
    env.enableCheckpointing(200);
    env.setParallelism(2);
    DataStream<RowData> changes =
        env.addSource(
                new BatchPerCheckpointSource(
                    sourceName, shards, batches, ROWS_PER_SHARD, holdBefore),
                "synthetic changes " + sourceName,
                InternalTypeInfo.of(BatchPerCheckpointSource.ROW_TYPE))
            .setParallelism(1);
    ShardbergSink.forRowData(changes)
        .tableLoader(TableLoader.fromCatalog(catalogLoader, ID))
        .tableName(TABLE_NAME)
        .rowType(BatchPerCheckpointSource.ROW_TYPE)
        .pipelineId(pipelineId)
        .commitGuard(guard)
        .lockTimeout(Duration.ofSeconds(30))
        .maintenance(maintenance)
        .append();
    return env.executeAsync("pipeline " + pipelineId);
  }

  /** Awaits a condition, failing at once when the job has already ended. */
  private static ConditionFactory whileRunning(JobClient job) {
    return await()
        .atMost(JOB_TIMEOUT)
        .failFast(
            "the job ended before the condition held",
            () -> job.getJobStatus().get().isGloballyTerminalState());
  }

  // --- reading the table ---

  private Table table() {
    return catalogLoader.loadCatalog().loadTable(ID);
  }

  /** The table's rows now; fails on a key read twice ({@link #rowsOnceEach}). */
  private Set<String> readRows() throws IOException {
    try (CloseableIterable<Record> records = IcebergGenerics.read(table()).build()) {
      return rowsOnceEach(records, "the current snapshot");
    }
  }

  private static Set<String> expectedRowsOfBoth() {
    Set<String> expected =
        new TreeSet<>(BatchPerCheckpointSource.expectedRows(SHARDS_A, BATCHES, ROWS_PER_SHARD));
    expected.addAll(BatchPerCheckpointSource.expectedRows(SHARDS_B, BATCHES, ROWS_PER_SHARD));
    return expected;
  }

  private int snapshotCount() {
    Table table = table();
    return table.currentSnapshot() == null ? 0 : SnapshotUtil.currentAncestorIds(table).size();
  }

  /** Epochs of the pipeline's snapshots, oldest first. */
  private List<Long> epochsOf(String pipelineId) {
    List<Long> epochs = new ArrayList<>();
    for (CommitRecord record :
        CommittedCheckpoints.history(table(), pipelineId, Integer.MAX_VALUE)) {
      epochs.add(record.epoch());
    }
    Collections.reverse(epochs);
    return epochs;
  }

  private void assertCheckpointsCommittedOnceInOrder(String pipelineId) {
    List<Long> ids = new ArrayList<>();
    for (CommitRecord record :
        CommittedCheckpoints.history(table(), pipelineId, Integer.MAX_VALUE)) {
      ids.add(record.checkpointId());
    }
    Collections.reverse(ids);
    assertThat(ids)
        .as("checkpoint ids of %s, oldest first", pipelineId)
        .isNotEmpty()
        .isSorted()
        .doesNotHaveDuplicates();
  }

  /**
   * Each checkpoint committed once, by content as well as by id: the source puts one batch in each
   * checkpoint, so the pipeline's n-th data commit (oldest first) must show its shards holding
   * exactly batches 0..n-1, and there are {@code batches} of them. A checkpoint committed again
   * under a new id, or one lost, or two in one snapshot, fails here even when the ids look right.
   */
  private void assertEachCommitAddsTheNextBatch(String pipelineId, int[] shards, int batches)
      throws IOException {
    assertCheckpointsCommittedOnceInOrder(pipelineId);
    Table table = table();
    List<CommitRecord> dataCommits = new ArrayList<>();
    for (CommitRecord record : CommittedCheckpoints.history(table, pipelineId, Integer.MAX_VALUE)) {
      if (!record.heartbeat()) {
        dataCommits.add(0, record);
      }
    }
    Set<String> shardPrefixes = new TreeSet<>();
    for (int shard : shards) {
      shardPrefixes.add(shard + "|");
    }
    List<String> mismatches = new ArrayList<>();
    for (int n = 0; n < dataCommits.size(); n++) {
      CommitRecord commit = dataCommits.get(n);
      Set<String> ofPipeline = new TreeSet<>();
      for (String row : readRows(table, commit.snapshotId())) {
        if (shardPrefixes.contains(row.substring(0, row.indexOf('|') + 1))) {
          ofPipeline.add(row);
        }
      }
      if (!ofPipeline.equals(
          BatchPerCheckpointSource.expectedRows(shards, n + 1, ROWS_PER_SHARD))) {
        mismatches.add(
            String.format(
                "data commit %d (checkpoint %d, snapshot %d) holds %s",
                n + 1, commit.checkpointId(), commit.snapshotId(), ofPipeline));
      }
    }
    assertThat(mismatches)
        .as("data commits of %s that do not hold exactly the batches before them", pipelineId)
        .isEmpty();
    assertThat(dataCommits).as("data commits of %s: one per batch", pipelineId).hasSize(batches);
  }

  /**
   * The maintenance table's operations: its first swap is held until a pipeline has committed after
   * the metadata that swap was built on (at most {@code upTo}), after releasing pipeline A's last
   * batch so that such a commit is due. Without the lock the swap then fails on a stale base and
   * Iceberg retries it; with the lock the pipeline waits, and nothing moves while it is held.
   */
  private static final class SwapHeldOnce implements TableOperations {
    private final TableOperations delegate;
    private final CountDownLatch release;
    private final Duration upTo;
    final AtomicBoolean held = new AtomicBoolean();
    final AtomicBoolean moved = new AtomicBoolean();

    SwapHeldOnce(TableOperations delegate, CountDownLatch release, Duration upTo) {
      this.delegate = delegate;
      this.release = release;
      this.upTo = upTo;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      if (held.compareAndSet(false, true)) {
        release.countDown();
        long deadline = System.nanoTime() + upTo.toNanos();
        while (System.nanoTime() < deadline
            && base.metadataFileLocation().equals(delegate.refresh().metadataFileLocation())) {
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        }
        moved.set(!base.metadataFileLocation().equals(delegate.current().metadataFileLocation()));
      }
      delegate.commit(base, metadata);
    }

    @Override
    public TableMetadata current() {
      return delegate.current();
    }

    @Override
    public TableMetadata refresh() {
      return delegate.refresh();
    }

    @Override
    public org.apache.iceberg.io.FileIO io() {
      return delegate.io();
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return delegate.metadataFileLocation(fileName);
    }

    @Override
    public org.apache.iceberg.io.LocationProvider locationProvider() {
      return delegate.locationProvider();
    }

    @Override
    public org.apache.iceberg.encryption.EncryptionManager encryption() {
      return delegate.encryption();
    }

    @Override
    public long newSnapshotId() {
      return delegate.newSnapshotId();
    }
  }

  private <T extends AutoCloseable> T closeLater(T closeable) {
    toClose.add(closeable);
    return closeable;
  }

  private static String uniqueName(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }
}
