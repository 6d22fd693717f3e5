package dev.shardberg.coordinator.zk;

import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.ROOT;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.children;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.observer;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.options;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.spec;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitFencedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The guard and the table lock against real ZooKeeper servers (Curator's TestingServer/Cluster).
 */
class ZooKeeperCommitGuardTest {
  @org.junit.jupiter.api.BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    dev.shardberg.coordinator.zk.ZooKeeperTestSupport.neverExitTheJvm();
  }

  private static final String TABLE = "hadoop.shop.orders";
  private static final String LOCK_PATH = ROOT + "/locks/" + TABLE;
  private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration WAIT = Duration.ofSeconds(30);

  private TestingServer server;
  private ExecutorService executor;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void startZooKeeper() throws Exception {
    server = ZooKeeperTestSupport.startServer();
    executor = Executors.newCachedThreadPool();
  }

  @AfterEach
  void stopZooKeeper() throws Exception {
    Collections.reverse(toClose);
    for (AutoCloseable closeable : toClose) {
      closeable.close();
    }
    executor.shutdownNow();
    server.close();
  }

  private ZooKeeperCommitGuard open(String pipelineId) throws Exception {
    return open(options(server.getConnectString()), pipelineId);
  }

  /** Connected, with its epoch taken (the eager open tools use). */
  private ZooKeeperCommitGuard open(ZooKeeperOptions options, String pipelineId) throws Exception {
    ZooKeeperCommitGuard guard = ZooKeeperCommitGuard.open(options, pipelineId, TABLE);
    toClose.add(guard);
    return guard;
  }

  /** The coordinator's guard, as its factory opens it: not connected yet. */
  private ZooKeeperCommitGuard lazy(ZooKeeperOptions options, String pipelineId) {
    ZooKeeperCommitGuard guard = new ZooKeeperCommitGuardFactory(options).open(pipelineId, TABLE);
    toClose.add(guard);
    return guard;
  }

  @Test
  void theCoordinatorsGuardOpensWithoutZooKeeperAndTakesItsEpochAtTheFirstCommitUnderTheLock()
      throws Exception {
    ZooKeeperOptions zk = options(server.getConnectString());
    server.stop();
    ZooKeeperCommitGuard guard =
        lazy(zk.withConnectionTimeout(Duration.ofMillis(500)), "orders"); // no connection attempt
    assertThat(guard.epoch()).isEqualTo(-1);
    assertThat(guard.canCommit()).isTrue();
    assertThat(guard.connectionState()).isEqualTo(ZooKeeperConnection.State.LATENT);

    AtomicInteger commits = new AtomicInteger();
    assertThatThrownBy(() -> guard.runExclusive(LOCK_TIMEOUT, commits::incrementAndGet))
        .isInstanceOf(CommitDeferredException.class)
        .hasMessageStartingWith(
            "Cannot take the commit lock of table 'hadoop.shop.orders': Cannot connect to ZooKeeper at")
        .hasMessageEndingWith(
            "nothing was run, the commit is retried at the next completed checkpoint");
    assertThat(commits).hasValue(0);
    assertThat(guard.epoch()).isEqualTo(-1);

    server.restart();
    ZooKeeperCommitGuard older = open("orders"); // another instance took epoch 1 meanwhile
    assertThat(older.epoch()).isEqualTo(1);
    List<Long> epochInsideTheLock = new ArrayList<>();
    assertThat(
            guard.runExclusive(
                LOCK_TIMEOUT,
                () -> {
                  epochInsideTheLock.add(guard.epoch());
                  guard.checkStillHeld();
                  return commits.incrementAndGet();
                }))
        .isEqualTo(1);
    assertThat(epochInsideTheLock).containsExactly(2L);
    assertThatThrownBy(() -> older.runExclusive(LOCK_TIMEOUT, commits::incrementAndGet))
        .isInstanceOf(CommitFencedException.class);
  }

  private <T extends AutoCloseable> T closeLater(T closeable) {
    toClose.add(closeable);
    return closeable;
  }

  @Test
  void everyOpenTakesTheNextEpochOfItsPipeline() throws Exception {
    assertThat(open("orders").epoch()).isEqualTo(1);
    assertThat(open("orders").epoch()).isEqualTo(2);
    assertThat(open("customers").epoch()).isEqualTo(1);
    assertThat(open("orders").epoch()).isEqualTo(3);

    CuratorFramework zk = closeLater(observer(server.getConnectString()));
    assertThat(new String(zk.getData().forPath(ROOT + "/pipelines/orders/epoch"), UTF_8))
        .isEqualTo("3");
  }

  @Test
  void concurrentOpensNeverShareAnEpoch() throws Exception {
    int instances = 8;
    CountDownLatch go = new CountDownLatch(1);
    List<Future<ZooKeeperCommitGuard>> opening = new ArrayList<>();
    for (int i = 0; i < instances; i++) {
      opening.add(
          executor.submit(
              () -> {
                go.await();
                return open("orders");
              }));
    }
    go.countDown();
    List<Long> epochs = new ArrayList<>();
    for (Future<ZooKeeperCommitGuard> guard : opening) {
      epochs.add(guard.get(30, TimeUnit.SECONDS).epoch());
    }

    assertThat(epochs)
        .containsExactlyInAnyOrderElementsOf(
            LongStream.rangeClosed(1, instances).boxed().collect(Collectors.toList()));
  }

  @Test
  void olderInstanceIsFencedAndSaysWhy() throws Exception {
    ZooKeeperCommitGuard first = open("orders");
    ZooKeeperCommitGuard second = open("orders");
    AtomicInteger commits = new AtomicInteger();
    String fenced =
        "Cannot commit to table 'hadoop.shop.orders': another instance of pipeline 'orders'"
            + " started with epoch 2 (this instance has epoch 1), so this instance stops"
            + " committing for good. Expected after a redeploy; otherwise two jobs run with the"
            + " same shardberg.pipeline-id — stop one of them";

    assertThatThrownBy(
            () ->
                first.runExclusive(
                    LOCK_TIMEOUT,
                    () -> {
                      first.checkStillHeld();
                      return commits.incrementAndGet();
                    }))
        .isInstanceOf(CommitFencedException.class)
        .hasMessage(fenced);
    assertThat(first.canCommit()).isFalse();
    assertThatThrownBy(() -> first.runExclusive(LOCK_TIMEOUT, commits::incrementAndGet))
        .isInstanceOf(CommitFencedException.class)
        .hasMessage(fenced);
    assertThatThrownBy(first::checkStillHeld).hasMessage(fenced);

    // the fenced attempt released the lock: the newer instance commits
    assertThat(second.canCommit()).isTrue();
    int committed =
        second.runExclusive(
            LOCK_TIMEOUT,
            () -> {
              second.checkStillHeld();
              return commits.incrementAndGet();
            });
    assertThat(committed).isEqualTo(1);
    assertThat(commits).hasValue(1);
  }

  @Test
  void supersededInstanceIsStoppedUnderTheLockBeforeItsActionRuns() throws Exception {
    ZooKeeperCommitGuard first = open("orders");
    open("orders");
    AtomicInteger runs = new AtomicInteger();

    // an action that would decide on its own not to check (e.g. "already committed") never runs
    assertThatThrownBy(() -> first.runExclusive(LOCK_TIMEOUT, runs::incrementAndGet))
        .isInstanceOf(CommitFencedException.class)
        .hasMessageContaining("started with epoch 2 (this instance has epoch 1)");
    assertThat(runs).hasValue(0);
  }

  @Test
  void secondCommitterWaitsUntilTheFirstReleases() throws Exception {
    ZooKeeperCommitGuard a = open("pipeline-a");
    ZooKeeperCommitGuard b = open("pipeline-b");
    CountDownLatch aInside = new CountDownLatch(1);
    CountDownLatch letAGo = new CountDownLatch(1);
    AtomicBoolean bRan = new AtomicBoolean();

    Future<Boolean> first =
        executor.submit(
            () ->
                a.runExclusive(
                    LOCK_TIMEOUT,
                    () -> {
                      aInside.countDown();
                      letAGo.await();
                      return bRan.get();
                    }));
    assertThat(aInside.await(30, TimeUnit.SECONDS)).isTrue();
    Future<Boolean> second =
        executor.submit(() -> b.runExclusive(LOCK_TIMEOUT, () -> bRan.getAndSet(true)));

    CuratorFramework zk = closeLater(observer(server.getConnectString()));
    await().atMost(WAIT).until(() -> children(zk, LOCK_PATH).size() == 2); // b queued behind a
    assertThat(bRan).isFalse();

    letAGo.countDown();
    assertThat(first.get(30, TimeUnit.SECONDS)).as("b ran while a held the lock").isFalse();
    assertThat(second.get(30, TimeUnit.SECONDS)).isFalse();
    assertThat(bRan).isTrue();
    assertThat(children(zk, LOCK_PATH)).isEmpty();
  }

  @Test
  void criticalSectionsOfTwoPipelinesAndMaintenanceNeverOverlap() throws Exception {
    ZooKeeperOptions options = options(server.getConnectString());
    ZooKeeperCommitGuard a = open("pipeline-a");
    ZooKeeperCommitGuard b = open("pipeline-b");
    ZooKeeperTableLock maintenance = closeLater(ZooKeeperTableLock.open(options, TABLE));

    List<Section> sections =
        runConcurrently(25, a::runExclusive, b::runExclusive, maintenance::runExclusive);

    assertNoOverlap(sections, 75);
    assertThat(sections)
        .filteredOn(s -> s.committer().equals("committer-0"))
        .as("pipeline-a's sections")
        .hasSize(25);
    assertThat(sections)
        .filteredOn(s -> s.committer().equals("committer-2"))
        .as("maintenance's sections")
        .hasSize(25);
  }

  @Test
  void lockWaitPastTheTimeoutRunsNothing() throws Exception {
    ZooKeeperCommitGuard a = open("pipeline-a");
    ZooKeeperCommitGuard b = open("pipeline-b");
    CountDownLatch aInside = new CountDownLatch(1);
    CountDownLatch letAGo = new CountDownLatch(1);
    Future<Object> holder =
        executor.submit(
            () ->
                a.runExclusive(
                    LOCK_TIMEOUT,
                    () -> {
                      aInside.countDown();
                      letAGo.await();
                      return null;
                    }));
    assertThat(aInside.await(30, TimeUnit.SECONDS)).isTrue();
    AtomicInteger runs = new AtomicInteger();

    assertThatThrownBy(() -> b.runExclusive(Duration.ofMillis(300), runs::incrementAndGet))
        .isInstanceOf(CommitDeferredException.class)
        .hasMessage(
            "Cannot take the commit lock of table 'hadoop.shop.orders' at"
                + " /shardberg-test/locks/hadoop.shop.orders within PT0.3S"
                + " (coordinator.zookeeper.lock-timeout): another committer held it all that time;"
                + " nothing was run, the commit is retried later. Raise the lock timeout if"
                + " commits on this table are slow");
    assertThat(runs).hasValue(0);

    letAGo.countDown();
    holder.get(30, TimeUnit.SECONDS);
    assertThat(b.runExclusive(LOCK_TIMEOUT, runs::incrementAndGet)).isEqualTo(1);
  }

  @Test
  void zooKeeperDownStopsCommitsAndRestartResumesThem() throws Exception {
    ZooKeeperCommitGuard guard = open("orders");
    AtomicInteger commits = new AtomicInteger();
    Callable<Integer> commit =
        () -> {
          guard.checkStillHeld();
          return commits.incrementAndGet();
        };
    assertThat(guard.runExclusive(LOCK_TIMEOUT, commit)).isEqualTo(1);

    server.stop();
    await().atMost(WAIT).until(() -> !guard.canCommit());
    assertThatThrownBy(() -> guard.runExclusive(LOCK_TIMEOUT, commit))
        .isInstanceOf(CommitDeferredException.class)
        .hasMessageStartingWith(
            "Cannot take the commit lock of table 'hadoop.shop.orders': the ZooKeeper connection"
                + " is ")
        .hasMessageEndingWith(
            "; nothing was run, the commit is retried once ZooKeeper at '"
                + server.getConnectString()
                + "' is reachable again");
    assertThat(commits).hasValue(1);

    server.restart();
    await().atMost(WAIT).until(guard::canCommit);
    assertThat(guard.runExclusive(LOCK_TIMEOUT, commit)).isEqualTo(2);
    assertThat(guard.epoch()).isEqualTo(1);
    assertThat(guard.connectionInterruptions()).isPositive();
  }

  @Test
  void sessionExpiredBetweenLockAndCommitCommitsNothingAndTheNextAttemptDoes() throws Exception {
    ZooKeeperCommitGuard guard = open("orders");
    ZooKeeperCommitGuard other = open("other-pipeline");
    AtomicInteger commits = new AtomicInteger();
    AtomicBoolean otherGotTheLock = new AtomicBoolean();

    assertThatThrownBy(
            () ->
                guard.runExclusive(
                    LOCK_TIMEOUT,
                    () -> {
                      expireSession(guard);
                      // the server dropped the lock node with the session: while this action
                      // still runs, another committer takes the lock
                      other.runExclusive(LOCK_TIMEOUT, () -> otherGotTheLock.getAndSet(true));
                      guard.checkStillHeld();
                      return commits.incrementAndGet();
                    }))
        .isInstanceOf(CommitDeferredException.class)
        .hasMessageStartingWith(
            "Cannot commit to table 'hadoop.shop.orders': the ZooKeeper connection was"
                + " interrupted after the commit lock was taken (now ")
        .hasMessageEndingWith(
            "), so the lock may have passed to another committer; nothing was committed, the"
                + " commit is retried later");
    assertThat(otherGotTheLock).isTrue();
    assertThat(commits).hasValue(0);

    await().atMost(WAIT).until(guard::canCommit);
    int committed =
        guard.runExclusive(
            LOCK_TIMEOUT,
            () -> {
              guard.checkStillHeld();
              return commits.incrementAndGet();
            });
    assertThat(committed).isEqualTo(1);
  }

  @Test
  void sessionExpiredAfterTheCommitWentOutReportsTheActionsOwnOutcome() throws Exception {
    ZooKeeperCommitGuard guard = open("orders");
    AtomicInteger commits = new AtomicInteger();

    String outcome =
        guard.runExclusive(
            LOCK_TIMEOUT,
            () -> {
              guard.checkStillHeld();
              commits.incrementAndGet(); // the commit went out and Iceberg accepted it
              expireSession(guard);
              return "committed";
            });

    assertThat(outcome).isEqualTo("committed");
    assertThat(commits).hasValue(1);
    await().atMost(WAIT).until(guard::canCommit);
    CuratorFramework zk = closeLater(observer(server.getConnectString()));
    await().atMost(WAIT).until(() -> children(zk, LOCK_PATH).isEmpty());
    assertThat(guard.runExclusive(LOCK_TIMEOUT, commits::incrementAndGet)).isEqualTo(2);
  }

  @Test
  void clusterOfThreeKeepsLockingAndFencingWithOneServerKilled() throws Exception {
    TestingCluster cluster = closeLater(new TestingCluster(spec(1), spec(2), spec(3)));
    cluster.start();
    // A cluster that has just started elects its leader first: allow more than the 2 s default of
    // these tests (CI once took longer on a loaded machine).
    ZooKeeperOptions options =
        options(cluster.getConnectString()).withConnectionTimeout(Duration.ofSeconds(15));
    ZooKeeperCommitGuard a = open(options, "pipeline-a");
    InstanceSpec serverOfA =
        cluster.findConnectionInstance(a.client().getZookeeperClient().getZooKeeper());
    long interruptionsBefore = a.connectionInterruptions();

    assertThat(cluster.killServer(serverOfA)).isTrue();
    await().atMost(WAIT).until(() -> a.connectionInterruptions() > interruptionsBefore);
    await().atMost(WAIT).until(a::canCommit);

    ZooKeeperCommitGuard b = open(options, "pipeline-b");
    ZooKeeperTableLock maintenance = closeLater(ZooKeeperTableLock.open(options, TABLE));
    List<Section> sections =
        runConcurrently(10, a::runExclusive, b::runExclusive, maintenance::runExclusive);
    assertNoOverlap(sections, 30);

    ZooKeeperCommitGuard newerA = open(options, "pipeline-a");
    assertThat(newerA.epoch()).isEqualTo(2);
    assertThatThrownBy(() -> a.runExclusive(LOCK_TIMEOUT, checkThenCommit(a)))
        .isInstanceOf(CommitFencedException.class)
        .hasMessageContaining("another instance of pipeline 'pipeline-a' started with epoch 2");
    assertThat(newerA.runExclusive(LOCK_TIMEOUT, checkThenCommit(newerA))).isEqualTo("committed");
  }

  @Test
  void maintenanceThroughWithTableLockWaitsForTheCoordinator() throws Exception {
    ZooKeeperCommitGuard guard = open("orders");
    CountDownLatch guardInside = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    AtomicBoolean maintenanceRan = new AtomicBoolean();
    Future<Object> commit =
        executor.submit(
            () ->
                guard.runExclusive(
                    LOCK_TIMEOUT,
                    () -> {
                      guardInside.countDown();
                      letGo.await();
                      return null;
                    }));
    assertThat(guardInside.await(30, TimeUnit.SECONDS)).isTrue();

    Future<Integer> maintenance =
        executor.submit(
            () ->
                ZooKeeperTableLock.withTableLock(
                    options(server.getConnectString()),
                    TABLE,
                    () -> {
                      maintenanceRan.set(true);
                      return 42;
                    }));
    CuratorFramework zk = closeLater(observer(server.getConnectString()));
    await().atMost(WAIT).until(() -> children(zk, LOCK_PATH).size() == 2);
    assertThat(maintenanceRan).isFalse();

    letGo.countDown();
    commit.get(30, TimeUnit.SECONDS);
    assertThat(maintenance.get(30, TimeUnit.SECONDS)).isEqualTo(42);
  }

  @Test
  void checkStillHeldOutsideRunExclusiveIsAProgrammingError() throws Exception {
    ZooKeeperTableLock lock =
        closeLater(ZooKeeperTableLock.open(options(server.getConnectString()), TABLE));

    assertThatThrownBy(lock::checkStillHeld)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "Cannot check the commit lock of table 'hadoop.shop.orders': this thread does not hold"
                + " it; call checkStillHeld() inside runExclusive()");
  }

  @Test
  void unreachableZooKeeperFailsOpenNamingTheKeys() {
    int port = InstanceSpec.getRandomPort(); // nothing listens there
    ZooKeeperOptions options =
        options("127.0.0.1:" + port).withConnectionTimeout(Duration.ofMillis(500));

    assertThatThrownBy(() -> ZooKeeperCommitGuard.open(options, "orders", TABLE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "Cannot connect to ZooKeeper at '127.0.0.1:"
                + port
                + "' (coordinator.zookeeper.connect) within PT0.5S"
                + " (coordinator.zookeeper.connection-timeout): check that the servers are up and"
                + " reachable from this host, or raise the connection timeout");
  }

  // --- helpers ---

  private static Callable<String> checkThenCommit(ZooKeeperCommitGuard guard) {
    return () -> {
      guard.checkStillHeld();
      return "committed";
    };
  }

  /** Expires the guard's session the way a long network partition would, and waits until seen. */
  private static void expireSession(ZooKeeperCommitGuard guard) throws Exception {
    long before = guard.connectionInterruptions();
    guard.client().getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    await().atMost(WAIT).until(() -> guard.connectionInterruptions() > before);
  }

  @FunctionalInterface
  interface Exclusive {
    Object run(Duration lockTimeout, Callable<Object> action) throws Exception;
  }

  record Section(String committer, long startNanos, long endNanos) {}

  /** Each committer runs {@code rounds} critical sections in its own thread, all at once. */
  private List<Section> runConcurrently(int rounds, Exclusive... committers) throws Exception {
    List<Section> sections = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> running = new ArrayList<>();
    for (int c = 0; c < committers.length; c++) {
      Exclusive committer = committers[c];
      String name = "committer-" + c;
      running.add(
          executor.submit(
              () -> {
                go.await();
                for (int i = 0; i < rounds; i++) {
                  committer.run(
                      LOCK_TIMEOUT,
                      () -> {
                        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        long start = System.nanoTime();
                        busyWork();
                        long end = System.nanoTime();
                        inside.decrementAndGet();
                        sections.add(new Section(name, start, end));
                        return null;
                      });
                }
                return null;
              }));
    }
    go.countDown();
    for (Future<?> future : running) {
      future.get(120, TimeUnit.SECONDS);
    }
    assertThat(maxInside).as("committers inside the lock at once").hasValue(1);
    return new ArrayList<>(sections);
  }

  /** About a millisecond of work inside the lock, so overlapping sections would show. */
  private static void busyWork() {
    long until = System.nanoTime() + 1_000_000;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  private static void assertNoOverlap(List<Section> sections, int expected) {
    assertThat(sections).hasSize(expected);
    List<Section> sorted = new ArrayList<>(sections);
    sorted.sort(Comparator.comparingLong(Section::startNanos));
    for (int i = 1; i < sorted.size(); i++) {
      assertThat(sorted.get(i).startNanos())
          .as("%s starts after %s ends", sorted.get(i), sorted.get(i - 1))
          .isGreaterThan(sorted.get(i - 1).endNanos());
    }
  }
}
