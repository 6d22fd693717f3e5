package dev.shardberg.coordinator;

import java.io.Serializable;

/**
 * Opens the {@link CommitGuard} of one coordinator instance. Serializable: it travels with the job
 * graph and is opened in the coordinator's {@code initializeState}.
 */
@FunctionalInterface
public interface CommitGuardFactory extends Serializable {

  /**
   * @param pipelineId stable pipeline id from config ({@code shardberg.pipeline-id})
   * @param tableName catalog-qualified table name, e.g. {@code hadoop.shop.orders}; names the lock
   */
  CommitGuard open(String pipelineId, String tableName) throws Exception;

  /** No lock, no fencing: the default when {@code coordinator.zookeeper.*} is not set. */
  static CommitGuardFactory none() {
    return (pipelineId, tableName) -> NoopCommitGuard.INSTANCE;
  }
}
