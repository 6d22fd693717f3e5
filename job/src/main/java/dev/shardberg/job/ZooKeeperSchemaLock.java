package dev.shardberg.job;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.coordinator.zk.ZooKeeperTableLock;
import dev.shardberg.router.schema.SchemaCommitLock;

/**
 * The shard taggers' schema commits under the table's ZooKeeper lock (HA mode): the same lock the
 * coordinators and maintenance hold, so a schema change is serialised with every other commit on
 * the table. Schema changes are rare (one per DDL and table), so each one opens its own connection
 * and closes it after, as occasional committers do ({@link ZooKeeperTableLock#withTableLock}).
 */
final class ZooKeeperSchemaLock implements SchemaCommitLock {
  private static final long serialVersionUID = 1L;

  private final ZooKeeperOptions options;
  private final String tableName;

  ZooKeeperSchemaLock(ZooKeeperOptions options, String tableName) {
    this.options = options;
    this.tableName = tableName;
  }

  @Override
  public <T> T runExclusive(Action<T> action) throws Exception {
    ZooKeeperTableLock lock;
    try {
      lock = ZooKeeperTableLock.open(options, tableName);
    } catch (IllegalStateException e) {
      throw new Unavailable(e.getMessage(), e); // not connected within the connection timeout
    }
    try (lock) {
      return lock.runExclusive(() -> action.run(lock::checkLockHeld));
    } catch (CommitDeferredException e) {
      throw new Unavailable(e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    return "ZooKeeper lock of " + tableName + " at " + options.connectString();
  }
}
