package dev.shardberg.tests.bench;

import java.util.List;

/**
 * Every figure of one mode at one shard count. A run whose correctness check failed has status
 * {@code FAILED} and its figures must never be averaged with passing runs.
 *
 * @param mode the mode's label
 * @param status {@code PASSED}, {@code FAILED} or {@code NOT_AVAILABLE}
 * @param reason why it failed or is not available; empty when it passed
 * @param sourceCount {@code source-only}: rows its counting sink saw against the rows loaded; null
 *     for the modes that write a table (they have {@code verification} instead)
 */
public record ModeResult(
    String mode,
    String status,
    String reason,
    int shards,
    int hosts,
    long rows,
    int sourceParallelismTotal,
    Snapshot snapshot,
    Changes changes,
    Freshness freshness,
    Commits commits,
    Files files,
    long restarts,
    long peakHeapBytes,
    Verification verification,
    List<Point> freshnessTimeline,
    MaintenanceFigures maintenance,
    SourceCount sourceCount,
    WriterFlush writerFlush,
    SchemaRolloutFigures schemaRollout) {

  public static final String PASSED = "PASSED";
  public static final String FAILED = "FAILED";
  public static final String NOT_AVAILABLE = "NOT_AVAILABLE";

  static ModeResult notAvailable(String mode, int shards, String reason) {
    return new ModeResult(
        mode,
        NOT_AVAILABLE,
        reason,
        shards,
        0,
        0,
        0,
        null,
        null,
        null,
        null,
        null,
        0,
        0,
        null,
        List.of(),
        null,
        null,
        null,
        null);
  }

  /**
   * Snapshot phase: from job submission until the table held every loaded row ({@code
   * rowsPerSecond}, job start-up included), and the rate between the first commit with rows and
   * that point ({@code rowsPerSecondAfterFirstCommit}, start-up excluded). {@code commits}, {@code
   * deleteFiles} and {@code equalityDeletes}: what the table's snapshots up to that point added (-1
   * where there is no table, source-only).
   */
  public record Snapshot(
      long rows,
      long millis,
      double rowsPerSecond,
      double rowsPerSecondPerSourceParallelism,
      double rowsPerSecondAfterFirstCommit,
      long commits,
      long deleteFiles,
      long equalityDeletes,
      long writersMillis) {

    /**
     * Rows per second into the Shardberg writers: loaded rows / (when the writers had received
     * every one - job submission), the point {@code source-only} counts at; -1 where not measured
     * (per-shard, source-only).
     */
    public double writersRowsPerSecond() {
      return writersMillis <= 0 ? -1 : rows * 1000.0 / writersMillis;
    }
  }

  /** Change phase: what the stream applied in MySQL, and how long until the table had caught up. */
  public record Changes(
      long inserts,
      long updates,
      long deletes,
      long streamMillis,
      double appliedPerSecond,
      long catchUpMillis,
      double committedPerSecond) {}

  /** MySQL commit → first committed snapshot containing the row, over the change phase (ms). */
  public record Freshness(
      long samples, long p50Millis, long p95Millis, long p99Millis, long maxMillis) {}

  /**
   * Commits observed on the table, and Iceberg's commit reports for them: duration, and retries
   * ({@code attempts - 1}, each one a {@code CommitFailedException} on a stale base).
   */
  public record Commits(
      long snapshots,
      long reported,
      long durationP50Millis,
      long durationP99Millis,
      long commitFailedRetries,
      long commitsThatRetried,
      long maxAttempts) {}

  /** Files and bytes per commit (commits that added files), and the files live at the end. */
  public record Files(
      double filesPerCommit,
      double dataFilesPerCommit,
      double deleteFilesPerCommit,
      double bytesPerCommit,
      long liveDataFiles,
      long liveDeleteFiles,
      long smallFiles,
      long smallFileThresholdBytes) {}

  /** The correctness check: table == union of the shards (counts and checksums per shard). */
  public record Verification(
      boolean passed, long mysqlRows, long icebergRows, List<String> mismatches) {}

  /**
   * The concurrent maintenance committer of {@code consolidated+zk}: commits it made under the
   * ZooKeeper table lock, CommitFailedException retries it needed, and failures.
   */
  public record MaintenanceFigures(
      long commits, long commitFailedRetries, long failures, String action) {}

  /**
   * The {@code source-only} check: the counting sink must see exactly the loaded rows ({@code
   * shards x rowsPerShard}), no fewer and no more (a duplicate would mean a source replayed rows).
   */
  public record SourceCount(long expectedRows, long countedRows, boolean passed) {}

  /**
   * Change phase, consolidated modes: per Flink checkpoint that closed files, the files of all
   * writer subtasks together and the slowest subtask's close time ({@code
   * DeltaTaskWriter.complete()}); {@code millisPerFile} = the slowest subtask's time summed over
   * checkpoints / files. {@code commits}, {@code commitP50Millis}, {@code commitP99Millis}: the
   * coordinator's data commits of the change phase and their duration as it logs it. Null for
   * per-shard (stock writers and committers).
   */
  public record WriterFlush(
      long checkpoints,
      double filesPerCheckpoint,
      long p50Millis,
      long p99Millis,
      long maxMillis,
      double millisPerFile,
      long commits,
      long commitP50Millis,
      long commitP99Millis) {}

  /**
   * Mode {@code consolidated+ddl}: the schema rollout during the change phase ({@code ADD COLUMN}
   * on every shard, one after the other). Freshness of the rows written between the first and the
   * last ALTER against the rows written before or after them, and the longest time between two
   * commits the watcher saw in that window (a stall shows there).
   */
  public record SchemaRolloutFigures(
      int shardsAltered,
      int shards,
      double windowSeconds,
      long samplesInWindow,
      long p99InWindowMillis,
      long p99OutsideWindowMillis,
      long maxCommitGapInWindowMillis,
      boolean columnInTable) {}

  /** A point of a time series: seconds since the change stream started, value. */
  public record Point(double seconds, double value) {}
}
