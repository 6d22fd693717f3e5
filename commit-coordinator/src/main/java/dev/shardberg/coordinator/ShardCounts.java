package dev.shardberg.coordinator;

import java.io.Serializable;

/**
 * Changes of one shard in one checkpoint.
 *
 * @param addedRecords rows written by INSERT and UPDATE_AFTER changes (each also deletes its key)
 * @param deletedRecords keys deleted by DELETE changes
 * @param removed every row of the shard left the table with this checkpoint because its MySQL table
 *     is gone ({@code tables.dropped-shards: delete}): written to the summary as {@code
 *     shardberg.shard.<n>.removed}
 */
public record ShardCounts(long addedRecords, long deletedRecords, boolean removed)
    implements Serializable {
  public static final ShardCounts ZERO = new ShardCounts(0, 0);

  /** The counts of a shard whose rows the checkpoint removes as a whole (its table is gone). */
  public static final ShardCounts REMOVED = new ShardCounts(0, 0, true);

  public ShardCounts(long addedRecords, long deletedRecords) {
    this(addedRecords, deletedRecords, false);
  }

  public ShardCounts plus(ShardCounts other) {
    return new ShardCounts(
        addedRecords + other.addedRecords,
        deletedRecords + other.deletedRecords,
        removed || other.removed);
  }
}
