package dev.shardberg.tests.schema;

import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Waits until {@code verify} (as the CLI runs it) finds the table equal to every shard discovered
 * now, row for row; on timeout, fails with the last report and what the run printed.
 */
final class ShardsVerified {
  private ShardsVerified() {}

  /**
   * @param output what the run printed so far, shown under {@code --- outputName ---} on timeout
   */
  static void await(
      ShardbergConfig config, Duration atMost, String outputName, Supplier<String> output) {
    VerifyReport[] last = {null};
    try {
      org.awaitility.Awaitility.await()
          .atMost(atMost)
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                last[0] = Reconciliation.verify(config, 5);
                return last[0].matches();
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          (last[0] == null ? "no verify ran" : last[0].render())
              + "\n--- "
              + outputName
              + " ---\n"
              + output.get(),
          e);
    }
  }
}
