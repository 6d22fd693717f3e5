package dev.shardberg.coordinator;

/**
 * What the coordinator holds around every Iceberg commit: the table's {@link TableCommitLock}, plus
 * the fencing of zombie instances of its pipeline.
 *
 * <p>Without ZooKeeper the guard is {@link NoopCommitGuard}: no lock, no epoch. With {@code
 * coordinator.zookeeper.*} set it is the Curator-backed guard, which serialises every commit on one
 * table (this job, other jobs, maintenance) and fences zombie instances of one pipeline.
 *
 * <p>Contract the coordinator relies on:
 *
 * <ul>
 *   <li>{@link #runExclusive} runs the action while holding the table's lock, and releases it
 *       after, whatever the action does. Inside the action the coordinator refreshes the table,
 *       reads its pipeline's progress record, checks the epoch recorded there, and commits with a
 *       metadata swap that only succeeds from the metadata it checked (so a lock lost in between
 *       cannot make a commit land on top of another committer's).
 *   <li>A guard may connect lazily: opening it must not block on or fail for an unreachable server;
 *       {@link #runExclusive} then throws {@link CommitDeferredException} and the checkpoint stays
 *       pending. {@link #epoch()} is valid inside the action.
 *   <li>When the lock is not obtained within the timeout, {@link CommitDeferredException} is thrown
 *       and nothing was run: the checkpoint stays pending and is retried at the next one.
 *   <li>When the guard is not connected (ZooKeeper SUSPENDED or LOST), {@link #canCommit()} is
 *       false and {@link #runExclusive} throws {@link CommitDeferredException} without running the
 *       action.
 *   <li>When a newer epoch of the same pipeline exists, {@link #runExclusive} throws {@link
 *       CommitFencedException} without running the action (checked once, under the lock); the
 *       coordinator fails for good with its message.
 * </ul>
 */
public interface CommitGuard extends TableCommitLock {

  /**
   * Epoch of this coordinator instance for its pipeline; {@code -1} when fencing is off (or, for a
   * lazy guard, before its first {@link #runExclusive} took it).
   */
  long epoch();

  /** False while the guard knows it cannot commit (e.g. ZooKeeper connection suspended or lost). */
  boolean canCommit();
}
