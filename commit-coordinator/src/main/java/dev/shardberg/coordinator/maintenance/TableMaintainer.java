package dev.shardberg.coordinator.maintenance;

import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.flink.metrics.MetricGroup;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Table maintenance inside the job, owned by the commit coordinator: its commits are serialised
 * with ingest by construction, its heavy work never runs on the committer's thread.
 *
 * <pre>
 *  committer thread (CommitCoordinator.notifyCheckpointComplete, after the pending checkpoints
 *  committed; every commit below under guard.runExclusive, i.e. the ZooKeeper table lock in HA mode)
 *    afterCommits ──► compaction done? ── commit RewriteFiles (validate from the planned snapshot S,
 *         │                               new files at S's sequence number); inputs changed → drop
 *         ├──────► cycle due? ── expire snapshots (metadata only) ──────────► delete expired files ─┐
 *         │                   ── rewrite manifests if too many                                       │
 *         │                   ── start compaction ─► plan on S by pressure, read with deletes, write ┤
 *         ├──────► otherwise ── start merge ─► each partition's files newer than its base → one ┤
 *         │                                    data file + one equality-delete file (RecentFilesMerge)│
 *         └──────► orphans due? ─────────────────────► list the location, delete unreachable, old ──┤
 *                                                                       maintenance thread (1) ◄──┘
 *  commitFinished: the same commit of a finished compaction or merge, called by the coordinator
 *  from a processing-time timer on its own thread soon after the rewrite is written
 * </pre>
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Only the committer's thread commits. A maintenance commit runs between two checkpoint
 *       commits, never beside one; in HA mode it also holds the table's ZooKeeper lock, like every
 *       other commit on the table. No maintenance commit can make an ingest commit fail, and the
 *       reverse: a commit is built on a fresh refresh under the lock.
 *   <li>A compaction commit whose inputs changed (Iceberg's validation from S: a data file it
 *       rewrote got a new position delete, or is gone; S expired) is dropped, its files deleted,
 *       and the partitions are planned again in a later cycle. It never fails the job. Equality
 *       deletes committed after S need no validation: the rewritten files keep S's sequence number,
 *       so those deletes still apply to them.
 *   <li>One compaction at a time; the next cycle starts only after the previous one's result was
 *       committed or dropped.
 *   <li>Files are deleted only on the maintenance thread, and only files no snapshot of the table
 *       reaches: those only expired snapshots held (computed from the metadata before and after the
 *       expiry) and orphans older than the minimum age that no pending checkpoint of the
 *       coordinator references and that are not among the writers' files it collected for its next
 *       staging.
 *   <li>Expiry keeps the history insert-only checks still walk (from the writers' scanned snapshots
 *       on) and skips entirely while a scan of an empty table is in use.
 *   <li>An interrupt is the job stopping, never a failure: Flink interrupts the task's thread when
 *       the job is cancelled or stopped, and a maintenance commit caught in it (in Iceberg's retry
 *       wait, or waiting for its worker pool) is neither counted in {@code compactionsFailed} nor
 *       logged as a failure; {@link #afterCommits} and {@link #commitFinished} throw {@link
 *       InterruptedException} with the thread's interrupt status kept, and the rewrite's files are
 *       kept (orphan removal collects them if the commit did not land).
 * </ul>
 *
 * <p>This class schedules; the commits themselves are {@code CompactionCommit}, {@code
 * SnapshotExpiry} and {@code ManifestRewrite}.
 */
public final class TableMaintainer implements AutoCloseable {
  /**
   * Prefix of the table property in which a pipeline publishes the oldest snapshot its insert-only
   * check still reads history from ({@code -1}: the table's whole history); the pipeline id
   * follows. Snapshot expiry keeps that snapshot and every later one, whichever pipeline expires:
   * with two pipelines on one table, the maintaining one would otherwise expire the history the
   * other's initial load is checked against.
   */
  public static final String INSERT_ONLY_FROM_PREFIX = "shardberg.insert-only-from.";

  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  /**
   * What the coordinator tells maintenance.
   *
   * @param collectedFiles the locations of the writers' files the coordinator received for a
   *     checkpoint it has not staged yet, read when orphan removal needs them (on the maintenance
   *     thread); a staged checkpoint's files leave it only after its manifests are published
   * @param pendingManifests the temporary manifests of the coordinator's pending checkpoints, read
   *     when orphan removal needs them (on the maintenance thread): the coordinator publishes a new
   *     list after each staging and after each commit, never before the commit landed
   * @param insertOnlyScans snapshots whose history the insert-only checks still walk ({@code -1}: a
   *     scan of the empty table, the whole history), read on the committer's thread
   */
  public record CoordinatorView(
      Supplier<Set<String>> collectedFiles,
      Supplier<List<byte[]>> pendingManifests,
      Set<Long> insertOnlyScans) {

    /** A view of a coordinator with nothing collected and nothing pending (maintenance alone). */
    public static CoordinatorView idle() {
      return new CoordinatorView(Set::of, List::of, Set.of());
    }
  }

  private final TableLoader loader;
  private final String tableName;
  private final MaintenanceSettings settings;
  private final ExecutorService executor;
  private final LongSupplier clock;
  private final MaintenanceMetrics metrics;
  private final CompactionCommit compactionCommit;
  private final SnapshotExpiry expiry;
  private final ManifestRewrite manifestRewrite;

  /** The maintenance thread's own table instance (Table is not thread-safe). */
  private Table backgroundTable;

  private long nextCycleAt;
  private long nextOrphansAt;
  private Future<PartitionRewrite.Result> compaction;
  private long compactionStartedAt;

  /** A finished compaction whose commit could not take the lock yet. */
  private PartitionRewrite.Result readyToCommit;

  private Future<?> orphans;
  private int attempt;
  private boolean warnedNoListing;

  /**
   * Maintenance with a given executor (its "maintenance thread") and clock; {@link #start} is the
   * production wiring. The loader must be this instance's own (it is closed with it).
   */
  public TableMaintainer(
      TableLoader loader,
      String tableName,
      MaintenanceSettings settings,
      ExecutorService executor,
      LongSupplier clock,
      MetricGroup metricGroup) {
    this.loader = loader;
    this.tableName = tableName;
    this.settings = settings;
    this.executor = executor;
    this.clock = clock;
    this.metrics = new MaintenanceMetrics(metricGroup);
    this.compactionCommit =
        new CompactionCommit(tableName, executor, clock, metrics, this::backgroundTable);
    this.expiry = new SnapshotExpiry(tableName, settings, executor, metrics, this::backgroundTable);
    this.manifestRewrite = new ManifestRewrite(tableName, settings, metrics);
    long now = clock.getAsLong();
    this.nextCycleAt = now + settings.interval().toMillis();
    this.nextOrphansAt = now + settings.orphanInterval().toMillis();
  }

  /**
   * Maintenance for one table, with its own maintenance thread and its own table loader (a clone);
   * metrics under {@code metricGroup}.
   */
  public static TableMaintainer start(
      TableLoader loader, String tableName, MaintenanceSettings settings, MetricGroup metricGroup) {
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "shardberg-maintenance " + tableName);
              t.setDaemon(true);
              return t;
            });
    TableLoader own = loader.clone();
    LOG.info("Table maintenance of {} is on: {}", tableName, settings);
    return new TableMaintainer(
        own, tableName, settings, executor, System::currentTimeMillis, metricGroup);
  }

  /**
   * On the committer's thread, right after the coordinator committed its completed checkpoints (and
   * only when none is left pending): commits a finished compaction, and starts what is due. Throws
   * only what must stop the job: {@link CommitFencedException}, and {@link InterruptedException}
   * when the thread is interrupted (the job is being cancelled).
   */
  public void afterCommits(
      Table table, CommitGuard guard, Duration lockTimeout, CoordinatorView view) throws Exception {
    if (!guard.canCommit()) {
      return;
    }
    if (!commitFinished(table, guard, lockTimeout)) {
      return; // the lock was not free: try again after the next checkpoint
    }
    long now = clock.getAsLong();
    if (now >= nextCycleAt && compaction == null) {
      nextCycleAt = now + settings.interval().toMillis();
      if (settings.expireSnapshots()) {
        expiry.expire(table, guard, lockTimeout, view.insertOnlyScans(), now);
      }
      if (settings.maxManifests() > 0) {
        manifestRewrite.rewriteIfMany(table, guard, lockTimeout);
      }
      if (settings.compaction()) {
        compactionStartedAt = now;
        int thisAttempt = ++attempt;
        compaction = executor.submit(() -> planAndRewrite(thisAttempt));
      }
    } else if (compaction == null && settings.compaction() && settings.mergeMinFiles() > 0) {
      // Between cycles, after every checkpoint commit: merge the partitions' recent files.
      compactionStartedAt = now;
      int thisAttempt = ++attempt;
      compaction = executor.submit(() -> planAndMerge(thisAttempt));
    }
    if (settings.orphanFiles() && now >= nextOrphansAt && (orphans == null || orphans.isDone())) {
      nextOrphansAt = now + settings.orphanInterval().toMillis();
      long cutoff = now - settings.orphanMinAge().toMillis();
      orphans =
          executor.submit(
              () -> removeOrphans(cutoff, view.collectedFiles(), view.pendingManifests()));
    }
  }

  /**
   * On the committer's thread, between checkpoint commits: commits a finished compaction or merge,
   * if any. False when one is ready but the commit lock was not free (kept for the next call). The
   * coordinator calls it shortly after a rewrite finished, so a merge lands well before the next
   * checkpoint commit. Throws {@link InterruptedException} when the commit was interrupted (the job
   * is being cancelled); the result is then kept, as when the lock was not free.
   */
  public boolean commitFinished(Table table, CommitGuard guard, Duration lockTimeout)
      throws Exception {
    if (!guard.canCommit()) {
      return false;
    }
    if (compaction != null && compaction.isDone()) {
      readyToCommit = collect(compaction);
      compaction = null;
    }
    if (readyToCommit != null) {
      if (!compactionCommit.commit(table, guard, lockTimeout, readyToCommit, compactionStartedAt)) {
        return false;
      }
      readyToCommit = null;
    }
    return true;
  }

  /** True while a compaction or merge is being written or waits for its commit. */
  public boolean hasRewriteInFlight() {
    return compaction != null || readyToCommit != null;
  }

  // ---- compaction
  // --------------------------------------------------------------------------------

  private PartitionRewrite.Result planAndMerge(int thisAttempt) throws IOException {
    Table table = backgroundTable();
    Snapshot snapshot = table.currentSnapshot();
    if (snapshot == null) {
      return null;
    }
    return RecentFilesMerge.merge(
        table,
        snapshot.snapshotId(),
        settings.mergeMinFiles(),
        settings.maxBytesPerCycle(),
        settings.targetFileSizeBytes(),
        thisAttempt);
  }

  private PartitionRewrite.Result planAndRewrite(int thisAttempt) throws IOException {
    Table table = backgroundTable();
    Snapshot snapshot = table.currentSnapshot();
    if (snapshot == null) {
      return null;
    }
    TableHealth health = TableHealth.of(table, snapshot, settings.smallFileBytes());
    metrics.health(health);
    List<PartitionHealth> chosen =
        CompactionPlanner.of(table.spec().specId(), settings).choose(health.partitions());
    if (chosen.isEmpty()) {
      return null;
    }
    LOG.debug(
        "Compaction of {} planned on snapshot {}: {}", tableName, snapshot.snapshotId(), chosen);
    return PartitionRewrite.rewrite(
        table, snapshot.snapshotId(), chosen, settings.targetFileSizeBytes(), thisAttempt);
  }

  private PartitionRewrite.Result collect(Future<PartitionRewrite.Result> done) {
    try {
      return done.get();
    } catch (ExecutionException e) {
      metrics.compactionFailed();
      LOG.warn(
          "Compaction or merge of table {} failed on the maintenance thread and is dropped; the partitions"
              + " are planned again next cycle ({}): {}",
          tableName,
          MaintenanceOptions.INTERVAL.key(),
          e.getCause().toString(),
          e.getCause());
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  // ---- orphans
  // -------------------------------------------------------------------------------------

  private void removeOrphans(
      long cutoffMillis,
      Supplier<Set<String>> collectedFiles,
      Supplier<List<byte[]>> pendingManifests) {
    try {
      Table table = backgroundTable();
      int deleted =
          FileCleanup.deleteOrphans(table, cutoffMillis, collectedFiles, pendingManifests);
      if (deleted < 0) {
        if (!warnedNoListing) {
          warnedNoListing = true;
          LOG.warn(
              "Orphan-file removal of table {} is skipped: its FileIO {} cannot list files. Use a"
                  + " FileIO that can (HadoopFileIO, S3FileIO) or set {}: false",
              tableName,
              table.io().getClass().getName(),
              MaintenanceOptions.ORPHAN_FILES_ENABLED.key());
        }
        return;
      }
      metrics.orphansDeleted(deleted);
      LOG.info("Removed {} orphan files of table {}", deleted, tableName);
    } catch (RuntimeException e) {
      if (Interruptions.isInterruption(e)) {
        LOG.info("Orphan-file removal of table {} stopped with maintenance", tableName);
        return;
      }
      LOG.warn("Orphan-file removal of table {} failed; tried again next interval", tableName, e);
    }
  }

  private Table backgroundTable() {
    if (backgroundTable == null) {
      if (!loader.isOpen()) {
        loader.open();
      }
      backgroundTable = loader.loadTable();
    } else {
      backgroundTable.refresh();
    }
    return backgroundTable;
  }

  /**
   * Warns when the table keeps every old metadata file: maintenance deletes unreachable files, but
   * Iceberg only drops metadata files from its log with this property on.
   */
  public static void checkMetadataCleanup(Table table, String tableName) {
    if (!"true"
        .equalsIgnoreCase(
            table.properties().get(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED))) {
      LOG.warn(
          "Table {} keeps all its old metadata files: set its property {}=true (and {} to bound"
              + " how many are kept)",
          tableName,
          TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED,
          TableProperties.METADATA_PREVIOUS_VERSIONS_MAX);
    }
  }

  /** Stops the maintenance thread; work in flight is abandoned (its files are orphans at worst). */
  @Override
  public void close() throws IOException {
    executor.shutdownNow();
    try {
      executor.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    loader.close();
  }
}
