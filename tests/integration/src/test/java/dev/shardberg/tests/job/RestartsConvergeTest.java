package dev.shardberg.tests.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.cli.ShardbergCli;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.watch.BinlogFormatException;
import dev.shardberg.tests.cli.CliRun;
import dev.shardberg.tests.support.TestConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarts that converge and failures that are loud, with the real job in local MiniClusters (as
 * {@code bin/shardberg run} runs it), two MariaDB servers × 4 shards and a Hadoop table on disk:
 *
 * <ol>
 *   <li>a local run (its own JVM) killed with SIGKILL, deletes and updates in MySQL while it is
 *       down, a second run resumes from the retained checkpoint by itself: table == shards (ghost
 *       rows of the deleted keys would fail it);
 *   <li>a start without state on that table is refused, with the resume command in the message;
 *   <li>{@code pipeline.on-stateless-start: resnapshot} after more deletes: table == shards again;
 *   <li>{@code SET GLOBAL binlog_format='STATEMENT'} on one host stops the job, naming the host;
 *   <li>a DDL stops the job without a restart.
 * </ol>
 *
 * The last two run with a one-hour restart delay: a failure Flink treated as recoverable would
 * leave the job RESTARTING far past the bounded wait, so "FAILED within the wait" means "failed
 * without restarts".
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RestartsConvergeTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);
  private static final String PIPELINE = "restarts";

  @TempDir static Path dir;
  static TwoHostShards shards;

  @BeforeAll
  static void startShards() throws Exception {
    shards = new TwoHostShards(dir);
    for (int s = 0; s < 8; s++) {
      shards.insert(s, 30);
    }
  }

  @AfterAll
  static void stopShards() {
    if (shards != null) {
      shards.close();
    }
  }

  /** The config of every test here, restarting after {@code restartDelay}. */
  private static TestConfig testConfig(String restartDelay) {
    return TestConfig.pipeline(PIPELINE)
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(2)
        .checkpointDir(dir.resolve("checkpoints").toUri())
        .restart(10, restartDelay)
        .with(shards::sources)
        .binlogFormatCheckInterval("1s")
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table("shop", "orders")
        .buckets(2);
  }

  /** {@code config} written to the test's config.yaml, loaded. */
  private static ShardbergConfig load(TestConfig config) throws Exception {
    return ShardbergConfig.load(config.write(dir.resolve("config.yaml")));
  }

  private static ShardbergConfig config() throws Exception {
    return load(testConfig("1s"));
  }

  /** Starts the job as a local {@code run} does; returns the job and what the run printed. */
  private static Started startLocal(ShardbergConfig config, boolean fresh) throws Exception {
    StringWriter out = new StringWriter();
    StreamExecutionEnvironment env =
        LocalCheckpoints.environment(config, fresh, new PrintWriter(out, true));
    JobClient job = ShardbergPipeline.start(env, config);
    return new Started(job, out.toString());
  }

  record Started(JobClient job, String out) {}

  @Test
  @Order(1)
  void localRunKilledAndRestartedResumesWithTheChangesMadeWhileItWasDown() throws Exception {
    ShardbergConfig config = config();
    Path configFile = dir.resolve("config.yaml");
    LocalRunProcess first = LocalRunProcess.start(configFile, dir.resolve("run-1.out"));
    Table table;
    try {
      await()
          .atMost(CAUGHT_UP)
          .ignoreExceptions()
          .until(() -> Catalogs.loadTable(config.target()) != null);
      table = Catalogs.loadTable(config.target());
      awaitCaughtUp(table);
      shards.changeRound(1);
      awaitCaughtUp(table);
      await()
          .atMost(CAUGHT_UP)
          .until(() -> LocalCheckpoints.latest(LocalCheckpoints.directory(config)).isPresent());
      assertThat(first.output())
          .contains(
              "No retained checkpoint under "
                  + LocalCheckpoints.directory(config)
                  + ": starting without state");
    } finally {
      first.kill(); // kill -9: no final checkpoint, no cancellation, nothing cleaned up
    }
    long committedBefore = lastCheckpoint(table);

    // while it is down: deletes, updates, inserts
    shards.changeRound(2);
    shards.delete(0, 1);
    shards.delete(5, 2);
    shards.update(6, 3, "REFUNDED", "while down");

    LocalCheckpoints.Retained retained =
        LocalCheckpoints.latest(LocalCheckpoints.directory(config)).orElseThrow();
    LocalRunProcess second = LocalRunProcess.start(configFile, dir.resolve("run-2.out"));
    try {
      awaitCaughtUp(
          table); // exactly the shards: a delete missed while down would leave a ghost row
      assertThat(second.output())
          .contains("Resuming from " + retained + " (--fresh starts without state instead)");
      assertThat(lastCheckpoint(table)).isGreaterThan(committedBefore);
      shards.changeRound(3);
      awaitCaughtUp(table);
    } finally {
      second.stop(); // SIGTERM, as Ctrl-C: the JVM's shutdown path must not drop the retained
      // checkpoint
    }
    // the checkpoint the stopped run leaves is one of its own, newer than the one it resumed from
    assertThat(
            LocalCheckpoints.latest(LocalCheckpoints.directory(config)).orElseThrow().directory())
        .isNotEqualTo(retained.directory());
    table.refresh();
    List<CommitRecord> commits = CommittedCheckpoints.history(table, PIPELINE, Integer.MAX_VALUE);
    Set<Long> ids = new HashSet<>();
    for (CommitRecord c : commits) {
      assertThat(ids.add(c.checkpointId()))
          .as("checkpoint %s committed twice", c.checkpointId())
          .isTrue();
    }
  }

  /**
   * {@code shardberg run --config FILE} in its own JVM (this test's classpath), killed with
   * SIGKILL.
   */
  record LocalRunProcess(Process process, Path out) {
    static LocalRunProcess start(Path configFile, Path out) throws Exception {
      List<String> command = new java.util.ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx768m");
      ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
          .filter(a -> a.startsWith("--add-opens") || a.startsWith("--add-exports"))
          .forEach(command::add);
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(ShardbergCli.class.getName());
      command.addAll(List.of("run", "--config", configFile.toString()));
      Process process =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .start();
      return new LocalRunProcess(process, out);
    }

    String output() throws Exception {
      return Files.readString(out);
    }

    void stop() throws Exception {
      process.destroy(); // SIGTERM on Linux
      assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("stopped run ends").isTrue();
    }

    void kill() throws Exception {
      process.destroyForcibly(); // SIGKILL on Linux
      assertThat(process.waitFor(1, TimeUnit.MINUTES)).as("killed run ends").isTrue();
    }
  }

  @Test
  @Order(2)
  void startWithoutStateOnThisPipelinesTableIsRefusedWithTheResumeCommand() throws Exception {
    ShardbergConfig config = config();
    Table table = Catalogs.loadTable(config.target());
    long last = lastCheckpoint(table);
    String head =
        "Cannot start pipeline 'restarts' without state: table shardberg.shop.orders already holds its commits up to"
            + " checkpoint "
            + last
            + ", and a new snapshot on top would keep every row deleted in MySQL since then. ";
    String tail =
        " To snapshot the shards again instead, set pipeline.on-stateless-start: resnapshot (their rows are removed"
            + " from the table first; readers see them empty until the snapshot commits).";

    // under flink run without -s (any environment that is not a local one)
    assertThatThrownBy(
            () ->
                ShardbergPipeline.build(
                    new StreamExecutionEnvironment(new Configuration()), config))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            head
                + "Resume from the job's last retained checkpoint or a savepoint: use `flink run -s <retained"
                + " checkpoint or savepoint> ... --config FILE` (retained checkpoints: "
                + dir.resolve("checkpoints").toUri()
                + "/<flink-job-id>/chk-<n>)."
                + tail);

    // a local run told to ignore its checkpoints, through the CLI: refused before anything runs
    Path file = dir.resolve("config.yaml");
    CliRun result = CliRun.cli("run", "--fresh", "--config", file.toString());
    assertThat(result.exit()).as(result.err()).isEqualTo(1);
    assertThat(result.out())
        .startsWith(
            "Starting without state (--fresh); checkpoints go to "
                + LocalCheckpoints.directory(config));
    assertThat(result.err())
        .contains(
            head
                + "No retained checkpoint to resume from was found under "
                + LocalCheckpoints.directory(config)
                + " (or --fresh was given): `bin/shardberg run --config FILE` resumes by itself"
                + " from the newest checkpoint there (pipeline.checkpoint-dir)."
                + tail);
    assertThat(lastCheckpoint(table)).isEqualTo(last);
  }

  @Test
  @Order(3)
  void resnapshotRemovesTheShardsRowsAndEndsWithExactlyTheShards() throws Exception {
    // more deletes and updates that no job sees
    shards.changeRound(4);
    shards.delete(3, 4);
    shards.delete(7, 5);
    ShardbergConfig config = load(testConfig("1s").onStatelessStart("resnapshot"));
    Table table = Catalogs.loadTable(config.target());
    Started run = startLocal(config, true);
    try {
      awaitCaughtUp(table);
      shards.changeRound(5);
      awaitCaughtUp(table);
    } finally {
      cancel(run.job());
    }
    table.refresh();
    List<Snapshot> resets = new java.util.ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      if (PIPELINE.equals(s.summary().get("shardberg.resnapshot.pipeline-id"))) {
        resets.add(s);
      }
    }
    assertThat(resets).hasSize(1);
    assertThat(resets.get(0).summary())
        .containsEntry("shardberg.resnapshot.shards", "0,1,2,3,4,5,6,7");
    assertThat(resets.get(0).operation()).isEqualTo("delete");
  }

  @Test
  @Order(4)
  void binlogFormatChangedOnALiveServerStopsTheJobNamingTheHost() throws Exception {
    ShardbergConfig config = load(testConfig("1h"));
    Table table = Catalogs.loadTable(config.target());
    Started run = startLocal(config, false);
    try {
      assertThat(run.out()).startsWith("Resuming from ");
      awaitCaughtUp(table);
      shards.b.execute("SET GLOBAL binlog_format = 'STATEMENT'");
      Throwable failure =
          catchThrowable(() -> run.job().getJobExecutionResult().get(3, TimeUnit.MINUTES));
      assertThat(ExceptionUtils.findThrowable(failure, BinlogFormatException.class))
          .as("failure %s", failure)
          .get()
          .extracting(Throwable::getMessage)
          .asString()
          .startsWith(
              "Cannot keep reading host 'e2e-b' ("
                  + shards.b.host()
                  + ":"
                  + shards.b.port()
                  + "): @@GLOBAL.binlog_format changed to STATEMENT while the job was running")
          .contains("SET GLOBAL binlog_format = 'ROW'");
    } finally {
      shards.b.execute("SET GLOBAL binlog_format = 'ROW'");
      cancel(run.job());
    }
  }

  @Test
  @Order(5)
  void aDdlTheJobCannotApplyFailsItWithoutRestarts() throws Exception {
    // schema.change-behavior=fail: any DDL stops the job (evolve would add the column:
    // SchemaEvolutionEndToEndTest)
    ShardbergConfig config = load(testConfig("1h").schemaChangeBehavior("fail"));
    Table table = Catalogs.loadTable(config.target());
    Started run = startLocal(config, false);
    try {
      awaitCaughtUp(table);
      shards.a.execute("ALTER TABLE shop.orders_1 ADD COLUMN extra INT");
      Throwable failure =
          catchThrowable(() -> run.job().getJobExecutionResult().get(3, TimeUnit.MINUTES));
      assertThat(ExceptionUtils.findThrowable(failure, ShardRouterException.class))
          .as("failure %s", failure)
          .get()
          .extracting(Throwable::getMessage)
          .asString()
          .startsWith(
              "Cannot apply a schema change on shard 1 ('shop.orders_1' on host 'e2e-a'): DDL 'ALTER TABLE shop.orders_1 ADD COLUMN extra INT'");
      awaitCaughtUp(table); // nothing after the last commit was lost or half-written
    } finally {
      cancel(run.job());
    }
  }

  private static void awaitCaughtUp(Table table) {
    List<String> expected = shards.expectedRows();
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofSeconds(1))
        .ignoreExceptions()
        .until(() -> TwoHostShards.actualRows(table).equals(expected));
  }

  private static long lastCheckpoint(Table table) {
    table.refresh();
    return CommittedCheckpoints.maxCommittedCheckpoint(table, PIPELINE).orElse(-1);
  }

  /**
   * Cancels (no final checkpoint) and waits until the job has ended; its local MiniCluster then
   * shuts down.
   */
  private static void cancel(JobClient job) throws Exception {
    if (!job.getJobExecutionResult().isDone()) {
      job.cancel().get();
    }
    catchThrowable(() -> job.getJobExecutionResult().get(CAUGHT_UP.toMinutes(), TimeUnit.MINUTES));
    assertThat(job.getJobExecutionResult()).isDone();
  }
}
