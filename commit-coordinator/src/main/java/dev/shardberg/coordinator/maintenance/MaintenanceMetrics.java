package dev.shardberg.coordinator.maintenance;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * Flink metrics of maintenance under the coordinator's {@code shardberg.maintenance} group, and the
 * table health per shard under {@code shardberg.maintenance.shard.<n>} (the same figures as {@code
 * status}), refreshed every cycle.
 */
final class MaintenanceMetrics {
  private final MetricGroup group;
  private final Counter compactions;
  private final Counter merges;
  private final Counter mergedDataFiles;
  private final Counter compactionsDropped;
  private final Counter compactionsFailed;
  private final Counter rewrittenDataFiles;
  private final Counter addedDataFiles;
  private final Counter removedDeleteFiles;
  private final Counter expiredSnapshots;
  private final Counter expiredFilesDeleted;
  private final Counter orphanFilesDeleted;
  private final Counter manifestRewrites;
  private final Map<Integer, TableHealth.ShardHealth> shards = new ConcurrentHashMap<>();
  private volatile long lastCompactionMillis = -1;
  private volatile long lastCompactionDurationMs = -1;
  private volatile int dataFiles;
  private volatile int deleteFiles;

  MaintenanceMetrics(MetricGroup parent) {
    this.group = parent.addGroup("maintenance");
    this.compactions = group.counter("compactions");
    this.merges = group.counter("merges");
    this.mergedDataFiles = group.counter("mergedDataFiles");
    this.compactionsDropped = group.counter("compactionsDropped");
    this.compactionsFailed = group.counter("compactionsFailed");
    this.rewrittenDataFiles = group.counter("rewrittenDataFiles");
    this.addedDataFiles = group.counter("compactedDataFilesWritten");
    this.removedDeleteFiles = group.counter("removedDeleteFiles");
    this.expiredSnapshots = group.counter("expiredSnapshots");
    this.expiredFilesDeleted = group.counter("expiredFilesDeleted");
    this.orphanFilesDeleted = group.counter("orphanFilesDeleted");
    this.manifestRewrites = group.counter("manifestRewrites");
    group.<Long, Gauge<Long>>gauge("lastCompactionMillis", () -> lastCompactionMillis);
    group.<Long, Gauge<Long>>gauge("lastCompactionDurationMs", () -> lastCompactionDurationMs);
    group.<Integer, Gauge<Integer>>gauge("dataFiles", () -> dataFiles);
    group.<Integer, Gauge<Integer>>gauge("deleteFiles", () -> deleteFiles);
  }

  void health(TableHealth health) {
    dataFiles = health.dataFiles();
    deleteFiles = health.deleteFiles();
    health
        .byShard()
        .forEach(
            (shard, h) -> {
              if (shards.put(shard, h) == null) {
                registerShard(shard);
              }
            });
  }

  private void registerShard(int shard) {
    MetricGroup g = group.addGroup("shard", Integer.toString(shard));
    g.<Integer, Gauge<Integer>>gauge("dataFiles", () -> shards.get(shard).dataFiles());
    g.<Integer, Gauge<Integer>>gauge(
        "equalityDeleteFiles", () -> shards.get(shard).equalityDeleteFiles());
    g.<Integer, Gauge<Integer>>gauge(
        "positionDeleteFiles", () -> shards.get(shard).positionDeleteFiles());
    g.<Long, Gauge<Long>>gauge(
        "averageDataFileBytes", () -> shards.get(shard).averageDataFileBytes());
    g.<Double, Gauge<Double>>gauge("readPerLiveRow", () -> shards.get(shard).readPerLiveRow());
  }

  void compacted(PartitionRewrite.Result result, long nowMillis, long durationMs) {
    removedDeleteFiles.inc(result.droppedDeletes().size());
    if (result.isMerge()) {
      merges.inc();
      mergedDataFiles.inc(result.rewritten().size());
      return;
    }
    compactions.inc();
    rewrittenDataFiles.inc(result.rewritten().size());
    addedDataFiles.inc(result.added().size());
    lastCompactionMillis = nowMillis;
    lastCompactionDurationMs = durationMs;
  }

  void compactionDropped() {
    compactionsDropped.inc();
  }

  void compactionFailed() {
    compactionsFailed.inc();
  }

  void expired(int snapshots) {
    expiredSnapshots.inc(snapshots);
  }

  void expiredFilesDeleted(int files) {
    expiredFilesDeleted.inc(files);
  }

  void orphansDeleted(int files) {
    orphanFilesDeleted.inc(files);
  }

  void manifestsRewritten() {
    manifestRewrites.inc();
  }
}
