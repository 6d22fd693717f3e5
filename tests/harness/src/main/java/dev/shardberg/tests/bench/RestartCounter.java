package dev.shardberg.tests.bench;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A Flink metric reporter that keeps the job-level {@code numRestarts} gauge of every job of this
 * JVM's MiniCluster, so the bench can report failed and restarted jobs. Installed through {@code
 * metrics.reporter.bench.factory.class}.
 */
public final class RestartCounter implements MetricReporter {
  private static final Map<String, Gauge<?>> RESTARTS = new ConcurrentHashMap<>();
  /** The job's own maintenance counters (compactions, compactionsDropped, compactionsFailed), by identifier. */
  private static final Map<String, org.apache.flink.metrics.Counter> MAINTENANCE = new ConcurrentHashMap<>();
  private static final java.util.Set<String> MAINTENANCE_COUNTERS =
      java.util.Set.of("compactions", "compactionsDropped", "compactionsFailed", "expiredSnapshots", "manifestRewrites");

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if ("numRestarts".equals(name) && metric instanceof Gauge<?> gauge) {
      RESTARTS.put(group.getMetricIdentifier(name), gauge);
    } else if (MAINTENANCE_COUNTERS.contains(name) && metric instanceof org.apache.flink.metrics.Counter counter) {
      MAINTENANCE.put(group.getMetricIdentifier(name), counter);
    }
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
    // keep the last gauge: the job may be gone by the time the bench reads it
  }

  /** Restarts of the job whose name contains {@code jobName}, summed over its registrations. */
  static long restarts(String jobName) {
    long total = 0;
    for (Map.Entry<String, Gauge<?>> e : RESTARTS.entrySet()) {
      if (e.getKey().contains(jobName)) {
        Object v = e.getValue().getValue();
        if (v instanceof Number n) {
          total = Math.max(total, n.longValue());
        }
      }
    }
    return total;
  }

  /**
   * A maintenance counter of the job whose name contains {@code jobName}: the highest count among its
   * registrations (the coordinator registers it once per job attempt).
   */
  static long maintenanceCounter(String jobName, String counter) {
    long total = 0;
    for (Map.Entry<String, org.apache.flink.metrics.Counter> e : MAINTENANCE.entrySet()) {
      if (e.getKey().contains(jobName) && e.getKey().endsWith("." + counter)) {
        total = Math.max(total, e.getValue().getCount());
      }
    }
    return total;
  }

  /** Identifiers of the maintenance counters registered so far (for the report's diagnostics). */
  static java.util.List<String> maintenanceCounterIds() {
    return java.util.List.copyOf(MAINTENANCE.keySet());
  }

  /** Factory named in the Flink configuration. */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(java.util.Properties properties) {
      return new RestartCounter();
    }
  }
}
