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

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if ("numRestarts".equals(name) && metric instanceof Gauge<?> gauge) {
      RESTARTS.put(group.getMetricIdentifier(name), gauge);
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

  /** Factory named in the Flink configuration. */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(java.util.Properties properties) {
      return new RestartCounter();
    }
  }
}
