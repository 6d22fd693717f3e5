package dev.shardberg.tests.bench;

import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.coordinator.zk.ZooKeeperTableLock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The concurrent maintenance committer of {@code consolidated+zk}: every {@link #PERIOD_MS} it
 * takes the table's ZooKeeper lock (the same lock the coordinator holds around its commits) and
 * rewrites the table's manifests, a real maintenance commit that moves the table's metadata
 * pointer. Without the lock such a commit races the coordinator's; with it, neither should ever see
 * a stale base.
 */
final class Maintenance implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);
  static final long PERIOD_MS = 3_000;
  static final String ACTION =
      "rewrite manifests under the ZooKeeper table lock every " + PERIOD_MS / 1000 + " s";

  private final ZooKeeperOptions options;
  private final String tableName;
  private final Catalog catalog;
  private final Progress progress;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "bench-maintenance");
            t.setDaemon(true);
            return t;
          });
  private final AtomicLong commits = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private volatile ZooKeeperTableLock lock;
  private volatile boolean closed;

  Maintenance(ZooKeeperOptions options, String tableName, Catalog catalog, Progress progress) {
    this.options = options;
    this.tableName = tableName;
    this.catalog = catalog;
    this.progress = progress;
  }

  void start() throws InterruptedException {
    lock = ZooKeeperTableLock.open(options, tableName);
    timer.scheduleWithFixedDelay(this::runOnce, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
    progress.line("zk", "maintenance committer started: %s", ACTION);
  }

  private void runOnce() {
    if (closed) {
      return;
    }
    try {
      lock.runExclusive(
          options.lockTimeout(),
          () -> {
            Table table = catalog.loadTable(ModeRunner.TABLE);
            if (table.currentSnapshot() == null) {
              return null;
            }
            lock.checkStillHeld();
            table.rewriteManifests().rewriteIf(manifest -> true).commit();
            commits.incrementAndGet();
            return null;
          });
    } catch (Exception e) {
      failures.incrementAndGet();
      LOG.warn("Maintenance commit on {} failed: {}", tableName, e.toString());
    }
  }

  /**
   * Its figures; retries come from Iceberg's reports of its commits (operation {@code replace}).
   */
  ModeResult.MaintenanceFigures figures(java.util.List<CommitReports.Sample> reports) {
    long retries =
        reports.stream()
            .filter(r -> "replace".equals(r.operation()))
            .mapToLong(r -> Math.max(0, r.attempts() - 1))
            .sum();
    return new ModeResult.MaintenanceFigures(commits.get(), retries, failures.get(), ACTION);
  }

  @Override
  public void close() {
    closed = true;
    // let a commit in flight finish: interrupting it mid-write fails it for no reason of its own
    timer.shutdown();
    try {
      timer.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ZooKeeperTableLock l = lock;
    lock = null;
    if (l != null) {
      l.close();
    }
  }
}
