package dev.shardberg.coordinator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
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
 * Commits the pending checkpoints of one run of one pipeline to one table, exactly once for the
 * table's whole life, with no Flink in sight: the coordinator operator stages entries here at its
 * snapshots and asks for commits at checkpoint completions; tests drive it directly on a real
 * table.
 *
 * <pre>
 *  stage(entry): insert-only rows checked from the last verified point → pending (by checkpoint id)
 *                          │ commitUpTo(c): each entry ≤ c in order, under guard.runExclusive:
 *                          │   refresh → read the progress record from that base
 *                          │   → newer epoch?                 CommitFencedException (job fails)
 *                          │   → record's id ≥ this id and its run's mark ≥ this entry's Flink
 *                          │     checkpoint?                    skip (ALREADY_COMMITTED)
 *                          │   → record past it, entry empty?   skip (nothing to place)
 *                          │   → record past it, entry of an earlier run (restored)?
 *                          │                                  superseded state: PipelineConflictException
 *                          │   → record past it, own entry, older epoch?  renumber own entries past it
 *                          │   → record past it, own entry?   two jobs: PipelineConflictException
 *                          │   → one transaction: RowDelta (no history validation) + progress record
 *                          │   → swap only from that base, or from a newer one where the progress
 *                          │     record and schema are unchanged (a foreign commit); else start over
 *                          ▼
 *                      committed (table property shardberg.progress.&lt;pipeline&gt; + snapshot summary)
 * </pre>
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Checkpoints are never merged: an equality delete does not apply to data files of its own
 *       sequence number, so merging two checkpoints would resurrect rows deleted by the later one.
 *   <li>What the pipeline committed is read from its {@link PipelineProgress} record only, from the
 *       very metadata the commit is built on; the record is written in the same Iceberg transaction
 *       as the data, so it is never ahead of or behind the data, and it never expires.
 *   <li>Pipeline checkpoint ids strictly increase, so "already committed" needs "the record's id ≥
 *       ours", and the entry's run known committed at or past its Flink checkpoint: the record
 *       keeps, per run, the highest Flink checkpoint of that run's entries committed (runs are
 *       drawn by the coordinator at each start, never the Flink job id, which two deployments can
 *       share). So any earlier state of any run is recognised, whatever committed since. Otherwise,
 *       at ≥ ours: a restored entry of another run is a superseded branch and an own entry means
 *       two jobs share the pipeline id; the committer refuses instead of skipping (which would lose
 *       data) or committing (which would duplicate or put older changes over newer) — unless
 *       fencing shows this instance is the newest, then it numbers its own entries past.
 *   <li>A commit lands only on metadata where its checks hold ({@link PinnedBaseOperations}): the
 *       base they ran on, or a later one whose progress record and schema are the same (a foreign
 *       commit such as maintenance; Iceberg's retry re-applies onto it). Never onto a table where
 *       another instance of the pipeline committed since the checks: the catalog's compare-and-swap
 *       is the final fence, also for an instance whose ZooKeeper lock expired mid-commit.
 *   <li>No history validation: position deletes only name data files of the same checkpoint (the
 *       writer deletes by position only keys it wrote since its last barrier), and equality deletes
 *       need no validation, so expiry and compaction between commits cannot fail a commit.
 *   <li>The pipeline checkpoint id is the Flink checkpoint id plus an offset ({@link #offset()}).
 *       It is 0 unless the run starts without state (or from an old savepoint) on a table where the
 *       pipeline already committed higher ids; then it shifts new ids past them ({@link
 *       #numberPastTheTable}), so nothing new is mistaken for already committed.
 *   <li>Insert-only rows are committed only if no other committer added files to their shards since
 *       the writers' scan ({@link InsertOnlyCheck}), checked when staged and again at the commit,
 *       each check starting where the last one held ({@link VerifiedPoints}).
 *   <li>A checkpoint that cannot be committed now (lock timeout, guard disconnected) stays pending,
 *       with every later one, and is tried again at the next {@link #commitUpTo}.
 * </ul>
 *
 * <p>Not thread-safe: one thread stages and commits. {@link #pendingManifests()} alone may be read
 * from another thread (maintenance's orphan removal).
 */
final class CheckpointCommitter {
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointCommitter.class);

  /** What {@link #commitOne} did with one pending checkpoint. */
  enum Outcome {
    COMMITTED,
    /** An empty checkpoint with no heartbeat due: nothing written, done like a committed one. */
    SKIPPED_EMPTY,
    ALREADY_COMMITTED,
    LEFT_PENDING,
    /** Pending ids were shifted past an older instance's commits; commit again from the start. */
    RENUMBERED
  }

  /** What the committer reports; the operator's Flink metrics implement it. */
  interface Metrics {
    Metrics NONE = new Metrics() {};

    default void committed(
        long checkpointId, long durationMs, long dataFiles, long deleteFiles, long records) {}

    default void heartbeat(long checkpointId, long durationMs) {}

    default void alreadyCommitted(long checkpointId) {}

    default void lockGranted(long waitMs) {}

    default void retry() {}

    default void lockTimeout() {}

    default void pending(int count) {}
  }

  private final Table table;
  private final CommitGuard guard;
  private final CoordinatorOptions options;
  private final String shardColumn;
  private final Consumer<Schema> schemaCheck;
  private final String runId;
  private final String flinkJobId;
  private final Metrics metrics;

  private NavigableMap<Long, PendingCheckpoint> pending = new TreeMap<>();
  private long checkpointOffset;

  /**
   * Runs this run was restored from, each with the Flink checkpoint restored (the lineage in
   * state).
   */
  private final LinkedHashMap<String, Long> restoredFrom = new LinkedHashMap<>();

  private final InsertOnlyLedger insertOnly;
  private int continuousEmptyCheckpoints;
  private volatile List<byte[]> pendingManifests = List.of();

  /**
   * @param shardColumn the table's shard column (insert-only checks read its partition values)
   * @param schemaCheck throws when the writers' rows no longer fit the table's current schema
   * @param runId this run ({@link PipelineProgress#newRunId()}), written with every commit
   * @param flinkJobId written into every snapshot's summary, for people reading the table
   */
  CheckpointCommitter(
      Table table,
      CommitGuard guard,
      CoordinatorOptions options,
      String shardColumn,
      Consumer<Schema> schemaCheck,
      String runId,
      String flinkJobId,
      Metrics metrics) {
    this.table = table;
    this.guard = guard;
    this.options = options;
    this.shardColumn = shardColumn;
    this.schemaCheck = schemaCheck;
    this.runId = runId;
    this.flinkJobId = flinkJobId;
    this.metrics = metrics;
    this.insertOnly = new InsertOnlyLedger(table, options, shardColumn);
  }

  // ---- state ----------------------------------------------------------------------------------

  /** Takes restored state: the offset, the runs it descends from, its pending entries. */
  void restore(long offset, Map<String, Long> lineage, List<PendingCheckpoint> entries) {
    checkpointOffset = Math.max(checkpointOffset, offset);
    lineage.forEach((run, c) -> restoredFrom.merge(run, c, Math::max));
    entries.forEach(entry -> pending.put(entry.checkpointId(), entry));
    publishPendingManifests();
  }

  /** The pipeline checkpoint id of Flink checkpoint {@code flinkCheckpointId} is it plus this. */
  long offset() {
    return checkpointOffset;
  }

  /**
   * Numbers this run's checkpoints after {@code lastFlinkCheckpoint} past what the table holds of
   * the pipeline (only numbering: which ids are committed is decided again at every commit).
   */
  void numberPastTheTable(long lastFlinkCheckpoint) {
    table.refresh();
    long maxCommitted =
        PipelineProgress.read(table, options.pipelineId())
            .map(PipelineProgress::checkpointId)
            .orElse(-1L);
    long needed = maxCommitted - lastFlinkCheckpoint;
    if (needed > checkpointOffset) {
      LOG.info(
          "Table {} already holds checkpoint {} of pipeline {}, past this job's Flink checkpoint {};"
              + " numbering this job's commits from {}",
          options.tableName(),
          maxCommitted,
          options.pipelineId(),
          lastFlinkCheckpoint,
          maxCommitted + 1);
      checkpointOffset = needed;
    }
  }

  /** The entries staged and not committed yet, in checkpoint order. */
  List<PendingCheckpoint> pending() {
    return List.copyOf(pending.values());
  }

  /** Whether an entry at or below {@code checkpointId} still waits. */
  boolean pendingUpTo(long checkpointId) {
    return !pending.headMap(checkpointId, true).isEmpty();
  }

  /** The ancestry to keep in state at Flink checkpoint c: the restored runs plus this run at c. */
  LinkedHashMap<String, Long> lineageAt(long flinkCheckpointId) {
    LinkedHashMap<String, Long> lineage = new LinkedHashMap<>(restoredFrom);
    lineage.remove(runId);
    lineage.put(runId, flinkCheckpointId);
    while (lineage.size() > PipelineProgress.MAX_RUNS) {
      lineage.remove(lineage.keySet().iterator().next());
    }
    return lineage;
  }

  /**
   * The pending entries' temporary manifests, for maintenance's orphan removal (any thread):
   * published after each staging and after each commit, never before the commit landed.
   */
  List<byte[]> pendingManifests() {
    return pendingManifests;
  }

  /** The snapshots whose history insert-only checks still walk ({@code -1}: the whole history). */
  Set<Long> insertOnlyScansInUse() {
    return insertOnly.inUse(pending.values());
  }

  // ---- staging --------------------------------------------------------------------------------

  /**
   * Adds a checkpoint written by {@link TempManifests#write} to the pending ones. Fails (nothing
   * added; the caller deletes its manifests) when its insert-only rows meet another committer's
   * write since the writers' scan: the job then restores the previous checkpoint, where the writers
   * are in a restored run and write every row as an upsert.
   */
  PendingCheckpoint stage(PendingCheckpoint written) {
    if (pending.containsKey(written.checkpointId())) {
      throw new IllegalStateException(
          String.format(
              "Cannot stage checkpoint %d of pipeline %s twice: writer results arrived after"
                  + " the coordinator's snapshot. Disable unaligned checkpoints for this job.",
              written.checkpointId(), options.pipelineId()));
    }
    PendingCheckpoint staged = insertOnly.resolve(written);
    insertOnly
        .checkBeforeStaging(staged)
        .ifPresent(upTo -> advanceVerifiedPoints(staged.insertOnlyScans(), upTo));
    pending.put(staged.checkpointId(), staged);
    insertOnly.staged(staged);
    publishPendingManifests();
    return staged;
  }

  /**
   * The insert-only check of {@code checked} held up to snapshot {@code upTo}: later checks of
   * these shards start there, in memory and in the pending checkpoints (and so in state).
   */
  private void advanceVerifiedPoints(SortedMap<Integer, Long> checked, long upTo) {
    insertOnly.advance(checked, upTo);
    pending.replaceAll((id, entry) -> insertOnly.resolve(entry));
  }

  private void publishPendingManifests() {
    List<byte[]> manifests = new ArrayList<>();
    for (PendingCheckpoint checkpoint : pending.values()) {
      manifests.addAll(checkpoint.dataManifests());
      manifests.addAll(checkpoint.deleteManifests());
    }
    pendingManifests = List.copyOf(manifests);
  }

  // ---- committing -----------------------------------------------------------------------------

  /**
   * Commits every pending entry up to {@code checkpointId} in order; stops at the first that cannot
   * be committed now (it and every later one stay pending). Late, duplicate and out-of-order calls
   * find nothing new at or below their id.
   */
  void commitUpTo(long checkpointId) throws Exception {
    long limit = checkpointId;
    boolean again = true;
    while (again) {
      again = false;
      for (PendingCheckpoint checkpoint : new ArrayList<>(pending.headMap(limit, true).values())) {
        Outcome outcome = commitOne(checkpoint);
        if (outcome == Outcome.RENUMBERED) {
          long shift = pending.firstKey() - checkpoint.checkpointId();
          limit = limit == Long.MAX_VALUE ? limit : limit + shift;
          again = true;
          break;
        }
        if (outcome == Outcome.LEFT_PENDING) {
          break; // later checkpoints wait too: commits happen in checkpoint order
        }
        pending.remove(checkpoint.checkpointId());
        publishPendingManifests();
        deleteTemporaryManifests(checkpoint);
      }
    }
    metrics.pending(pending.size());
  }

  private void deleteTemporaryManifests(PendingCheckpoint checkpoint) {
    int deleted = TempManifests.delete(table, checkpoint);
    int staged = checkpoint.dataManifests().size() + checkpoint.deleteManifests().size();
    if (deleted < staged) {
      LOG.warn(
          "Could not delete {} of {} temporary manifests of checkpoint {} in table {}; they are"
              + " orphan files now, removable by Iceberg's orphan-file cleanup",
          staged - deleted,
          staged,
          checkpoint.checkpointId(),
          options.tableName());
    }
  }

  /** One pending entry: skipped when empty with no heartbeat due, else committed with retries. */
  Outcome commitOne(PendingCheckpoint checkpoint) throws Exception {
    boolean heartbeat = checkpoint.isEmpty();
    if (heartbeat && continuousEmptyCheckpoints + 1 < options.maxContinuousEmptyCommits()) {
      continuousEmptyCheckpoints++;
      return Outcome.SKIPPED_EMPTY; // nothing to write, no heartbeat due: no snapshot
    }
    if (!guard.canCommit()) {
      LOG.warn(
          "Cannot commit checkpoints {} of pipeline {} to table {} now: the commit guard is not"
              + " connected. They stay pending and are retried at the next completed checkpoint;"
              + " check the ZooKeeper connection if this repeats.",
          pending.tailMap(checkpoint.checkpointId(), true).keySet(),
          options.pipelineId(),
          options.tableName());
      return Outcome.LEFT_PENDING;
    }
    if (heartbeat) {
      continuousEmptyCheckpoints++; // counted in the heartbeat's log line
    }
    Outcome outcome = commitWithRetries(checkpoint, heartbeat);
    if (outcome == Outcome.LEFT_PENDING || outcome == Outcome.RENUMBERED) {
      if (heartbeat) {
        continuousEmptyCheckpoints--;
      }
    } else {
      continuousEmptyCheckpoints = 0;
    }
    return outcome;
  }

  /** Commits under the guard's lock, tried again as {@link CommitRetries} allows. */
  private Outcome commitWithRetries(PendingCheckpoint checkpoint, boolean heartbeat)
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
                  return commitUnderLock(checkpoint, heartbeat);
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
  private Outcome commitUnderLock(PendingCheckpoint checkpoint, boolean heartbeat)
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
    PipelineShards.check(base.properties(), options);
    SortedMap<Integer, Long> insertOnlyScans = insertOnly.resolve(checkpoint.insertOnlyScans());
    if (!insertOnlyScans.isEmpty()) {
      Optional<InsertOnlyCheck.Finding> finding =
          InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), insertOnlyScans);
      if (finding.isPresent()) {
        throw CommitRefusals.insertOnlyRefused(options, checkpoint, insertOnlyScans, finding.get());
      }
    }

    TempManifests.Files files = TempManifests.read(table, checkpoint);
    Transaction transaction =
        Transactions.newTransaction(
            table.name(),
            PinnedBaseOperations.forCheckpoint(
                ops, base, table.io(), options.pipelineId(), shardColumn, insertOnlyScans));
    SnapshotUpdate<?> update =
        CheckpointSnapshot.update(
            options, runId, flinkJobId, transaction, checkpoint, files, heartbeat, epoch);
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
            restoredFrom);
    UpdateProperties properties =
        transaction
            .updateProperties()
            .set(PipelineProgress.propertyKey(options.pipelineId()), committed.encode());
    long snapshotId = transaction.table().currentSnapshot().snapshotId();
    insertOnly.publishHistoryNeeded(
        properties, base, pending.values(), checkpoint, insertOnlyScans, snapshotId);
    if (options.shards() != null) {
      String shards = PipelineShards.encode(options.shards());
      if (!shards.equals(base.properties().get(PipelineShards.propertyKey(options.pipelineId())))) {
        properties.set(PipelineShards.propertyKey(options.pipelineId()), shards);
      }
    }
    properties.commit();
    transaction.commitTransaction();
    if (!insertOnlyScans.isEmpty()) {
      advanceVerifiedPoints(
          insertOnlyScans, snapshotId); // checked up to the base, own commit on it
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
      renumberPast(progress.checkpointId());
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

  /**
   * Shifts every pending id (and the offset for later ones) past {@code committed}: this instance
   * holds the newest epoch (ZooKeeper said so under the lock) and the table holds an older
   * instance's commits up to {@code committed}, made while this one started.
   */
  private void renumberPast(long committed) {
    long shift = committed - pending.firstKey() + 1;
    NavigableMap<Long, PendingCheckpoint> shifted = new TreeMap<>();
    for (PendingCheckpoint entry : pending.values()) {
      shifted.put(
          entry.checkpointId() + shift, entry.withCheckpointId(entry.checkpointId() + shift));
    }
    LOG.info(
        "Table {} holds checkpoint {} of pipeline {}, committed by an older instance (older epoch)"
            + " while this one started; numbering this instance's pending checkpoints {} from {}",
        options.tableName(),
        committed,
        options.pipelineId(),
        pending.keySet(),
        pending.firstKey() + shift);
    pending = shifted;
    checkpointOffset += shift;
  }
}
