package dev.shardberg.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.job.config.ConfigLoader;
import dev.shardberg.job.config.ShardbergConfig;
import java.util.Map;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.SecurityOptions;
import org.junit.jupiter.api.Test;

/**
 * When {@code run} under {@code flink run} follows the shard fleet (its client stays and adopts new
 * shard tables), where it takes the savepoints and how it reaches the cluster's REST API; the
 * adoption itself runs end to end in {@code NewShardUnderFlinkRunTest}.
 */
class ClusterRunTest {
  private static ShardbergConfig config(String checkpointDir) {
    String yaml =
        """
        pipeline:
          id: orders
        %s
        sources:
          - name: a
            host: db-a
            user: cdc
            password-env: PW
            server-id-range: 5400-5403
        tables:
          database-pattern: shop
          table-pattern: 'orders_(?<shard>\\\\d+)'
        target:
          catalog:
            type: hadoop
            warehouse: file:///tmp/wh
          namespace: shop
          table: orders
        """
            .formatted(checkpointDir == null ? "" : "  checkpoint-dir: " + checkpointDir + "\n");
    return ConfigLoader.parse(yaml, "test.yaml", Map.of("PW", "secret")::get);
  }

  private static Configuration attached() {
    Configuration flink = new Configuration();
    flink.set(DeploymentOptions.ATTACHED, true);
    flink.set(DeploymentOptions.TARGET, "remote");
    return flink;
  }

  @Test
  void anAttachedSessionSubmissionWithACheckpointDirectoryFollowsTheFleet() {
    assertThat(ClusterRun.whyNotFollowed(config("file:///cp/orders"), attached())).isNull();
    assertThat(ClusterRun.savepointDirectory(config("file:///cp/orders/"), attached()))
        .isEqualTo("file:///cp/orders/stopped");
  }

  @Test
  void theClustersSavepointDirectoryComesFirstThenItsCheckpointDirectory() {
    Configuration flink = attached();
    flink.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "hdfs:///flink/cp");
    assertThat(ClusterRun.savepointDirectory(config(null), flink))
        .isEqualTo("hdfs:///flink/cp/stopped");
    flink.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, "hdfs:///flink/sp");
    assertThat(ClusterRun.savepointDirectory(config("file:///cp/orders"), flink))
        .isEqualTo("hdfs:///flink/sp");
  }

  @Test
  void detachedApplicationModeOrNoDirectoryIsSubmittedOnceSayingWhy() {
    Configuration detached = attached();
    detached.set(DeploymentOptions.ATTACHED, false);
    assertThat(ClusterRun.whyNotFollowed(config("file:///cp"), detached))
        .contains("detached submission (flink run -d)");
    Configuration application = attached();
    application.set(DeploymentOptions.TARGET, "embedded");
    assertThat(ClusterRun.whyNotFollowed(config("file:///cp"), application))
        .contains("application-mode deployment");
    assertThat(ClusterRun.whyNotFollowed(config(null), attached()))
        .contains("no directory for the savepoint")
        .contains("pipeline.checkpoint-dir")
        .contains(CheckpointingOptions.SAVEPOINT_DIRECTORY.key());
  }

  @Test
  void theRestApiIsTheClientsRestAddressElseTheJobManagersWithTls() {
    Configuration flink = attached();
    flink.set(RestOptions.PORT, 18081);
    flink.set(JobManagerOptions.ADDRESS, "jm.internal");
    assertThat(ClusterRun.restUrl(flink)).isEqualTo("http://jm.internal:18081");
    flink.set(RestOptions.ADDRESS, "flink-rest.internal");
    flink.set(SecurityOptions.SSL_REST_ENABLED, true);
    assertThat(ClusterRun.restUrl(flink)).isEqualTo("https://flink-rest.internal:18081");
  }
}
