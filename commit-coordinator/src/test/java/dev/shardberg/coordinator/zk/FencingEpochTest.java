package dev.shardberg.coordinator.zk;

import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.ROOT;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.observer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fencing-epoch recipe against a real ZooKeeper server. */
class FencingEpochTest {
  @org.junit.jupiter.api.BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    dev.shardberg.coordinator.zk.ZooKeeperTestSupport.neverExitTheJvm();
  }

  private TestingServer server;
  private CuratorFramework a;
  private CuratorFramework b;

  @BeforeEach
  void start() throws Exception {
    server = ZooKeeperTestSupport.startServer();
    a = observer(server.getConnectString());
    b = observer(server.getConnectString());
  }

  @AfterEach
  void stop() throws Exception {
    a.close();
    b.close();
    server.close();
  }

  @Test
  void incrementStartsAtOneAndCountsPerPipeline() throws Exception {
    FencingEpoch orders = new FencingEpoch(a, ROOT, "orders");
    assertThatThrownBy(orders::read).isInstanceOf(KeeperException.NoNodeException.class);
    assertThat(orders.increment()).isEqualTo(1);
    assertThat(orders.increment()).isEqualTo(2);
    assertThat(new FencingEpoch(b, ROOT, "orders").read()).isEqualTo(2);
    assertThat(new FencingEpoch(b, ROOT, "customers").increment()).isEqualTo(1);
    assertThat(orders.path()).isEqualTo(ROOT + "/pipelines/orders/epoch");
    assertThat(new String(a.getData().forPath(orders.path()), UTF_8)).isEqualTo("2");
  }

  @Test
  void concurrentIncrementsFromTwoClientsNeverHandOutAValueTwice() throws Exception {
    int perClient = 20;
    ExecutorService executor = Executors.newFixedThreadPool(4);
    try {
      List<Future<Long>> taken = new ArrayList<>();
      for (int i = 0; i < perClient; i++) {
        for (CuratorFramework client : List.of(a, b)) {
          FencingEpoch epoch = new FencingEpoch(client, ROOT, "orders");
          taken.add(executor.submit(epoch::increment));
        }
      }
      List<Long> values = new ArrayList<>();
      for (Future<Long> f : taken) {
        values.add(f.get(30, TimeUnit.SECONDS));
      }
      assertThat(values)
          .containsExactlyInAnyOrderElementsOf(
              LongStream.rangeClosed(1, 2L * perClient).boxed().toList());
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void aNodeThatIsNotANumberIsRefusedNamingTheFix() throws Exception {
    FencingEpoch epoch = new FencingEpoch(a, ROOT, "orders");
    a.create().creatingParentsIfNeeded().forPath(epoch.path(), "x1".getBytes(UTF_8));
    assertThatThrownBy(epoch::increment)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "Cannot read the fencing epoch of pipeline 'orders' at "
                + ROOT
                + "/pipelines/orders/epoch: 'x1' is not a number; the znode was written by"
                + " something else. Stop every instance of the pipeline, delete the znode and"
                + " start one instance");
  }
}
