package dev.shardberg.coordinator.zk;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;

/**
 * Counts, through Iceberg's public metrics API ({@code metrics-reporter-impl} catalog property),
 * successful commits and the extra attempts Iceberg needed for them: every attempt after the first
 * is a commit that failed on a stale base and was retried inside Iceberg. Static, because Iceberg
 * instantiates the reporter per catalog, in the test's JVM.
 */
public final class CommitAttemptsReporter implements MetricsReporter {
  static final AtomicLong COMMITS = new AtomicLong();
  static final AtomicLong RETRIED_ATTEMPTS = new AtomicLong();

  public CommitAttemptsReporter() {}

  static void reset() {
    COMMITS.set(0);
    RETRIED_ATTEMPTS.set(0);
  }

  @Override
  public void report(MetricsReport report) {
    if (report instanceof CommitReport commit) {
      COMMITS.incrementAndGet();
      CounterResult attempts = commit.commitMetrics().attempts();
      if (attempts != null && attempts.value() > 1) {
        RETRIED_ATTEMPTS.addAndGet(attempts.value() - 1);
      }
    }
  }
}
