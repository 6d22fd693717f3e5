package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergJob;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.ClientUtils;
import org.apache.flink.client.deployment.executors.RemoteExecutor;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.DefaultExecutorServiceLoader;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard table created while the job runs under {@code flink run} (attached, as {@code flink run}
 * submits by default) on a real Flink cluster (a MiniCluster behind its REST API, the program run
 * as Flink's command line runs it: {@code ClientUtils.executeProgram} with the remote executor) and
 * a real MariaDB host: the submitting client finds it, stops the job with a savepoint and submits
 * it again from there with the table in the plan. The table then equals the shards, the new one
 * included; the second job added rows of the new shard only (no other shard read again); its
 * changes after that come from the binlog. A table whose number clashes with a shard's stops the
 * job with a savepoint and fails the submission, naming both tables. Before, a job under {@code
 * flink run} only warned about the new table until an operator resumed it.
 */
class NewShardUnderFlinkRunTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);

  @TempDir Path dir;

  @Test
  void anAttachedFlinkRunReadsANewShardTableBySubmittingTheJobAgainFromASavepoint()
      throws Exception {
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("flink-run-a", 44)) {
      OrdersShards shards = new OrdersShards(List.of(a), 2);
      shards.createTables();
      shards.load(30, 13);
      a.createCdcUser("shardberg_cdc", "fleet-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "fleet-pw\n");
      Path configFile =
          TestConfig.pipeline("fleet-cluster")
              .checkpointInterval("1s")
              .parallelism(1)
              .writerParallelism(1)
              .checkpointDir(dir.resolve("checkpoints").toUri())
              .source(NewShardWhileRunningTest.source("a", a, "5730-5730", password))
              .tables("shop", OrdersShards.TABLE_PATTERN)
              .healthCheckInterval("500ms")
              .discoveryInterval("1s")
              // the adoption by a savepoint and a resubmission (capture: NewShardCaptureTest)
              .newShards("adopt")
              .hadoopCatalog(dir.resolve("warehouse").toUri())
              .table("shop", "orders")
              .buckets(2)
              .write(dir.resolve("fleet-cluster.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);

      Configuration clusterConf = new Configuration();
      clusterConf.set(RestOptions.BIND_PORT, "0");
      ByteArrayOutputStream console = new ByteArrayOutputStream();
      PrintStream stdout = System.out;
      PrintStream stderr = System.err;
      try (MiniCluster cluster =
          new MiniCluster(
              new MiniClusterConfiguration.Builder()
                  .setConfiguration(clusterConf)
                  .setNumTaskManagers(1)
                  .setNumSlotsPerTaskManager(4)
                  .build())) {
        cluster.start();
        URI rest = cluster.getRestAddress().get(1, TimeUnit.MINUTES);
        Configuration client = new Configuration();
        client.set(DeploymentOptions.TARGET, RemoteExecutor.NAME);
        client.set(DeploymentOptions.ATTACHED, true);
        client.set(RestOptions.ADDRESS, rest.getHost());
        client.set(RestOptions.PORT, rest.getPort());
        PackagedProgram program =
            PackagedProgram.newBuilder()
                .setEntryPointClassName(ShardbergJob.class.getName())
                .setArguments("--config", configFile.toString())
                .setConfiguration(client)
                .build();
        // what the client prints (its lines, and the message of a failed submission), as `flink
        // run` shows it, kept for the assertions
        System.setOut(new PrintStream(new Tee(stdout, console), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new Tee(stderr, console), true, StandardCharsets.UTF_8));
        CompletableFuture<Void> submission =
            CompletableFuture.runAsync(
                () -> {
                  try {
                    ClientUtils.executeProgram(
                        new DefaultExecutorServiceLoader(), client, program, false, false);
                  } catch (Exception e) {
                    throw new CompletionException(e);
                  }
                });
        // the client runs discovery, creates the table and submits; then it prints this line
        await()
            .atMost(CAUGHT_UP)
            .until(
                () ->
                    submission.isDone()
                        || console.toString(StandardCharsets.UTF_8).contains("Running: Flink job"));
        assertThat(submission).as(console.toString(StandardCharsets.UTF_8)).isNotDone();
        awaitTableEqualsShards(config, console);

        a.execute(
            OrdersShards.ddl("shop.orders_5"),
            "INSERT INTO shop.orders_5 SELECT * FROM shop.orders_0 WHERE order_id <= 25",
            "UPDATE shop.orders_1 SET status = 'PAID' WHERE order_id <= 4");
        awaitTableEqualsShards(config, console);
        await()
            .atMost(CAUGHT_UP)
            .until(() -> console.toString(StandardCharsets.UTF_8).contains("New in this run"));
        assertThat(console.toString(StandardCharsets.UTF_8))
            .containsPattern(
                "New shard table\\(s\\) on MySQL: 5 \\('shop.orders_5' on host 'a'\\)\\. Reading"
                    + " them: a savepoint")
            .contains("New in this run, each read alone from a fresh snapshot: 5 ('shop.orders_5'");

        // afterwards its changes come from the binlog
        a.execute(
            "UPDATE shop.orders_5 SET status = 'SHIPPED' WHERE order_id <= 3",
            "DELETE FROM shop.orders_5 WHERE order_id = 7");
        awaitTableEqualsShards(config, console);

        List<JobStatusMessage> jobs =
            cluster.listJobs().get(1, TimeUnit.MINUTES).stream()
                .sorted(Comparator.comparingLong(JobStatusMessage::getStartTime))
                .toList();
        assertThat(jobs)
            .extracting(JobStatusMessage::getJobState)
            .as("the first job, stopped with a savepoint, then the one submitted from it")
            .containsExactly(JobStatus.FINISHED, JobStatus.RUNNING);
        Table table = Catalogs.loadTable(config.target());
        Map<Integer, Long> added =
            new TreeMap<>(
                ShardTableLifeTest.addedRows(
                    table, "fleet-cluster", jobs.get(1).getJobId().toString()));
        assertThat(added)
            .as("the second job: the new shard's snapshot and changes, no shard read again")
            .containsKey(5)
            .doesNotContainKey(0);
        // shard 1's UPDATE of 4 rows ran with the CREATE TABLE: it reaches the binlog before or
        // after the savepoint, so the second job adds those 4 rows or none; a shard 1 read again
        // would add all its 30 rows
        assertThat(added.getOrDefault(1, 0L))
            .as("shard 1 in the second job: its 4 changed rows at most, not read again")
            .isIn(0L, 4L);

        // a table whose number clashes with shard 1's: the job stops with a savepoint and the
        // submission fails, naming both tables
        a.execute("CREATE TABLE shop.orders_01 LIKE shop.orders_1");
        await().atMost(Duration.ofMinutes(3)).until(submission::isDone);
        assertThat(submission).isCompletedExceptionally();
        Throwable failure = submission.handle((ok, e) -> e).get();
        String text = console.toString(StandardCharsets.UTF_8) + "\n" + causes(failure);
        assertThat(text)
            .as(text)
            .contains("Cannot assign shard numbers: shard number 1 is taken by")
            .contains("'shop.orders_01' on host 'a'")
            .contains("Stopped; state: savepoint ");
        assertThat(cluster.getJobStatus(jobs.get(1).getJobId()).get(1, TimeUnit.MINUTES))
            .isEqualTo(JobStatus.FINISHED);
        a.execute("DROP TABLE shop.orders_01");
        VerifyReport report = Reconciliation.verify(config, 5);
        assertThat(report.matches()).as(report.render()).isTrue();
        // a second engine: a real Spark reads the table the two jobs wrote as MySQL holds it
        List<String> mysql = new java.util.ArrayList<>();
        for (int shard : List.of(0, 1, 5)) {
          mysql.addAll(OrdersShards.rows(a, "shop.orders_" + shard, shard));
        }
        mysql.sort(null);
        assertThat(
                dev.shardberg.tests.job.SparkReader.orders(
                    dir.resolve("warehouse").toUri(), "shop"))
            .as("Spark's rows of the table")
            .isEqualTo(mysql)
            .hasSizeGreaterThan(60);
      } finally {
        System.setOut(stdout);
        System.setErr(stderr);
      }
    }
  }

  private static String causes(Throwable e) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      text.append(t).append('\n');
    }
    return text.toString();
  }

  /** Until `verify` finds the table equal to every shard discovered now, row for row. */
  private static void awaitTableEqualsShards(ShardbergConfig config, ByteArrayOutputStream out) {
    ShardsVerified.await(config, CAUGHT_UP, "client", () -> out.toString(StandardCharsets.UTF_8));
  }

  /** Writes to both streams. */
  private static final class Tee extends OutputStream {
    private final OutputStream first;
    private final OutputStream second;

    Tee(OutputStream first, OutputStream second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public synchronized void write(int b) throws java.io.IOException {
      first.write(b);
      second.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws java.io.IOException {
      first.write(b, off, len);
      second.write(b, off, len);
    }

    @Override
    public synchronized void flush() throws java.io.IOException {
      first.flush();
      second.flush();
    }
  }
}
