package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkNotNull;

import dev.shardberg.coordinator.CommitLockTimeoutException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper commit lock of one Iceberg table: a Curator {@link InterProcessMutex} at {@code
 * <root>/locks/<table>}. Everything that commits to the table takes it around its commit (refresh,
 * check, commit, release), so no commit ever starts from a stale base: the coordinator of every
 * pipeline (through {@link ZooKeeperCommitGuard}) and anything else, such as maintenance, through
 * this class:
 *
 * <pre>{@code
 * try (ZooKeeperTableLock lock = ZooKeeperTableLock.open(options, "hadoop.shop.orders")) {
 *   lock.runExclusive(() -> {
 *     table.refresh();
 *     RewriteManifests rewrite = table.rewriteManifests() ...;
 *     lock.checkLockHeld(); // just before the commit
 *     rewrite.commit();
 *     return null;
 *   });
 * }
 * }</pre>
 *
 * <h2>Connection state machine</h2>
 *
 * <pre>
 *              connected               SUSPENDED               LOST
 *   LATENT ──────────────▶ CONNECTED ───────────▶ SUSPENDED ─────────▶ LOST
 *                            ▲   │  ▲                 │                 │
 *                            │   │  └── RECONNECTED ──┘                 │
 *                            │   └───────────────── LOST ──────────────▶│
 *                            └──────────────── RECONNECTED ─────────────┘
 *   any ── close() ──▶ CLOSED
 * </pre>
 *
 * Only CONNECTED runs actions. SUSPENDED and LOST mean "stop committing now": {@link
 * #runExclusive} throws {@link CommitLockTimeoutException} without running the action. Every exit
 * from CONNECTED counts as an interruption; a holder whose connection was interrupted since it took
 * the lock may have lost it (an expired session deletes the lock's ephemeral node and the next
 * waiter gets it), so {@link #checkLockHeld()} refuses, and a commit that already went out is judged
 * by what Iceberg answered, never by this lock.
 *
 * <p>Transitions happen on Curator's event thread with {@code compareAndSet}; readers on any thread
 * see a consistent state.
 */
public final class ZooKeeperTableLock implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperTableLock.class);

  /** Connection states as this lock sees them. */
  public enum State {
    LATENT,
    CONNECTED,
    SUSPENDED,
    LOST,
    CLOSED
  }

  private static final Set<State> CAN_CONNECT =
      EnumSet.of(State.LATENT, State.SUSPENDED, State.LOST);
  private static final Set<State> CAN_SUSPEND = EnumSet.of(State.LATENT, State.CONNECTED);
  private static final Set<State> CAN_LOSE =
      EnumSet.of(State.LATENT, State.CONNECTED, State.SUSPENDED);

  private final ZooKeeperOptions options;
  private final String tableName;
  private final String lockPath;
  private final CuratorFramework client;
  private final InterProcessMutex mutex;
  private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
  private final AtomicLong interruptions = new AtomicLong();
  private final LockWaitStats lockWaits = new LockWaitStats();

  /**
   * Interruption count when the current holder took the lock, or -1 when not held. Written only by
   * the holding thread; the mutex makes holders sequential.
   */
  private volatile long heldSinceInterruption = -1;

  private ZooKeeperTableLock(ZooKeeperOptions options, String tableName) {
    this.options = options;
    this.tableName = tableName;
    this.lockPath = ZooKeeperPaths.lockPath(options.rootPath(), tableName);
    this.client =
        CuratorFrameworkFactory.builder()
            .connectString(options.connectString())
            .sessionTimeoutMs(options.sessionTimeoutMs())
            .connectionTimeoutMs(options.connectionTimeoutMs())
            // sleeps grow from base-sleep and are capped at the connection timeout, so one
            // operation during an outage fails in bounded time instead of sleeping for minutes
            .retryPolicy(
                new ExponentialBackoffRetry(
                    options.retryBaseSleepMs(),
                    options.retryMaxRetries(),
                    Math.max(options.retryBaseSleepMs(), options.connectionTimeoutMs())))
            .build();
    this.mutex = new InterProcessMutex(client, lockPath);
    client.getConnectionStateListenable().addListener((c, newState) -> onConnectionState(newState));
  }

  /**
   * Connects to ZooKeeper and returns the lock of {@code tableName} (not yet taken). Fails when no
   * connection is made within the connection timeout.
   *
   * @param tableName catalog-qualified table name, e.g. {@code hadoop.shop.orders}; every committer
   *     of one table must use the same name
   */
  public static ZooKeeperTableLock open(ZooKeeperOptions options, String tableName)
      throws InterruptedException {
    checkNotNull(options, "Cannot open a table lock: options are null");
    checkArgument(
        tableName != null && !tableName.isBlank(),
        "Cannot open a table lock: the table name is empty; pass the catalog-qualified name,"
            + " e.g. hadoop.shop.orders");
    ZooKeeperTableLock lock = new ZooKeeperTableLock(options, tableName);
    lock.start();
    return lock;
  }

  /**
   * Opens the lock of {@code tableName}, runs {@code action} holding it (waiting at most {@code
   * coordinator.zookeeper.lock-timeout}), and closes the connection. For occasional committers such
   * as a maintenance run; a loop should keep one {@link #open} lock instead.
   */
  public static <T> T withTableLock(ZooKeeperOptions options, String tableName, Callable<T> action)
      throws Exception {
    try (ZooKeeperTableLock lock = open(options, tableName)) {
      return lock.runExclusive(action);
    }
  }

  private void start() throws InterruptedException {
    client.start();
    boolean connected =
        client.blockUntilConnected(options.connectionTimeoutMs(), TimeUnit.MILLISECONDS);
    if (!connected) {
      close();
      throw new IllegalStateException(
          String.format(
              "Cannot connect to ZooKeeper at '%s' (%s) within %s (%s): check that the servers are"
                  + " up and reachable from this host, or raise the connection timeout",
              options.connectString(),
              ZooKeeperOptions.KEY_CONNECT,
              options.connectionTimeout(),
              ZooKeeperOptions.KEY_CONNECTION_TIMEOUT));
    }
    // the listener may already have moved LATENT to CONNECTED; a later SUSPENDED wins either way
    state.compareAndSet(State.LATENT, State.CONNECTED);
  }

  /** Runs {@code action} holding the lock, waiting at most {@code lock-timeout} for it. */
  public <T> T runExclusive(Callable<T> action) throws Exception {
    return runExclusive(options.lockTimeout(), action);
  }

  /**
   * Runs {@code action} holding the lock and releases the lock after, whatever the action does.
   *
   * <p>Throws {@link CommitLockTimeoutException}, without running the action, when the connection is
   * not CONNECTED, when the lock is not granted within {@code lockTimeout}, when taking it fails on a
   * ZooKeeper error, or when the connection was interrupted while it was being taken. The same
   * exception replaces a {@link LockLostException} thrown by {@link #checkLockHeld()} inside the
   * action: nothing was committed in that case either. Any other exception of the action is passed
   * on unchanged; the action's own result is returned unchanged, even when the connection dropped
   * after the action's commit went out (Iceberg answered for that commit, not this lock).
   */
  public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
    checkNotNull(action, "Cannot run a null action under the lock of table '%s'", tableName);
    checkArgument(
        lockTimeout != null && lockTimeout.toMillis() > 0,
        "Cannot take the lock of table '%s' with lock timeout %s: pass a positive duration (%s)",
        tableName,
        lockTimeout,
        ZooKeeperOptions.KEY_LOCK_TIMEOUT);
    State before = state.get();
    if (before != State.CONNECTED) {
      throw new CommitLockTimeoutException(
          String.format(
              "Cannot take the commit lock of table '%s': the ZooKeeper connection is %s; nothing"
                  + " was run, the commit is retried once ZooKeeper at '%s' is reachable again",
              tableName, before, options.connectString()));
    }
    long interruptionsBefore = interruptions.get();
    long start = System.nanoTime();
    boolean acquired;
    try {
      acquired = mutex.acquire(lockTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      lockWaits.recordFailed();
      throw e;
    } catch (Exception e) {
      lockWaits.recordFailed();
      throw new CommitLockTimeoutException(
          String.format(
              "Cannot take the commit lock of table '%s' at %s: %s; nothing was run, the commit is"
                  + " retried later",
              tableName, lockPath, e),
          e);
    }
    long waited = System.nanoTime() - start;
    if (!acquired) {
      lockWaits.recordTimedOut(waited);
      throw new CommitLockTimeoutException(
          String.format(
              "Cannot take the commit lock of table '%s' at %s within %s (%s): another committer"
                  + " held it all that time; nothing was run, the commit is retried later. Raise"
                  + " the lock timeout if commits on this table are slow",
              tableName, lockPath, lockTimeout, ZooKeeperOptions.KEY_LOCK_TIMEOUT));
    }
    lockWaits.recordGranted(waited);
    LOG.debug("Took the commit lock of table {} after {} ms", tableName, waited / 1_000_000);

    long previousHeldSince = heldSinceInterruption; // re-entrant use by the same thread
    heldSinceInterruption = interruptionsBefore;
    try {
      checkLockHeld();
      T result = action.call();
      if (interruptions.get() != interruptionsBefore) {
        LOG.warn(
            "The ZooKeeper connection was interrupted while a commit to table {} held the lock; the"
                + " commit's outcome is what Iceberg reported, and the next commit re-reads the"
                + " table under the lock. Check ZooKeeper at {} if this repeats",
            tableName,
            options.connectString());
      }
      return result;
    } catch (Exception e) {
      LockLostException lost = findLockLost(e);
      if (lost != null) {
        throw new CommitLockTimeoutException(lost.getMessage(), e);
      }
      throw e;
    } finally {
      heldSinceInterruption = previousHeldSince;
      release();
    }
  }

  /**
   * Call inside {@link #runExclusive}, right before committing: throws when the ZooKeeper connection
   * was interrupted since the lock was taken (the lock may have passed to another committer).
   * {@code runExclusive} turns that into a {@link CommitLockTimeoutException}: nothing committed,
   * retried later.
   *
   * @throws IllegalStateException when this thread does not hold the lock
   */
  public void checkLockHeld() {
    long heldSince = heldSinceInterruption;
    if (heldSince < 0 || !mutex.isOwnedByCurrentThread()) {
      throw new IllegalStateException(
          String.format(
              "Cannot check the commit lock of table '%s': this thread does not hold it; call"
                  + " checkLockHeld() inside runExclusive()",
              tableName));
    }
    State now = state.get();
    if (now != State.CONNECTED || interruptions.get() != heldSince) {
      throw new LockLostException(
          String.format(
              "Cannot commit to table '%s': the ZooKeeper connection was interrupted after the"
                  + " commit lock was taken (now %s), so the lock may have passed to another"
                  + " committer; nothing was committed, the commit is retried later",
              tableName, now));
    }
  }

  /** True while this thread holds the lock inside {@link #runExclusive}. */
  boolean isHeldByCurrentThread() {
    return heldSinceInterruption >= 0 && mutex.isOwnedByCurrentThread();
  }

  private void release() {
    try {
      mutex.release();
    } catch (Exception e) {
      // The ephemeral lock node goes away with the session at the latest, and Curator retries the
      // guaranteed delete in the background; the action's outcome stands either way.
      LOG.warn(
          "Cannot release the commit lock of table {} at {} cleanly ({}); ZooKeeper removes it when"
              + " this session ends",
          tableName,
          lockPath,
          e.toString());
    }
  }

  private static LockLostException findLockLost(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof LockLostException lost) {
        return lost;
      }
    }
    return null;
  }

  private void onConnectionState(ConnectionState newState) {
    switch (newState) {
      case CONNECTED, RECONNECTED -> {
        if (moveTo(State.CONNECTED, CAN_CONNECT) && newState == ConnectionState.RECONNECTED) {
          LOG.info(
              "ZooKeeper connection to {} is back: commits to table {} resume at the next"
                  + " checkpoint",
              options.connectString(),
              tableName);
        }
      }
      case SUSPENDED, READ_ONLY -> {
        if (moveTo(State.SUSPENDED, CAN_SUSPEND)) {
          LOG.warn(
              "ZooKeeper connection to {} is suspended: commits to table {} stop now and stay"
                  + " pending until the connection is back. Check the ZooKeeper servers",
              options.connectString(),
              tableName);
        }
      }
      case LOST -> {
        if (moveTo(State.LOST, CAN_LOSE)) {
          LOG.warn(
              "ZooKeeper session to {} is lost: the commit lock of table {} is gone; commits stay"
                  + " pending until a new session is connected. Check the ZooKeeper servers",
              options.connectString(),
              tableName);
        }
      }
    }
  }

  private boolean moveTo(State target, Set<State> allowedFrom) {
    while (true) {
      State current = state.get();
      if (!allowedFrom.contains(current)) {
        return false;
      }
      if (state.compareAndSet(current, target)) {
        if (current == State.CONNECTED) {
          interruptions.incrementAndGet();
        }
        return true;
      }
    }
  }

  /** True while actions can run (connection CONNECTED). */
  public boolean isConnected() {
    return state.get() == State.CONNECTED;
  }

  public State state() {
    return state.get();
  }

  /** How many times the connection left CONNECTED (suspended or lost) since {@link #open}. */
  public long connectionInterruptions() {
    return interruptions.get();
  }

  public String tableName() {
    return tableName;
  }

  /** The lock's znode, {@code <root>/locks/<table>}. */
  public String lockPath() {
    return lockPath;
  }

  /** Waits for this lock so far. */
  public LockWaitStats.Snapshot lockWaits() {
    return lockWaits.snapshot();
  }

  /** The ZooKeeper client this lock owns, for the guard's epoch node. */
  CuratorFramework client() {
    return client;
  }

  ZooKeeperOptions options() {
    return options;
  }

  @Override
  public void close() {
    State previous = state.getAndSet(State.CLOSED);
    if (previous != State.CLOSED) {
      client.close();
    }
  }
}
