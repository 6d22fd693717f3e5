package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.job.config.ConfigException;
import dev.shardberg.job.config.ConfigLoader;
import dev.shardberg.job.config.ShardbergConfig;
import java.util.Map;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/**
 * Deletes by position keep the writers' row index in Flink state: a start that would keep it in the
 * JobManager's memory (no checkpoint directory) is refused before the job runs, naming the key; any
 * directory, or a storage of the cluster's own, passes; deletes by key never need one.
 */
class OwnerStateStorageTest {
  private static ShardbergConfig config(String deleteMode, String checkpointDir) {
    String yaml =
        """
        pipeline:
          id: orders
        %s
        sources:
          - name: a
            host: db-a
            user: cdc
            password-env: PW_A
            server-id-range: 5400-5403
        tables:
          database-pattern: shop
          table-pattern: 'orders_(?<shard>\\d+)'
        target:
          catalog:
            type: hadoop
            warehouse: file:///tmp/wh
          namespace: shop
          table: orders
          delete-mode: %s
        """
            .formatted(
                checkpointDir == null ? "" : "  checkpoint-dir: " + checkpointDir, deleteMode);
    return ConfigLoader.parse(yaml, "test.yaml", Map.of("PW_A", "pw")::get);
  }

  /** The job's Flink configuration as ShardbergPipeline.build sees it. */
  private static Configuration flink(ShardbergConfig config) {
    Configuration flink = new Configuration();
    if (config.pipeline().checkpointDir() != null) {
      flink.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, config.pipeline().checkpointDir());
    }
    return flink;
  }

  @Test
  void deletesByPositionWithoutACheckpointDirectoryAreRefusedNamingTheKeys() {
    ShardbergConfig config = config("position", null);
    assertThatThrownBy(() -> OwnerStateStorage.check(flink(config), config))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "Cannot start pipeline 'orders' with target.delete-mode = position without a checkpoint directory")
        .hasMessageContaining("Set pipeline.checkpoint-dir")
        .hasMessageContaining("execution.checkpointing.dir");

    Configuration jobManager = flink(config);
    jobManager.set(CheckpointingOptions.CHECKPOINT_STORAGE, "jobmanager");
    assertThatThrownBy(() -> OwnerStateStorage.check(jobManager, config))
        .isInstanceOf(ConfigException.class);
  }

  @Test
  void aDirectoryFromTheConfigOrTheClusterOrAStorageOfItsOwnPasses() {
    ShardbergConfig withDir = config("position", "file:///var/shardberg/checkpoints");
    assertThatCode(() -> OwnerStateStorage.check(flink(withDir), withDir))
        .doesNotThrowAnyException();

    ShardbergConfig config = config("position", null);
    Configuration cluster = new Configuration();
    cluster.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "hdfs:///flink/checkpoints");
    assertThatCode(() -> OwnerStateStorage.check(cluster, config)).doesNotThrowAnyException();

    Configuration own = new Configuration();
    own.set(CheckpointingOptions.CHECKPOINT_STORAGE, "com.example.OwnStorageFactory");
    assertThatCode(() -> OwnerStateStorage.check(own, config)).doesNotThrowAnyException();
  }

  @Test
  void deletesByKeyNeedNoDirectory() {
    ShardbergConfig config = config("equality", null);
    assertThatCode(() -> OwnerStateStorage.check(flink(config), config)).doesNotThrowAnyException();
  }
}
