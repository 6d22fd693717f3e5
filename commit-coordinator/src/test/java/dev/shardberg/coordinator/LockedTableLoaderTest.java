package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.coordinator.zk.ZooKeeperTableLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits through a {@link LockedTableLoader}'s table (how the router's schema changes reach the
 * table in HA mode) against a real ZooKeeper and a real Iceberg table: they wait for the table's
 * lock like every other committer, and a lock they cannot take commits nothing.
 */
class LockedTableLoaderTest {
  @org.junit.jupiter.api.BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    dev.shardberg.coordinator.zk.ZooKeeperTestSupport.neverExitTheJvm();
  }

  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir Path warehouse;
  private TestingServer server;
  private ExecutorService executor;
  private ZooKeeperOptions zooKeeper;

  @BeforeEach
  void start() throws Exception {
    server = new TestingServer(true);
    executor = Executors.newCachedThreadPool();
    zooKeeper =
        ZooKeeperOptions.of(server.getConnectString())
            .withRootPath("/shardberg-locked-loader-test")
            .withConnectionTimeout(Duration.ofSeconds(2))
            .withLockTimeout(WAIT);
    TestTables.create(warehouse, 4);
  }

  @AfterEach
  void stop() throws Exception {
    executor.shutdownNow();
    server.close();
  }

  @Test
  void aSchemaChangeWaitsWhileAnotherCommitterHoldsTheTablesLockAndLandsOnceItIsReleased()
      throws Exception {
    Table locked = lockedTable(zooKeeper);
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Future<Boolean> holder = holdLock(held, release);
    assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Void> change =
        CompletableFuture.runAsync(
            () -> locked.updateSchema().addColumn("note", Types.StringType.get()).commit(),
            executor);
    await()
        .during(Duration.ofSeconds(2))
        .atMost(WAIT)
        .until(() -> !change.isDone() && !hasColumn(TestTables.load(warehouse), "note"));

    release.countDown();
    assertThat(holder.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    change.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(hasColumn(TestTables.load(warehouse), "note")).isTrue();
  }

  @Test
  void aLockNotGrantedInTimeIsACommitFailureNamingTheTableAndCommitsNothing() throws Exception {
    Table locked = lockedTable(zooKeeper.withLockTimeout(Duration.ofMillis(300)));
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Future<Boolean> holder = holdLock(held, release);
    assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

    assertThatThrownBy(
            () -> locked.updateSchema().addColumn("note", Types.StringType.get()).commit())
        .isInstanceOf(CommitFailedException.class)
        .hasMessageStartingWith(
            "Cannot commit to table hadoop.shop.orders now: Cannot take the commit lock of table"
                + " 'hadoop.shop.orders'")
        .hasMessageContaining("within PT0.3S");
    assertThat(hasColumn(TestTables.load(warehouse), "note")).isFalse();

    release.countDown();
    assertThat(holder.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    locked.refresh();
    locked.updateSchema().addColumn("note", Types.StringType.get()).commit();
    assertThat(hasColumn(TestTables.load(warehouse), "note")).isTrue();
  }

  @Test
  void anUnreachableZooKeeperIsACommitFailureAndCommitsNothing() throws Exception {
    Table locked = lockedTable(zooKeeper.withConnectionTimeout(Duration.ofMillis(500)));
    server.stop();

    assertThatThrownBy(
            () -> locked.updateSchema().addColumn("note", Types.StringType.get()).commit())
        .isInstanceOf(CommitFailedException.class)
        .hasMessageStartingWith("Cannot commit to table hadoop.shop.orders now: ")
        .hasMessageContaining(server.getConnectString());
    assertThat(hasColumn(TestTables.load(warehouse), "note")).isFalse();
  }

  private Table lockedTable(ZooKeeperOptions options) {
    TableLoader loader =
        new LockedTableLoader(
            TestTables.loader(warehouse),
            ZooKeeperTableLock.opener(options, TestTables.TABLE_NAME),
            options.lockTimeout());
    loader.open();
    return loader.loadTable();
  }

  /** Another committer (its own connection) holds the table's lock until {@code release}. */
  private Future<Boolean> holdLock(CountDownLatch held, CountDownLatch release) {
    return executor.submit(
        () ->
            ZooKeeperTableLock.withTableLock(
                zooKeeper,
                TestTables.TABLE_NAME,
                () -> {
                  held.countDown();
                  return release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                }));
  }

  private static boolean hasColumn(Table table, String column) {
    return table.schema().findField(column) != null;
  }
}
