package dev.shardberg.tests.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.cli.ShardbergCli;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.cli.CliProcess;
import dev.shardberg.tests.cli.CliRun;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import dev.shardberg.tests.support.SmallOrdersShards;
import dev.shardberg.tests.support.TcpForwarder;
import dev.shardberg.tests.support.TestConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code shardberg run} as a user starts it, in its own JVM with the CLI's log configuration, its
 * console a pipe (not a terminal), one MariaDB host with two shards:
 *
 * <ul>
 *   <li>the console shows one plain line per phase and progress lines (no terminal control
 *       characters);
 *   <li>{@code --web-port} serves Flink's dashboard and REST API ({@code /jobs/overview} lists the
 *       job);
 *   <li>{@code status --json} run beside it (its own JVM, same log file) shows per-shard freshness
 *       and the host's binlog lag from the job's metrics, and leaves the run's log with its earlier
 *       lines;
 *   <li>the host stopped for a while: {@code status --json} shows it unreachable for longer and
 *       longer, and the run's log says when it was lost, when it was back and when the binlog
 *       reader reconnected;
 *   <li>SIGINT (Ctrl-C) stops the job with a final savepoint, printed on one line, which the next
 *       run resumes from; the table equals the shards;
 *   <li>a resume the coordinator refuses, and a primary failover under the run: each ends the
 *       console with the reason and the way on.
 * </ul>
 */
class LocalRunConsoleTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void runOnTheConsoleWithDashboardStatusBesideItAndCtrlC() throws Exception {
    try (EmbeddedMariaDb db = EmbeddedMariaDb.start("console-a", 31)) {
      OrdersShards shards = new OrdersShards(List.of(db), 2);
      shards.createTables();
      shards.load(50, 7);
      db.createCdcUser("shardberg_cdc", "console-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "console-pw\n");
      Path configFile =
          consoleConfig("console", "console-a", db.port(), password, "5600-5600")
              .healthCheckInterval("500ms")
              .buckets(2)
              .write(dir.resolve("console.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);
      Path log = dir.resolve("shardberg.log");
      int webPort = freePort();
      String rest = "http://localhost:" + webPort;
      Path out = dir.resolve("run.out");
      Process run =
          cli(
                  List.of(
                      "run",
                      "--config",
                      configFile.toString(),
                      "--web-port",
                      Integer.toString(webPort),
                      "--progress-interval",
                      "1s"),
                  log)
              .redirectOutput(out.toFile())
              .start();
      boolean[] sigintIgnored = {false};
      try {
        await()
            .atMost(CAUGHT_UP)
            .until(() -> Files.readString(out).contains("progress: checkpoint"));
        String console = Files.readString(out);
        assertThat(console)
            .as(console)
            .contains(
                "No retained checkpoint under "
                    + LocalCheckpoints.directory(config)
                    + ": starting without state\n")
            .contains(
                "Assembled: 2 shards on 1 host (console-a: 2) -> shardberg.shop.orders, updates"
                    + " and deletes by key (equality deletes)\n")
            .contains("Running: Flink job ")
            .contains("Flink dashboard: http://localhost:" + webPort + " ")
            .contains("First commit: checkpoint ")
            .doesNotContain("\r")
            .doesNotContain("\033");

        // the dashboard's REST API lists the running job; the dashboard itself is served
        JsonNode overview = JSON.readTree(get(rest + "/jobs/overview"));
        assertThat(overview.path("jobs"))
            .anySatisfy(
                job -> {
                  assertThat(job.path("name").asText())
                      .isEqualTo("shardberg console \u2192 shardberg.shop.orders");
                  assertThat(job.path("state").asText()).isEqualTo("RUNNING");
                });
        assertThat(get(rest + "/")).contains("<html");

        // status beside the running job, in its own JVM with the same log file
        List<String> logBefore = Files.readAllLines(log);
        assertThat(logBefore).anyMatch(l -> l.contains("Assembled shardberg console"));
        Process status =
            cli(
                    List.of(
                        "status",
                        "--config",
                        configFile.toString(),
                        "--json",
                        "--flink-rest",
                        rest),
                    log)
                .redirectOutput(dir.resolve("status.json").toFile())
                .start();
        assertThat(status.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(status.exitValue()).as(Files.readString(dir.resolve("status.json"))).isZero();
        JsonNode json = JSON.readTree(dir.resolve("status.json").toFile());
        assertThat(json.path("pipeline").asText()).isEqualTo("console");
        assertThat(json.path("shards"))
            .hasSize(2)
            .allSatisfy(
                s -> {
                  assertThat(s.path("addedRecords").asLong()).isEqualTo(50);
                  assertThat(s.path("lastChangeCommittedAt").asText()).isNotEmpty();
                });
        // the run's log kept what it had before status started, and goes on
        List<String> logAfter = Files.readAllLines(log);
        assertThat(logAfter.size()).isGreaterThanOrEqualTo(logBefore.size());
        assertThat(logAfter.subList(0, logBefore.size())).isEqualTo(logBefore);

        // the job's view of the host through its metrics (Flink's REST cache refreshes every 10 s)
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> host(rest, configFile).path("connection").asText().equals("reachable"));
        // the snapshot's rows read, per host and per shard (the job's snapshotRows gauges)
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> host(rest, configFile).path("snapshotRowsRead").asLong() == 100);
        assertThat(statusJson(rest, configFile).path("shards"))
            .hasSize(2)
            .allSatisfy(s -> assertThat(s.path("snapshotRowsRead").asLong()).isEqualTo(50));

        // the host goes away: its outage grows in status, and the run's log says so
        db.stop();
        // the console shows the host lost from the first line asked for once the watch knew: no
        // lag, no cached reading
        assertConsoleFollows(out, log, "Lost MySQL host 'console-a'", "console-a unreachable for ");
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> host(rest, configFile).path("connection").asText().equals("unreachable"));
        long first = host(rest, configFile).path("unreachableMillis").asLong();
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> host(rest, configFile).path("unreachableMillis").asLong() > first);
        db.restart();
        assertConsoleFollows(
            out,
            log,
            "MySQL host 'console-a' (127.0.0.1:" + db.port() + ") is back after",
            "console-a reachable");
        assertThat(Files.readAllLines(log))
            .anyMatch(
                l ->
                    l.contains(" WARN ")
                        && l.contains("SourceHostWatch")
                        && l.contains("Lost MySQL host 'console-a' (127.0.0.1:" + db.port() + ")"));
        // the binlog reader says when it has reconnected (docs/observability.md): Debezium's line,
        // after the loss
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () -> {
                  List<String> lines = Files.readAllLines(log);
                  int lost = -1;
                  for (int i = 0; i < lines.size(); i++) {
                    if (lines.get(i).contains("Lost MySQL host 'console-a'")) {
                      lost = i;
                    }
                  }
                  return lost >= 0
                      && lines.subList(lost, lines.size()).stream()
                          .anyMatch(
                              l ->
                                  l.contains(
                                      "Connected to MySQL binlog at 127.0.0.1:"
                                          + db.port()
                                          + ", starting at "));
                });
        db.execute("UPDATE shop.orders_1 SET status = 'AFTER_RESTART' WHERE order_id = 3");
        // a change written after the host came back is read once the binlog reader has reconnected
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofSeconds(1))
            .ignoreExceptions()
            .until(() -> Reconciliation.verify(config, 5).matches());
      } finally {
        // Ctrl-C. A process started in the background without job control (nohup, `cmd &` in a
        // script,
        // some CI runners) inherits SIGINT ignored, and a JVM cannot catch an ignored signal: there
        // the
        // run's other stop signal, SIGTERM, takes the same path (LocalRun handles both alike)
        sigintIgnored[0] = ignoresSigint(run.pid());
        String signal = sigintIgnored[0] ? "-TERM" : "-INT";
        new ProcessBuilder("kill", signal, Long.toString(run.pid())).start().waitFor();
        boolean stopped = run.waitFor(3, TimeUnit.MINUTES);
        // if not, say where the run was
        String where =
            stopped
                ? ""
                : threadDump(run)
                    + "\n--- console ---\n"
                    + Files.readString(out)
                    + "\n--- log (tail) ---\n"
                    + tail(log, 200);
        if (!stopped) {
          run.destroyForcibly();
        }
        assertThat(stopped).as("run stops after Ctrl-C; %s", where).isTrue();
      }
      String console = Files.readString(out);
      assertThat(run.exitValue()).as(console).isZero();
      // a run that cannot see Ctrl-C says so, naming the signal that works
      assertThat(
              console.contains(
                  "Ctrl-C (SIGINT) is ignored by this process (started in the background): stop it with `kill "
                      + run.pid()
                      + "` (SIGTERM)"))
          .as(console)
          .isEqualTo(sigintIgnored[0]);
      LocalCheckpoints.Retained state =
          LocalCheckpoints.latest(LocalCheckpoints.directory(config)).orElseThrow();
      assertThat(state.checkpointId())
          .as("the newest state is the savepoint of the stop")
          .isEqualTo(-1);
      assertThat(console)
          .contains("Stopping: taking a final savepoint")
          .contains(
              "Stopped. State: savepoint " + state.directory().toString().replaceAll("/$", ""));
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.render()).isTrue();
    }
  }

  /**
   * A resume the job refuses, as a user meets it: {@code pipeline.id} renamed in a config that
   * keeps the checkpoint directory, so {@code run} resumes the other pipeline's checkpoint. (Until
   * issue 28's re-reads by position this test used a shard new to the state under deletes by
   * position, which is now read again; see ShardTableLifeTest.) The coordinator refuses the
   * restored state; the console ends with the reason (naming both ids and the way on) and the way
   * on, one line each, with no stack trace (those go to the log file), and the run exits 1.
   */
  @Test
  void aRefusedResumeEndsWithTheReasonAndTheWayOn() throws Exception {
    try (EmbeddedMariaDb db = EmbeddedMariaDb.start("console-refused", 33)) {
      OrdersShards shards = new OrdersShards(List.of(db), 2);
      shards.createTables();
      shards.load(20, 7);
      db.createCdcUser("shardberg_cdc", "console-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "console-pw\n");
      Path original =
          consoleConfig("refused", "console-refused", db.port(), password, "5610-5610")
              .buckets(2)
              .write(dir.resolve("original.yaml"));
      Path renamed =
          consoleConfig("renamed", "console-refused", db.port(), password, "5610-5610")
              .buckets(2)
              .write(dir.resolve("renamed.yaml"));
      Path log = dir.resolve("shardberg.log");

      // a run stopped with a final savepoint (SIGTERM takes the path of Ctrl-C), in the shared
      // checkpoint directory
      runUntilFirstCommit(original, dir.resolve("first.out"), log);

      // the same pipeline under another id: the resume finds the first run's savepoint
      Path out = dir.resolve("refused.out");
      Process refused =
          cli(List.of("run", "--config", renamed.toString(), "--progress-interval", "1s"), log)
              .redirectOutput(out.toFile())
              .start();
      boolean ended = refused.waitFor(3, TimeUnit.MINUTES);
      if (!ended) {
        refused.destroyForcibly();
      }
      String console = Files.readString(out);
      assertThat(ended).as("the refused run ends by itself; console:%n%s", console).isTrue();
      assertThat(refused.exitValue()).as(console).isEqualTo(ShardbergCli.EXIT_PROBLEM);
      List<String> lines = console.lines().filter(l -> !l.isBlank()).toList();
      assertThat(lines).as(console).hasSizeGreaterThanOrEqualTo(2);
      assertThat(lines.get(lines.size() - 2))
          .as(console)
          .startsWith(
              "Stopped: Cannot restore the coordinator of pipeline renamed for table shardberg.shop.orders: the"
                  + " restored state belongs to pipeline refused")
          .contains("pipeline.id back to refused");
      assertThat(lines.get(lines.size() - 1)).as(console).startsWith("To go on: ");
      assertThat(console)
          .as(
              "the refused run committed nothing: no first commit (the earlier run's is not this run's)")
          .doesNotContain("First commit");
      assertThat(console)
          .as("no stack trace nor Flink's own shutdown error on the console")
          .doesNotContain("\tat ")
          .doesNotContain("Exception in thread")
          .doesNotContain("MiniCluster is not yet running");
      assertThat(Files.readString(log))
          .as("the stack trace is in the log file")
          .contains("PipelineConflictException: Cannot restore the coordinator of pipeline renamed")
          .contains("\tat dev.shardberg.coordinator.CommitCoordinator");
    }
  }

  /**
   * Issue 30's primary failover as the console shows it: the host's address (a {@link
   * TcpForwarder}, as a virtual IP) moves from a MariaDB primary to its promoted replica while
   * {@code run} reads the binlog. The run ends by itself: the second-to-last line is {@code
   * Stopped:} with the job's own reason (the host, both servers, the way on), the last {@code To go
   * on:}, no stack trace on the console, exit 1.
   */
  @Test
  void aPrimaryFailoverUnderTheRunEndsItWithTheHostBothServersAndTheWayOn() throws Exception {
    try (EmbeddedMariaDb primary = EmbeddedMariaDb.start("console-primary", 86);
        EmbeddedMariaDb replica = EmbeddedMariaDb.startReplicaOf(primary, "console-replica", 87);
        TcpForwarder address = TcpForwarder.to("console-host", primary.port())) {
      primary.createCdcUser("shardberg_cdc", "console-pw"); // replicated: the replica has it too
      primary.execute(
          "CREATE DATABASE shop",
          SmallOrdersShards.createTable("shop", 0),
          SmallOrdersShards.createTable("shop", 1));
      for (int shard = 0; shard < 2; shard++) {
        for (int id = 1; id <= 10; id++) {
          primary.execute(
              "INSERT INTO "
                  + SmallOrdersShards.table("shop", shard)
                  + " (id, qty) VALUES ("
                  + id
                  + ", "
                  + (shard * 100 + id)
                  + ")");
        }
      }
      Path password = Files.writeString(dir.resolve("cdc.password"), "console-pw\n");
      Path config =
          consoleConfig("failover-console", "a", address.port(), password, "5620-5620")
              .buckets(2)
              .write(dir.resolve("failover.yaml"));
      Path out = dir.resolve("failover.out");
      Path log = dir.resolve("shardberg.log");
      Process run = runToFirstCommit(config, out, log);
      try {
        primary.execute(
            "INSERT INTO " + SmallOrdersShards.table("shop", 0) + " (id, qty) VALUES (11, 11)");
        replica.awaitReplicated(primary, 60);

        replica.promote();
        address.moveTo(replica.port());
        replica.execute(
            "INSERT INTO " + SmallOrdersShards.table("shop", 1) + " (id, qty) VALUES (12, 12)");
        boolean ended = run.waitFor(3, TimeUnit.MINUTES);
        String console = Files.readString(out);
        assertThat(ended).as("the run ends by itself; console:%n%s", console).isTrue();
        assertThat(run.exitValue()).as(console).isEqualTo(ShardbergCli.EXIT_PROBLEM);
        List<String> lines = console.lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines).as(console).hasSizeGreaterThanOrEqualTo(2);
        assertThat(lines.get(lines.size() - 2))
            .as(console)
            .startsWith("Stopped: Cannot keep reading host 'a' (127.0.0.1:" + address.port() + ")")
            .contains("was read from server_id 86, but the host now answers as server_id 87")
            .contains("remove source 'a' from `sources`");
        assertThat(lines.get(lines.size() - 1))
            .as(console)
            .startsWith("To go on: do what the line above says");
        assertThat(console)
            .as("no stack trace nor Flink's own shutdown error on the console")
            .doesNotContain("\tat ")
            .doesNotContain("Exception in thread")
            .doesNotContain("MiniCluster is not yet running");
      } finally {
        if (run.isAlive()) {
          CliProcess.stop(run);
        }
      }
    }
  }

  /**
   * What every console test starts from: one host on this machine, one reader and one writer,
   * checkpoints every second under the test's directory, {@code shop.orders_N} into {@code
   * shop.orders} on a Hadoop catalog.
   */
  private TestConfig consoleConfig(
      String pipeline, String source, int port, Path password, String serverIds) {
    return TestConfig.pipeline(pipeline)
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(1)
        .checkpointDir(dir.resolve("checkpoints").toUri())
        .source(
            new TestConfig.Source(source, "127.0.0.1", port)
                .user("shardberg_cdc")
                .passwordFile(password)
                .serverIds(serverIds)
                .withoutTls())
        .tables("shop", "orders_(?<shard>\\d+)")
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table("shop", "orders");
  }

  /** A run of {@code config} until its first commit, then stopped with SIGTERM; it exits 0. */
  private void runUntilFirstCommit(Path config, Path out, Path log) throws Exception {
    Process run = null;
    try {
      run = runToFirstCommit(config, out, log);
    } finally {
      if (run != null) {
        CliProcess.stop(run);
      }
    }
    assertThat(run.exitValue()).as(Files.readString(out)).isZero();
  }

  /**
   * {@code run} of {@code config} (console to {@code out}), once its console shows the first
   * commit; stopped if it does not.
   */
  private Process runToFirstCommit(Path config, Path out, Path log) throws Exception {
    Process run =
        cli(List.of("run", "--config", config.toString(), "--progress-interval", "1s"), log)
            .redirectOutput(out.toFile())
            .start();
    try {
      await()
          .atMost(CAUGHT_UP)
          .until(() -> Files.readString(out).contains("First commit: checkpoint "));
      return run;
    } catch (RuntimeException | Error e) {
      CliProcess.stop(run);
      throw e;
    }
  }

  /**
   * Once the log has {@code logged} (the host watch's state changed), the second progress line
   * after it (the first may have been asked for before) shows {@code shown} for the host, or says
   * how old its reading is: the console never shows an older state as the current one.
   */
  private static void assertConsoleFollows(Path out, Path log, String logged, String shown)
      throws Exception {
    await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains(logged));
    int from = Files.readString(out).length();
    await().atMost(Duration.ofSeconds(60)).until(() -> progressLinesFrom(out, from).size() >= 2);
    String line = progressLinesFrom(out, from).get(1);
    assertThat(line.contains(shown) || line.contains("(as of "))
        .as("after '%s': %s", logged, line)
        .isTrue();
  }

  /** The complete progress lines written to {@code out} after its first {@code from} characters. */
  private static List<String> progressLinesFrom(Path out, int from) throws IOException {
    String[] lines = Files.readString(out).substring(from).split("\n", -1);
    if (lines.length < 3) {
      return new ArrayList<>();
    }
    List<String> complete =
        new ArrayList<>(
            List.of(lines)
                .subList(1, lines.length - 1)); // the first may be cut, the last unfinished
    complete.removeIf(l -> !l.startsWith("progress: "));
    return complete;
  }

  private static JsonNode host(String rest, Path configFile) throws Exception {
    JsonNode hosts = statusJson(rest, configFile).path("hosts");
    return hosts.size() == 1 ? hosts.get(0) : JSON.createObjectNode();
  }

  private static JsonNode statusJson(String rest, Path configFile) throws Exception {
    CliRun result =
        CliRun.cli("status", "--config", configFile.toString(), "--json", "--flink-rest", rest);
    assertThat(result.exit()).as(result.err()).isZero();
    return JSON.readTree(result.out());
  }

  /** The dev CLI in its own JVM with bin/shardberg's log configuration, this test's classpath. */
  private ProcessBuilder cli(List<String> args, Path logFile) {
    return CliProcess.cli(dir, args, logFile);
  }

  private static String get(String url) throws IOException, InterruptedException {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(10))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(url).isEqualTo(200);
    return response.body();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** Whether the process ignores SIGINT (Linux: bit 2 of SigIgn in /proc/<pid>/status). */
  private static boolean ignoresSigint(long pid) throws IOException {
    Path status = Path.of("/proc", Long.toString(pid), "status");
    if (!Files.exists(status)) {
      return false;
    }
    for (String line : Files.readAllLines(status)) {
      if (line.startsWith("SigIgn:")) {
        return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & (1L << 1))
            != 0;
      }
    }
    return false;
  }

  /** The threads of a running JVM (jcmd of this JDK), for a failure message. */
  private static String threadDump(Process process) {
    try {
      Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
      Process dump =
          new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
              .redirectErrorStream(true)
              .start();
      String text =
          new String(dump.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      dump.waitFor(1, TimeUnit.MINUTES);
      return "--- threads of the run ---\n" + text;
    } catch (Exception e) {
      return "(no thread dump: " + e + ")";
    }
  }

  private static String tail(Path file, int lines) {
    try {
      List<String> all = Files.readAllLines(file);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (Exception e) {
      return "(cannot read " + file + ": " + e + ")";
    }
  }
}
