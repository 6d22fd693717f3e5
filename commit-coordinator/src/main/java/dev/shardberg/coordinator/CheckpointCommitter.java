package dev.shardberg.coordinator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.function.Consumer;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
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
 * <p>The pending entries and their numbering are kept in {@link PendingCheckpoints}; one entry's
 * commit under the lock, with its decision against the progress record, is {@link LockedCommit}.
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
  private final Metrics metrics;
  private final PendingCheckpoints pending;
  private final InsertOnlyLedger insertOnly;
  private final LockedCommit lockedCommit;
  private int continuousEmptyCheckpoints;

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
    this.metrics = metrics;
    this.pending = new PendingCheckpoints(options, runId);
    this.insertOnly = new InsertOnlyLedger(table, options, shardColumn);
    this.lockedCommit =
        new LockedCommit(
            new LockedCommit.Context(
                table, guard, options, shardColumn, schemaCheck, runId, flinkJobId, metrics),
            insertOnly,
            pending);
  }

  /**
   * The shards this run writes beyond its plan (captured while the job runs), recorded with the
   * plan's in the table and checked against other pipelines' at every commit ({@link
   * PipelineShards}).
   */
  void capturedShards(java.util.function.Supplier<java.util.SortedSet<Integer>> captured) {
    lockedCommit.capturedShards(captured);
  }

  // ---- state ----------------------------------------------------------------------------------

  /** Takes restored state: the offset, the runs it descends from, its pending entries. */
  void restore(long offset, Map<String, Long> lineage, List<PendingCheckpoint> entries) {
    pending.restore(offset, lineage, entries);
  }

  /** The pipeline checkpoint id of Flink checkpoint {@code flinkCheckpointId} is it plus this. */
  long offset() {
    return pending.offset();
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
    pending.numberPast(maxCommitted, lastFlinkCheckpoint);
  }

  /** The entries staged and not committed yet, in checkpoint order. */
  List<PendingCheckpoint> pending() {
    return List.copyOf(pending.values());
  }

  /** Whether an entry at or below {@code checkpointId} still waits. */
  boolean pendingUpTo(long checkpointId) {
    return pending.anyUpTo(checkpointId);
  }

  /** The ancestry to keep in state at Flink checkpoint c: the restored runs plus this run at c. */
  LinkedHashMap<String, Long> lineageAt(long flinkCheckpointId) {
    return pending.lineageAt(flinkCheckpointId);
  }

  /**
   * The pending entries' temporary manifests, for maintenance's orphan removal (any thread):
   * published after each staging and after each commit, never before the commit landed.
   */
  List<byte[]> pendingManifests() {
    return pending.manifests();
  }

  /**
   * The snapshots whose history the commits' checks still walk ({@code -1}: the whole history): the
   * insert-only checks', and the partition owners' checks of the pending entries (their commit
   * walks from there; expired, it could only carry them over by key, or refuse them when the
   * check's own snapshot is gone). Snapshot expiry keeps them.
   */
  Set<Long> insertOnlyScansInUse() {
    Set<Long> inUse = new java.util.HashSet<>(insertOnly.inUse(pending.values()));
    for (PendingCheckpoint entry : pending.values()) {
      inUse.addAll(entry.ownerChecks().values());
    }
    return inUse;
  }

  // ---- staging --------------------------------------------------------------------------------

  /**
   * Adds a checkpoint written by {@link TempManifests#write} to the pending ones. Fails (nothing
   * added; the caller deletes its manifests) when its insert-only rows meet another committer's
   * write since the writers' scan: the job then restores the previous checkpoint, where the writers
   * are in a restored run and write every row as an upsert.
   */
  PendingCheckpoint stage(PendingCheckpoint written) {
    if (pending.contains(written.checkpointId())) {
      throw new IllegalStateException(
          String.format(
              "Cannot stage checkpoint %d of pipeline %s twice: writer results arrived after"
                  + " the coordinator's snapshot. Disable unaligned checkpoints for this job.",
              written.checkpointId(), options.pipelineId()));
    }
    PendingCheckpoint staged = insertOnly.resolve(written);
    insertOnly
        .checkBeforeStaging(staged)
        .ifPresent(
            upTo -> pending.advanceVerifiedPoints(insertOnly, staged.insertOnlyScans(), upTo));
    for (Map.Entry<SortedMap<Integer, Long>, Long> idle : insertOnly.checkIdle(staged)) {
      pending.advanceVerifiedPoints(insertOnly, idle.getKey(), idle.getValue());
    }
    pending.add(staged);
    insertOnly.staged(staged);
    return staged;
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
      for (PendingCheckpoint checkpoint : pending.upTo(limit)) {
        Outcome outcome = commitOne(checkpoint);
        if (outcome == Outcome.RENUMBERED) {
          long shift = pending.firstId() - checkpoint.checkpointId();
          limit = limit == Long.MAX_VALUE ? limit : limit + shift;
          again = true;
          break;
        }
        if (outcome == Outcome.LEFT_PENDING) {
          break; // later checkpoints wait too: commits happen in checkpoint order
        }
        pending.remove(checkpoint);
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
          pending.idsFrom(checkpoint.checkpointId()),
          options.pipelineId(),
          options.tableName());
      return Outcome.LEFT_PENDING;
    }
    if (heartbeat) {
      continuousEmptyCheckpoints++; // counted in the heartbeat's log line
    }
    Outcome outcome =
        lockedCommit.commitWithRetries(checkpoint, heartbeat, continuousEmptyCheckpoints);
    if (outcome == Outcome.LEFT_PENDING || outcome == Outcome.RENUMBERED) {
      if (heartbeat) {
        continuousEmptyCheckpoints--;
      }
    } else {
      continuousEmptyCheckpoints = 0;
    }
    return outcome;
  }
}
