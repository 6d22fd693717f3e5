package dev.shardberg.coordinator;

import dev.shardberg.coordinator.CheckpointCommitter.Outcome;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.UpdateProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits one pending checkpoint of {@link CheckpointCommitter} holding the guard's lock, tried
 * again as {@link CommitRetries} allows: every decision (fenced, already committed, nothing to
 * place, renumber, refuse) is taken on the metadata the commit is built on, and the commit (one
 * transaction: the checkpoint's snapshot and the pipeline's progress record) swaps from exactly
 * that metadata or not at all. The rules and invariants are in {@link CheckpointCommitter}'s
 * javadoc.
 */
final class LockedCommit {
  /** The committer's logger: a bench and tests read the commit lines under that name. */
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointCommitter.class);

  private final Table table;
  private final CommitGuard guard;
  private final CoordinatorOptions options;
  private final String shardColumn;
  private final Consumer<Schema> schemaCheck;
  private final String runId;
  private final String flinkJobId;
  private final CheckpointCommitter.Metrics metrics;
  private final InsertOnlyLedger insertOnly;
  private final PendingCheckpoints pending;

  /** Shards the run writes beyond its plan ({@link CheckpointCommitter#capturedShards}). */
  private java.util.function.Supplier<java.util.SortedSet<Integer>> captured =
      java.util.TreeSet::new;

  /** What every commit of one run is made with: {@link CheckpointCommitter}'s parameters. */
  record Context(
      Table table,
      CommitGuard guard,
      CoordinatorOptions options,
      String shardColumn,
      Consumer<Schema> schemaCheck,
      String runId,
      String flinkJobId,
      CheckpointCommitter.Metrics metrics) {}

  LockedCommit(Context context, InsertOnlyLedger insertOnly, PendingCheckpoints pending) {
    this.table = context.table();
    this.guard = context.guard();
    this.options = context.options();
    this.shardColumn = context.shardColumn();
    this.schemaCheck = context.schemaCheck();
    this.runId = context.runId();
    this.flinkJobId = context.flinkJobId();
    this.metrics = context.metrics();
    this.insertOnly = insertOnly;
    this.pending = pending;
  }

  void capturedShards(java.util.function.Supplier<java.util.SortedSet<Integer>> captured) {
    this.captured = captured;
  }

  /**
   * The shards this pipeline writes: its plan's and those it captured while running; null when the
   * plan is not known.
   */
  private java.util.SortedSet<Integer> shards() {
    if (options.shards() == null) {
      return null;
    }
    java.util.SortedSet<Integer> shards = new java.util.TreeSet<>(options.shards());
    shards.addAll(captured.get());
    return shards;
  }

  /**
   * Commits under the guard's lock, tried again as {@link CommitRetries} allows.
   *
   * @param continuousEmptyCheckpoints the empty checkpoints before this one (a heartbeat's log
   *     line)
   */
  Outcome commitWithRetries(
      PendingCheckpoint checkpoint, boolean heartbeat, int continuousEmptyCheckpoints)
      throws Exception {
    try {
      return CommitRetries.run(
          table,
          options,
          checkpoint.checkpointId(),
          metrics,
          () -> {
            long askedForLock = System.nanoTime();
            return guard.runExclusive(
                options.lockTimeout(),
                () -> {
                  metrics.lockGranted((System.nanoTime() - askedForLock) / 1_000_000);
                  return commitUnderLock(checkpoint, heartbeat, continuousEmptyCheckpoints);
                });
          });
    } catch (CommitDeferredException e) {
      metrics.lockTimeout();
      LOG.warn(
          "Cannot commit checkpoint {} of pipeline {} to table {} now: {}. It stays pending and"
              + " is retried at the next completed checkpoint.",
          checkpoint.checkpointId(),
          options.pipelineId(),
          options.tableName(),
          e.getMessage());
      return Outcome.LEFT_PENDING;
    } catch (CommitFencedException e) {
      // Non-recoverable by its annotation: Flink fails the job instead of restarting a zombie
      // that would take a newer epoch and fence the instance that rightly took over.
      LOG.error(
          "Stopping pipeline {} for good: {} Nothing was committed for checkpoint {}.",
          options.pipelineId(),
          e.getMessage(),
          checkpoint.checkpointId());
      throw e;
    }
  }

  /**
   * "Commit one checkpoint", holding the guard's lock: every decision is taken on the metadata the
   * commit is built on, and the commit swaps from exactly that metadata or not at all.
   */
  private Outcome commitUnderLock(
      PendingCheckpoint checkpoint, boolean heartbeat, int continuousEmptyCheckpoints)
      throws IOException {
    long start = System.nanoTime();
    TableOperations ops = ((HasTableOperations) table).operations();
    TableMetadata base = ops.refresh();
    Optional<PipelineProgress> progress = PipelineProgress.read(table, options.pipelineId());
    // Fencing first, on the metadata the commit swaps from (the guard checked ZooKeeper's epoch
    // when it took the lock): a newer epoch in the record means this instance was superseded, even
    // if the newer one already committed this very entry for it.
    long epoch = guard.epoch();
    if (progress.isPresent()) {
      CommitRefusals.checkRecordNotNewerEpoch(options, checkpoint, progress.get(), epoch);
    }
    if (progress.isPresent()) {
      Outcome decided = decideAgainstTheRecord(checkpoint, progress.get(), epoch, heartbeat);
      if (decided != null) {
        return decided;
      }
    }
    schemaCheck.accept(table.schema());
    PipelineShards.checkCommit(base.properties(), options, captured.get(), checkpoint);
    SortedMap<Integer, Long> insertOnlyScans = insertOnly.resolve(checkpoint.insertOnlyScans());
    if (!insertOnlyScans.isEmpty()) {
      Optional<InsertOnlyCheck.Finding> finding =
          InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), insertOnlyScans);
      if (finding.isPresent()) {
        throw CommitRefusals.insertOnlyRefused(options, checkpoint, insertOnlyScans, finding.get());
      }
    }
    SortedMap<Integer, Long> moved = new TreeMap<>();
    InsertOnlyCheck.Finding firstMove = null;
    if (!checkpoint.ownerChecks().isEmpty()) {
      Optional<InsertOnlyCheck.Finding> finding =
          InsertOnlyCheck.foreignChange(
              base, table.io(), shardColumn, options.pipelineId(), checkpoint.ownerChecks());
      if (finding.isPresent()) {
        firstMove = finding.get();
        for (Map.Entry<Integer, Long> check : checkpoint.ownerChecks().entrySet()) {
          Optional<InsertOnlyCheck.Finding> shard =
              InsertOnlyCheck.foreignChange(
                  base,
                  table.io(),
                  shardColumn,
                  options.pipelineId(),
                  new TreeMap<>(Map.of(check.getKey(), check.getValue())));
          if (shard.isPresent()) {
            // a change found, or the history since the check expired (nothing can be told): by
            // key either way, from the deletes the table had at the check (refused if that
            // snapshot expired too)
            moved.put(check.getKey(), check.getValue());
          }
        }
      }
    }

    TempManifests.Files files = TempManifests.read(table, checkpoint);
    if (!moved.isEmpty()) {
      // Another committer changed shards after their owners checked them: the checkpoint's deletes
      // by position are carried over by key to where the rows are now.
      try {
        CheckpointRebase.Result rebased = CheckpointRebase.rebase(table, shardColumn, files, moved);
        files = rebased.files();
        LOG.info(
            "Checkpoint {} of pipeline {} to table {}: {}; carried over by key: {}",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            firstMove,
            rebased.summary());
      } catch (CheckpointRebase.Impossible | RuntimeException e) {
        PipelineConflictException refused =
            new PipelineConflictException(
                CommitRefusals.ownerKnowledgeStale(options, checkpoint, progress, firstMove)
                        .getMessage()
                    + " Its deletes could not be carried over by key: "
                    + e.getMessage());
        refused.initCause(e);
        throw refused;
      }
    }
    Transaction transaction =
        Transactions.newTransaction(
            table.name(),
            PinnedBaseOperations.forCheckpoint(
                ops,
                base,
                table.io(),
                options.pipelineId(),
                shardColumn,
                insertOnlyScans,
                checkpoint.ownerChecks().keySet()));
    SnapshotUpdate<?> update =
        CheckpointSnapshot.update(
            options,
            runId,
            flinkJobId,
            transaction,
            checkpoint,
            files,
            heartbeat,
            epoch,
            base.currentSnapshot() == null ? null : base.currentSnapshot().snapshotId());
    update.commit();
    PipelineProgress committed =
        PipelineProgress.next(
            progress.filter(p -> !p.legacy()),
            checkpoint.checkpointId(),
            checkpoint.flinkCheckpointId(),
            checkpoint.stagedBy() != null ? checkpoint.stagedBy() : runId,
            runId,
            flinkJobId,
            epoch,
            pending.restoredFrom());
    UpdateProperties properties =
        transaction
            .updateProperties()
            .set(PipelineProgress.propertyKey(options.pipelineId()), committed.encode());
    long snapshotId = transaction.table().currentSnapshot().snapshotId();
    insertOnly.publishHistoryNeeded(
        properties, base, pending.values(), checkpoint, insertOnlyScans, snapshotId);
    if (options.shards() != null) {
      String shards = PipelineShards.encode(shards());
      if (!shards.equals(base.properties().get(PipelineShards.propertyKey(options.pipelineId())))) {
        properties.set(PipelineShards.propertyKey(options.pipelineId()), shards);
      }
    }
    properties.commit();
    transaction.commitTransaction();
    if (!insertOnlyScans.isEmpty()) {
      pending.advanceVerifiedPoints(
          insertOnly, insertOnlyScans, snapshotId); // checked up to the base, own commit on it
    }
    CheckpointSnapshot.logCommitted(
        options,
        metrics,
        continuousEmptyCheckpoints,
        checkpoint,
        files,
        heartbeat,
        (System.nanoTime() - start) / 1_000_000,
        snapshotId);
    return Outcome.COMMITTED;
  }

  /**
   * The decision against the pipeline's progress record when it is at or past this entry: null to
   * commit, else what to do instead. A refusal throws.
   */
  private Outcome decideAgainstTheRecord(
      PendingCheckpoint checkpoint, PipelineProgress progress, long epoch, boolean heartbeat) {
    if (isCommitted(progress, checkpoint)) {
      LOG.info(
          "Checkpoint {} of pipeline {} (run {}, Flink checkpoint {}) is already in table {}"
              + " (progress record: {}); not committing it again",
          checkpoint.checkpointId(),
          options.pipelineId(),
          checkpoint.stagedBy(),
          checkpoint.flinkCheckpointId(),
          options.tableName(),
          progress);
      metrics.alreadyCommitted(progress.checkpointId());
      return Outcome.ALREADY_COMMITTED;
    }
    if (progress.checkpointId() < checkpoint.checkpointId()) {
      return null;
    }
    // Not committed, and the table is past it: who is past it decides.
    if (checkpoint.isEmpty() && !heartbeat) {
      return Outcome.SKIPPED_EMPTY; // nothing of it to place
    }
    if (checkpoint.stagedBy() != null && !checkpoint.stagedBy().equals(runId)) {
      throw CommitRefusals.supersededRun(options, checkpoint, progress);
    }
    if (epoch >= 0 && progress.epoch() < epoch) {
      // Fencing is on and this instance is the pipeline's newest: the record is an older
      // instance's progress, made before it was fenced. Number this run's own checkpoints past
      // it (never another run's: its entries are committed or superseded, decided above).
      pending.renumberPast(progress.checkpointId());
      return Outcome.RENUMBERED;
    }
    throw CommitRefusals.otherJob(options, runId, flinkJobId, checkpoint, progress);
  }

  /**
   * True when the table's progress shows this entry committed: the record is at or past its id (ids
   * are committed in increasing order) and its run's committed mark is at or past the entry's Flink
   * checkpoint ({@link PipelineProgress#covers}). The first condition keeps a restored run's
   * ancestry mark, written with its first commit, from covering restored entries not committed yet.
   * Without runs on either side (a table or state from before the record), the first alone decides.
   */
  static boolean isCommitted(PipelineProgress progress, PendingCheckpoint checkpoint) {
    if (progress.checkpointId() < checkpoint.checkpointId()) {
      return false;
    }
    if (progress.legacy() || checkpoint.stagedBy() == null) {
      return true;
    }
    return progress.covers(checkpoint.stagedBy(), checkpoint.flinkCheckpointId());
  }
}
