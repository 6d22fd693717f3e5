package dev.shardberg.coordinator.zk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two pipelines and a maintenance loop committing to ONE real Iceberg table, with and without the
 * ZooKeeper table lock. With the lock: no commit ever fails on a stale base. Without: the conflicts
 * of the seed team's setup, counted (how many depends on scheduling, so only reported).
 */
class SharedTableLockTest {
  private static final int COMMITS_PER_PIPELINE = 6;

  @Test
  void withTheLockNoCommitFailsOnAStaleBase(@TempDir Path warehouse) throws Exception {
    try (TestingServer zooKeeper = ZooKeeperTestSupport.startServer()) {
      SharedTableWorkload workload =
          new SharedTableWorkload(
              warehouse.toString(), ZooKeeperTestSupport.options(zooKeeper.getConnectString()), 2);
      workload.createTable();

      SharedTableWorkload.Result result = workload.run(COMMITS_PER_PIPELINE, null);

      System.out.printf("with lock: %s%n", result);
      assertThat(result.conflicts()).isZero();
      assertThat(result.lockTimeouts()).isZero();
      assertThat(result.pipelineCommits()).isEqualTo(2L * COMMITS_PER_PIPELINE);
      assertExactRows(result);
    }
  }

  @Test
  void withoutTheLockCommitsRaceAndRetries(@TempDir Path warehouse) throws Exception {
    SharedTableWorkload workload = new SharedTableWorkload(warehouse.toString(), null, 2);
    workload.createTable();

    SharedTableWorkload.Result result = workload.run(COMMITS_PER_PIPELINE, null);

    System.out.printf("without lock: %s%n", result);
    assertThat(result.pipelineCommits()).isEqualTo(2L * COMMITS_PER_PIPELINE);
    assertExactRows(result);
  }

  private static void assertExactRows(SharedTableWorkload.Result result) {
    assertThat(result.expectedIds()).hasSize(2 * COMMITS_PER_PIPELINE * SharedTableWorkload.ROWS_PER_COMMIT);
    assertThat(result.actualIds()).isEqualTo(result.expectedIds());
    assertThat(result.rowsRead()).as("no row twice").isEqualTo(result.expectedIds().size());
  }
}
