package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Optional;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which retained checkpoint a local run resumes from (Flink's layout: dir/job-id/chk-N/_metadata).
 */
class LocalCheckpointsTest {
  @TempDir Path dir;

  private Path checkpoint(String job, long id, long modifiedMillis, boolean completed)
      throws Exception {
    Path chk = Files.createDirectories(dir.resolve(job).resolve("chk-" + id));
    if (completed) {
      Path metadata = Files.writeString(chk.resolve("_metadata"), "x");
      Files.setLastModifiedTime(metadata, FileTime.fromMillis(modifiedMillis));
    }
    return chk;
  }

  @Test
  void noDirectoryOrNoCompletedCheckpointMeansNothingToResume() throws Exception {
    assertThat(LocalCheckpoints.latest(dir.resolve("missing").toUri())).isEmpty();
    checkpoint("job-a", 3, 1_000, false);
    Files.createDirectories(dir.resolve("job-a").resolve("shared"));
    assertThat(LocalCheckpoints.latest(dir.toUri())).isEmpty();
  }

  @Test
  void theNewestMetadataWinsOverTheHighestNumber() throws Exception {
    checkpoint("job-old", 57, 1_000_000, true); // a long run, before a --fresh start
    Path fresh = checkpoint("job-new", 4, 2_000_000, true); // the fresh run counts from 1 again
    checkpoint("job-new", 5, 3_000_000, false); // being written when the process died: no _metadata
    Optional<LocalCheckpoints.Retained> latest = LocalCheckpoints.latest(dir.toUri());
    assertThat(latest).isPresent();
    assertThat(latest.get().checkpointId()).isEqualTo(4);
    assertThat(Path.of(latest.get().directory())).isEqualTo(fresh);
    assertThat(latest.get().toString()).isEqualTo("checkpoint 4 at " + latest.get().directory());
  }

  @Test
  void theConfigurationRestoresTheChosenCheckpoint() throws Exception {
    Path chk = checkpoint("job-a", 9, 1_000, true);
    LocalCheckpoints.Retained retained = LocalCheckpoints.latest(dir.toUri()).orElseThrow();
    Configuration conf = LocalCheckpoints.configuration(dir.toUri(), Optional.of(retained));
    assertThat(conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY))
        .isEqualTo(dir.toUri().toString());
    assertThat(Path.of(java.net.URI.create(conf.get(StateRecoveryOptions.SAVEPOINT_PATH))))
        .isEqualTo(chk);
    assertThat(
            LocalCheckpoints.configuration(dir.toUri(), Optional.empty())
                .getOptional(StateRecoveryOptions.SAVEPOINT_PATH))
        .isEmpty();
  }

  @Test
  void theSavepointOfAStoppedRunCountsLikeACheckpoint() throws Exception {
    checkpoint("job-a", 12, 1_000_000, true);
    Path savepoint =
        Files.createDirectories(
            dir.resolve(LocalCheckpoints.STOP_SAVEPOINTS).resolve("savepoint-5dad47-0f1e2d3c4b5a"));
    Files.setLastModifiedTime(
        Files.writeString(savepoint.resolve("_metadata"), "x"), FileTime.fromMillis(2_000_000));
    LocalCheckpoints.Retained latest = LocalCheckpoints.latest(dir.toUri()).orElseThrow();
    assertThat(Path.of(latest.directory())).isEqualTo(savepoint);
    assertThat(latest.checkpointId()).isEqualTo(-1);
    assertThat(latest.toString())
        .isEqualTo("the savepoint taken when a run stopped, at " + latest.directory());
    checkpoint("job-b", 1, 3_000_000, true); // the resumed run's own checkpoints are newer
    assertThat(LocalCheckpoints.latest(dir.toUri()).orElseThrow().checkpointId()).isEqualTo(1);
  }
}
