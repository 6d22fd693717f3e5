package dev.shardberg.coordinator.maintenance;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.flink.metrics.MetricGroup;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
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
        expireSnapshots(table, guard, lockTimeout, view.insertOnlyScans(), now);
      }
      if (settings.maxManifests() > 0) {
        rewriteManifestsIfMany(table, guard, lockTimeout);
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
      if (!commitCompaction(table, guard, lockTimeout, readyToCommit)) {
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

  /** False when the lock could not be taken now (the result is kept for the next call). */
  private boolean commitCompaction(
      Table table, CommitGuard guard, Duration lockTimeout, PartitionRewrite.Result result)
      throws Exception {
    if (result == null || result.isEmpty()) {
      return true;
    }
    long start = System.nanoTime();
    try {
      guard.runExclusive(
          lockTimeout,
          () -> {
            table.refresh();
            RewriteFiles rewrite =
                table
                    .newRewrite()
                    .validateFromSnapshot(result.snapshotId())
                    .dataSequenceNumber(result.sequenceNumber());
            result.rewritten().forEach(rewrite::deleteFile);
            result.droppedDeletes().forEach(rewrite::deleteFile);
            result.added().forEach(rewrite::addFile);
            // Merged equality deletes at S's sequence number: they apply to the base files as the
            // deletes they replace did, not to the merged data files (same sequence number).
            result.addedDeletes().forEach(d -> rewrite.addFile(d, result.sequenceNumber()));
            rewrite.set(TableHealth.MAINTENANCE, result.kind());
            if (!result.isMerge()) {
              StringJoiner shards = new StringJoiner(",");
              result.shards().forEach(s -> shards.add(Integer.toString(s)));
              rewrite.set(TableHealth.COMPACTED_SHARDS, shards.toString());
            }
            rewrite.commit();
            return null;
          });
    } catch (CommitDeferredException e) {
      LOG.info("Compaction of table {} waits for the commit lock: {}", tableName, e.getMessage());
      return false;
    } catch (CommitFencedException e) {
      throw e;
    } catch (RuntimeException e) {
      if (isInterruption(e)) {
        // Whether or not it landed, its files stay: orphan removal collects them if it did not.
        throw stopped((result.isMerge() ? "Merge" : "Compaction") + " commit", e);
      }
      return commitFailed(table, result, e);
    }
    long now = clock.getAsLong();
    long ms = (System.nanoTime() - start) / 1_000_000;
    metrics.compacted(result, now, now - compactionStartedAt);
    String message =
        (result.isMerge() ? "Merged the recent files of table {}" : "Compacted table {}")
            + ": {} partitions of shards {}, {} data files and {} delete files ({} bytes) into {}"
            + " data files and {} delete files, planned on snapshot {}, commit {} ms, {} ms in all";
    Object[] args = {
      tableName,
      result.partitions().size(),
      result.shards(),
      result.rewritten().size(),
      result.droppedDeletes().size(),
      result.bytesRead(),
      result.added().size(),
      result.addedDeletes().size(),
      result.snapshotId(),
      ms,
      now - compactionStartedAt
    };
    if (result.isMerge()) {
      LOG.debug(message, args); // after every checkpoint: the counters tell
    } else {
      LOG.info(message, args);
    }
    return true;
  }

  /**
   * A compaction or merge commit that failed (not interrupted): dropped, or kept when it may have
   * landed.
   */
  private boolean commitFailed(Table table, PartitionRewrite.Result result, RuntimeException e) {
    if (e instanceof ValidationException || e instanceof CommitFailedException) {
      if (landed(table, result)) {
        // A catalog may report a conflict for a swap that landed; Iceberg's retry then fails
        // validation against its own commit. It is in the table: done, keep its files.
        LOG.info(
            "Compaction of table {} was reported failed but is in the table: {}",
            tableName,
            e.getMessage());
        metrics.compacted(result, clock.getAsLong(), clock.getAsLong() - compactionStartedAt);
        return true;
      }
      metrics.compactionDropped();
      LOG.info(
          "Compaction of {} partitions of table {} planned on snapshot {} is dropped, its inputs"
              + " changed under it; planned again in a later cycle: {}",
          result.partitions().size(),
          tableName,
          result.snapshotId(),
          e.getMessage());
      executor.submit(() -> PartitionRewrite.deleteAdded(backgroundTable(), result));
      return true;
    }
    metrics.compactionFailed();
    if (e instanceof CommitStateUnknownException) {
      // It may have landed: keep its files; orphan-file removal collects them if it did not.
      LOG.warn(
          "Compaction commit of table {} has an unknown state; its files are kept", tableName, e);
    } else {
      LOG.warn(
          "Compaction commit of table {} failed; dropped, planned again in a later cycle",
          tableName,
          e);
    }
    return true;
  }

  /**
   * True when {@code failure} is the current thread being interrupted rather than a failure of the
   * work: Flink interrupts a task's thread when its job is cancelled or stopped. Iceberg restores
   * the interrupt status before it wraps the {@link InterruptedException} of its retry wait or of
   * its worker pool's wait ({@code Tasks}) in a {@link RuntimeException}; NIO channels keep it with
   * {@link ClosedByInterruptException}.
   */
  static boolean isInterruption(Throwable failure) {
    if (Thread.currentThread().isInterrupted()) {
      return true;
    }
    int depth = 0;
    for (Throwable t = failure; t != null && depth < 32; t = t.getCause(), depth++) {
      if (t instanceof InterruptedException || t instanceof ClosedByInterruptException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The interruption of {@code what}, as the {@link InterruptedException} the caller propagates
   * (the job is stopping; nothing failed); the thread's interrupt status stays set for the code
   * after.
   */
  private InterruptedException stopped(String what, Exception interrupted) {
    LOG.info("{} of table {} was interrupted: the job is stopping; not a failure", what, tableName);
    Thread.currentThread().interrupt();
    InterruptedException e =
        new InterruptedException(
            what + " of table " + tableName + " was interrupted (the job is stopping)");
    e.initCause(interrupted);
    return e;
  }

  /** True when a compaction snapshot after the planned one added this result's first file. */
  private static boolean landed(Table table, PartitionRewrite.Result result) {
    if (result.added().isEmpty()) {
      return false;
    }
    String first = result.added().get(0).location();
    table.refresh();
    for (Snapshot s = table.currentSnapshot();
        s != null && s.snapshotId() != result.snapshotId();
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (result.kind().equals(s.summary().get(TableHealth.MAINTENANCE))) {
        for (DataFile file : s.addedDataFiles(table.io())) {
          if (file.location().equals(first)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  // ---- expiry, manifests
  // ---------------------------------------------------------------------------

  private long parseSnapshotId(String key, String value) {
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      LOG.warn(
          "Table {} has property {} = '{}', not a snapshot id; ignored by snapshot expiry",
          tableName,
          key,
          value);
      return Long.MAX_VALUE;
    }
  }

  private void expireSnapshots(
      Table table, CommitGuard guard, Duration lockTimeout, Set<Long> insertOnlyScans, long now)
      throws Exception {
    if (insertOnlyScans.contains(-1L)) {
      LOG.debug(
          "Snapshot expiry of {} skipped: insert-only rows of a scan of the empty table are pending",
          tableName);
      return;
    }
    TableMetadata[] beforeAfter = new TableMetadata[2];
    int expired;
    try {
      expired =
          guard.runExclusive(
              lockTimeout,
              () -> {
                TableOperations ops = ((HasTableOperations) table).operations();
                TableMetadata before = ops.refresh();
                long olderThan = now - settings.snapshotMaxAge().toMillis();
                Set<Long> needed = new java.util.HashSet<>(insertOnlyScans);
                before
                    .properties()
                    .forEach(
                        (key, value) -> {
                          if (key.startsWith(INSERT_ONLY_FROM_PREFIX)) {
                            needed.add(parseSnapshotId(key, value));
                          }
                        });
                if (needed.contains(-1L)) {
                  LOG.debug(
                      "Snapshot expiry of {} skipped: a pipeline's insert-only check reads the whole history",
                      tableName);
                  return 0;
                }
                for (Long scanned : needed) {
                  Snapshot s = before.snapshot(scanned);
                  if (s != null) {
                    olderThan = Math.min(olderThan, s.timestampMillis());
                  }
                }
                ExpireSnapshots expire =
                    table
                        .expireSnapshots()
                        .expireOlderThan(olderThan)
                        .retainLast(settings.retainLastSnapshots())
                        .cleanExpiredFiles(false);
                List<Snapshot> removed = expire.apply();
                if (removed.isEmpty()) {
                  return 0;
                }
                expire.commit();
                beforeAfter[0] = before;
                beforeAfter[1] = ops.refresh();
                return removed.size();
              });
    } catch (CommitDeferredException e) {
      return;
    } catch (CommitFencedException e) {
      throw e;
    } catch (RuntimeException e) {
      if (isInterruption(e)) {
        throw stopped("Snapshot expiry", e);
      }
      LOG.warn("Snapshot expiry of table {} failed; tried again next cycle", tableName, e);
      return;
    }
    if (expired > 0) {
      metrics.expired(expired);
      TableMetadata before = beforeAfter[0];
      TableMetadata after = beforeAfter[1];
      LOG.info("Expired {} snapshots of table {}", expired, tableName);
      executor.submit(
          () -> {
            try {
              int deleted = FileCleanup.deleteExpired(backgroundTable().io(), before, after);
              metrics.expiredFilesDeleted(deleted);
              LOG.info("Deleted {} files of the expired snapshots of table {}", deleted, tableName);
            } catch (RuntimeException e) {
              if (isInterruption(e)) {
                LOG.info(
                    "Deleting the files of expired snapshots of table {} stopped with maintenance",
                    tableName);
                return;
              }
              LOG.warn(
                  "Could not delete the files of expired snapshots of table {}; orphan-file"
                      + " removal finds them",
                  tableName,
                  e);
            }
          });
    }
  }

  private void rewriteManifestsIfMany(Table table, CommitGuard guard, Duration lockTimeout)
      throws Exception {
    Snapshot current = table.currentSnapshot();
    if (current == null || current.dataManifests(table.io()).size() <= settings.maxManifests()) {
      return;
    }
    int shardFieldId = table.schema().columns().get(0).fieldId();
    try {
      guard.runExclusive(
          lockTimeout,
          () -> {
            table.refresh();
            table
                .rewriteManifests()
                .rewriteIf(m -> m.content() == ManifestContent.DATA)
                .clusterBy(file -> clusterKey(table, file, shardFieldId))
                .set(TableHealth.MAINTENANCE, "rewrite-manifests")
                .commit();
            return null;
          });
      metrics.manifestsRewritten();
      LOG.info("Rewrote the data manifests of table {} clustered by shard", tableName);
    } catch (CommitDeferredException e) {
      // next cycle
    } catch (CommitFencedException e) {
      throw e;
    } catch (RuntimeException e) {
      if (isInterruption(e)) {
        throw stopped("Manifest rewrite", e);
      }
      LOG.warn("Manifest rewrite of table {} failed; tried again next cycle", tableName, e);
    }
  }

  private static String clusterKey(Table table, DataFile file, int shardFieldId) {
    int position = TableHealth.shardPosition(table.specs().get(file.specId()), shardFieldId);
    Object shard = position < 0 ? null : file.partition().get(position, Integer.class);
    return file.specId() + "/" + shard;
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
      if (isInterruption(e)) {
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
