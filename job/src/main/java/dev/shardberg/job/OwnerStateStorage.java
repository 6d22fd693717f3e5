package dev.shardberg.job;

import dev.shardberg.coordinator.DeleteMode;
import dev.shardberg.job.config.ConfigException;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.config.ShardbergOptions;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ReadableConfig;

/**
 * With {@code target.delete-mode: position} each writer keeps its partitions' row index in Flink
 * keyed state (docs/owner-write-path.md). Without a checkpoint directory Flink keeps checkpoints in
 * the JobManager's memory, which refuses any operator's state over 5 MiB: past that (a writer
 * holding 200,000 live rows of the bench's table took 9.3 MB) every checkpoint fails, nothing is
 * committed and the job restarts for ever. The start refuses that instead, naming the keys.
 */
final class OwnerStateStorage {
  private static final String JOB_MANAGER_STORAGE = "jobmanager";

  private OwnerStateStorage() {}

  /**
   * Throws when {@code config} deletes by position and {@code flink} (the job's configuration,
   * {@code pipeline.checkpoint-dir} applied) keeps checkpoints in the JobManager's memory.
   */
  static void check(ReadableConfig flink, ShardbergConfig config) {
    if (config.target().deleteMode() != DeleteMode.POSITION
        || flink.getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY).isPresent()) {
      return;
    }
    String storage = flink.getOptional(CheckpointingOptions.CHECKPOINT_STORAGE).orElse(null);
    if (storage != null && !storage.equalsIgnoreCase(JOB_MANAGER_STORAGE)) {
      return; // a storage of its own (a factory class) knows where it writes
    }
    throw new ConfigException(
        String.format(
            "Cannot start pipeline '%s' with target.delete-mode = position without a checkpoint directory:"
                + " each writer keeps the row index of its partitions in Flink state, and without a directory"
                + " Flink keeps checkpoints in the JobManager's memory, which refuses a state over 5 MiB (a few"
                + " hundred thousand rows per writer); every checkpoint would then fail and the job restart"
                + " for ever. Set %s (e.g. file:///var/shardberg/checkpoints or hdfs:///flink/checkpoints), or"
                + " the cluster's %s; or write this table by key (target.delete-mode: equality; deletes"
                + " by position are the default for a table the job creates).",
            config.pipeline().id(),
            ShardbergOptions.PIPELINE_CHECKPOINT_DIR.key(),
            CheckpointingOptions.CHECKPOINTS_DIRECTORY.key()));
  }
}
