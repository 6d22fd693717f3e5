package dev.shardberg.coordinator.zk;

import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.zk.ZooKeeperConnection.State;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The connection holder's state machine, driven by a real ZooKeeper server going away and back. */
class ZooKeeperConnectionTest {
  @org.junit.jupiter.api.BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    dev.shardberg.coordinator.zk.ZooKeeperTestSupport.neverExitTheJvm();
  }

  private static final Duration WAIT = Duration.ofSeconds(30);

  private TestingServer server;
  private ZooKeeperConnection connection;

  @BeforeEach
  void start() throws Exception {
    server = ZooKeeperTestSupport.startServer();
    connection = ZooKeeperConnection.open(options(server.getConnectString()));
  }

  @AfterEach
  void stop() throws Exception {
    connection.close();
    server.close();
  }

  @Test
  void opensConnected() {
    assertThat(connection.state()).isEqualTo(State.CONNECTED);
    assertThat(connection.isConnected()).isTrue();
    assertThat(connection.interruptions()).isZero();
  }

  @Test
  void serverDownSuspendsThenLosesTheSessionAndBackReconnectsCountingOneInterruption()
      throws Exception {
    server.stop();
    await().atMost(WAIT).until(() -> connection.state() != State.CONNECTED);
    assertThat(connection.state()).isIn(State.SUSPENDED, State.LOST);
    assertThat(connection.isConnected()).isFalse();
    // the session (3 s) runs out while the server is down
    await().atMost(WAIT).until(() -> connection.state() == State.LOST);

    server.restart();
    await().atMost(WAIT).until(connection::isConnected);
    // CONNECTED → SUSPENDED → LOST → CONNECTED left CONNECTED once
    assertThat(connection.interruptions()).isEqualTo(1);
  }

  @Test
  void expiredSessionCountsAnInterruptionAndReconnects() throws Exception {
    connection.client().getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    await().atMost(WAIT).until(() -> connection.interruptions() == 1);
    await().atMost(WAIT).until(connection::isConnected);
    assertThat(connection.interruptions()).isEqualTo(1);
  }

  @Test
  void closeIsTerminal() throws Exception {
    connection.close();
    assertThat(connection.state()).isEqualTo(State.CLOSED);
    connection.close(); // twice is fine
    server.stop();
    server.restart();
    assertThat(connection.state()).isEqualTo(State.CLOSED);
    assertThat(connection.interruptions()).isZero();
  }

  @Test
  void aLockOverAGivenConnectionLeavesItOpenWhenClosed() throws Exception {
    ZooKeeperTableLock first = new ZooKeeperTableLock(connection, "hadoop.shop.orders");
    ZooKeeperTableLock second = new ZooKeeperTableLock(connection, "hadoop.shop.orders");
    assertThat(first.runExclusive(WAIT, () -> second.isHeldByCurrentThread())).isFalse();
    first.close();
    assertThat(connection.isConnected()).isTrue();
    assertThat(second.runExclusive(WAIT, () -> "ran")).isEqualTo("ran");
  }
}
