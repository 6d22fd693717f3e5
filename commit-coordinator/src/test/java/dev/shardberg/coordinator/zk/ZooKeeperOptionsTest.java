package dev.shardberg.coordinator.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ZooKeeperOptionsTest {

  @Test
  void defaults() {
    ZooKeeperOptions options = ZooKeeperOptions.of("zk1:2181,zk2:2181,zk3:2181/prod");

    assertThat(options)
        .isEqualTo(
            new ZooKeeperOptions(
                "zk1:2181,zk2:2181,zk3:2181/prod",
                "/shardberg",
                Duration.ofSeconds(60),
                Duration.ofSeconds(15),
                Duration.ofSeconds(60),
                Duration.ofSeconds(1),
                10));
  }

  @Test
  void withersChangeOneValue() {
    ZooKeeperOptions options =
        ZooKeeperOptions.of("localhost")
            .withRootPath("/a/b")
            .withSessionTimeout(Duration.ofSeconds(30))
            .withConnectionTimeout(Duration.ofSeconds(5))
            .withLockTimeout(Duration.ofSeconds(90))
            .withRetry(Duration.ofMillis(200), 0);

    assertThat(options)
        .isEqualTo(
            new ZooKeeperOptions(
                "localhost",
                "/a/b",
                Duration.ofSeconds(30),
                Duration.ofSeconds(5),
                Duration.ofSeconds(90),
                Duration.ofMillis(200),
                0));
  }

  @Test
  void missingConnectStringNamesTheKey() {
    assertThatThrownBy(() -> ZooKeeperOptions.of(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.connect is not set; set it to"
                + " host:port[,host:port...][/chroot], e.g. zk1:2181,zk2:2181,zk3:2181");
  }

  @Test
  void badServerEntryIsNamed() {
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1:2181, zk2:2181"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.connect 'zk1:2181, zk2:2181' has a bad"
                + " server entry ' zk2:2181'; write host:port entries separated by commas without"
                + " spaces, e.g. zk1:2181,zk2:2181/chroot");
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1:21x81"))
        .hasMessageContaining("has a bad server entry 'zk1:21x81'");
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1:2181,,zk2"))
        .hasMessageContaining("has a bad server entry ''");
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1:70000"))
        .hasMessageContaining("has a bad server entry 'zk1:70000'");
  }

  @Test
  void badChrootIsNamed() {
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1:2181/prod/"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.connect 'zk1:2181/prod/' has a bad"
                + " chroot '/prod/'; use an absolute znode path without a trailing slash, or put"
                + " the path in coordinator.zookeeper.root-path instead");
  }

  @Test
  void badRootPathIsNamed() {
    for (String bad : new String[] {"shardberg", "/", "/shardberg/", "/a//b", "/a/./b"}) {
      assertThatThrownBy(() -> ZooKeeperOptions.of("zk1").withRootPath(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "Cannot use ZooKeeper HA: coordinator.zookeeper.root-path '"
                  + bad
                  + "' is not a valid znode path; use an absolute path without a trailing slash,"
                  + " e.g. /shardberg");
    }
  }

  @Test
  void durationsMustBePositiveAndNameTheirKey() {
    ZooKeeperOptions base = ZooKeeperOptions.of("zk1");
    assertThatThrownBy(() -> base.withSessionTimeout(Duration.ZERO))
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.session-timeout is PT0S; set a positive"
                + " duration of at most 2147483647 ms, e.g. 60 s");
    assertThatThrownBy(() -> base.withConnectionTimeout(Duration.ofSeconds(-1)))
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.connection-timeout is PT-1S; set a"
                + " positive duration of at most 2147483647 ms, e.g. 15 s");
    assertThatThrownBy(() -> base.withLockTimeout(null))
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.lock-timeout is null; set a positive"
                + " duration of at most 2147483647 ms, e.g. 60 s");
    assertThatThrownBy(() -> base.withRetry(Duration.ofDays(30), 3))
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.retry.base-sleep is PT720H; set a"
                + " positive duration of at most 2147483647 ms, e.g. 1 s");
  }

  @Test
  void maxRetriesWithinCuratorsLimit() {
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1").withRetry(Duration.ofSeconds(1), 30))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use ZooKeeper HA: coordinator.zookeeper.retry.max-retries is 30; set it between"
                + " 0 and 29 (default 10)");
    assertThatThrownBy(() -> ZooKeeperOptions.of("zk1").withRetry(Duration.ofSeconds(1), -1))
        .hasMessageContaining("retry.max-retries is -1");
  }

  @Test
  void factoryIsSerializable() throws Exception {
    ZooKeeperCommitGuardFactory factory =
        new ZooKeeperCommitGuardFactory(ZooKeeperOptions.of("zk1:2181").withRootPath("/x"));

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(factory);
    }
    Object copy;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = in.readObject();
    }

    assertThat(copy).isInstanceOf(ZooKeeperCommitGuardFactory.class);
    assertThat(((ZooKeeperCommitGuardFactory) copy).options()).isEqualTo(factory.options());
  }

  @Test
  void nodeNamesAreReadableAndNeverCollide() {
    assertThat(ZooKeeperPaths.nodeName("hadoop.shop.orders")).isEqualTo("hadoop.shop.orders");
    assertThat(ZooKeeperPaths.nodeName("hive.db/x")).isEqualTo("hive.db%2Fx");
    assertThat(ZooKeeperPaths.nodeName("hive.db%2Fx")).isEqualTo("hive.db%252Fx");
    assertThat(ZooKeeperPaths.nodeName("a b")).isEqualTo("a%20b");
    assertThat(ZooKeeperPaths.nodeName("é")).isEqualTo("%C3%A9");
    assertThat(ZooKeeperPaths.nodeName(".")).isEqualTo("%2E");
    assertThat(ZooKeeperPaths.nodeName("..")).isEqualTo("%2E%2E");
    assertThat(ZooKeeperPaths.lockPath("/shardberg", "hadoop.shop.orders"))
        .isEqualTo("/shardberg/locks/hadoop.shop.orders");
    assertThat(ZooKeeperPaths.epochPath("/shardberg", "orders/eu"))
        .isEqualTo("/shardberg/pipelines/orders%2Feu/epoch");
  }
}
