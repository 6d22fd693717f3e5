package dev.shardberg.coordinator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Reads a pipeline's commits back from the table's snapshot summaries, for display (the CLI's
 * {@code status}) and as the fallback of {@link PipelineProgress} for tables written before the
 * progress record existed. Decisions about what is committed read {@link PipelineProgress}:
 * summaries expire with their snapshots.
 *
 * <p>The walk follows the ancestry of the table's current snapshot (not every snapshot in the
 * metadata), so commits on other branches or rolled back by maintenance do not count.
 */
public final class CommittedCheckpoints {
  private CommittedCheckpoints() {}

  /**
   * The highest checkpoint committed by {@code pipelineId} (its {@link PipelineProgress} record),
   * or empty when the pipeline never committed. The caller refreshes the table first.
   */
  public static OptionalLong maxCommittedCheckpoint(Table table, String pipelineId) {
    return PipelineProgress.read(table, pipelineId)
        .map(progress -> OptionalLong.of(progress.checkpointId()))
        .orElseGet(OptionalLong::empty);
  }

  /** The newest commits of {@code pipelineId}, newest first, at most {@code limit}. */
  public static List<CommitRecord> history(Table table, String pipelineId, int limit) {
    if (limit <= 0 || table.currentSnapshot() == null) {
      return List.of();
    }
    List<CommitRecord> records = new ArrayList<>();
    for (Snapshot snapshot : ancestry(table)) {
      parse(snapshot, pipelineId).ifPresent(records::add);
      if (records.size() >= limit) {
        break;
      }
    }
    return Collections.unmodifiableList(records);
  }

  /** The newest commit of {@code pipelineId} in the current ancestry. */
  static Optional<CommitRecord> latest(Table table, String pipelineId) {
    if (table.currentSnapshot() == null) {
      return Optional.empty();
    }
    for (Snapshot snapshot : ancestry(table)) {
      Optional<CommitRecord> record = parse(snapshot, pipelineId);
      if (record.isPresent()) {
        return record;
      }
    }
    return Optional.empty();
  }

  private static Iterable<Snapshot> ancestry(Table table) {
    return SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot);
  }

  static Optional<CommitRecord> parse(Snapshot snapshot, String pipelineId) {
    Map<String, String> summary = snapshot.summary();
    if (summary == null || !pipelineId.equals(summary.get(SnapshotSummaryKeys.PIPELINE_ID))) {
      return Optional.empty();
    }
    String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
    if (checkpoint == null) {
      return Optional.empty();
    }
    return Optional.of(
        new CommitRecord(
            snapshot.snapshotId(),
            Long.parseLong(checkpoint),
            Long.parseLong(summary.getOrDefault(SnapshotSummaryKeys.EPOCH, "-1")),
            snapshot.timestampMillis(),
            summary.get(SnapshotSummaryKeys.FLINK_JOB_ID),
            Boolean.parseBoolean(summary.get(SnapshotSummaryKeys.HEARTBEAT)),
            shardCounts(summary)));
  }

  private static SortedMap<Integer, ShardCounts> shardCounts(Map<String, String> summary) {
    SortedMap<Integer, ShardCounts> counts = new TreeMap<>();
    for (Map.Entry<String, String> entry : summary.entrySet()) {
      String key = entry.getKey();
      if (!key.startsWith(SnapshotSummaryKeys.SHARD_PREFIX)) {
        continue;
      }
      String rest = key.substring(SnapshotSummaryKeys.SHARD_PREFIX.length());
      boolean added = rest.endsWith(SnapshotSummaryKeys.ADDED_RECORDS_SUFFIX);
      boolean deleted = rest.endsWith(SnapshotSummaryKeys.DELETED_RECORDS_SUFFIX);
      if (rest.endsWith(SnapshotSummaryKeys.REMOVED_SUFFIX)
          && Boolean.parseBoolean(entry.getValue())) {
        try {
          int shard =
              Integer.parseInt(
                  rest.substring(0, rest.length() - SnapshotSummaryKeys.REMOVED_SUFFIX.length()));
          counts.merge(shard, ShardCounts.REMOVED, ShardCounts::plus);
        } catch (NumberFormatException e) {
          // not ours to judge
        }
        continue;
      }
      if (!added && !deleted) {
        continue;
      }
      String suffix =
          added
              ? SnapshotSummaryKeys.ADDED_RECORDS_SUFFIX
              : SnapshotSummaryKeys.DELETED_RECORDS_SUFFIX;
      int shard;
      long value;
      try {
        shard = Integer.parseInt(rest.substring(0, rest.length() - suffix.length()));
        value = Long.parseLong(entry.getValue());
      } catch (NumberFormatException e) {
        continue; // not ours to judge: another writer's key that happens to share the prefix
      }
      ShardCounts delta = added ? new ShardCounts(value, 0) : new ShardCounts(0, value);
      counts.merge(shard, delta, ShardCounts::plus);
    }
    return Collections.unmodifiableSortedMap(counts);
  }
}
