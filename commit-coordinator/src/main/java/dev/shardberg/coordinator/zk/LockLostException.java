package dev.shardberg.coordinator.zk;

/**
 * Thrown inside {@link ZooKeeperTableLock#runExclusive} when the lock can no longer be trusted
 * (ZooKeeper connection interrupted after the lock was taken) before anything was committed. {@code
 * runExclusive} turns it into a {@link dev.shardberg.coordinator.CommitDeferredException}, so the
 * caller keeps its pending commit and retries it later.
 */
final class LockLostException extends IllegalStateException {
  LockLostException(String message) {
    super(message);
  }

  LockLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
