package dev.shardberg.coordinator.zk;

import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** Real in-process ZooKeeper servers with short ticks, and options that react within seconds. */
public final class ZooKeeperTestSupport {
  static final String ROOT = "/shardberg-test";

  /** Ticks of 200 ms allow sessions from 400 ms to 4 s. */
  static final int TICK_MS = 200;

  private ZooKeeperTestSupport() {}

  /**
   * An in-process ZooKeeper server (Curator's TestingServer runs ZooKeeper's embedded server, with
   * its default exit handler) ends the whole JVM with {@code System.exit(2)} on an error in its
   * lifecycle — a restart that finds its port not yet free, say — which surefire reports as a
   * crashed fork, every later test of the module unrun. The tests want the error, not the exit:
   * ZooKeeper logs it instead, and the test that started the server sees the server missing.
   */
  public static void neverExitTheJvm() {
    org.apache.zookeeper.util.ServiceUtils.setSystemExitProcedure(
        org.apache.zookeeper.util.ServiceUtils.LOG_ONLY);
  }

  static InstanceSpec spec(int serverId) {
    return new InstanceSpec(null, -1, -1, -1, true, serverId, TICK_MS, -1);
  }

  static TestingServer startServer() throws Exception {
    return new TestingServer(spec(-1), true);
  }

  static ZooKeeperOptions options(String connectString) {
    return ZooKeeperOptions.of(connectString)
        .withRootPath(ROOT)
        .withSessionTimeout(Duration.ofSeconds(3))
        .withConnectionTimeout(Duration.ofSeconds(2))
        .withLockTimeout(Duration.ofSeconds(30))
        .withRetry(Duration.ofMillis(100), 3);
  }

  /** A separate client, to look at the znodes the way an operator would. */
  static CuratorFramework observer(String connectString) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(connectString, new RetryOneTime(100));
    client.start();
    client.blockUntilConnected();
    return client;
  }

  static List<String> children(CuratorFramework client, String path) throws Exception {
    return client.checkExists().forPath(path) == null
        ? List.of()
        : client.getChildren().forPath(path);
  }
}
