package dev.shardberg.coordinator.zk;

import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.children;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.observer;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's own JobManager high availability on ZooKeeper, configured with exactly the keys that
 * docs/high-availability.md gives, against a real ZooKeeper server: a job runs to completion and
 * Flink's HA znodes appear under the configured root and cluster id. Flink uses its shaded
 * ZooKeeper client (flink-shaded-zookeeper-3, a dependency of flink-runtime) for this.
 */
class FlinkZooKeeperHaTest {

  @Test
  void flinksShadedZooKeeperClientIsOnTheClasspath() throws Exception {
    // flink-shaded-zookeeper-3 comes with flink-runtime; the Flink distribution ships it in lib/
    assertThat(
            Class.forName(
                "org.apache.flink.shaded.curator5.org.apache.curator.framework.CuratorFramework"))
        .isInterface();
    assertThat(Class.forName("org.apache.flink.shaded.zookeeper3.org.apache.zookeeper.ZooKeeper"))
        .isNotNull();
  }

  @Test
  void jobManagerHaRunsOnTheSameZooKeeper(@TempDir Path haStorage) throws Exception {
    try (TestingServer zooKeeper = ZooKeeperTestSupport.startServer();
        CuratorFramework zk = observer(zooKeeper.getConnectString())) {
      Configuration conf =
          Configuration.fromMap(
              Map.of(
                  "high-availability.type", "zookeeper",
                  "high-availability.zookeeper.quorum", zooKeeper.getConnectString(),
                  "high-availability.storageDir", haStorage.toUri().toString(),
                  "high-availability.zookeeper.path.root", "/flink",
                  "high-availability.cluster-id", "shardberg-orders"));
      assertThat(conf.get(HighAvailabilityOptions.HA_MODE)).isEqualTo("zookeeper");

      MiniClusterConfiguration clusterConf =
          new MiniClusterConfiguration.Builder()
              .setConfiguration(conf)
              .setNumTaskManagers(1)
              .setNumSlotsPerTaskManager(2)
              .build();
      try (MiniCluster cluster = new MiniCluster(clusterConf)) {
        cluster.start();
        StreamExecutionEnvironment env = new TestStreamEnvironment(cluster, 2);

        List<Long> doubled = new ArrayList<>();
        env.fromSequence(1, 100).map(x -> x * 2).executeAndCollect().forEachRemaining(doubled::add);

        assertThat(doubled)
            .containsExactlyInAnyOrderElementsOf(
                LongStream.rangeClosed(1, 100).map(x -> x * 2).boxed().toList());
        List<String> haNodes = children(zk, "/flink/shardberg-orders");
        System.out.printf("Flink HA znodes under /flink/shardberg-orders: %s%n", haNodes);
        System.out.printf("Flink HA storage: %s%n", listFiles(haStorage));
        assertThat(haNodes).contains("leader");
        assertThat(children(zk, "/flink/shardberg-orders/leader")).isNotEmpty();
        assertThat(haStorage.resolve("job-result-store").resolve("shardberg-orders")).isDirectory();
      }
    }
  }

  private static List<String> listFiles(Path dir) throws Exception {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.map(dir::relativize).map(Path::toString).collect(Collectors.toList());
    }
  }
}
