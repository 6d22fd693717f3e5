package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 28: {@code flink stop --drain} (stop with a savepoint, the sources ended first: Flink's way
 * to stop a job for good) on a real MariaDB host, with changes made just before the stop and while
 * stopped; then an operator resumes from the drained savepoint all the same. The first job
 * finishes; the resumed one runs and reads the binlog on from the savepoint's position (no shard
 * read again), and the table equals the shards ({@code verify}: row counts and checksums per
 * shard), nothing lost or doubled — with deletes by key and by position (the writers' index of
 * where each row lives is in that savepoint too).
 */
class DrainStopTest {
  /** One cluster for both jobs, so the finished one can still be asked how it ended. */
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () ->
              new MiniClusterResourceConfiguration.Builder()
                  .setNumberTaskManagers(1)
                  .setNumberSlotsPerTaskManager(4)
                  .build());

  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);

  @TempDir Path dir;

  @ParameterizedTest(name = "target.delete-mode: {0}")
  @ValueSource(strings = {"equality", "position"})
  void aResumeFromADrainedSavepointGoesOnFromItsBinlogPosition(String mode) throws Exception {
    try (EmbeddedMariaDb a =
        EmbeddedMariaDb.start("drain-" + mode, mode.equals("equality") ? 53 : 54)) {
      OrdersShards shards = new OrdersShards(List.of(a), 2);
      shards.createTables();
      shards.load(20, 29);
      a.createCdcUser("shardberg_cdc", "fleet-pw");
      Path password = Files.writeString(dir.resolve("cdc.password"), "fleet-pw\n");
      String serverIds = mode.equals("equality") ? "5840-5840" : "5850-5850";
      ShardbergConfig config =
          ShardbergConfig.load(
              TestConfig.pipeline("drain")
                  .checkpointInterval("1s")
                  .parallelism(1)
                  .writerParallelism(1)
                  .checkpointDir(dir.resolve("checkpoints").toUri())
                  .source(NewShardWhileRunningTest.source("a", a, serverIds, password))
                  .tables("shop", OrdersShards.TABLE_PATTERN)
                  .deleteMode(mode)
                  .hadoopCatalog(dir.resolve("warehouse").toUri())
                  .table("shop", "orders")
                  .buckets(2)
                  .write(dir.resolve("drain.yaml")));
      JobClient first =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      String savepoint;
      try {
        ShardsVerified.await(config, CAUGHT_UP, "none", () -> "");
        // changes the stop may meet read but not committed yet, or not read yet
        a.execute(
            "UPDATE shop.orders_0 SET status = 'PAID', amount = amount + 1 WHERE order_id <= 4",
            "DELETE FROM shop.orders_1 WHERE order_id = 3");
        savepoint =
            first
                .stopWithSavepoint(
                    true,
                    dir.resolve("savepoints").toUri().toString(),
                    SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
        assertThat(first.getJobStatus().get(1, TimeUnit.MINUTES))
            .as("the drained job")
            .isEqualTo(JobStatus.FINISHED);
      } finally {
        if (!first.getJobStatus().get().isGloballyTerminalState()) {
          first.cancel().get();
        }
      }

      // while stopped; then resumed from the drained savepoint, and more changes
      a.execute(
          "UPDATE shop.orders_1 SET status = 'SHIPPED', amount = amount + 2 WHERE order_id <= 2");
      Configuration resume = new Configuration();
      resume.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
      JobClient second =
          ShardbergPipeline.start(
              StreamExecutionEnvironment.getExecutionEnvironment(resume), config);
      try {
        a.execute(
            "INSERT INTO shop.orders_0 SELECT order_id + 1000, customer_id, status, amount,"
                + " currency, note, created_at, updated_at FROM shop.orders_1 WHERE order_id = 1",
            "DELETE FROM shop.orders_0 WHERE order_id = 5");
        ShardsVerified.await(config, CAUGHT_UP, "none", () -> "");
        assertThat(second.getJobStatus().get(1, TimeUnit.MINUTES))
            .as("the job resumed from the drained savepoint reads on")
            .isEqualTo(JobStatus.RUNNING);
        Table table = Catalogs.loadTable(config.target());
        Map<Integer, Long> added =
            ShardTableLifeTest.addedRows(table, "drain", second.getJobID().toString());
        assertThat(added.values())
            .as(
                "the resumed job adds the changes only, no shard read again (20 rows each): %s",
                added)
            .allSatisfy(rows -> assertThat(rows).isLessThan(20L));
      } finally {
        if (!second.getJobStatus().get().isGloballyTerminalState()) {
          second.cancel().get();
        }
      }
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.render()).isTrue();
    }
  }
}
