package dev.shardberg.coordinator;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/** Flink metrics of the coordinator, under the {@code shardberg} group of its operator. */
final class CoordinatorMetrics {
  private final Counter commits;
  private final Counter heartbeats;
  private final Counter commitRetries;
  private final Counter lockTimeouts;
  private final Counter skippedAlreadyCommitted;
  private volatile long lastCommittedCheckpoint = -1;
  private volatile long lastCommitDurationMs = -1;
  private volatile long lastCommitDataFiles;
  private volatile long lastCommitDeleteFiles;
  private volatile long lastCommitRecords;
  private volatile int pendingCheckpoints;

  CoordinatorMetrics(MetricGroup operatorGroup) {
    MetricGroup group = operatorGroup.addGroup("shardberg");
    this.commits = group.counter("commits");
    this.heartbeats = group.counter("heartbeatCommits");
    this.commitRetries = group.counter("commitRetries");
    this.lockTimeouts = group.counter("commitLockTimeouts");
    this.skippedAlreadyCommitted = group.counter("checkpointsAlreadyCommitted");
    group.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
        "lastCommittedCheckpoint", () -> lastCommittedCheckpoint);
    group.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
        "lastCommitDurationMs", () -> lastCommitDurationMs);
    group.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
        "lastCommitDataFiles", () -> lastCommitDataFiles);
    group.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
        "lastCommitDeleteFiles", () -> lastCommitDeleteFiles);
    group.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
        "lastCommitRecords", () -> lastCommitRecords);
    group.<Integer, org.apache.flink.metrics.Gauge<Integer>>gauge(
        "pendingCheckpoints", () -> pendingCheckpoints);
  }

  void committed(long checkpointId, long durationMs, long dataFiles, long deleteFiles, long records) {
    commits.inc();
    lastCommittedCheckpoint = checkpointId;
    lastCommitDurationMs = durationMs;
    lastCommitDataFiles = dataFiles;
    lastCommitDeleteFiles = deleteFiles;
    lastCommitRecords = records;
  }

  void heartbeat(long checkpointId) {
    heartbeats.inc();
    lastCommittedCheckpoint = checkpointId;
  }

  void alreadyCommitted(long checkpointId) {
    skippedAlreadyCommitted.inc();
    lastCommittedCheckpoint = Math.max(lastCommittedCheckpoint, checkpointId);
  }

  void retry() {
    commitRetries.inc();
  }

  void lockTimeout() {
    lockTimeouts.inc();
  }

  void pending(int count) {
    pendingCheckpoints = count;
  }
}
