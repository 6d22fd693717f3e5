package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import java.io.Serializable;
import java.time.Duration;

/**
 * The coordinator's settings, validated by {@link ShardbergSink}.
 *
 * @param tableName catalog-qualified table name, for logs and the commit lock
 * @param pipelineId stable id written into every snapshot summary
 * @param maxContinuousEmptyCommits an empty heartbeat commit is written after this many empty
 *     checkpoints in a row
 * @param lockTimeout how long to wait for the commit lock before leaving a checkpoint pending
 * @param commitAttempts attempts per checkpoint when Iceberg's own retries give up on a stale base
 * @param retryBackoff pause between those attempts (doubled each time)
 * @param maintenance table maintenance run by the coordinator (compaction, expiry, cleanup)
 * @param shards the shards this job writes; null: not known (no re-read shard is replaced)
 * @param rereadShards of {@code shards}, those the source reads from a fresh snapshot in this run
 *     (a restored state that does not know one of the others is refused)
 * @param excludedShards shards left out on purpose ({@code tables.exclude-shards}): never removed
 * @param removeGoneShards {@code tables.dropped-shards: delete}: a shard the restored state knows
 *     that is neither in {@code shards} nor excluded (its table dropped, or its host removed from
 *     the config) loses its rows with this run's first checkpoint
 */
record CoordinatorOptions(
    String tableName,
    String pipelineId,
    int maxContinuousEmptyCommits,
    Duration lockTimeout,
    int commitAttempts,
    Duration retryBackoff,
    MaintenanceSettings maintenance,
    java.util.SortedSet<Integer> shards,
    java.util.SortedSet<Integer> rereadShards,
    DeleteMode deleteMode,
    java.util.SortedSet<Integer> excludedShards,
    boolean removeGoneShards)
    implements Serializable {

  /** Options that keep the rows of every shard no longer written. */
  CoordinatorOptions(
      String tableName,
      String pipelineId,
      int maxContinuousEmptyCommits,
      Duration lockTimeout,
      int commitAttempts,
      Duration retryBackoff,
      MaintenanceSettings maintenance,
      java.util.SortedSet<Integer> shards,
      java.util.SortedSet<Integer> rereadShards,
      DeleteMode deleteMode) {
    this(
        tableName,
        pipelineId,
        maxContinuousEmptyCommits,
        lockTimeout,
        commitAttempts,
        retryBackoff,
        maintenance,
        shards,
        rereadShards,
        deleteMode,
        new java.util.TreeSet<>(),
        false);
  }

  /** Options of a pipeline that deletes by key ({@link DeleteMode#EQUALITY}). */
  CoordinatorOptions(
      String tableName,
      String pipelineId,
      int maxContinuousEmptyCommits,
      Duration lockTimeout,
      int commitAttempts,
      Duration retryBackoff,
      MaintenanceSettings maintenance,
      java.util.SortedSet<Integer> shards,
      java.util.SortedSet<Integer> rereadShards) {
    this(
        tableName,
        pipelineId,
        maxContinuousEmptyCommits,
        lockTimeout,
        commitAttempts,
        retryBackoff,
        maintenance,
        shards,
        rereadShards,
        DeleteMode.EQUALITY);
  }
}
