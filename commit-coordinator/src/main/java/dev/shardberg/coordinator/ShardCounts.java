package dev.shardberg.coordinator;

import java.io.Serializable;

/**
 * Changes of one shard in one checkpoint.
 *
 * @param addedRecords rows written by INSERT and UPDATE_AFTER changes (each also deletes its key)
 * @param deletedRecords keys deleted by DELETE changes
 */
public record ShardCounts(long addedRecords, long deletedRecords) implements Serializable {
  public static final ShardCounts ZERO = new ShardCounts(0, 0);

  public ShardCounts plus(ShardCounts other) {
    return new ShardCounts(
        addedRecords + other.addedRecords, deletedRecords + other.deletedRecords);
  }
}
