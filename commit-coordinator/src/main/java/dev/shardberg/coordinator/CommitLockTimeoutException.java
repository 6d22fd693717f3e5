package dev.shardberg.coordinator;

/**
 * The table's commit lock was not obtained in time, or the guard is not connected. Nothing was
 * committed; the pending checkpoint is kept and retried at the next checkpoint.
 */
public class CommitLockTimeoutException extends Exception {
  public CommitLockTimeoutException(String message) {
    super(message);
  }

  public CommitLockTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
