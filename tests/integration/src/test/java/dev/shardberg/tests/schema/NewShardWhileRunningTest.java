package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.cli.ShardbergCli;
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
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shard tables that appear while {@code bin/shardberg run} runs, on two real MariaDB hosts (shards
 * 0 and 1 on host a, 2 on host b), the run in its own JVM as a user starts it:
 *
 * <ul>
 *   <li>a {@code CREATE TABLE orders_5} on host b, filled right after, and a table renamed into the
 *       pattern already holding rows ({@code RENAME TABLE orders_tmp TO orders_6}) on host a are
 *       read without the operator doing anything: the run takes a savepoint and resumes from it
 *       with them, and the table then equals the shards, new ones included, with the right {@code
 *       shard_number};
 *   <li>their changes after that come from the binlog;
 *   <li>so are a table made by {@code CREATE TABLE … SELECT} and a shard in a new database ({@code
 *       CREATE DATABASE shop_more}, matching the database pattern) on the other host;
 *   <li>no other shard is read again: the resumed jobs' commits add rows of shards 5 and 6 only;
 *   <li>a table whose number clashes with a shard's ({@code orders_01} beside {@code orders_1})
 *       stops the run with a savepoint, the console naming both tables, exit 1.
 * </ul>
 */
class NewShardWhileRunningTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);
  private static final Pattern RUNNING = Pattern.compile("Running: Flink job ([0-9a-f]{32})");

  @TempDir Path dir;

  @Test
  void shardTablesCreatedWhileTheRunRunsAreReadWithoutTheOperator() throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("new-shard-a", 41);
        EmbeddedMariaDb b = EmbeddedMariaDb.start("new-shard-b", 42)) {
      OrdersShards shards = new OrdersShards(List.of(a, b), 3);
      shards.createTables();
      shards.load(40, 11);
      a.createCdcUser("shardberg_cdc", "fleet-pw");
      b.createCdcUser("shardberg_cdc", "fleet-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "fleet-pw\n");
      Path configFile =
          TestConfig.pipeline("fleet")
              .checkpointInterval("1s")
              .parallelism(1)
              .writerParallelism(1)
              .checkpointDir(dir.resolve("checkpoints").toUri())
              .source(source("a", a, "5700-5700", password))
              .source(source("b", b, "5710-5710", password))
              .tables("shop(_more)?", OrdersShards.TABLE_PATTERN)
              .healthCheckInterval("500ms")
              .discoveryInterval("1s")
              // the adoption by a savepoint and a resume (capture: NewShardCaptureTest)
              .newShards("adopt")
              .hadoopCatalog(dir.resolve("warehouse").toUri())
              .table("shop", "orders")
              .buckets(2)
              .write(dir.resolve("fleet.yaml"));
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
        a.execute("UPDATE shop.orders_0 SET status = 'PAID' WHERE order_id <= 5");
        b.execute("UPDATE shop.orders_2 SET status = 'PAID' WHERE order_id <= 5");
        awaitTableEqualsShards(config, out);

        // a new shard on host b, filled right after; a table renamed into the pattern on host a
        b.execute(
            OrdersShards.ddl("shop.orders_5"),
            "INSERT INTO shop.orders_5 SELECT order_id, customer_id + 1, status, amount, currency,"
                + " note, created_at, updated_at FROM shop.orders_2");
        a.execute(
            "CREATE TABLE shop.orders_tmp LIKE shop.orders_0",
            "INSERT INTO shop.orders_tmp SELECT * FROM shop.orders_1 WHERE order_id <= 20",
            "RENAME TABLE shop.orders_tmp TO shop.orders_6");
        await()
            .atMost(CAUGHT_UP)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> Files.readString(out).contains("New shard table(s) on MySQL: "));
        awaitTableEqualsShards(config, out);
        String console = Files.readString(out);
        assertThat(console)
            .as(console)
            .containsPattern(
                "New shard table\\(s\\) on MySQL: .*5 \\('shop.orders_5' on host 'b'\\).*Reading them: a"
                    + " savepoint, then a resume from it")
            // the renamed table, found by the adoption's check or by the resume's discovery
            .containsPattern(
                "New in this run, each read alone from a fresh snapshot: .*6 \\('shop.orders_6' on"
                    + " host 'a'\\)")
            .contains("taken; resuming from it with the new shard table(s)");

        // afterwards their changes come from the binlog
        b.execute("UPDATE shop.orders_5 SET status = 'SHIPPED' WHERE order_id <= 3");
        a.execute("DELETE FROM shop.orders_6 WHERE order_id = 1");
        awaitTableEqualsShards(config, out);

        // a table created by CREATE TABLE ... SELECT; a new database with a shard on the other host
        a.execute(
            "CREATE TABLE shop.orders_7 (PRIMARY KEY (order_id))"
                + " SELECT * FROM shop.orders_0 WHERE order_id <= 10");
        b.execute(
            "CREATE DATABASE shop_more",
            OrdersShards.ddl("shop_more.orders_8"),
            "INSERT INTO shop_more.orders_8 SELECT * FROM shop.orders_2 WHERE order_id <= 15");
        awaitTableEqualsShards(config, out);
        assertThat(Files.readString(out))
            .containsPattern(
                "New in this run, each read alone from a fresh snapshot: .*7 \\('shop.orders_7'")
            .containsPattern(
                "New in this run, each read alone from a fresh snapshot: .*8 \\('shop_more.orders_8'"
                    + " on host 'b'\\)");

        // no other shard was read again: the resumed jobs add rows of the new shards only
        List<String> jobs = new ArrayList<>();
        Matcher m = RUNNING.matcher(Files.readString(out));
        while (m.find()) {
          jobs.add(m.group(1));
        }
        assertThat(jobs).as("the first job and one per adoption").hasSizeBetween(3, 5);
        Table table = Catalogs.loadTable(config.target());
        Map<Integer, Long> added = new TreeMap<>();
        for (String job : jobs.subList(1, jobs.size())) {
          ShardTableLifeTest.addedRows(table, "fleet", job)
              .forEach((shard, rows) -> added.merge(shard, rows, Long::sum));
        }
        assertThat(added)
            .as("snapshots of the new shards and their changes, nothing of shards 0-2")
            .isEqualTo(Map.of(5, 40L + 3, 6, 20L, 7, 10L, 8, 15L));

        // a table whose number clashes with shard 1's: the run stops with a savepoint, naming both
        a.execute("CREATE TABLE shop.orders_01 LIKE shop.orders_1");
        boolean ended = run.waitFor(3, TimeUnit.MINUTES);
        console = Files.readString(out);
        assertThat(ended).as("the run stops by itself; console:%n%s", console).isTrue();
        assertThat(run.exitValue()).as(console).isEqualTo(ShardbergCli.EXIT_PROBLEM);
        assertThat(console)
            .contains("Stopped. State: savepoint ")
            .contains("To go on: do what the line above says, then `run` with the same config");
        assertThat(console.lines().filter(l -> l.startsWith("Stopped: ")))
            .as(console)
            .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
            .contains("Cannot assign shard numbers: shard number 1 is taken by")
            .contains("'shop.orders_1' on host 'a'")
            .contains("'shop.orders_01' on host 'a'");
        a.execute("DROP TABLE shop.orders_01");
        VerifyReport report = Reconciliation.verify(config, 5);
        assertThat(report.matches()).as(report.render()).isTrue();
        // a second engine: a real Spark reads the table as MySQL holds every shard, new ones too
        List<String> mysql = new ArrayList<>();
        for (int shard : List.of(0, 1, 6, 7)) {
          mysql.addAll(OrdersShards.rows(a, "shop.orders_" + shard, shard));
        }
        mysql.addAll(OrdersShards.rows(b, "shop.orders_2", 2));
        mysql.addAll(OrdersShards.rows(b, "shop.orders_5", 5));
        mysql.addAll(OrdersShards.rows(b, "shop_more.orders_8", 8));
        mysql.sort(null);
        assertThat(
                dev.shardberg.tests.job.SparkReader.orders(
                    dir.resolve("warehouse").toUri(), "shop"))
            .as("Spark's rows of the table")
            .isEqualTo(mysql)
            .hasSizeGreaterThan(100);
      } finally {
        CliProcess.stop(run);
      }
    }
  }

  /**
   * With deletes by position ({@code target.delete-mode: position}) a new shard number, which has
   * no row in the table to replace, is read the same way, and no equality delete is ever written.
   */
  @Test
  void withDeletesByPositionANewShardIsReadTooAndNoEqualityDeleteIsWritten() throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("new-shard-pos", 43)) {
      OrdersShards shards = new OrdersShards(List.of(a), 2);
      shards.createTables();
      shards.load(30, 12);
      a.createCdcUser("shardberg_cdc", "fleet-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "fleet-pw\n");
      Path configFile =
          TestConfig.pipeline("fleet-pos")
              .checkpointInterval("1s")
              .parallelism(1)
              .writerParallelism(1)
              .checkpointDir(dir.resolve("checkpoints").toUri())
              .source(source("a", a, "5720-5720", password))
              .tables("shop", OrdersShards.TABLE_PATTERN)
              .discoveryInterval("1s")
              // the adoption by a savepoint and a resume (capture: NewShardCaptureTest)
              .newShards("adopt")
              .hadoopCatalog(dir.resolve("warehouse").toUri())
              .table("shop", "orders")
              .buckets(2)
              .deleteMode("position")
              .write(dir.resolve("fleet-pos.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);
      Path out = dir.resolve("run-pos.out");
      Process run =
          CliProcess.cli(
                  dir,
                  List.of("run", "--config", configFile.toString(), "--progress-interval", "1s"),
                  dir.resolve("shardberg.log"))
              .redirectOutput(out.toFile())
              .start();
      try {
        await()
            .atMost(CAUGHT_UP)
            .until(() -> Files.readString(out).contains("First commit: checkpoint "));
        a.execute(
            OrdersShards.ddl("shop.orders_5"),
            "INSERT INTO shop.orders_5 SELECT * FROM shop.orders_0",
            "UPDATE shop.orders_1 SET status = 'PAID' WHERE order_id <= 4");
        awaitTableEqualsShards(config, out);
        a.execute(
            "UPDATE shop.orders_5 SET status = 'SHIPPED' WHERE order_id <= 3",
            "DELETE FROM shop.orders_5 WHERE order_id = 7");
        awaitTableEqualsShards(config, out);
        assertThat(Files.readString(out))
            .contains("New in this run, each read alone from a fresh snapshot: 5 ('shop.orders_5'");
        Table table = Catalogs.loadTable(config.target());
        table.refresh();
        long equalityDeletes = 0;
        for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
          equalityDeletes +=
              Long.parseLong(snapshot.summary().getOrDefault("added-equality-deletes", "0"));
        }
        assertThat(equalityDeletes).isZero();
      } finally {
        CliProcess.stop(run);
      }
    }
  }

  static TestConfig.Source source(
      String name, EmbeddedMariaDb db, String serverIds, Path password) {
    return new TestConfig.Source(name, "127.0.0.1", db.port())
        .user("shardberg_cdc")
        .passwordFile(password)
        .serverIds(serverIds)
        .withoutTls();
  }

  /** Until `verify` finds the table equal to every shard discovered now, row for row. */
  private static void awaitTableEqualsShards(ShardbergConfig config, Path out) {
    ShardsVerified.await(config, CAUGHT_UP, "console", () -> console(out));
  }

  private static String console(Path out) {
    try {
      return Files.readString(out);
    } catch (java.io.IOException e) {
      return e.toString();
    }
  }
}
