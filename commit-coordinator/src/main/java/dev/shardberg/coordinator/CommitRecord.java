package dev.shardberg.coordinator;

import java.util.SortedMap;

/**
 * One commit of a pipeline, as read back from the table's snapshot summary.
 *
 * @param epoch fencing epoch of the committing coordinator, {@code -1} when fencing was off
 * @param heartbeat true for the empty liveness commit written every K empty checkpoints
 * @param shardCounts per-shard changes of this commit, by shard number (empty for a heartbeat)
 */
public record CommitRecord(
    long snapshotId,
    long checkpointId,
    long epoch,
    long timestampMillis,
    String flinkJobId,
    boolean heartbeat,
    SortedMap<Integer, ShardCounts> shardCounts) {}
