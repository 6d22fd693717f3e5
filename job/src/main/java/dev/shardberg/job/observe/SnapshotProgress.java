package dev.shardberg.job.observe;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The snapshot part of a local run's progress line, from the running job's snapshot-row gauges
 * (read per host through Flink's REST API, {@link HostLag}) and MySQL's row estimates per shard.
 *
 * <p>Flink CDC 3.5.0's MySQL source exports no snapshot chunk counts (its only own metric is {@code
 * currentFetchEventTimeLag}), so progress is counted in rows: rows read, shards with rows read,
 * rows/s since the previous line and, when MySQL gave estimates, an ETA from the rows the estimates
 * still expect of the shards this run snapshots (every shard at a start without state, the re-read
 * ones on a resume — the others go on from the binlog and have no rows left to read — and any shard
 * whose snapshot rows pass). A shard that has read more than its estimate counts as having none
 * left (the estimate of InnoDB is a sample).
 *
 * @param rows snapshot rows read so far over all hosts
 * @param shardsRead shards with at least one snapshot row read
 */
public record SnapshotProgress(long rows, int shardsRead, Map<Integer, Long> rowsByShard) {

  public static SnapshotProgress of(List<HostLag> hosts) {
    long rows = 0;
    Set<Integer> shards = new HashSet<>();
    Map<Integer, Long> byShard = new java.util.TreeMap<>();
    for (HostLag h : hosts) {
      rows += h.snapshotRows();
      shards.addAll(h.snapshotRowsByShard().keySet());
      byShard.putAll(h.snapshotRowsByShard());
    }
    return new SnapshotProgress(rows, shards.size(), byShard);
  }

  /** Rows the estimates still expect of every shard; -1 when there are no estimates. */
  public long remaining(Map<Integer, Long> estimates) {
    return remaining(estimates.keySet(), estimates);
  }

  /**
   * Rows the estimates still expect of {@code shards} (a shard without an estimate counts none); -1
   * when there are no estimates.
   */
  public long remaining(Set<Integer> shards, Map<Integer, Long> estimates) {
    if (estimates.isEmpty()) {
      return -1;
    }
    long left = 0;
    for (Integer shard : shards) {
      left += Math.max(0, estimates.getOrDefault(shard, 0L) - rowsByShard.getOrDefault(shard, 0L));
    }
    return left;
  }

  /** The shards being snapshotted: those expected, and any with snapshot rows read. */
  private Set<Integer> snapshotted(Set<Integer> expected) {
    Set<Integer> shards = new HashSet<>(expected);
    shards.addAll(rowsByShard.keySet());
    return shards;
  }

  /**
   * The text after "snapshot: ", or null when this line has nothing to say about the snapshot: no
   * row read yet, or no row read since {@code previous} (the snapshot is over, or stalled — the
   * host part of the line says which).
   *
   * @param previous the previous line's progress; null for the first line
   * @param since time since the previous line
   * @param snapshotting the shards this run reads a snapshot of
   * @param estimates MySQL's estimated rows per shard; empty when not known
   */
  public String describe(
      SnapshotProgress previous,
      Duration since,
      Set<Integer> snapshotting,
      Map<Integer, Long> estimates) {
    Set<Integer> shards = snapshotted(snapshotting);
    int totalShards = shards.size();
    long before = previous == null ? 0 : previous.rows();
    if (rows == 0 || rows == before) {
      return null;
    }
    double perSecond = (rows - before) * 1000.0 / Math.max(1, since.toMillis());
    StringBuilder sb =
        new StringBuilder(
            String.format(
                "%d rows read from %d of %d shards, %.0f rows/s",
                rows, shardsRead, totalShards, perSecond));
    long left = remaining(shards, estimates);
    if (left > 0 && perSecond > 0) {
      sb.append(", ETA ~")
          .append(Durations.estimate(Duration.ofSeconds(Math.round(left / perSecond))))
          .append(" (")
          .append(left)
          .append(" rows left by MySQL's estimate)");
    }
    return sb.toString();
  }
}
