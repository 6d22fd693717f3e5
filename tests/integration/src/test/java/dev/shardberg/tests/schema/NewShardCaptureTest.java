package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.cli.CliProcess;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tables.new-shards: capture}: shard tables created while {@code bin/shardberg run} runs are
 * read by the running Flink job from the binlog — no savepoint, no new job — on two real MariaDB
 * hosts (shards 0 and 1 on host a, 2 on host b), the run in its own JVM as a user starts it:
 *
 * <ul>
 *   <li>a {@code CREATE TABLE orders_5} filled right after, a {@code CREATE TABLE … SELECT} and a
 *       shard in a new database ({@code CREATE DATABASE shop_more}) are read by the first job: the
 *       table equals the shards with the right {@code shard_number}, and their later updates and
 *       deletes land;
 *   <li>a table renamed into the pattern already holding rows, which no binlog reader saw written,
 *       is read by the run's adoption (a savepoint, a resume that snapshots it);
 *   <li>the resumed job reads the earlier captured shards on (a fresh snapshot, their rows
 *       replaced), and captures the next {@code CREATE TABLE} itself;
 *   <li>one number created on both hosts: the second table stops the job, naming both tables,
 *       before a row of it reaches shard 10 (each host's source captures on its own; the tagger
 *       asks the other hosts).
 * </ul>
 */
class NewShardCaptureTest {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () -> {
            Configuration conf = new Configuration();
            conf.setString("heartbeat.interval", "1000");
            conf.setString("heartbeat.timeout", "5000");
            return new MiniClusterResourceConfiguration.Builder()
                .setNumberTaskManagers(1)
                .setNumberSlotsPerTaskManager(4)
                .setConfiguration(conf)
                .build();
          });

  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);
  private static final Pattern RUNNING = Pattern.compile("Running: Flink job ([0-9a-f]{32})");

  @TempDir Path dir;

  @Test
  void shardTablesCreatedWhileTheJobRunsAreReadByItFromTheBinlog() throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("capture-a", 45);
        EmbeddedMariaDb b = EmbeddedMariaDb.start("capture-b", 46)) {
      OrdersShards shards = new OrdersShards(List.of(a, b), 3);
      shards.createTables();
      shards.load(40, 13);
      a.createCdcUser("shardberg_cdc", "fleet-pw");
      b.createCdcUser("shardberg_cdc", "fleet-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "fleet-pw\n");
      Path configFile =
          TestConfig.pipeline("capture")
              .checkpointInterval("1s")
              .parallelism(1)
              .writerParallelism(1)
              .checkpointDir(dir.resolve("checkpoints").toUri())
              .source(NewShardWhileRunningTest.source("a", a, "5760-5760", password))
              .source(NewShardWhileRunningTest.source("b", b, "5770-5770", password))
              .tables("shop(_more)?", OrdersShards.TABLE_PATTERN)
              .newShards("capture")
              .healthCheckInterval("500ms")
              .discoveryInterval("5s")
              .hadoopCatalog(dir.resolve("warehouse").toUri())
              .table("shop", "orders")
              .buckets(2)
              .write(dir.resolve("capture.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);
      Path log = dir.resolve("shardberg.log");
      Path out = dir.resolve("run.out");
      Process run =
          CliProcess.cli(
                  dir,
                  List.of("run", "--config", configFile.toString(), "--progress-interval", "1s"),
                  log)
              .redirectOutput(out.toFile())
              .start();
      try {
        await()
            .atMost(CAUGHT_UP)
            .until(() -> Files.readString(out).contains("First commit: checkpoint "));

        // a new shard filled right after; CREATE TABLE ... SELECT; a new database with a shard
        b.execute(
            OrdersShards.ddl("shop.orders_5"),
            "INSERT INTO shop.orders_5 SELECT order_id, customer_id + 1, status, amount, currency,"
                + " note, created_at, updated_at FROM shop.orders_2");
        a.execute(
            "CREATE TABLE shop.orders_7 (PRIMARY KEY (order_id))"
                + " SELECT * FROM shop.orders_0 WHERE order_id <= 10");
        b.execute(
            "CREATE DATABASE shop_more",
            OrdersShards.ddl("shop_more.orders_8"),
            "INSERT INTO shop_more.orders_8 SELECT * FROM shop.orders_2 WHERE order_id <= 15");
        awaitTableEqualsShards(config, out);
        b.execute(
            "UPDATE shop.orders_5 SET status = 'SHIPPED' WHERE order_id <= 3",
            "DELETE FROM shop.orders_5 WHERE order_id = 9");
        a.execute("DELETE FROM shop.orders_7 WHERE order_id = 1");
        awaitTableEqualsShards(config, out);
        List<String> jobs = jobs(out);
        assertThat(jobs).as("read by the first job, no adoption: %s", console(out)).hasSize(1);
        assertThat(Files.readString(log))
            .contains(
                "Shard 5 ('shop.orders_5' on MySQL host 'b') was created while the job runs: read from"
                    + " the binlog")
            .contains("Shard 7 ('shop.orders_7' on MySQL host 'a') was created while the job runs")
            .contains(
                "Shard 8 ('shop_more.orders_8' on MySQL host 'b') was created while the job runs");
        Table table = Catalogs.loadTable(config.target());
        assertThat(ShardTableLifeTest.addedRows(table, "capture", jobs.get(0)))
            .as("the first job's commits hold the new shards' rows")
            .containsKeys(5, 7, 8);

        // a table renamed into the pattern already holding rows: the binlog never carried them
        // under this name, so the run adopts it with a savepoint
        a.execute(
            "CREATE TABLE shop.orders_tmp LIKE shop.orders_0",
            "INSERT INTO shop.orders_tmp SELECT * FROM shop.orders_1 WHERE order_id <= 20",
            "RENAME TABLE shop.orders_tmp TO shop.orders_6");
        await()
            .atMost(CAUGHT_UP)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> jobs(out).size() == 2);
        awaitTableEqualsShards(config, out);
        assertThat(console(out))
            .containsPattern("New shard table\\(s\\) on MySQL: 6 \\('shop.orders_6' on host 'a'\\)")
            .doesNotContainPattern("New shard table\\(s\\) on MySQL: [^\\n]*'shop.orders_5'");

        // the resumed job: the captured shards' changes go on, a new CREATE TABLE is captured
        b.execute("UPDATE shop.orders_5 SET status = 'PAID' WHERE order_id BETWEEN 4 AND 8");
        a.execute(
            OrdersShards.ddl("shop.orders_9"),
            "INSERT INTO shop.orders_9 SELECT * FROM shop.orders_0 WHERE order_id <= 12",
            "UPDATE shop.orders_9 SET status = 'SHIPPED' WHERE order_id <= 2");
        awaitTableEqualsShards(config, out);
        jobs = jobs(out);
        assertThat(jobs).as("no adoption for orders_9: %s", console(out)).hasSize(2);
        Map<Integer, Long> second = ShardTableLifeTest.addedRows(table, "capture", jobs.get(1));
        assertThat(second.keySet())
            .as("the second job reads no shard of the start again")
            .doesNotContain(0, 1, 2)
            .contains(6, 9);

        // one number created on both hosts (each host's source captures on its own): host b's
        // table is captured; host a's, created after it, stops the job naming both before a row
        // of it is read (before, its rows went into shard 10 with b's)
        b.execute(
            OrdersShards.ddl("shop_more.orders_10"),
            "INSERT INTO shop_more.orders_10 SELECT * FROM shop.orders_2 WHERE order_id <= 6");
        awaitTableEqualsShards(config, out);
        a.execute(
            OrdersShards.ddl("shop.orders_10"),
            "INSERT INTO shop.orders_10 SELECT * FROM shop.orders_0 WHERE order_id <= 9");
        boolean ended = run.waitFor(3, TimeUnit.MINUTES);
        String console = console(out);
        assertThat(ended).as("the run stops by itself; console:%n%s", console).isTrue();
        assertThat(run.exitValue()).as(console).isNotZero();
        // named by host a's tagger at the CREATE TABLE, or by the run's discovery (every 5 s) if
        // it looks first; either way no row of host a's table is read (verify and Spark below)
        assertThat(console)
            .contains("shard number 10 is taken by")
            .contains("'shop_more.orders_10' on host 'b'")
            .contains("'shop.orders_10' on host 'a'");
        a.execute("DROP TABLE shop.orders_10");
        VerifyReport report = Reconciliation.verify(config, 5);
        assertThat(report.matches()).as(report.render()).isTrue();
        List<String> mysql = new ArrayList<>();
        for (int shard : List.of(0, 1, 6, 7, 9)) {
          mysql.addAll(OrdersShards.rows(a, "shop.orders_" + shard, shard));
        }
        mysql.addAll(OrdersShards.rows(b, "shop.orders_2", 2));
        mysql.addAll(OrdersShards.rows(b, "shop.orders_5", 5));
        mysql.addAll(OrdersShards.rows(b, "shop_more.orders_8", 8));
        mysql.addAll(OrdersShards.rows(b, "shop_more.orders_10", 10));
        mysql.sort(null);
        assertThat(
                dev.shardberg.tests.job.SparkReader.orders(
                    dir.resolve("warehouse").toUri(), "shop"))
            .as("Spark's rows of the table")
            .isEqualTo(mysql)
            .hasSizeGreaterThan(100);
        assertThat(shardsIn(mysql)).isEqualTo(Set.of(0, 1, 2, 5, 6, 7, 8, 9, 10));
      } finally {
        CliProcess.stop(run);
        if (System.getProperty("capture.keep.log") != null) {
          Files.copy(
              log,
              Path.of(System.getProperty("capture.keep.log")),
              java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  /**
   * A Flink failover restores the job it ran (the plan of its start): a shard captured before the
   * checkpoint it restores is read on from the binlog, and one created after the restart is
   * captured; a table renamed into the patterns, which the job does not read, stays unread (its
   * binlog rows are not taken for a shard's: its older rows were never read).
   */
  @Test
  void aShardCapturedBeforeATaskManagerFailureIsReadOnAfterTheRestart(
      @InjectMiniCluster MiniCluster miniCluster) throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("capture-failover", 47)) {
      // dropped shards deleted: a failover must not take the captured shards for dropped ones
      TestConfig base =
          oneHost(a, "capture-failover", "5780-5780", 30, 17)
              .restart(10, "1s")
              .droppedShards("delete");
      ShardbergConfig config =
          ShardbergConfig.load(base.copy().write(dir.resolve("failover.yaml")));
      // verify against the shards the job reads: orders_6 (renamed into the patterns) is not one
      ShardbergConfig readShards =
          ShardbergConfig.load(base.copy().excludeShards(6).write(dir.resolve("verify.yaml")));
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      try {
        awaitTableEqualsShards(readShards, dir.resolve("none"));
        a.execute(
            OrdersShards.ddl("shop.orders_5"),
            "INSERT INTO shop.orders_5 SELECT * FROM shop.orders_0",
            "CREATE TABLE shop.orders_tmp LIKE shop.orders_0",
            "INSERT INTO shop.orders_tmp SELECT * FROM shop.orders_1 WHERE order_id <= 10",
            "RENAME TABLE shop.orders_tmp TO shop.orders_6",
            "INSERT INTO shop.orders_6 SELECT order_id + 1000, customer_id, status, amount, currency,"
                + " note, created_at, updated_at FROM shop.orders_1 WHERE order_id <= 3");
        awaitTableEqualsShards(readShards, dir.resolve("none"));
        Table table = Catalogs.loadTable(config.target());
        long committed = commits(table, "capture-failover");
        await().atMost(CAUGHT_UP).until(() -> commits(table, "capture-failover") >= committed + 2);

        // the TaskManager dies with changes in flight; the job restarts from its last checkpoint
        a.execute(
            "UPDATE shop.orders_5 SET status = 'SHIPPED' WHERE order_id <= 4",
            "DELETE FROM shop.orders_5 WHERE order_id = 6");
        miniCluster.terminateTaskManager(0).get();
        miniCluster.startTaskManager();
        a.execute(
            "INSERT INTO shop.orders_5 SELECT order_id + 500, customer_id, status, amount, currency,"
                + " note, created_at, updated_at FROM shop.orders_0 WHERE order_id <= 5",
            "INSERT INTO shop.orders_6 SELECT order_id + 2000, customer_id, status, amount, currency,"
                + " note, created_at, updated_at FROM shop.orders_1 WHERE order_id <= 3");
        await()
            .atMost(CAUGHT_UP)
            .until(() -> job.getJobStatus().get() == org.apache.flink.api.common.JobStatus.RUNNING);
        awaitTableEqualsShards(readShards, dir.resolve("none"));

        // created after the restart: captured by the restarted job
        a.execute(
            OrdersShards.ddl("shop.orders_7"),
            "INSERT INTO shop.orders_7 SELECT * FROM shop.orders_1 WHERE order_id <= 12",
            "UPDATE shop.orders_5 SET status = 'PAID' WHERE order_id > 500");
        awaitTableEqualsShards(readShards, dir.resolve("none"));
        assertThat(rowsOfShard(table, 7)).isEqualTo(12);
        assertThat(rowsOfShard(table, 6))
            .as("rows of the renamed table, which is not read")
            .isZero();
        assertThat(rowsOfShard(table, 5)).isEqualTo(30 - 1 + 5);
      } finally {
        job.cancel().get();
      }
    }
  }

  /**
   * A shard the running job captured is known to the next resume as a shard of the plan is: with
   * {@code tables.dropped-shards: delete} one dropped while the job ran leaves the table at the
   * resume from a savepoint (before, the coordinator never knew it and its rows stayed for good),
   * and one still there is read again alone, its rows replaced by its fresh snapshot. The resume
   * keeps the first job's Flink job id, as application mode with HA does: it is still a resume (a
   * coordinator that took one job id for a failover kept the dropped shard's rows).
   */
  @Test
  void aCapturedShardDroppedWhileTheJobRanLeavesTheTableAtTheResume() throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("capture-drop", 49)) {
      ShardbergConfig config =
          ShardbergConfig.load(
              oneHost(a, "capture-drop", "5820-5820", 20, 19)
                  .droppedShards("delete")
                  .write(dir.resolve("drop.yaml")));
      JobClient first =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      Table table = Catalogs.loadTable(config.target());
      String savepoint;
      try {
        awaitTableEqualsShards(config, dir.resolve("none"));
        a.execute(
            OrdersShards.ddl("shop.orders_5"),
            "INSERT INTO shop.orders_5 SELECT * FROM shop.orders_0",
            OrdersShards.ddl("shop.orders_7"),
            "INSERT INTO shop.orders_7 SELECT * FROM shop.orders_1 WHERE order_id <= 8");
        awaitTableEqualsShards(config, dir.resolve("none"));
        assertThat(rowsOfShard(table, 5)).isEqualTo(20);

        // dropped while the job runs: the running job keeps its rows
        a.execute(
            "DROP TABLE shop.orders_5",
            "UPDATE shop.orders_7 SET status = 'PAID' WHERE order_id <= 3",
            "DELETE FROM shop.orders_0 WHERE order_id = 2");
        long committed = commits(table, "capture-drop");
        await().atMost(CAUGHT_UP).until(() -> commits(table, "capture-drop") >= committed + 2);
        assertThat(rowsOfShard(table, 5)).isEqualTo(20);
        savepoint =
            first
                .stopWithSavepoint(
                    false,
                    dir.resolve("drop-savepoints").toUri().toString(),
                    org.apache.flink.core.execution.SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
      } finally {
        if (!first.getJobStatus().get().isGloballyTerminalState()) {
          first.cancel().get();
        }
      }

      // resumed with the same config: discovery finds shards 0, 1 and 7. Into the first job's id
      // on a cluster of its own, as application mode with HA resumes (a new cluster, the job id
      // fixed by its cluster id): a resume all the same, not a failover that goes on capturing
      // shard 5 (it kept its rows so before)
      a.execute("DELETE FROM shop.orders_7 WHERE order_id = 8");
      Configuration resume = new Configuration();
      resume.set(org.apache.flink.configuration.StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
      resume.set(
          org.apache.flink.configuration.PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID,
          first.getJobID().toString());
      resume.set(org.apache.flink.configuration.DeploymentOptions.TARGET, "local");
      resume.set(org.apache.flink.configuration.DeploymentOptions.ATTACHED, true);
      JobClient second = ShardbergPipeline.start(new StreamExecutionEnvironment(resume), config);
      try {
        assertThat(second.getJobID()).as("the resume's Flink job id").isEqualTo(first.getJobID());
        a.execute("UPDATE shop.orders_7 SET status = 'SHIPPED' WHERE order_id = 1");
        awaitTableEqualsShards(config, dir.resolve("none"));
        assertThat(rowsOfShard(table, 5)).as("rows of the dropped captured shard").isZero();
        assertThat(rowsOfShard(table, 7)).isEqualTo(7);
      } finally {
        second.cancel().get();
      }
    }
  }

  /**
   * Patterns as a fleet spread over databases and tables writes them: both name their group {@code
   * shard}, the table pattern anchored. The job starts (the capture regex joined from them once
   * named two groups alike, and every source failed at start), and captures a new database's table
   * (its number from the database) and a new table (its number from the table).
   */
  @Test
  void patternsThatBothNameTheShardGroupCaptureNewDatabasesAndTables() throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("capture-groups", 50)) {
      ShardbergConfig config =
          ShardbergConfig.load(
              oneHost(a, "capture-groups", "5830-5830", 10, 23)
                  .tables("shop|shop_(?<shard>\\d+)", "^(?:orders|orders_(?<shard>\\d+))$")
                  .write(dir.resolve("groups.yaml")));
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      try {
        awaitTableEqualsShards(config, dir.resolve("none"));
        a.execute(
            "CREATE DATABASE shop_9",
            OrdersShards.ddl("shop_9.orders"),
            "INSERT INTO shop_9.orders SELECT * FROM shop.orders_0",
            OrdersShards.ddl("shop.orders_8"),
            "INSERT INTO shop.orders_8 SELECT * FROM shop.orders_1 WHERE order_id <= 4");
        awaitTableEqualsShards(config, dir.resolve("none"));
        Table table = Catalogs.loadTable(config.target());
        assertThat(rowsOfShard(table, 9)).isEqualTo(10);
        assertThat(rowsOfShard(table, 8)).isEqualTo(4);
        assertThat(job.getJobStatus().get())
            .isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);
      } finally {
        job.cancel().get();
      }
    }
  }

  /**
   * With {@code schema.change-behavior: fail} a new shard table whose columns differ from the other
   * shards' stops the job for good, naming the table and the column (as a start would refuse it);
   * nothing read before is lost.
   */
  @Test
  void aNewShardWhoseColumnsDifferStopsTheJobNamingTheColumn() throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("capture-columns", 48)) {
      ShardbergConfig config =
          ShardbergConfig.load(
              oneHost(a, "capture-columns", "5790-5790", 20, 19)
                  .schemaChangeBehavior("fail")
                  .write(dir.resolve("columns.yaml")));
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      try {
        awaitTableEqualsShards(config, dir.resolve("none"));
        a.execute(
            "CREATE TABLE shop.orders_5 LIKE shop.orders_0",
            "ALTER TABLE shop.orders_5 MODIFY status VARCHAR(64) NOT NULL",
            "INSERT INTO shop.orders_5 SELECT * FROM shop.orders_0");
        Throwable failure = null;
        try {
          job.getJobExecutionResult().get(3, TimeUnit.MINUTES);
        } catch (java.util.concurrent.ExecutionException e) {
          failure = e;
        }
        assertThat(failure).as("the job stops by itself").isNotNull();
        String causes = org.apache.flink.util.ExceptionUtils.stringifyException(failure);
        assertThat(causes)
            .contains(
                "Cannot read shard 5 ('shop.orders_5' on host 'a'), created while the job runs: it"
                    + " differs from the other shards")
            .contains("column 'status': expected");
        // nothing lost: the table still holds every row of the shards it read
        Table table = Catalogs.loadTable(config.target());
        assertThat(rowsOfShard(table, 0)).isEqualTo(20);
        assertThat(rowsOfShard(table, 1)).isEqualTo(20);
        assertThat(rowsOfShard(table, 5)).isZero();
      } finally {
        if (!job.getJobStatus().get().isGloballyTerminalState()) {
          job.cancel().get();
        }
      }
    }
  }

  /**
   * Shards 0 and 1 on {@code a} with {@code rows} rows each, the CDC user, and the config of a
   * pipeline that reads them with {@code tables.new-shards: capture} into a Hadoop table.
   */
  private TestConfig oneHost(
      EmbeddedMariaDb a, String pipelineId, String serverIds, int rows, int seed) throws Exception {
    OrdersShards shards = new OrdersShards(List.of(a), 2);
    shards.createTables();
    shards.load(rows, seed);
    a.createCdcUser("shardberg_cdc", "fleet-pw");
    Path password = Files.writeString(dir.resolve("cdc.password"), "fleet-pw\n");
    return TestConfig.pipeline(pipelineId)
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(1)
        .source(NewShardWhileRunningTest.source("a", a, serverIds, password))
        .tables("shop", OrdersShards.TABLE_PATTERN)
        .newShards("capture")
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table("shop", "orders")
        .buckets(2);
  }

  private static long commits(Table table, String pipelineId) {
    table.refresh();
    return dev.shardberg.coordinator.CommittedCheckpoints.history(
            table, pipelineId, Integer.MAX_VALUE)
        .size();
  }

  private static long rowsOfShard(Table table, int shard) throws java.io.IOException {
    table.refresh();
    long rows = 0;
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
        org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      for (org.apache.iceberg.data.Record r : records) {
        if (Integer.valueOf(shard).equals(r.getField("shard_number"))) {
          rows++;
        }
      }
    }
    return rows;
  }

  private static Set<Integer> shardsIn(List<String> rows) {
    Map<Integer, Integer> shards = new TreeMap<>();
    rows.forEach(
        r -> shards.merge(Integer.parseInt(r.substring(0, r.indexOf('|'))), 1, Integer::sum));
    return shards.keySet();
  }

  private static List<String> jobs(Path out) throws java.io.IOException {
    List<String> jobs = new ArrayList<>();
    Matcher m = RUNNING.matcher(Files.readString(out));
    while (m.find()) {
      jobs.add(m.group(1));
    }
    return jobs;
  }

  private static String console(Path out) {
    try {
      return Files.readString(out);
    } catch (java.io.IOException e) {
      return e.toString();
    }
  }

  /** Until `verify` finds the table equal to every shard discovered now, row for row. */
  private static void awaitTableEqualsShards(ShardbergConfig config, Path out) {
    ShardsVerified.await(config, CAUGHT_UP, "console", () -> console(out));
  }
}
