package dev.shardberg.coordinator;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * Flink metrics of the coordinator, under the {@code shardberg} group of its operator. Besides the
 * counters and gauges, two histograms over the last {@value #HISTOGRAM_WINDOW} commits
 * (milliseconds): {@code commitDurationMs} (one Iceberg commit of one checkpoint, heartbeats
 * included, from the refresh under the lock to the committed transaction) and {@code lockWaitMs}
 * (how long the commit waited for the guard: the ZooKeeper table lock in HA mode, about 0 without
 * ZooKeeper).
 */
final class CoordinatorMetrics implements CheckpointCommitter.Metrics {
  static final int HISTOGRAM_WINDOW = 1024;

  private final Histogram commitDurations;
  private final Histogram lockWaits;
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
    this.commitDurations =
        group.histogram("commitDurationMs", new DescriptiveStatisticsHistogram(HISTOGRAM_WINDOW));
    this.lockWaits =
        group.histogram("lockWaitMs", new DescriptiveStatisticsHistogram(HISTOGRAM_WINDOW));
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

  @Override
  public void committed(
      long checkpointId, long durationMs, long dataFiles, long deleteFiles, long records) {
    commits.inc();
    lastCommittedCheckpoint = checkpointId;
    lastCommitDurationMs = durationMs;
    lastCommitDataFiles = dataFiles;
    lastCommitDeleteFiles = deleteFiles;
    lastCommitRecords = records;
    commitDurations.update(durationMs);
  }

  @Override
  public void heartbeat(long checkpointId, long durationMs) {
    heartbeats.inc();
    commitDurations.update(durationMs);
    lastCommittedCheckpoint = checkpointId;
  }

  @Override
  public void alreadyCommitted(long checkpointId) {
    skippedAlreadyCommitted.inc();
    lastCommittedCheckpoint = Math.max(lastCommittedCheckpoint, checkpointId);
  }

  /** The guard granted the commit its lock after {@code waitMs}. */
  @Override
  public void lockGranted(long waitMs) {
    lockWaits.update(waitMs);
  }

  @Override
  public void retry() {
    commitRetries.inc();
  }

  @Override
  public void lockTimeout() {
    lockTimeouts.inc();
  }

  @Override
  public void pending(int count) {
    pendingCheckpoints = count;
  }
}
