package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkNotNull;

import dev.shardberg.coordinator.CommitGuardFactory;

/**
 * Opens a {@link ZooKeeperCommitGuard} per coordinator instance. Serializable: it carries only the
 * {@link ZooKeeperOptions}; the connection is made at the coordinator's first commit, on the task
 * manager.
 */
public final class ZooKeeperCommitGuardFactory implements CommitGuardFactory {
  private static final long serialVersionUID = 1L;

  private final ZooKeeperOptions options;

  public ZooKeeperCommitGuardFactory(ZooKeeperOptions options) {
    this.options =
        checkNotNull(options, "Cannot create a ZooKeeper commit guard: options are null");
  }

  public ZooKeeperOptions options() {
    return options;
  }

  /** A lazy guard: it connects and takes its epoch at the coordinator's first commit. */
  @Override
  public ZooKeeperCommitGuard open(String pipelineId, String tableName) {
    return ZooKeeperCommitGuard.lazy(options, pipelineId, tableName);
  }

  @Override
  public String toString() {
    return "ZooKeeperCommitGuardFactory{" + options + "}";
  }
}
