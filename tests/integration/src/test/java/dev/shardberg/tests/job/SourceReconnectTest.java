package dev.shardberg.tests.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * One of two MariaDB hosts is restarted (same port, same data, same binlog) while the job reads its
 * binlog: the job says so (WARN naming the host when it is lost, INFO with the gap when it is
 * back), the change written right after the restart reaches the table within a generous bound, and
 * the table equals the shards row for row at the end.
 */
class SourceReconnectTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);

  /**
   * Checkpoint interval (1 s) plus reconnect plus a busy 2-core CI machine: generous on purpose.
   */
  private static final Duration AFTER_RESTART = Duration.ofSeconds(60);

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

  @TempDir Path dir;

  @Test
  void restartedHostIsLoggedAndItsChangesArriveSoonAfter() throws Exception {
    try (TwoHostShards shards = new TwoHostShards(dir);
        CapturedLog watch =
            new CapturedLog("dev.shardberg.router.watch.SourceHostWatch", Level.INFO); ) {
      for (int s = 0; s < 8; s++) {
        shards.insert(s, 20);
      }
      Path configFile =
          TestConfig.pipeline("reconnect")
              .checkpointInterval("1s")
              .parallelism(1)
              .writerParallelism(2)
              .restart(30, "1s")
              .with(shards::sources)
              .healthCheckInterval("500ms")
              .hadoopCatalog(dir.resolve("warehouse").toUri())
              .table("shop", "orders")
              .buckets(2)
              .write(dir.resolve("reconnect.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      try {
        Table table = Catalogs.loadTable(config.target());
        awaitRows(table, shards, CAUGHT_UP);
        shards.changeRound(1); // the binlog of both hosts is being read
        awaitRows(table, shards, CAUGHT_UP);

        String b = "'" + shards.b.name() + "' (127.0.0.1:" + shards.b.port() + ")";
        shards.b.stop();
        await().atMost(AFTER_RESTART).until(() -> watch.has(Level.WARN, "Lost MySQL host " + b));
        shards.update(0, 1, "WHILE_B_DOWN", null); // host A keeps flowing

        shards.b.restart();
        long restarted = System.nanoTime();
        shards.insert(5, 1); // written right after the restart
        shards.update(6, 2, "AFTER_RESTART", "written after the restart");
        await()
            .atMost(AFTER_RESTART)
            .until(() -> watch.has(Level.INFO, "MySQL host " + b + " is back after"));
        awaitRows(table, shards, AFTER_RESTART);
        long millis = (System.nanoTime() - restarted) / 1_000_000;
        System.out.printf(
            "SourceReconnectTest: the changes written right after host %s restarted were committed %d ms later%n",
            shards.b.name(), millis);

        shards.changeRound(2);
        awaitRows(table, shards, CAUGHT_UP);
        VerifyReport report = Reconciliation.verify(config, 5);
        assertThat(report.matches()).as(report.render()).isTrue();
        assertThat(watch.lines())
            .as("host A was never reported lost")
            .noneMatch(l -> l.message().contains("Lost MySQL host '" + shards.a.name() + "'"));
      } finally {
        if (!job.getJobStatus().get().isGloballyTerminalState()) {
          job.cancel().get();
        }
      }
    }
  }

  private static void awaitRows(Table table, TwoHostShards shards, Duration atMost) {
    List<String> expected = shards.expectedRows();
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .until(() -> TwoHostShards.actualRows(table).equals(expected));
  }
}
