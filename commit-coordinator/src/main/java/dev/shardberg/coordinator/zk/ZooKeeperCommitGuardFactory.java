package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkNotNull;

import dev.shardberg.coordinator.CommitGuardFactory;

/**
 * Opens a {@link ZooKeeperCommitGuard} per coordinator instance. Serializable: it carries only the
 * {@link ZooKeeperOptions}; the connection is made in {@link #open}, on the task manager.
 */
public final class ZooKeeperCommitGuardFactory implements CommitGuardFactory {
  private static final long serialVersionUID = 1L;

  private final ZooKeeperOptions options;

  public ZooKeeperCommitGuardFactory(ZooKeeperOptions options) {
    this.options = checkNotNull(options, "Cannot create a ZooKeeper commit guard: options are null");
  }

  public ZooKeeperOptions options() {
    return options;
  }

  @Override
  public ZooKeeperCommitGuard open(String pipelineId, String tableName) throws Exception {
    return ZooKeeperCommitGuard.open(options, pipelineId, tableName);
  }

  @Override
  public String toString() {
    return "ZooKeeperCommitGuardFactory{" + options + "}";
  }
}
