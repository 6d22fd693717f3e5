package dev.shardberg.tests.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.iceberg.metrics.TimerResult;

/**
 * Iceberg's own commit metrics, collected in-process. Installed as the bench catalog's {@code
 * metrics-reporter-impl}: every successful commit through that catalog (our coordinator's and the
 * stock {@code IcebergFilesCommitter}'s alike, both run in this JVM's MiniCluster) reports its
 * total duration and its number of attempts. Iceberg retries a commit only on {@code
 * CommitFailedException} (a stale base: another committer moved the table first), so {@code
 * attempts - 1} is the number of those conflicts the commit survived. A commit that runs out of
 * retries reports nothing here; it fails its job, which the bench counts as a restart.
 */
public final class CommitReports implements MetricsReporter {
  private static final ConcurrentLinkedQueue<Sample> SAMPLES = new ConcurrentLinkedQueue<>();

  /** One successful commit: when it was reported, its duration and attempts, and the table. */
  public record Sample(
      long reportedAtMillis, String table, long durationMillis, long attempts, String operation) {}

  public CommitReports() {}

  @Override
  public void report(MetricsReport report) {
    if (report instanceof CommitReport commit) {
      TimerResult duration = commit.commitMetrics().totalDuration();
      CounterResult attempts = commit.commitMetrics().attempts();
      SAMPLES.add(
          new Sample(
              System.currentTimeMillis(),
              commit.tableName(),
              duration == null ? -1 : duration.totalDuration().toMillis(),
              attempts == null ? 1 : attempts.value(),
              commit.operation()));
    }
  }

  /** Everything reported since the last call, oldest first. */
  static List<Sample> drain() {
    List<Sample> result = new ArrayList<>();
    Sample s;
    while ((s = SAMPLES.poll()) != null) {
      result.add(s);
    }
    return result;
  }
}
