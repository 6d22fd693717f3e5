package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkNotNull;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.TableCommitLock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper commit lock of one Iceberg table: a Curator {@link InterProcessMutex} at {@code
 * <root>/locks/<table>} over a given {@link ZooKeeperConnection}. Everything that commits to the
 * table takes it around its commit (refresh, check, commit, release), so no commit ever starts from
 * a stale base: the coordinator of every pipeline (through {@link ZooKeeperCommitGuard}) and
 * anything else, such as maintenance, through this class:
 *
 * <pre>{@code
 * try (ZooKeeperTableLock lock = ZooKeeperTableLock.open(options, "hadoop.shop.orders")) {
 *   lock.runExclusive(options.lockTimeout(), () -> {
 *     table.refresh();
 *     RewriteManifests rewrite = table.rewriteManifests() ...;
 *     lock.checkStillHeld(); // just before the commit
 *     rewrite.commit();
 *     return null;
 *   });
 * }
 * }</pre>
 *
 * <p>Only a CONNECTED connection runs actions: otherwise {@link #runExclusive} throws {@link
 * CommitDeferredException} without running the action. A holder whose connection was interrupted
 * since it took the lock may have lost it, so {@link #checkStillHeld()} refuses, and a commit that
 * already went out is judged by what Iceberg answered, never by this lock.
 */
public final class ZooKeeperTableLock implements TableCommitLock {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperTableLock.class);

  private final ZooKeeperConnection connection;
  private final boolean ownsConnection;
  private final String tableName;
  private final String lockPath;
  private final InterProcessMutex mutex;

  /**
   * Interruption count of the connection when the current holder took the lock, or -1 when not
   * held. Written only by the holding thread; the mutex makes holders sequential.
   */
  private volatile long heldSinceInterruption = -1;

  /**
   * The lock of {@code tableName} over {@code connection} (not yet taken); closing the lock leaves
   * the connection open.
   *
   * @param tableName catalog-qualified table name, e.g. {@code hadoop.shop.orders}; every committer
   *     of one table must use the same name
   */
  public ZooKeeperTableLock(ZooKeeperConnection connection, String tableName) {
    this(connection, tableName, false);
  }

  private ZooKeeperTableLock(
      ZooKeeperConnection connection, String tableName, boolean ownsConnection) {
    checkNotNull(connection, "Cannot create a table lock: the connection is null");
    checkArgument(
        tableName != null && !tableName.isBlank(),
        "Cannot open a table lock: the table name is empty; pass the catalog-qualified name,"
            + " e.g. hadoop.shop.orders");
    this.connection = connection;
    this.ownsConnection = ownsConnection;
    this.tableName = tableName;
    this.lockPath = ZooKeeperPaths.lockPath(connection.options().rootPath(), tableName);
    this.mutex = new InterProcessMutex(connection.client(), lockPath);
  }

  /**
   * Connects to ZooKeeper and returns the lock of {@code tableName} (not yet taken), owning its own
   * connection: closing the lock closes it. Fails when no connection is made within the connection
   * timeout.
   */
  public static ZooKeeperTableLock open(ZooKeeperOptions options, String tableName)
      throws InterruptedException {
    checkNotNull(options, "Cannot open a table lock: options are null");
    checkArgument(
        tableName != null && !tableName.isBlank(),
        "Cannot open a table lock: the table name is empty; pass the catalog-qualified name,"
            + " e.g. hadoop.shop.orders");
    return new ZooKeeperTableLock(ZooKeeperConnection.open(options), tableName, true);
  }

  /**
   * Opens the lock of {@code tableName}, runs {@code action} holding it (waiting at most {@code
   * coordinator.zookeeper.lock-timeout}), and closes the connection. For occasional committers such
   * as a maintenance run; a loop should keep one {@link #open} lock instead.
   */
  public static <T> T withTableLock(ZooKeeperOptions options, String tableName, Callable<T> action)
      throws Exception {
    try (ZooKeeperTableLock lock = open(options, tableName)) {
      return lock.runExclusive(options.lockTimeout(), action);
    }
  }

  /**
   * Opens the lock of {@code tableName} where it is used, with its own connection ({@link #open});
   * a server that cannot be reached within the connection timeout is a {@link
   * CommitDeferredException}.
   */
  public static TableCommitLock.Opener opener(ZooKeeperOptions options, String tableName) {
    checkNotNull(options, "Cannot open a table lock: options are null");
    return () -> {
      try {
        return open(options, tableName);
      } catch (IllegalStateException e) {
        throw new CommitDeferredException(e.getMessage(), e); // not connected in time
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CommitDeferredException(
            "Interrupted while connecting to ZooKeeper for the commit lock of " + tableName, e);
      }
    };
  }

  /**
   * Runs {@code action} holding the lock and releases the lock after, whatever the action does.
   *
   * <p>Throws {@link CommitDeferredException}, without running the action, when the connection is
   * not CONNECTED, when the lock is not granted within {@code lockTimeout}, when taking it fails on
   * a ZooKeeper error, or when the connection was interrupted while it was being taken. The same
   * exception replaces a {@link LockLostException} thrown by {@link #checkStillHeld()} inside the
   * action: nothing was committed in that case either. Any other exception of the action is passed
   * on unchanged; the action's own result is returned unchanged, even when the connection dropped
   * after the action's commit went out (Iceberg answered for that commit, not this lock).
   */
  @Override
  public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
    checkNotNull(action, "Cannot run a null action under the lock of table '%s'", tableName);
    checkArgument(
        lockTimeout != null && lockTimeout.toMillis() > 0,
        "Cannot take the lock of table '%s' with lock timeout %s: pass a positive duration (%s)",
        tableName,
        lockTimeout,
        CoordinatorConfigOptions.ZK_LOCK_TIMEOUT.key());
    ZooKeeperConnection.State before = connection.state();
    if (before != ZooKeeperConnection.State.CONNECTED) {
      throw new CommitDeferredException(
          String.format(
              "Cannot take the commit lock of table '%s': the ZooKeeper connection is %s; nothing"
                  + " was run, the commit is retried once ZooKeeper at '%s' is reachable again",
              tableName, before, connection.options().connectString()));
    }
    long interruptionsBefore = connection.interruptions();
    long start = System.nanoTime();
    boolean acquired;
    try {
      acquired = mutex.acquire(lockTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      throw new CommitDeferredException(
          String.format(
              "Cannot take the commit lock of table '%s' at %s: %s; nothing was run, the commit is"
                  + " retried later",
              tableName, lockPath, e),
          e);
    }
    long waited = System.nanoTime() - start;
    if (!acquired) {
      throw new CommitDeferredException(
          String.format(
              "Cannot take the commit lock of table '%s' at %s within %s (%s): another committer"
                  + " held it all that time; nothing was run, the commit is retried later. Raise"
                  + " the lock timeout if commits on this table are slow",
              tableName, lockPath, lockTimeout, CoordinatorConfigOptions.ZK_LOCK_TIMEOUT.key()));
    }
    LOG.debug("Took the commit lock of table {} after {} ms", tableName, waited / 1_000_000);

    long previousHeldSince = heldSinceInterruption; // re-entrant use by the same thread
    heldSinceInterruption = interruptionsBefore;
    try {
      checkStillHeld();
      T result = action.call();
      if (connection.interruptions() != interruptionsBefore) {
        LOG.warn(
            "The ZooKeeper connection was interrupted while a commit to table {} held the lock; the"
                + " commit's outcome is what Iceberg reported, and the next commit re-reads the"
                + " table under the lock. Check ZooKeeper at {} if this repeats",
            tableName,
            connection.options().connectString());
      }
      return result;
    } catch (Exception e) {
      LockLostException lost = findLockLost(e);
      if (lost != null) {
        throw new CommitDeferredException(lost.getMessage(), e);
      }
      throw e;
    } finally {
      heldSinceInterruption = previousHeldSince;
      release();
    }
  }

  /**
   * Call inside {@link #runExclusive}, right before committing: throws when the ZooKeeper
   * connection was interrupted since the lock was taken (the lock may have passed to another
   * committer). {@code runExclusive} turns that into a {@link CommitDeferredException}: nothing
   * committed, retried later.
   *
   * @throws IllegalStateException when this thread does not hold the lock
   */
  @Override
  public void checkStillHeld() {
    long heldSince = heldSinceInterruption;
    if (heldSince < 0 || !mutex.isOwnedByCurrentThread()) {
      throw new IllegalStateException(
          String.format(
              "Cannot check the commit lock of table '%s': this thread does not hold it; call"
                  + " checkStillHeld() inside runExclusive()",
              tableName));
    }
    ZooKeeperConnection.State now = connection.state();
    if (now != ZooKeeperConnection.State.CONNECTED || connection.interruptions() != heldSince) {
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

  public String tableName() {
    return tableName;
  }

  /** The lock's znode, {@code <root>/locks/<table>}. */
  public String lockPath() {
    return lockPath;
  }

  /** The connection this lock runs over. */
  public ZooKeeperConnection connection() {
    return connection;
  }

  @Override
  public void close() {
    if (ownsConnection) {
      connection.close();
    }
  }
}
