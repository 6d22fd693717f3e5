package dev.shardberg.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.PipelineConflictException;
import java.io.IOException;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.JobException;
import org.apache.flink.runtime.client.JobCancellationException;
import org.apache.flink.runtime.client.JobExecutionException;
import org.apache.flink.util.SerializedThrowable;
import org.junit.jupiter.api.Test;

class StopReasonTest {
  private static final JobID JOB = new JobID();

  /** What a failed local job's result holds: Flink's wrappers around the operator's failure. */
  private static Throwable failed(Throwable cause) {
    return new JobExecutionException(
        JOB,
        "Job execution failed.",
        new JobException(
            "Recovery is suppressed by NoRestartBackoffTimeStrategy",
            new RuntimeException("wrapped by the task", cause)));
  }

  @Test
  void ourExceptionInTheCauseChainIsTheReasonOnOneLine() {
    StopReason reason =
        StopReason.of(
            failed(
                new PipelineConflictException(
                    "Cannot resume pipeline p on table t: shard(s) [1] are new to the restored state.\n  Resume with tables.reread-shards: [1]")));
    assertThat(reason.ours()).isTrue();
    assertThat(reason.message())
        .isEqualTo(
            "Cannot resume pipeline p on table t: shard(s) [1] are new to the restored state. Resume with tables.reread-shards: [1]");
  }

  @Test
  void theOutermostOfOursWinsOverItsOwnCauses() {
    StopReason reason =
        StopReason.of(
            failed(
                new dev.shardberg.router.ShardRouterException(
                    "Cannot convert column 'c' of shard 3: bad value",
                    new IllegalArgumentException("deep"))));
    assertThat(reason.message()).isEqualTo("Cannot convert column 'c' of shard 3: bad value");
  }

  @Test
  void aSerializedCauseIsRecognisedByItsOriginalClass() {
    StopReason reason =
        StopReason.of(
            failed(
                new SerializedThrowable(
                    new PipelineConflictException("Cannot restore the coordinator"))));
    assertThat(reason.ours()).isTrue();
    assertThat(reason.message()).isEqualTo("Cannot restore the coordinator");
  }

  @Test
  void aForeignFailureGivesItsInnermostCauseWithItsClass() {
    StopReason reason =
        StopReason.of(
            failed(new IllegalStateException("outer", new IOException("No space left on device"))));
    assertThat(reason.ours()).isFalse();
    assertThat(reason.message()).isEqualTo("IOException: No space left on device");
  }

  @Test
  void aCancelledJobSaysSo() {
    StopReason reason =
        StopReason.of(new JobCancellationException(JOB, "Job was cancelled.", null));
    assertThat(reason.cancelled()).isTrue();
    assertThat(reason.message()).contains("cancelled");
  }
}
