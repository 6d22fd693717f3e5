package dev.shardberg.tests.bench;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A Flink metric reporter that keeps the job-level {@code numRestarts} gauge of every job of this
 * JVM's MiniCluster, so the bench can report failed and restarted jobs, the maintenance counters,
 * and the coordinator's {@code shardberg.commitDurationMs} histogram and {@code
 * shardberg.commitRetries} counter (its commits are transactional: Iceberg's CommitReport does not
 * cover them). Installed through {@code metrics.reporter.bench.factory.class}.
 */
public final class RestartCounter implements MetricReporter {
  private static final Map<String, Gauge<?>> RESTARTS = new ConcurrentHashMap<>();

  /**
   * The job's own maintenance counters (compactions, compactionsDropped, compactionsFailed), by
   * identifier.
   */
  private static final Map<String, org.apache.flink.metrics.Counter> MAINTENANCE =
      new ConcurrentHashMap<>();

  private static final java.util.Set<String> MAINTENANCE_COUNTERS =
      java.util.Set.of(
          "compactions",
          "compactionsDropped",
          "compactionsFailed",
          "expiredSnapshots",
          "manifestRewrites");

  /** The coordinator's commit-duration histograms and commit-retry counters, by key. */
  private static final Map<String, Histogram> COMMIT_DURATIONS = new ConcurrentHashMap<>();

  private static final Map<String, org.apache.flink.metrics.Counter> COMMIT_RETRIES =
      new ConcurrentHashMap<>();

  /**
   * The Shardberg writers' {@code numRecordsIn} counters (one per writer subtask and job attempt):
   * the rows the sources handed to the writers, what {@code source-only} counts at the same point.
   */
  private static final Map<String, org.apache.flink.metrics.Counter> WRITER_RECORDS_IN =
      new ConcurrentHashMap<>();

  /** The writer operator's name starts so ({@code ShardbergSink}). */
  private static final String WRITER_OPERATOR = "Shardberg writer";

  /** Ends the job name in a key (a character no job name here holds). */
  private static final String JOB_END = "\u0000";

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if ("numRestarts".equals(name) && metric instanceof Gauge<?> gauge) {
      RESTARTS.put(key(group, name), gauge);
    } else if (MAINTENANCE_COUNTERS.contains(name)
        && metric instanceof org.apache.flink.metrics.Counter counter) {
      MAINTENANCE.put(key(group, name), counter);
    } else if (coordinator(group, name, "commitDurationMs")
        && metric instanceof Histogram histogram) {
      COMMIT_DURATIONS.put(key(group, name), histogram);
    } else if (coordinator(group, name, "commitRetries")
        && metric instanceof org.apache.flink.metrics.Counter counter) {
      COMMIT_RETRIES.put(key(group, name), counter);
    } else if ("numRecordsIn".equals(name)
        && metric instanceof org.apache.flink.metrics.Counter counter
        && group
            .getAllVariables()
            .getOrDefault("<operator_name>", "")
            .startsWith(WRITER_OPERATOR)) {
      WRITER_RECORDS_IN.put(key(group, name), counter);
    }
  }

  /**
   * A metric of the coordinator's {@code shardberg} group (CoordinatorMetrics) named {@code
   * expected}.
   */
  private static boolean coordinator(MetricGroup group, String name, String expected) {
    return expected.equals(name)
        && group.getMetricIdentifier(name).endsWith(".shardberg." + expected);
  }

  /**
   * The job's name as given (the {@code <job_name>} variable) before the identifier: the identifier
   * itself carries it filtered ({@code bench.shop.orders} becomes {@code bench_shop_orders}), so a
   * job name with a dot never matched it.
   */
  private static String key(MetricGroup group, String name) {
    String job = group.getAllVariables().getOrDefault("<job_name>", "");
    return job + JOB_END + group.getMetricIdentifier(name);
  }

  private static boolean ofJob(String key, String jobName) {
    return key.startsWith(jobName + JOB_END);
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
    // keep the last gauge: the job may be gone by the time the bench reads it
  }

  /** Restarts of the job named {@code jobName}: the highest count among its registrations. */
  static long restarts(String jobName) {
    long total = 0;
    for (Map.Entry<String, Gauge<?>> e : RESTARTS.entrySet()) {
      if (ofJob(e.getKey(), jobName)) {
        Object v = e.getValue().getValue();
        if (v instanceof Number n) {
          total = Math.max(total, n.longValue());
        }
      }
    }
    return total;
  }

  /**
   * A maintenance counter of the job named {@code jobName}: the highest count among its
   * registrations (the coordinator registers it once per job attempt).
   */
  static long maintenanceCounter(String jobName, String counter) {
    long total = 0;
    for (Map.Entry<String, org.apache.flink.metrics.Counter> e : MAINTENANCE.entrySet()) {
      if (ofJob(e.getKey(), jobName) && e.getKey().endsWith("." + counter)) {
        total = Math.max(total, e.getValue().getCount());
      }
    }
    return total;
  }

  /**
   * The coordinator's commit durations (ms) of the job named {@code jobName}, sorted: every value
   * its {@code commitDurationMs} histograms hold (one per job attempt, each over its last 1,024
   * commits, data and heartbeat). Empty when the job has no Shardberg coordinator.
   */
  static long[] commitDurations(String jobName) {
    return COMMIT_DURATIONS.entrySet().stream()
        .filter(e -> ofJob(e.getKey(), jobName))
        .flatMapToLong(e -> java.util.Arrays.stream(e.getValue().getStatistics().getValues()))
        .sorted()
        .toArray();
  }

  /**
   * Rows the Shardberg writers of the job named {@code jobName} have received, summed over their
   * subtasks (and attempts: a restart counts again what it reads again).
   */
  static long writerRecordsIn(String jobName) {
    return WRITER_RECORDS_IN.entrySet().stream()
        .filter(e -> ofJob(e.getKey(), jobName))
        .mapToLong(e -> e.getValue().getCount())
        .sum();
  }

  /** The coordinator's commit retries of the job named {@code jobName}, over its attempts. */
  static long commitRetries(String jobName) {
    return COMMIT_RETRIES.entrySet().stream()
        .filter(e -> ofJob(e.getKey(), jobName))
        .mapToLong(e -> e.getValue().getCount())
        .sum();
  }

  /**
   * The maintenance counters registered so far, identifier=count (for the report's diagnostics).
   */
  static java.util.List<String> maintenanceCounterIds() {
    return MAINTENANCE.entrySet().stream()
        .map(
            e ->
                e.getKey().substring(e.getKey().indexOf(JOB_END) + 1)
                    + "="
                    + e.getValue().getCount())
        .sorted()
        .toList();
  }

  /** Factory named in the Flink configuration. */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(java.util.Properties properties) {
      return new RestartCounter();
    }
  }
}
