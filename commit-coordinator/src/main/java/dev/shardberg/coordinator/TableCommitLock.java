package dev.shardberg.coordinator;

import java.io.Serializable;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * The one contract for serialising a commit on an Iceberg table: everything that commits to the
 * table (the coordinator of every pipeline, maintenance, the shard taggers' schema changes) runs
 * its commit inside {@link #runExclusive}. Implementations: {@link NoopCommitGuard} (a single job,
 * nothing to race against), {@link dev.shardberg.coordinator.zk.ZooKeeperTableLock} (the table's
 * ZooKeeper lock), and {@link CommitGuard}s, which add fencing of zombie coordinators on top.
 *
 * <p>Inside the action a committer refreshes the table, decides, and commits with a metadata swap
 * that only succeeds from the metadata it read, so even a lock lost in between cannot make a commit
 * land on top of another committer's; {@link #checkStillHeld()} right before the commit makes that
 * rare case rarer. Code that cannot hold a lock around its own refresh-and-commit (Iceberg's schema
 * updates, taken by the router) commits through a {@link LockedTableLoader}'s table, whose every
 * metadata swap runs inside {@link #runExclusive}.
 */
public interface TableCommitLock extends AutoCloseable {

  /**
   * Runs {@code action} holding the table's commit lock, waiting at most {@code lockTimeout} for
   * it, and releases the lock after, whatever the action does.
   *
   * @throws CommitDeferredException without running the action (or after the action's {@link
   *     #checkStillHeld()} refused): the lock is not reachable, not granted in time, or may have
   *     been lost; nothing was committed and the caller may try again later
   */
  <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception;

  /**
   * Call inside {@link #runExclusive}, right before the commit, after slow work under the lock:
   * throws when the lock may have been lost since it was taken (then nothing must be committed, and
   * {@link #runExclusive} reports a {@link CommitDeferredException}).
   */
  void checkStillHeld();

  @Override
  void close();

  /**
   * Opens a table's commit lock where it is used (on a task manager); travels with the job graph.
   */
  @FunctionalInterface
  interface Opener extends Serializable {
    /**
     * @throws CommitDeferredException when the lock's server cannot be reached now
     */
    TableCommitLock open() throws CommitDeferredException;
  }
}
