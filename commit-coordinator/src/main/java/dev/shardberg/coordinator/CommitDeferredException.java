package dev.shardberg.coordinator;

/**
 * The commit cannot be made now, and nothing was committed: retry later. Thrown by a {@link
 * CommitGuard} when the table's commit lock was not granted within the lock timeout, when the guard
 * is not connected (ZooKeeper unreachable, connection SUSPENDED or LOST), or when the connection
 * was interrupted after the lock was taken so the lock may have passed to another committer. The
 * coordinator keeps the pending checkpoint (and every later one) and retries at the next completed
 * checkpoint.
 */
public class CommitDeferredException extends Exception {
  public CommitDeferredException(String message) {
    super(message);
  }

  public CommitDeferredException(String message, Throwable cause) {
    super(message, cause);
  }
}
