package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.cli.CliProcess;
import dev.shardberg.tests.demo.ChangeGenerator;
import dev.shardberg.tests.demo.FreshnessProbe;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30's measured run, through the path users run ({@code bin/shardberg run} in its own JVM):
 * 16 shards on two MariaDB hosts, random changes on 14 of them at {@code benchmark.rate} per
 * second, while 4 shards are added (a {@code CREATE TABLE} filled after, a table renamed into the
 * pattern holding rows, a {@code CREATE TABLE … SELECT}, a shard in a new database), 2 dropped
 * ({@code tables.dropped-shards: delete}: their rows leave with the next resume) and one tenant
 * moved from a shard on host a to one on host b. Reports the freshness of the changed shards (MySQL
 * write → committed snapshot), how long each adoption paused the commits, the time from each {@code
 * CREATE} to its shard's first row in the table, and the rows the resumed jobs added to the shards
 * that existed before (a re-read would add every row). Not a timed test: it runs only with {@code
 * -Dbenchmark=true} and prints a markdown report; the one assertion is the project's (the table
 * equals the shards at the end).
 */
class FleetChangeBenchmark {
  private static final Pattern RUNNING = Pattern.compile("Running: Flink job ([0-9a-f]{32})");

  /**
   * The columns of a copied row with {@code updated_at} set to its creation (January): the
   * freshness probe samples rows by {@code updated_at}, and a copy of a row changed a minute ago
   * would count as a change seen a minute late.
   */
  private static final String COPY =
      "order_id, customer_id, status, amount, currency, note, created_at,"
          + " CAST('2026-01-01 00:00:00' AS DATETIME(6)) AS updated_at";

  @TempDir Path dir;

  @Test
  void sixteenShardsWhileShardsComeGoAndMove() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    int rowsPerShard = Integer.getInteger("benchmark.rows-per-shard", 5_000);
    int rate = Integer.getInteger("benchmark.rate", 500);
    String checkpoint = System.getProperty("benchmark.checkpoint-interval", "2s");
    String discovery = System.getProperty("benchmark.discovery-interval", "10s");
    Duration phase = Duration.ofSeconds(Integer.getInteger("benchmark.phase-seconds", 40));
    // the baseline: the same run with the fleet left alone (same changes, same phases)
    boolean fleetChanges = !Boolean.getBoolean("benchmark.no-fleet-changes");
    // tables.new-shards: adopt (a savepoint and a resume per new shard) or capture (read by the
    // running job from the binlog; a renamed table still adopted)
    String newShards = System.getProperty("benchmark.new-shards", "adopt");
    // false: shard 17 is created and filled like shard 16 instead of renamed into the pattern
    boolean rename = !"false".equals(System.getProperty("benchmark.rename"));
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("fleet-bench-a", 51);
        EmbeddedMariaDb b = EmbeddedMariaDb.start("fleet-bench-b", 52)) {
      OrdersShards shards = new OrdersShards(List.of(a, b), 16); // 0-7 on a, 8-15 on b
      shards.createTables();
      shards.load(rowsPerShard, 30);
      a.createCdcUser("shardberg_cdc", "bench-pw");
      b.createCdcUser("shardberg_cdc", "bench-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "bench-pw\n");
      TestConfig pipeline =
          TestConfig.pipeline("fleet-bench")
              .checkpointInterval(checkpoint)
              .parallelism(1)
              .writerParallelism(2)
              .checkpointDir(dir.resolve("checkpoints").toUri())
              .source(NewShardWhileRunningTest.source("a", a, "5800-5800", password))
              .source(NewShardWhileRunningTest.source("b", b, "5810-5810", password))
              .tables("shop(_more)?", OrdersShards.TABLE_PATTERN)
              .droppedShards("delete")
              .newShards(newShards)
              .discoveryInterval(discovery)
              .hadoopCatalog(dir.resolve("warehouse").toUri())
              .table("shop", "orders")
              .buckets(2);
      Path configFile = pipeline.write(dir.resolve("fleet.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);
      // the dropped shards' rows leave the table at the next resume (tables.dropped-shards:
      // delete); with capture no adoption may follow the drop, so the end compares the others
      ShardbergConfig atTheEnd =
          fleetChanges && "capture".equals(newShards)
              ? ShardbergConfig.load(
                  pipeline.copy().excludeShards(14, 15).write(dir.resolve("fleet-end.yaml")))
              : config;
      Path out = dir.resolve("run.out");
      Process run =
          CliProcess.cli(
                  dir,
                  List.of("run", "--config", configFile.toString(), "--progress-interval", "2s"),
                  dir.resolve("shardberg.log"))
              .redirectOutput(out.toFile())
              .start();
      ConsoleClock console = new ConsoleClock(out);
      Map<String, Double> report = new LinkedHashMap<>();
      String perTenSeconds = "";
      try {
        long started = System.nanoTime();
        console.awaitLine("First commit: checkpoint ", Duration.ofMinutes(10));
        report.put("snapshot of 16 shards, s", (System.nanoTime() - started) / 1e9);
        awaitEqual(config, Duration.ofMinutes(5));
        Table table = Catalogs.loadTable(config.target());
        LocalDateTime changesFrom = OrdersShards.nowUtc();
        FreshnessProbe freshness =
            new FreshnessProbe(table, "fleet-bench", "updated_at", changesFrom);
        freshness.skipExisting();
        Map<Integer, Long> createdAt = new TreeMap<>();
        Map<Integer, Long> firstRowAt = new TreeMap<>();
        long changesStartMillis;
        Map<String, Long> events = new LinkedHashMap<>();
        try (ChangeGenerator changes = new ChangeGenerator(shards, 14, rowsPerShard, rate, 31)) {
          changes.start();
          changesStartMillis = System.currentTimeMillis();
          sleep(phase, freshness, table, createdAt, firstRowAt);
          // two new shards: one created empty and filled after, one renamed in holding rows
          if (fleetChanges) {
            createdAt.put(16, System.currentTimeMillis());
            a.execute(
                OrdersShards.ddl("shop.orders_16"),
                "INSERT INTO shop.orders_16 SELECT "
                    + COPY
                    + " FROM shop.orders_2 WHERE order_id <= 1000");
            createdAt.put(17, System.currentTimeMillis());
            if (rename) {
              b.execute(
                  "CREATE TABLE shop.orders_tmp LIKE shop.orders_8",
                  "INSERT INTO shop.orders_tmp SELECT " + COPY + " FROM shop.orders_10",
                  "RENAME TABLE shop.orders_tmp TO shop.orders_17");
            } else {
              b.execute(
                  OrdersShards.ddl("shop.orders_17"),
                  "INSERT INTO shop.orders_17 SELECT " + COPY + " FROM shop.orders_10");
            }
          }
          sleep(phase, freshness, table, createdAt, firstRowAt);
          // two shards dropped (quiet ones: the generator changes 0-13)
          if (fleetChanges) {
            events.put("DROP of shards 14, 15", System.currentTimeMillis());
            b.execute("DROP TABLE shop.orders_14", "DROP TABLE shop.orders_15");
          }
          sleep(phase, freshness, table, createdAt, firstRowAt);
          // two more: CREATE TABLE ... SELECT, and a shard in a new database
          if (fleetChanges) {
            createdAt.put(18, System.currentTimeMillis());
            // COPY: the rows of shard 3 carry the times of its recent changes, which the binlog
            // of a CREATE ... SELECT hands on (a job reading it from the binlog commits them)
            a.execute(
                "CREATE TABLE shop.orders_18 (PRIMARY KEY (order_id)) SELECT "
                    + COPY
                    + " FROM shop.orders_3 WHERE order_id <= 2000");
            createdAt.put(19, System.currentTimeMillis());
            b.execute(
                "CREATE DATABASE shop_more",
                OrdersShards.ddl("shop_more.orders_19"),
                "INSERT INTO shop_more.orders_19 SELECT "
                    + COPY
                    + " FROM shop.orders_9 WHERE order_id <= 500");
          }
          sleep(phase, freshness, table, createdAt, firstRowAt);
          // a tenant moved from shard 1 (host a) to shard 9 (host b): copy, then delete
          if (fleetChanges) {
            events.put("tenant move", System.currentTimeMillis());
            moveTenant(a, b);
          }
          sleep(phase, freshness, table, createdAt, firstRowAt);
          changes.stop();
          report.put("changes applied", (double) changes.total());
        }
        long caughtUp = System.nanoTime();
        awaitEqual(atTheEnd, Duration.ofMinutes(5));
        report.put("catch-up after the changes stopped, s", (System.nanoTime() - caughtUp) / 1e9);
        freshness.poll();
        report.put("freshness p50 of the changed shards, s", freshness.quantileMillis(0.5) / 1e3);
        report.put("freshness p99, s", freshness.quantileMillis(0.99) / 1e3);
        report.put("freshness p99.9, s", freshness.quantileMillis(0.999) / 1e3);
        report.put("freshness max, s", freshness.quantileMillis(1.0) / 1e3);
        // outside the adoptions: writes from a checkpoint interval before each "New shard" line
        // to the resumed job's first commit wait for the savepoint, the restart and the snapshot
        List<long[]> windows = console.adoptionWindows();
        long before = org.apache.flink.util.TimeUtils.parseDuration(checkpoint).toMillis();
        java.util.function.LongPredicate outside =
            written -> windows.stream().noneMatch(w -> written >= w[0] - before && written <= w[1]);
        report.put(
            "freshness p99 of writes outside the adoptions, s",
            freshness.quantileMillis(0.99, outside) / 1e3);
        report.put(
            "freshness max of writes outside the adoptions, s",
            freshness.quantileMillis(1.0, outside) / 1e3);
        for (int i = 0; i < windows.size(); i++) {
          report.put(
              "adoption " + (i + 1) + " began, s after the changes began",
              (windows.get(i)[0] - changesStartMillis) / 1e3);
        }
        // p99 per 10 s of writes: where the adoptions hold the commits up, and for how long after
        StringBuilder buckets = new StringBuilder();
        for (long from = changesStartMillis; ; from += 10_000) {
          long start = from;
          long p99 = freshness.quantileMillis(0.99, w -> w >= start && w < start + 10_000);
          if (p99 < 0) {
            break;
          }
          buckets
              .append(buckets.length() == 0 ? "" : " ")
              .append(String.format(Locale.ROOT, "%.1f", p99 / 1e3));
        }
        perTenSeconds = buckets.toString();
        long stalest = freshness.stalestWrittenAtMillis();
        report.put(
            "stalest sample written, s after the changes began",
            (stalest - changesStartMillis) / 1e3);
        events.forEach(
            (what, at) ->
                report.put(what + ", s after the changes began", (at - changesStartMillis) / 1e3));
        report.put("freshness samples", (double) freshness.samples());
        createdAt.forEach(
            (shard, at) ->
                report.put(
                    "CREATE of shard " + shard + " → its first row in the table, s",
                    firstRowAt.containsKey(shard) ? (firstRowAt.get(shard) - at) / 1e3 : -1));
        for (Map.Entry<String, Long> pause : console.pauses().entrySet()) {
          report.put(pause.getKey(), pause.getValue() / 1e3);
        }
        // the shards of before, in the resumed jobs' first commits: a re-read adds every row
        List<String> jobs = new ArrayList<>();
        Matcher m = RUNNING.matcher(Files.readString(out));
        while (m.find()) {
          jobs.add(m.group(1));
        }
        report.put("Flink jobs (1 + adoptions)", (double) jobs.size());
        long maxOld = 0;
        table.refresh();
        for (String job : jobs.subList(1, jobs.size())) {
          CommitRecord first = null;
          for (CommitRecord c :
              CommittedCheckpoints.history(table, "fleet-bench", Integer.MAX_VALUE)) {
            if (c.flinkJobId().equals(job)) {
              first = c; // newest first: the last seen is the oldest
            }
          }
          if (first != null) {
            for (Map.Entry<Integer, dev.shardberg.coordinator.ShardCounts> e :
                first.shardCounts().entrySet()) {
              if (e.getKey() < 16) {
                maxOld = Math.max(maxOld, e.getValue().addedRecords());
              }
            }
          }
        }
        report.put(
            "most rows of one shard of before in a resumed job's first commit", (double) maxOld);
        report.put(
            "rows of dropped shards 14, 15 left in the table", (double) rowsOf(table, 14, 15));
        VerifyReport verify = Reconciliation.verify(atTheEnd, 5);
        assertThat(verify.matches()).as(verify.render()).isTrue();
      } finally {
        CliProcess.stop(run);
        String keepLog = System.getProperty("benchmark.keep-log");
        if (keepLog != null) { // the run's own log, for a look afterwards
          Files.copy(
              dir.resolve("shardberg.log"),
              Path.of(keepLog),
              java.nio.file.StandardCopyOption.REPLACE_EXISTING);
          Files.copy(
              out,
              Path.of(keepLog + ".console"),
              java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
      StringBuilder md = new StringBuilder();
      md.append(
          String.format(
              Locale.ROOT,
              "FleetChangeBenchmark%s: 16 shards x %,d rows, 2 hosts, %d changes/s on 14, checkpoint %s,"
                  + " discovery %s, %ss per phase%n| measure | value |%n|---|---|%n",
              fleetChanges
                  ? " (tables.new-shards: "
                      + newShards
                      + (rename ? "" : "; shard 17 created, not renamed")
                      + ")"
                  : " (baseline: no fleet change)",
              rowsPerShard,
              rate,
              checkpoint,
              discovery,
              phase.toSeconds()));
      report.forEach((k, v) -> md.append(String.format(Locale.ROOT, "| %s | %.1f |%n", k, v)));
      md.append("\nfreshness p99 (s) of the writes of each 10 s from the start of the changes: ")
          .append(perTenSeconds)
          .append('\n');
      System.out.println(md);
      Files.writeString(
          Path.of(
              "target",
              fleetChanges
                  ? "fleet-change-benchmark-" + newShards + (rename ? "" : "-no-rename") + ".md"
                  : "fleet-baseline-benchmark.md"),
          md.toString());
      System.out.println("--- console ---\n" + Files.readString(out));
    }
  }

  private static void moveTenant(EmbeddedMariaDb a, EmbeddedMariaDb b) throws Exception {
    List<String> values = new ArrayList<>();
    try (var c = a.connect("shop");
        var s = c.createStatement();
        var rs =
            s.executeQuery(
                "SELECT order_id, customer_id, status, amount, currency, note, created_at, updated_at"
                    + " FROM orders_1 WHERE order_id > 4900 AND order_id <= 4950")) {
      while (rs.next()) {
        values.add(
            String.format(
                Locale.ROOT,
                "(%d, %d, '%s', %s, '%s', %s, '%s', '%s')",
                rs.getLong(1) + 10_000_000L,
                rs.getInt(2),
                rs.getString(3),
                rs.getBigDecimal(4).toPlainString(),
                rs.getString(5),
                rs.getString(6) == null ? "NULL" : "'" + rs.getString(6).replace("'", "''") + "'",
                rs.getTimestamp(7).toLocalDateTime(),
                rs.getTimestamp(7).toLocalDateTime())); // updated_at: see COPY
      }
    }
    if (!values.isEmpty()) {
      b.execute(
          "INSERT INTO shop.orders_9 (order_id, customer_id, status, amount, currency, note,"
              + " created_at, updated_at) VALUES "
              + String.join(",", values));
    }
    a.execute("DELETE FROM shop.orders_1 WHERE order_id > 4900 AND order_id <= 4950");
  }

  /** Sleeps {@code phase}, polling freshness and the new shards' first rows every 500 ms. */
  private static void sleep(
      Duration phase,
      FreshnessProbe freshness,
      Table table,
      Map<Integer, Long> createdAt,
      Map<Integer, Long> firstRowAt)
      throws Exception {
    long end = System.nanoTime() + phase.toNanos();
    while (System.nanoTime() < end) {
      Thread.sleep(500);
      freshness.poll();
      for (int shard : createdAt.keySet()) {
        if (!firstRowAt.containsKey(shard) && rowsOf(table, shard) > 0) {
          firstRowAt.put(shard, System.currentTimeMillis());
        }
      }
    }
  }

  private static long rowsOf(Table table, int... shardNumbers) throws Exception {
    table.refresh();
    if (table.currentSnapshot() == null) {
      return 0;
    }
    long rows = 0;
    for (int shard : shardNumbers) {
      try (CloseableIterable<Record> records =
          IcebergGenerics.read(table)
              .where(Expressions.equal("shard_number", shard))
              .select("shard_number")
              .build()) {
        for (Record ignored : records) {
          rows++;
        }
      }
    }
    return rows;
  }

  private static void awaitEqual(ShardbergConfig config, Duration atMost) throws Exception {
    long deadline = System.nanoTime() + atMost.toNanos();
    VerifyReport last = null;
    while (System.nanoTime() < deadline) {
      last = Reconciliation.verify(config, 5);
      if (last.matches()) {
        return;
      }
      Thread.sleep(1_000);
    }
    throw new AssertionError(last == null ? "no verify" : last.render());
  }

  /**
   * The run's console, read as it grows, with the moment each line was first seen: the pause of
   * each adoption is from its "New shard table(s)" line to the resumed job's "First commit" line.
   */
  private static final class ConsoleClock {
    private final Path out;
    private final List<String> lines = new ArrayList<>();
    private final List<Long> seenAt = new ArrayList<>();
    private final Thread reader;

    ConsoleClock(Path out) {
      this.out = out;
      reader = new Thread(this::follow, "console-clock");
      reader.setDaemon(true);
      reader.start();
    }

    private void follow() {
      try {
        while (true) {
          List<String> now = Files.exists(out) ? Files.readAllLines(out) : List.of();
          synchronized (this) {
            for (int i = lines.size(); i < now.size(); i++) {
              lines.add(now.get(i));
              seenAt.add(System.currentTimeMillis());
            }
          }
          Thread.sleep(100);
        }
      } catch (Exception stopped) {
        // the test ended
      }
    }

    void awaitLine(String prefix, Duration atMost) throws InterruptedException {
      long deadline = System.nanoTime() + atMost.toNanos();
      while (System.nanoTime() < deadline) {
        synchronized (this) {
          if (lines.stream().anyMatch(l -> l.startsWith(prefix))) {
            return;
          }
        }
        Thread.sleep(200);
      }
      throw new AssertionError("no line " + prefix);
    }

    /** Per adoption: when its "New shard table(s) …" line and the next "First commit" were seen. */
    synchronized List<long[]> adoptionWindows() {
      List<long[]> windows = new ArrayList<>();
      for (int i = 0; i < lines.size(); i++) {
        if (lines.get(i).startsWith("New shard table(s) on MySQL: ")
            && lines.get(i).contains("Reading them")) {
          for (int j = i + 1; j < lines.size(); j++) {
            if (lines.get(j).startsWith("First commit: ")) {
              windows.add(new long[] {seenAt.get(i), seenAt.get(j)});
              break;
            }
          }
        }
      }
      return windows;
    }

    /** Per adoption: from its "New shard table(s) …" line to the next "First commit" line, ms. */
    synchronized Map<String, Long> pauses() {
      Map<String, Long> pauses = new LinkedHashMap<>();
      for (int i = 0; i < lines.size(); i++) {
        if (!lines.get(i).startsWith("New shard table(s) on MySQL: ")
            || !lines.get(i).contains("Reading them")) {
          continue;
        }
        for (int j = i + 1; j < lines.size(); j++) {
          if (lines.get(j).startsWith("First commit: ")) {
            String what = lines.get(i).substring("New shard table(s) on MySQL: ".length());
            pauses.put(
                "adoption of "
                    + what.substring(0, what.indexOf(". Reading"))
                    + ": new-shard line → first commit of the resumed job, s",
                seenAt.get(j) - seenAt.get(i));
            break;
          }
        }
      }
      return pauses;
    }
  }
}
