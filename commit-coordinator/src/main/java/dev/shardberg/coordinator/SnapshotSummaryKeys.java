package dev.shardberg.coordinator;

/**
 * Every key Shardberg writes into an Iceberg snapshot summary. All carry the {@code shardberg.}
 * prefix, like Iceberg's own {@code flink.} keys.
 *
 * <p>Invariant the exactly-once bookkeeping relies on: for one pipeline id, {@link #CHECKPOINT_ID}
 * strictly increases along the table's snapshot ancestry, so the newest snapshot of a pipeline
 * holds its highest committed checkpoint.
 */
public final class SnapshotSummaryKeys {
  /**
   * Stable pipeline id from config; Flink job ids change when a job is restored from a savepoint.
   */
  public static final String PIPELINE_ID = "shardberg.pipeline-id";

  /**
   * The pipeline's checkpoint sequence number. Equals the Flink checkpoint id unless the pipeline
   * was started without state on a table that already holds its commits: then the coordinator
   * shifts Flink's ids past the table's highest committed one (see {@link #FLINK_CHECKPOINT_ID}).
   */
  public static final String CHECKPOINT_ID = "shardberg.checkpoint-id";

  /** The Flink checkpoint id that produced the commit. */
  public static final String FLINK_CHECKPOINT_ID = "shardberg.flink-checkpoint-id";

  /**
   * Flink job id of the committing job (informational only; never used to decide what to commit).
   */
  public static final String FLINK_JOB_ID = "shardberg.flink-job-id";

  /** The committing coordinator's run id (see {@code PipelineProgress}), informational only. */
  public static final String RUN_ID = "shardberg.run-id";

  /** Fencing epoch of the committing coordinator; absent when fencing is off. */
  public static final String EPOCH = "shardberg.epoch";

  /** {@code true} on the empty commit written every K empty checkpoints to show liveness. */
  public static final String HEARTBEAT = "shardberg.heartbeat";

  /** Prefix of the per-shard counters: {@code shardberg.shard.<n>.added-records}. */
  public static final String SHARD_PREFIX = "shardberg.shard.";

  /** Suffix: rows written by INSERT and UPDATE_AFTER changes of the shard in this commit. */
  public static final String ADDED_RECORDS_SUFFIX = ".added-records";

  /** Suffix: keys deleted by DELETE changes of the shard in this commit. */
  public static final String DELETED_RECORDS_SUFFIX = ".deleted-records";

  /**
   * Suffix: {@code true} when every row of the shard left the table with this commit because its
   * MySQL table is gone ({@code tables.dropped-shards: delete}).
   */
  public static final String REMOVED_SUFFIX = ".removed";

  private SnapshotSummaryKeys() {}

  public static String shardRemoved(int shard) {
    return SHARD_PREFIX + shard + REMOVED_SUFFIX;
  }

  public static String shardAddedRecords(int shard) {
    return SHARD_PREFIX + shard + ADDED_RECORDS_SUFFIX;
  }

  public static String shardDeletedRecords(int shard) {
    return SHARD_PREFIX + shard + DELETED_RECORDS_SUFFIX;
  }
}
