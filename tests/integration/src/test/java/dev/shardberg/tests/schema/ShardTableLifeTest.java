package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.coordinator.zk.ZooKeeperTableLock;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.SmallOrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.TestingServer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What happens to a shard's table in its life besides column changes, on real MariaDB shards with
 * the real job: a {@code TRUNCATE TABLE} of one shard while every shard keeps changing (its rows
 * leave the Iceberg table in order with the data, rows written after it stay, the other shards are
 * untouched, and a restore from a savepoint taken before it replays it to the same table); a {@code
 * DROP TABLE} of one shard (its rows stay, the host watch counts it); and in HA mode a schema
 * change waits for the table's ZooKeeper lock like every other commit on the table.
 */
class ShardTableLifeTest {
  /**
   * Curator's TestingServer runs ZooKeeper's embedded server, which ends the JVM ({@code
   * System.exit(2)}) on an error in its lifecycle: the tests want the error, not a crashed fork.
   */
  @BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    org.apache.zookeeper.util.ServiceUtils.setSystemExitProcedure(
        org.apache.zookeeper.util.ServiceUtils.LOG_ONLY);
  }

  private static final Duration CAUGHT_UP = Duration.ofMinutes(3);
  private static final String USER = "truncate_cdc";
  private static final String PASSWORD = "truncate-pw";

  private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () ->
              new MiniClusterResourceConfiguration.Builder()
                  .setConfiguration(METRICS.addToConfiguration(new Configuration()))
                  .setNumberTaskManagers(1)
                  .setNumberSlotsPerTaskManager(4)
                  .build());

  @TempDir static Path dir;
  static EmbeddedMariaDb server;
  static Path passwordFile;

  @BeforeAll
  static void start() {
    server = EmbeddedMariaDb.start("truncate", 43);
    server.createCdcUser(USER, PASSWORD);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  /**
   * Shards {@code db.orders_0..n-1} (id key, qty, note) with {@code rows} rows each; returns the
   * expected table.
   */
  static Shards shards(String db, int n, int rows) {
    SmallOrdersShards.create(server, db, n);
    Shards shards = new Shards(db);
    for (int s = 0; s < n; s++) {
      shards.expected.put(s, new TreeMap<>());
      for (long id = 1; id <= rows; id++) {
        shards.upsert(s, id, (int) id);
      }
    }
    return shards;
  }

  /** The shards of one database and what the table must hold: shard → id → qty. */
  static final class Shards {
    final String db;
    final Map<Integer, TreeMap<Long, Integer>> expected = new TreeMap<>();

    Shards(String db) {
      this.db = db;
    }

    void upsert(int shard, long id, int qty) {
      server.execute(
          "INSERT INTO "
              + db
              + ".orders_"
              + shard
              + " (id, qty) VALUES ("
              + id
              + ", "
              + qty
              + ")"
              + " ON DUPLICATE KEY UPDATE qty = "
              + qty);
      expected.get(shard).put(id, qty);
    }

    void delete(int shard, long id) {
      server.execute("DELETE FROM " + db + ".orders_" + shard + " WHERE id = " + id);
      expected.get(shard).remove(id);
    }

    void truncate(int shard) {
      server.execute("TRUNCATE TABLE " + db + ".orders_" + shard);
      expected.get(shard).clear();
    }

    List<String> rows() {
      List<String> rows = new ArrayList<>();
      expected.forEach(
          (shard, byId) -> byId.forEach((id, qty) -> rows.add(shard + "|" + id + "|" + qty)));
      rows.sort(null);
      return rows;
    }
  }

  static List<String> tableRows(Table table) {
    return TableRows.of(table, "qty");
  }

  /** shard|id|qty of {@code <db>.orders} as a real Spark (Iceberg's Spark runtime) reads it. */
  static List<String> sparkRows(String db) {
    org.apache.spark.sql.SparkSession spark =
        org.apache.spark.sql.SparkSession.builder()
            .master("local[1]")
            .appName("truncate-read")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.catalog.t", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.t.type", "hadoop")
            .config("spark.sql.catalog.t.warehouse", dir.resolve("warehouse").toUri().toString())
            .getOrCreate();
    try {
      List<String> rows = new ArrayList<>();
      for (org.apache.spark.sql.Row r :
          spark.sql("SELECT shard_number, id, qty FROM t." + db + ".orders").collectAsList()) {
        rows.add(r.getInt(0) + "|" + r.getLong(1) + "|" + r.getInt(2));
      }
      rows.sort(null);
      return rows;
    } finally {
      spark.stop();
    }
  }

  static void awaitRows(Table table, List<String> rows) {
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .ignoreExceptions()
        .until(() -> tableRows(table).equals(rows));
  }

  /** The config of a job on the shards {@code <db>.orders_N}, into table {@code <db>.orders}. */
  static TestConfig config(String db, String pipelineId) throws Exception {
    return TestConfig.pipeline(pipelineId)
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(2)
        .restart(3, "1s")
        .source(
            new TestConfig.Source("truncate", server.host(), server.port())
                .user(USER)
                .passwordFile(passwordFile())
                .serverIds("5710-5711")
                .withoutTls())
        .tables(db, "orders_(?<shard>\\d+)")
        .buckets(3)
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table(db, "orders");
  }

  /** {@code config} written to {@code file} in the test's directory, loaded. */
  static ShardbergConfig load(TestConfig config, String file) throws Exception {
    return ShardbergConfig.load(config.write(dir.resolve(file)));
  }

  static Path passwordFile() throws Exception {
    if (passwordFile == null) {
      passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
    }
    return passwordFile;
  }

  static void cancel(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
  }

  @Test
  void aTruncatedShardLosesItsRowsInOrderWithTheDataAndAReplayEndsTheSame() throws Exception {
    Shards shards = shards("trunc", 3, 30);
    ShardbergConfig config = load(config("trunc", "truncate-pipeline"), "truncate-pipeline.yaml");
    JobClient first =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table = Catalogs.loadTable(config.target());
    String savepoint;
    try {
      awaitRows(table, shards.rows());
      long snapshotRead = System.currentTimeMillis();
      savepoint =
          first
              .triggerSavepoint(
                  dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
              .get();
      // a TRUNCATE within ~2 s of the shard's snapshot rows counts as one during the snapshot and
      // stops
      // the job (binlog times are whole seconds; ShardTruncation): this one comes clearly after
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> System.currentTimeMillis() > snapshotRead + 4_000);

      // changes on every shard around the TRUNCATE of shard 1, some of shard 1 just before it
      // (likely
      // in the same checkpoint), keys that existed before it coming back after it
      shards.upsert(0, 31, 31);
      shards.upsert(1, 5, 500);
      shards.upsert(1, 40, 40);
      shards.delete(1, 6);
      shards.upsert(2, 7, 700);
      shards.truncate(1);
      shards.upsert(1, 5, 5000);
      shards.upsert(1, 41, 41);
      shards.delete(0, 2);
      shards.upsert(2, 41, 41);
      awaitRows(table, shards.rows());
      assertThat(tableRows(table))
          .filteredOn(r -> r.startsWith("1|"))
          .containsExactly("1|41|41", "1|5|5000");
      assertThat(sparkRows("trunc"))
          .as("Spark applies the shard-only deletes too")
          .isEqualTo(shards.rows());

      // later changes of the truncated shard land normally
      shards.upsert(1, 42, 42);
      shards.delete(1, 41);
      awaitRows(table, shards.rows());
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.toString()).isTrue();
    } finally {
      cancel(first);
    }

    // restored from before the TRUNCATE: the rows and the TRUNCATE replay, the table ends the same
    server.execute("INSERT INTO trunc.orders_2 (id, qty) VALUES (50, 50)"); // while the job is down
    shards.expected.get(2).put(50L, 50);
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    JobClient second =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
    try {
      awaitRows(table, shards.rows());
      shards.upsert(1, 43, 43);
      awaitRows(table, shards.rows());
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.toString()).isTrue();
    } finally {
      cancel(second);
    }
  }

  /**
   * The way past a change on one shard that the table cannot follow, without re-reading the others
   * (docs/schema-evolution.md, "Re-reading one shard"): the job stops at the DDL; resumed with the
   * shard excluded, the other shards go on from their binlog position; the shard fixed and included
   * again, the job resumed once more reads it alone from a fresh snapshot and its rows are replaced
   * (rows deleted on MySQL meanwhile leave the table). Resumes go through the local run's
   * checkpoint directory, as {@code bin/shardberg run} does.
   */
  @ParameterizedTest(name = "target.delete-mode: {0}")
  @ValueSource(strings = {"equality", "position"})
  void aShardExcludedAfterAChangeTheTableCannotFollowIsReadAgainAloneWhenIncluded(String mode)
      throws Exception {
    // deletes by key replace the shard's old rows with a delete by shard_number; deletes by
    // position remove its old files in the same commit, and its owners start its partitions empty
    boolean byPosition = mode.equals("position");
    String db = byPosition ? "reread_pos" : "reread";
    String pipelineId = byPosition ? "reread-pos-pipeline" : "reread-pipeline";
    Shards shards = shards(db, 3, 20);
    // one config for every run, changed only in its tables section (as a user edits the one file)
    TestConfig base =
        config(db, pipelineId)
            .deleteMode(mode)
            .checkpointDir(dir.resolve(pipelineId + "-checkpoints").toUri());
    ShardbergConfig first = load(base, pipelineId + ".yaml");
    StringWriter console = new StringWriter();
    JobClient job1 =
        ShardbergPipeline.start(
            LocalCheckpoints.environment(first, false, new PrintWriter(console, true)), first);
    Table table = Catalogs.loadTable(first.target());
    try {
      awaitRows(table, shards.rows());
      shards.upsert(0, 21, 21);
      shards.upsert(1, 2, 200);
      awaitRows(table, shards.rows());
      // not evolvable: the job stops for good at the DDL
      server.execute("ALTER TABLE " + db + ".orders_1 MODIFY qty VARCHAR(30) NOT NULL");
      Throwable failure =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> job1.getJobExecutionResult().get(2, TimeUnit.MINUTES));
      assertThat(
              org.apache.flink.util.ExceptionUtils.findThrowable(
                  failure, dev.shardberg.router.ShardRouterException.class))
          .as("failure %s", failure)
          .isPresent();
    } finally {
      cancel(job1);
    }
    List<String> staleShard1 = tableRows(table).stream().filter(r -> r.startsWith("1|")).toList();
    assertThat(staleShard1).hasSize(20);

    // shard 1 goes on changing on MySQL while it is excluded; the others are resumed from their
    // position
    server.execute(
        "DELETE FROM " + db + ".orders_1 WHERE id IN (3, 4)",
        "UPDATE " + db + ".orders_1 SET qty = '7000' WHERE id = 7");
    shards.expected.get(1).remove(3L);
    shards.expected.get(1).remove(4L);
    shards.expected.get(1).put(7L, 7000);
    ShardbergConfig excluded = load(base.copy().excludeShards(1), pipelineId + "-exclude.yaml");
    JobClient job2 =
        ShardbergPipeline.start(
            LocalCheckpoints.environment(excluded, false, new PrintWriter(console, true)),
            excluded);
    try {
      shards.upsert(0, 22, 22);
      shards.delete(2, 5);
      List<String> duringExclusion =
          new ArrayList<>(shards.rows().stream().filter(r -> !r.startsWith("1|")).toList());
      duringExclusion.addAll(staleShard1);
      duringExclusion.sort(null);
      awaitRows(table, duringExclusion);
      VerifyReport report = Reconciliation.verify(excluded, 5);
      assertThat(report.matches()).as(report.render()).isTrue();
      assertThat(report.excludedShards()).containsEntry(1, 20L);
      assertThat(addedRows(table, pipelineId, job2))
          .as("shard 0 and 2 go on from their position: only the new changes")
          .isEqualTo(Map.of(0, 1L));
    } finally {
      cancel(job2); // its checkpoints stay: the next run resumes from the newest
    }

    // shard 1 fixed (the change reverted) and included again: read alone from a fresh snapshot
    server.execute("ALTER TABLE " + db + ".orders_1 MODIFY qty INT NOT NULL");
    shards.upsert(1, 30, 30);
    // included again with the first config (no tables.reread-shards): the resumed source reads it
    // alone from a fresh snapshot (it is new to the restored state), its old rows are replaced
    JobClient job3 =
        ShardbergPipeline.start(
            LocalCheckpoints.environment(first, false, new PrintWriter(console, true)), first);
    try {
      shards.upsert(2, 23, 23);
      awaitRows(table, shards.rows());
      VerifyReport report = Reconciliation.verify(first, 5);
      assertThat(report.matches()).as(report.render()).isTrue();
      Map<Integer, Long> added = addedRows(table, pipelineId, job3);
      assertThat(added.getOrDefault(0, 0L)).as("shard 0 not read again").isZero();
      assertThat(added.get(2)).as("shard 2: its one new row").isEqualTo(1L);
      assertThat(added.get(1))
          .as("shard 1 read again from a snapshot")
          .isEqualTo((long) shards.expected.get(1).size());
    } finally {
      cancel(job3);
    }
    if (byPosition) {
      assertNoEqualityDelete(table);
      assertThat(
              java.util.stream.StreamSupport.stream(table.snapshots().spliterator(), false)
                  .anyMatch(
                      snapshot ->
                          Long.parseLong(snapshot.summary().getOrDefault("deleted-data-files", "0"))
                              > 0))
          .as("shard 1's old files left the table by a commit of the pipeline")
          .isTrue();
      assertThat(deletionVectorsOfRemovedFiles(table))
          .as(
              "no deletion vector names a data file that left the table (the owners started shard"
                  + " 1's partitions empty instead of deleting its old rows by position)")
          .isEmpty();
    }
    assertThat(console.toString()).contains("Resuming from");
  }

  /**
   * Issue 30: a shard table created on a known host while the job runs is not read then (Flink CDC
   * reads only the tables it was built with); stopped with a savepoint and resumed with the same
   * config, the job reads that shard alone from a fresh snapshot while the others go on from their
   * binlog position: the table holds every shard's rows with their shard number, and the resumed
   * run's commits add only the new shard's rows and the others' new changes. A table whose number
   * clashes with a shard's stops the resume naming both tables.
   */
  @Test
  void aShardCreatedOnAKnownHostIsReadAloneAtTheResumeWithTheSameConfig() throws Exception {
    Shards shards = shards("fleet", 2, 20);
    // not read by the running job (a MiniCluster does not adopt; capture: NewShardCaptureTest)
    ShardbergConfig config =
        load(config("fleet", "fleet-pipeline").newShards("adopt"), "fleet-pipeline.yaml");
    try (dev.shardberg.tests.job.CapturedLog log =
        new dev.shardberg.tests.job.CapturedLog(
            "dev.shardberg", org.apache.logging.log4j.Level.INFO)) {
      aShardCreatedOnAKnownHostIsReadAloneAtTheResume(shards, config, log);
    }
  }

  private static void aShardCreatedOnAKnownHostIsReadAloneAtTheResume(
      Shards shards, ShardbergConfig config, dev.shardberg.tests.job.CapturedLog log)
      throws Exception {
    JobClient first =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table = Catalogs.loadTable(config.target());
    String savepoint;
    try {
      awaitRows(table, shards.rows());
      // created while the job runs, with rows: not read by this run (the WARN names it)
      server.execute(SmallOrdersShards.createTable("fleet", 2));
      shards.expected.put(2, new TreeMap<>());
      for (long id = 1; id <= 15; id++) {
        shards.upsert(2, id, (int) (100 + id));
      }
      shards.upsert(0, 21, 21);
      List<String> withoutShard2 = shards.rows().stream().filter(r -> !r.startsWith("2|")).toList();
      awaitRows(table, withoutShard2);
      // not silent: the host watch names the table and the way on (it looks every 30 s)
      await()
          .atMost(Duration.ofSeconds(75))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () ->
                  log.has(
                      org.apache.logging.log4j.Level.WARN,
                      "Table 'fleet.orders_2'",
                      "matches the shard patterns (shard 2) but is not read by this Flink job",
                      "resume it with the same config"));
      assertThat(tableRows(table)).as("not read while the job runs").isEqualTo(withoutShard2);
      // and counted for status (its WARNING: a table created while the job runs is not read)
      await()
          .atMost(Duration.ofMinutes(1))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> gauge(first, "host.truncate", "unreadShardTables"),
              v -> v != null && v.intValue() == 1);
      savepoint =
          first
              .triggerSavepoint(
                  dir.resolve("fleet-savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
              .get();
    } finally {
      cancel(first);
    }
    // while the job is stopped: more rows on the new shard and a change on an old one
    shards.upsert(2, 16, 116);
    shards.delete(2, 3);
    shards.upsert(1, 5, 500);

    // a table whose number clashes with shard 1's: the resume stops at discovery naming both
    server.execute("CREATE TABLE fleet.orders_01 " + SmallOrdersShards.COLUMNS);
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    Throwable clash =
        org.assertj.core.api.Assertions.catchThrowable(
            () ->
                ShardbergPipeline.start(
                    StreamExecutionEnvironment.getExecutionEnvironment(conf), config));
    assertThat(clash)
        .isInstanceOf(dev.shardberg.router.ShardRouterException.class)
        .hasMessageContaining("shard number 1 is taken by")
        .hasMessageContaining("'fleet.orders_1'")
        .hasMessageContaining("'fleet.orders_01'");
    server.execute("DROP TABLE fleet.orders_01");

    // resumed with the same config: shard 2 read alone from a snapshot
    JobClient second =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
    try {
      awaitRows(table, shards.rows());
      shards.upsert(2, 17, 117); // and from the binlog afterwards
      shards.upsert(0, 22, 22);
      awaitRows(table, shards.rows());
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.render()).isTrue();
      assertThat(
              log.has(
                  org.apache.logging.log4j.Level.INFO,
                  "Shard 2 ('fleet.orders_2')",
                  "is new to the restored state: it is read alone from a fresh snapshot"))
          .as("one INFO line names the new shard")
          .isTrue();
      Map<Integer, Long> added = addedRows(table, "fleet-pipeline", second);
      assertThat(added)
          .as("only shard 2 is read from a snapshot; shards 0 and 1 add only their new changes")
          .isEqualTo(Map.of(0, 1L, 1, 1L, 2, (long) shards.expected.get(2).size()));
    } finally {
      cancel(second);
    }
  }

  /**
   * Issue 28: {@code pipeline.on-stateless-start: resnapshot} with deletes by position. Rows
   * deleted and changed on MySQL while no job ran: the start without state removes the shards'
   * files in one commit (whole files: a delete by the identity-partitioned shard column, deletion
   * vectors included) and reads them again; the table equals the shards, with no equality delete
   * and no deletion vector of a removed file, and later changes are deleted by position.
   */
  @Test
  void withDeletesByPositionAResnapshotRemovesTheShardsFilesAndReadsThemAgain() throws Exception {
    Shards shards = shards("resnap_pos", 2, 20);
    TestConfig base =
        config("resnap_pos", "resnap-pos-pipeline")
            .deleteMode("position")
            .checkpointDir(dir.resolve("resnap-pos-checkpoints").toUri());
    ShardbergConfig first = load(base, "resnap-pos-pipeline.yaml");
    JobClient job1 =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), first);
    Table table = Catalogs.loadTable(first.target());
    try {
      awaitRows(table, shards.rows());
      shards.upsert(0, 3, 300); // a deletion vector on a snapshot file
      awaitRows(table, shards.rows());
    } finally {
      cancel(job1);
    }
    // while no job runs: changes no job sees
    shards.delete(0, 5);
    shards.delete(1, 6);
    shards.upsert(1, 7, 700);
    ShardbergConfig again =
        load(base.copy().onStatelessStart("resnapshot"), "resnap-pos-pipeline-again.yaml");
    JobClient job2 =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), again);
    try {
      awaitRows(table, shards.rows());
      shards.upsert(1, 8, 800);
      shards.upsert(0, 4, 400);
      shards.delete(0, 9);
      awaitRows(table, shards.rows());
      VerifyReport report = Reconciliation.verify(again, 5);
      assertThat(report.matches()).as(report.render()).isTrue();
    } finally {
      cancel(job2);
    }
    assertNoEqualityDelete(table);
    assertThat(deletionVectorsOfRemovedFiles(table)).isEmpty();
    assertThat(
            java.util.stream.StreamSupport.stream(table.snapshots().spliterator(), false)
                .filter(
                    snapshot ->
                        "resnap-pos-pipeline"
                            .equals(snapshot.summary().get("shardberg.resnapshot.pipeline-id")))
                .count())
        .as("one commit removed the shards' files")
        .isEqualTo(1);
  }

  /** No snapshot of {@code table} (refreshed) added an equality-delete file. */
  static void assertNoEqualityDelete(Table table) {
    table.refresh();
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-delete-files", "0"))
          .as("no equality delete in snapshot %s: %s", snapshot.snapshotId(), snapshot.summary())
          .isEqualTo("0");
    }
  }

  /** The deletion vectors of the current snapshot whose data file is not in it. */
  static List<String> deletionVectorsOfRemovedFiles(Table table) throws Exception {
    org.apache.iceberg.Snapshot current = table.currentSnapshot();
    java.util.Set<String> live = new java.util.HashSet<>();
    for (org.apache.iceberg.ManifestFile manifest : current.dataManifests(table.io())) {
      try (org.apache.iceberg.ManifestReader<org.apache.iceberg.DataFile> reader =
          org.apache.iceberg.ManifestFiles.read(manifest, table.io(), table.specs())) {
        reader.forEach(file -> live.add(file.location()));
      }
    }
    List<String> dangling = new ArrayList<>();
    for (org.apache.iceberg.ManifestFile manifest : current.deleteManifests(table.io())) {
      try (org.apache.iceberg.ManifestReader<org.apache.iceberg.DeleteFile> reader =
          org.apache.iceberg.ManifestFiles.readDeleteManifest(
              manifest, table.io(), table.specs())) {
        for (org.apache.iceberg.DeleteFile file : reader) {
          if (file.referencedDataFile() != null && !live.contains(file.referencedDataFile())) {
            dangling.add(file.location() + " -> " + file.referencedDataFile());
          }
        }
      }
    }
    return dangling;
  }

  static Map<Integer, Long> addedRows(Table table, String pipelineId, JobClient job) {
    return addedRows(table, pipelineId, job.getJobID().toString());
  }

  /** Per shard, the rows the commits of Flink job {@code flinkJobId} added. */
  static Map<Integer, Long> addedRows(Table table, String pipelineId, String flinkJobId) {
    table.refresh();
    Map<Integer, Long> added = new TreeMap<>();
    for (dev.shardberg.coordinator.CommitRecord c :
        dev.shardberg.coordinator.CommittedCheckpoints.history(
            table, pipelineId, Integer.MAX_VALUE)) {
      if (c.flinkJobId().equals(flinkJobId)) {
        c.shardCounts()
            .forEach(
                (shard, counts) -> {
                  if (counts.addedRecords() > 0) {
                    added.merge(shard, counts.addedRecords(), Long::sum);
                  }
                });
      }
    }
    return added;
  }

  @Test
  void aDroppedShardKeepsItsRowsAndTheHostWatchCountsIt() throws Exception {
    Shards shards = shards("dropped", 3, 10);
    ShardbergConfig config = load(config("dropped", "dropped-pipeline"), "dropped-pipeline.yaml");
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table = Catalogs.loadTable(config.target());
    try {
      awaitRows(table, shards.rows());
      List<String> shard2 = tableRows(table).stream().filter(r -> r.startsWith("2|")).toList();
      assertThat(shard2).hasSize(10);
      server.execute("DROP TABLE dropped.orders_2");
      shards.upsert(0, 11, 11);
      shards.delete(1, 3);
      awaitRows(table, shards.rows()); // shard 2's rows are still expected: a DROP deletes nothing
      await()
          .atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> gauge(job, "host.truncate", "droppedShards"),
              v -> v != null && v.intValue() == 1);
      shards.upsert(0, 12, 12);
      awaitRows(table, shards.rows());
      assertThat(job.getJobStatus().get()).isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);
    } finally {
      cancel(job);
    }
  }

  /**
   * The value of gauge {@code name} in a metric group of {@code job} whose identifier ends with
   * {@code group}.
   */
  static Number gauge(JobClient job, String group, String name) {
    Number[] found = new Number[1];
    METRICS
        .getMetricsByGroup()
        .forEach(
            (g, byName) -> {
              if (job.getJobID().toString().equals(g.getAllVariables().get("<job_id>"))
                  && g.getMetricIdentifier(name).endsWith("." + group + "." + name)
                  && byName.get(name) instanceof Gauge<?> gauge) {
                found[0] = (Number) gauge.getValue();
              }
            });
    return found[0];
  }

  @Test
  void inHaModeASchemaChangeWaitsForTheTablesZooKeeperLock() throws Exception {
    try (TestingServer zooKeeper = new TestingServer(true)) {
      Shards shards = shards("locked", 2, 5);
      ShardbergConfig config =
          load(
              config("locked", "locked-pipeline").zooKeeper(zooKeeper.getConnectString()),
              "locked-pipeline.yaml");
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      Table table = Catalogs.loadTable(config.target());
      try {
        awaitRows(table, shards.rows());
        int schemaBefore = table.schema().schemaId();

        // another committer holds the table's lock: the shard's DDL must wait for it
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Throwable> holderFailure = new AtomicReference<>();
        Thread holder =
            new Thread(
                () -> {
                  try {
                    ZooKeeperTableLock.withTableLock(
                        ZooKeeperOptions.of(zooKeeper.getConnectString())
                            .withLockTimeout(Duration.ofMinutes(1)),
                        config.target().qualifiedName(),
                        () -> {
                          held.countDown();
                          return release.await(2, TimeUnit.MINUTES);
                        });
                  } catch (Throwable t) {
                    holderFailure.set(t);
                    held.countDown();
                  }
                },
                "lock-holder");
        holder.start();
        assertThat(held.await(1, TimeUnit.MINUTES)).isTrue();
        assertThat(holderFailure.get()).isNull();
        server.execute(
            "ALTER TABLE locked.orders_0 ADD COLUMN tag VARCHAR(10) NULL",
            "INSERT INTO locked.orders_0 (id, qty, tag) VALUES (100, 100, 'tagged')");
        shards.expected.get(0).put(100L, 100);
        await()
            .during(Duration.ofSeconds(8))
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(250))
            .until(
                () -> {
                  table.refresh();
                  return table.schema().schemaId() == schemaBefore
                      && table.schema().findField("tag") == null;
                });

        release.countDown();
        holder.join(TimeUnit.MINUTES.toMillis(1));
        assertThat(holderFailure.get()).isNull();
        awaitRows(table, shards.rows());
        assertThat(table.schema().findField("tag")).isNotNull();
        VerifyReport report = Reconciliation.verify(config, 5);
        assertThat(report.matches()).as(report.toString()).isTrue();
      } finally {
        cancel(job);
      }
    }
  }
}
