package dev.shardberg.coordinator.zk;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.apache.flink.metrics.HistogramStatistics;

/**
 * Benchmark, not a test: two pipelines and a maintenance loop commit to one Iceberg table for a
 * fixed time, first through the ZooKeeper table lock, then without it. Prints commits per minute,
 * lock waits (p50/p99 per committer) and stale-base conflicts.
 *
 * <pre>
 * mvn -B -q -pl commit-coordinator -am test-compile
 * mvn -B -q -pl commit-coordinator dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -cp commit-coordinator/target/test-classes:commit-coordinator/target/classes:$(cat /tmp/cp.txt) \
 *   dev.shardberg.coordinator.zk.LockedCommitBenchmark 60
 * </pre>
 *
 * The argument is the duration of each run in seconds (default 60); a ZooKeeper connect string may
 * follow (default: an in-process TestingServer).
 */
public final class LockedCommitBenchmark {
  private LockedCommitBenchmark() {}

  public static void main(String[] args) throws Exception {
    Duration duration = Duration.ofSeconds(args.length > 0 ? Long.parseLong(args[0]) : 60);
    TestingServer server =
        args.length > 1 ? null : new TestingServer(true); // default ticks: 60 s sessions
    String connect = args.length > 1 ? args[1] : server.getConnectString();
    try {
      SharedTableWorkload.Result locked = runOnce(true, connect, duration);
      SharedTableWorkload.Result unlocked = runOnce(false, connect, duration);
      System.out.println();
      System.out.printf(
          "%-12s %12s %14s %10s %28s %10s%n",
          "run",
          "commits/min",
          "pipeline/maint",
          "conflicts",
          "lock wait p50 / p99 (ms)",
          "rows ok");
      print("with lock", locked);
      print("without lock", unlocked);
    } finally {
      if (server != null) {
        server.close();
      }
    }
  }

  private static SharedTableWorkload.Result runOnce(boolean lock, String connect, Duration duration)
      throws Exception {
    Path warehouse = Files.createTempDirectory("shardberg-bench-");
    ZooKeeperOptions options =
        lock
            ? ZooKeeperOptions.of(connect).withRootPath("/shardberg-bench-" + System.nanoTime())
            : null;
    SharedTableWorkload workload = new SharedTableWorkload(warehouse.toString(), options, 2);
    workload.createTable();
    SharedTableWorkload.Result result = workload.run(Integer.MAX_VALUE, duration);
    System.out.printf("%s: %s%n", lock ? "with lock" : "without lock", result);
    return result;
  }

  private static void print(String name, SharedTableWorkload.Result r) {
    StringBuilder waits = new StringBuilder();
    for (HistogramStatistics w : r.lockWaitsMs()) {
      if (waits.length() > 0) {
        waits.append(", ");
      }
      waits
          .append(Math.round(w.getQuantile(0.5)))
          .append('/')
          .append(Math.round(w.getQuantile(0.99)));
    }
    System.out.printf(
        "%-12s %12.0f %14s %10d %28s %10s%n",
        name,
        r.commitsPerMinute(),
        r.pipelineCommits() + "/" + r.maintenanceCommits(),
        r.conflicts(),
        waits.length() == 0 ? "-" : waits.toString(),
        r.actualIds().equals(r.expectedIds()) && r.rowsRead() == r.expectedIds().size());
  }
}
