package dev.shardberg.job;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.ShardCounts;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.observe.Durations;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * What a pipeline has committed, read from the snapshot summaries of its table (newest first): the
 * {@code status} command, the demo's summary and the tests.
 *
 * @param commits every commit of the pipeline in the table's current ancestry, newest first
 * @param totals per shard, the changes summed over {@code commits}
 */
public record PipelineStatus(
    String pipelineId,
    String table,
    List<CommitRecord> commits,
    SortedMap<Integer, ShardCounts> totals,
    Long currentSnapshotRecords,
    Instant now) {

  public static PipelineStatus read(ShardbergConfig config) {
    return of(Catalogs.loadTable(config.target()), config.pipeline().id(), Clock.systemUTC());
  }

  public static PipelineStatus of(Table table, String pipelineId, Clock clock) {
    table.refresh();
    List<CommitRecord> commits = CommittedCheckpoints.history(table, pipelineId, Integer.MAX_VALUE);
    SortedMap<Integer, ShardCounts> totals = new TreeMap<>();
    for (CommitRecord commit : commits) {
      commit
          .shardCounts()
          .forEach((shard, counts) -> totals.merge(shard, counts, ShardCounts::plus));
    }
    Snapshot current = table.currentSnapshot();
    Long records = current == null ? null : parseLong(current.summary().get("total-records"));
    return new PipelineStatus(pipelineId, table.name(), commits, totals, records, clock.instant());
  }

  private static Long parseLong(String value) {
    try {
      return value == null ? null : Long.parseLong(value);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * The shards whose rows a commit of this pipeline removed as a whole because their MySQL table
   * was gone ({@code tables.dropped-shards: delete}), each with the newest such commit.
   */
  public SortedMap<Integer, CommitRecord> removedShards() {
    SortedMap<Integer, CommitRecord> removed = new TreeMap<>();
    for (CommitRecord commit : commits) { // newest first: the first one seen is the newest
      commit
          .shardCounts()
          .forEach(
              (shard, counts) -> {
                if (counts.removed()) {
                  removed.putIfAbsent(shard, commit);
                }
              });
    }
    return removed;
  }

  public boolean committed() {
    return !commits.isEmpty();
  }

  public long lastCheckpointId() {
    return committed() ? commits.get(0).checkpointId() : -1;
  }

  /**
   * Time since the last commit (data or heartbeat): how stale the table may be at most, plus a
   * checkpoint.
   */
  public Duration sinceLastCommit() {
    return committed()
        ? Duration.between(Instant.ofEpochMilli(commits.get(0).timestampMillis()), now)
        : null;
  }

  public String render(int historyLines) {
    String nl = System.lineSeparator();
    StringBuilder sb = new StringBuilder();
    sb.append("Pipeline '").append(pipelineId).append("' on table ").append(table).append(nl);
    if (!committed()) {
      return sb.append(
              "No commit of this pipeline yet (is it running? is "
                  + CoordinatorConfigOptions.PIPELINE_ID.key()
                  + " the same as the running job's?)")
          .append(nl)
          .toString();
    }
    CommitRecord last = commits.get(0);
    sb.append(
        String.format(
            "  last committed checkpoint: %d (snapshot %d%s)%n",
            last.checkpointId(), last.snapshotId(), last.heartbeat() ? ", heartbeat" : ""));
    sb.append(
        String.format(
            "  last commit at:            %s (%s ago)%n",
            Instant.ofEpochMilli(last.timestampMillis()), Durations.human(sinceLastCommit())));
    CommitRecord lastData = commits.stream().filter(c -> !c.heartbeat()).findFirst().orElse(null);
    if (lastData != null) {
      sb.append(
          String.format(
              "  last data commit at:       %s (%s ago)%n",
              Instant.ofEpochMilli(lastData.timestampMillis()),
              Durations.human(
                  Duration.between(Instant.ofEpochMilli(lastData.timestampMillis()), now))));
    }
    sb.append(
        String.format(
            "  commits of this pipeline:  %d; flink job %s%n", commits.size(), last.flinkJobId()));
    if (currentSnapshotRecords != null) {
      sb.append(
          String.format(
              "  rows in current snapshot:  %d (data-file records, before equality deletes)%n",
              currentSnapshotRecords));
    }
    sb.append(nl)
        .append(
            String.format(
                "  %-6s %14s %14s   %s%n",
                "shard", "added", "deleted", "(summed over the pipeline's commits)"));
    for (Map.Entry<Integer, ShardCounts> e : totals.entrySet()) {
      sb.append(
          String.format(
              "  %-6d %14d %14d%n",
              e.getKey(), e.getValue().addedRecords(), e.getValue().deletedRecords()));
    }
    SortedMap<Integer, CommitRecord> removed = removedShards();
    if (!removed.isEmpty()) {
      sb.append(nl)
          .append("  shards removed (their MySQL table gone; tables.dropped-shards: delete):")
          .append(nl);
      removed.forEach(
          (shard, c) ->
              sb.append(
                  String.format(
                      "    shard %-6d every row removed at %s (checkpoint %d)%n",
                      shard, Instant.ofEpochMilli(c.timestampMillis()), c.checkpointId())));
    }
    sb.append(nl).append("  recent commits:").append(nl);
    for (CommitRecord c : commits.subList(0, Math.min(historyLines, commits.size()))) {
      long added = c.shardCounts().values().stream().mapToLong(ShardCounts::addedRecords).sum();
      long deleted = c.shardCounts().values().stream().mapToLong(ShardCounts::deletedRecords).sum();
      sb.append(
          String.format(
              "    checkpoint %-6d %s  +%d -%d in %d shards%s%n",
              c.checkpointId(),
              Instant.ofEpochMilli(c.timestampMillis()),
              added,
              deleted,
              c.shardCounts().size(),
              c.heartbeat() ? " (heartbeat)" : ""));
    }
    return sb.toString();
  }
}
