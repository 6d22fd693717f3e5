package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.TableMaintainer;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single commit coordinator (parallelism 1, max parallelism 1): one Iceberg snapshot per
 * checkpoint, in checkpoint order, exactly once for the table's whole life — across failures,
 * restores, snapshot expiry, compaction, orphan-file removal and a second job or a zombie instance
 * of the same pipeline.
 *
 * <pre>
 *  writer results ──► collecting (by Flink checkpoint id, memory only)
 *                          │ snapshotState(c): every result tagged ≤ c becomes temporary manifests,
 *                          │ stamped with this Flink job id (its lineage); a result for a
 *                          │ checkpoint already staged fails the job
 *                          ▼
 *                      pending (NavigableMap by pipeline checkpoint id; manifest bytes in state)
 *                          │ notifyCheckpointComplete(c): commit each entry ≤ c in order
 *                          │ ("commit one checkpoint", under guard.runExclusive):
 *                          │   refresh → read the progress record from that base
 *                          │   → newer epoch?                 CommitFencedException (job fails)
 *                          │   → own lineage already there?  skip (ALREADY_COMMITTED)
 *                          │   → older epoch at ≥ this id?    renumber pending past it, again
 *                          │   → other lineage at ≥ this id?  PipelineConflictException (job fails)
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
 *   <li>Pipeline checkpoint ids strictly increase, so "already committed" is "the record's id ≥
 *       ours", but only when the record is this entry's own lineage: staged by the same Flink job at
 *       the same or a later Flink checkpoint (a job commits its own entries in order), or committed
 *       by a job restored from this entry's job's state at or past it ({@code restored-from}).
 *       Anything else at ≥ ours means two jobs share the pipeline id; the coordinator stops the job
 *       instead of skipping (which would lose this job's data) or committing (which would
 *       duplicate) — unless fencing shows this instance is the newest, then it numbers past.
 *   <li>A commit lands only on metadata where its checks hold ({@link PinnedBaseOperations}): the
 *       base they ran on, or a later one whose progress record and schema are the same (a foreign
 *       commit such as maintenance; Iceberg's retry re-applies onto it). Never onto a table where
 *       another instance of the pipeline committed since the checks: the catalog's compare-and-swap
 *       is the final fence, also for an instance whose ZooKeeper lock expired mid-commit.
 *   <li>No history validation: position deletes only name data files of the same checkpoint (the
 *       writer deletes by position only keys it wrote since its last barrier), and equality deletes
 *       need no validation, so expiry and compaction between commits cannot fail a commit.
 *   <li>The pipeline checkpoint id is the Flink checkpoint id plus an offset kept in state. The offset
 *       is 0 unless the job starts without state (or from an old savepoint) on a table where the
 *       pipeline already committed higher ids; then it shifts new ids past them, so nothing new is
 *       mistaken for already committed.
 *   <li>The pipeline id is kept in state; a restore under another id is refused.
 *   <li>Insert-only rows are committed only if no other committer added files to their shards since
 *       the writers' scan ({@link InsertOnlyCheck}), checked when staged and again at the commit.
 *   <li>A checkpoint that cannot be committed now (lock timeout, guard disconnected) stays pending,
 *       with every later one, and is retried at the next checkpoint completion.
 * </ul>
 *
 * <p>Requires aligned checkpoints: every writer's result for checkpoint c must reach the coordinator
 * before its barrier c, which unaligned checkpoints do not guarantee.
 */
final class CommitCoordinator extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<WriterResult, Void>, BoundedOneInput {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(CommitCoordinator.class);

  /** Operator state names: never rename, restores match state by name. */
  static final String PENDING_STATE_NAME = "shardberg-coordinator-pending-checkpoints";

  /** How often a finished compaction or merge is looked for between checkpoint commits. */
  static final long MAINTENANCE_POLL_MILLIS = 100;

  static final String OFFSET_STATE_NAME = "shardberg-coordinator-checkpoint-offset";

  static final String LAST_SNAPSHOT_STATE_NAME = "shardberg-coordinator-last-snapshot-checkpoint";

  static final String PIPELINE_ID_STATE_NAME = "shardberg-coordinator-pipeline-id";

  static final String LINEAGE_STATE_NAME = "shardberg-coordinator-lineage";

  /** The shards this pipeline's state knows (see {@link ShardReread}), with {@link #KNOWN_SHARDS_TRACKED}. */
  static final String KNOWN_SHARDS_STATE_NAME = "shardberg-coordinator-known-shards";

  /** In {@link #KNOWN_SHARDS_STATE_NAME}: the list is kept (state from before it has no entry at all). */
  static final int KNOWN_SHARDS_TRACKED = Integer.MIN_VALUE;

  private enum Outcome {
    COMMITTED,
    /** An empty checkpoint with no heartbeat due: nothing written, done like a committed one. */
    SKIPPED_EMPTY,
    ALREADY_COMMITTED,
    LEFT_PENDING,
    /** Pending ids were shifted past an older instance's commits; commit again from the start. */
    RENUMBERED
  }

  private final TableLoader tableLoader;
  private final RowType rowType;
  private final CoordinatorOptions options;
  private final CommitGuardFactory guardFactory;

  private transient Table table;
  private transient CommitGuard guard;
  private transient String flinkJobId;
  private transient String manifestPrefix;
  private transient NavigableMap<Long, List<WriterResult>> collecting;
  private transient NavigableMap<Long, PendingCheckpoint> pending;
  private transient long checkpointOffset;
  private transient int continuousEmptyCheckpoints;
  private transient ListState<byte[]> pendingState;
  private transient ListState<Long> offsetState;
  private transient ListState<Long> lastSnapshotState;
  private transient ListState<String> pipelineIdState;
  private transient ListState<String> lineageState;
  private transient ListState<Integer> knownShardsState;
  /** The shards this pipeline's state knows: written before, or read since its last restore. */
  private transient java.util.SortedSet<Integer> knownShards;
  /** Shards to replace at the first staged checkpoint of this run (see {@link ShardReread}). */
  private transient java.util.SortedSet<Integer> rereadShards;
  /**
   * The Flink jobs whose state this coordinator descends from, each with the newest Flink
   * checkpoint of it restored (directly or through earlier restores), oldest first.
   */
  private transient LinkedHashMap<String, Long> restoredFrom;
  /** Highest Flink checkpoint whose results were staged (or restored); later results only. */
  private transient long lastStagedFlinkCheckpoint;
  private transient String shardColumn;
  private transient CoordinatorMetrics metrics;
  /** Null when maintenance is off. */
  private transient TableMaintainer maintainer;
  /** The newest completed checkpoint (our numbering) this instance was told of. */
  private transient long lastCompleted = Long.MIN_VALUE;
  /** A timer is registered to commit a finished compaction or merge. */
  private transient boolean maintenancePollScheduled;
  /** Insert-only scans of the newest staged checkpoint: the next ones likely carry them too. */
  private transient SortedMap<Integer, Long> latestInsertOnlyScans;
  /** Read by the maintenance thread; see {@link #publishPendingManifests()}. */
  private transient volatile List<byte[]> pendingManifests;

  CommitCoordinator(
      TableLoader tableLoader,
      RowType rowType,
      CoordinatorOptions options,
      CommitGuardFactory guardFactory) {
    this.tableLoader = tableLoader;
    this.rowType = rowType;
    this.options = options;
    this.guardFactory = guardFactory;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    this.flinkJobId = getRuntimeContext().getJobInfo().getJobId().toString();
    this.manifestPrefix =
        "shardberg-" + options.pipelineId().replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + flinkJobId;
    this.collecting = new TreeMap<>();
    this.pending = new TreeMap<>();
    this.pendingManifests = List.of();
    this.metrics = new CoordinatorMetrics(getRuntimeContext().getMetricGroup());
    if (!tableLoader.isOpen()) {
      tableLoader.open();
    }
    this.table = tableLoader.loadTable();
    this.shardColumn = WriterTableCheck.shardColumn(rowType);
    this.guard = guardFactory.open(options.pipelineId(), options.tableName());

    this.pendingState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(PENDING_STATE_NAME, BytePrimitiveArraySerializer.INSTANCE));
    this.offsetState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>(OFFSET_STATE_NAME, LongSerializer.INSTANCE));
    this.lastSnapshotState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(LAST_SNAPSHOT_STATE_NAME, LongSerializer.INSTANCE));
    this.pipelineIdState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(PIPELINE_ID_STATE_NAME, StringSerializer.INSTANCE));
    this.lineageState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>(LINEAGE_STATE_NAME, StringSerializer.INSTANCE));
    this.knownShardsState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>(KNOWN_SHARDS_STATE_NAME, org.apache.flink.api.common.typeutils.base.IntSerializer.INSTANCE));
    this.restoredFrom = new LinkedHashMap<>();
    initKnownShards(context.isRestored());

    long restoredFlinkCheckpoint = context.getRestoredCheckpointId().orElse(0L);
    if (context.isRestored()) {
      for (String restoredId : pipelineIdState.get()) {
        if (!restoredId.equals(options.pipelineId())) {
          throw new PipelineConflictException(
              String.format(
                  "Cannot restore the coordinator of pipeline %s for table %s: the restored state"
                      + " belongs to pipeline %s. Restoring it under another id would commit its"
                      + " checkpoints again. Set " + CoordinatorConfigOptions.PIPELINE_ID.key() + " back to %s, or start the new pipeline"
                      + " without this state.",
                  options.pipelineId(), options.tableName(), restoredId, restoredId));
        }
      }
      for (String lineage : lineageState.get()) {
        PipelineProgress.decodeLineage(lineage).forEach((job, c) -> restoredFrom.merge(job, c, Math::max));
      }
      for (Long offset : offsetState.get()) {
        checkpointOffset = Math.max(checkpointOffset, offset);
      }
      for (Long snapshotted : lastSnapshotState.get()) {
        restoredFlinkCheckpoint = Math.max(restoredFlinkCheckpoint, snapshotted);
      }
      for (byte[] bytes : pendingState.get()) {
        PendingCheckpoint restored =
            SimpleVersionedSerialization.readVersionAndDeSerialize(
                PendingCheckpointSerializer.INSTANCE, bytes);
        pending.put(restored.checkpointId(), restored);
      }
      publishPendingManifests();
      LOG.info(
          "Restored coordinator of pipeline {} for table {} from Flink checkpoint {}: {} pending"
              + " checkpoints {}",
          options.pipelineId(),
          options.tableName(),
          restoredFlinkCheckpoint,
          pending.size(),
          pending.keySet());
      // Every restored entry belongs to a completed checkpoint: commit what the table lacks.
      commitUpTo(Long.MAX_VALUE);
    }
    this.lastStagedFlinkCheckpoint = restoredFlinkCheckpoint;

    // Only numbering: which ids are committed is decided again under the lock at every commit.
    table.refresh();
    long maxCommitted =
        PipelineProgress.read(table, options.pipelineId())
            .map(PipelineProgress::checkpointId)
            .orElse(-1L);
    long neededOffset = maxCommitted - restoredFlinkCheckpoint;
    if (neededOffset > checkpointOffset) {
      LOG.info(
          "Table {} already holds checkpoint {} of pipeline {}, past this job's Flink checkpoint {};"
              + " numbering this job's commits from {}",
          options.tableName(),
          maxCommitted,
          options.pipelineId(),
          restoredFlinkCheckpoint,
          maxCommitted + 1);
      checkpointOffset = neededOffset;
    }
    metrics.pending(pending.size());
    this.latestInsertOnlyScans = new TreeMap<>();
    if (options.maintenance().enabled()) {
      TableMaintainer.checkMetadataCleanup(table, options.tableName());
      this.maintainer =
          TableMaintainer.start(
              tableLoader,
              options.tableName(),
              options.maintenance(),
              getRuntimeContext().getMetricGroup().addGroup("shardberg"));
    }
  }

  /**
   * Which shards the state knows, and which of this job's shards to replace ({@link ShardReread}):
   * those a restored state does not know. A first run knows every shard it writes (a start without
   * state on a table with data is checked before the job starts); state from before this bookkeeping
   * knows every shard too.
   */
  private void initKnownShards(boolean restored) throws Exception {
    this.knownShards = new java.util.TreeSet<>();
    this.rereadShards = new java.util.TreeSet<>();
    if (options.shards() == null) {
      return;
    }
    boolean tracked = false;
    if (restored) {
      for (Integer shard : knownShardsState.get()) {
        if (shard == KNOWN_SHARDS_TRACKED) {
          tracked = true;
        } else {
          knownShards.add(shard);
        }
      }
    }
    if (!restored || !tracked) {
      knownShards.addAll(options.shards());
      return;
    }
    java.util.SortedSet<Integer> left = new java.util.TreeSet<>(knownShards);
    left.removeAll(options.shards());
    if (!left.isEmpty()) {
      LOG.info(
          "Pipeline {} no longer writes shard(s) {} of table {} (excluded): their rows stay as they are; included again"
              + " later, each is read from a fresh snapshot and its rows replaced",
          options.pipelineId(), left, options.tableName());
    }
    knownShards.retainAll(options.shards());
    rereadShards.addAll(options.shards());
    rereadShards.removeAll(knownShards);
    java.util.SortedSet<Integer> undeclared = new java.util.TreeSet<>(rereadShards);
    if (options.rereadShards() != null) {
      undeclared.removeAll(options.rereadShards());
    }
    if (!undeclared.isEmpty()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot resume pipeline %s on table %s: shard(s) %s are new to the restored state (left out with"
                  + " tables.exclude-shards in the run it resumes from, or added to the config since), and this run"
                  + " would read them from the binlog alone: the table would keep their old rows and miss those never"
                  + " changed since. Resume again from the same checkpoint with tables.reread-shards: %s (they are"
                  + " then read from a fresh snapshot and their old rows replaced), or leave them in tables.exclude-shards",
              options.pipelineId(), options.tableName(), undeclared, undeclared));
    }
    if (!rereadShards.isEmpty()) {
      LOG.info(
          "Pipeline {} writes shard(s) {} of table {} again after leaving them out: the source reads them from a fresh"
              + " snapshot, and the checkpoint that holds the first rows of it deletes their older rows in the table",
          options.pipelineId(), rereadShards, options.tableName());
    }
  }

  @Override
  public void processElement(StreamRecord<WriterResult> element) {
    WriterResult result = element.getValue();
    if (result.checkpointId() <= lastStagedFlinkCheckpoint) {
      // Dropping it would lose its files; committing it in a later checkpoint would reorder changes.
      throw new IllegalStateException(
          String.format(
              "Cannot accept the files of writer %d for Flink checkpoint %d of pipeline %s (table"
                  + " %s): the coordinator already staged checkpoint %d, so they arrived after the"
                  + " barrier. Disable unaligned checkpoints for this job; the job restarts from"
                  + " its last checkpoint and rewrites them.",
              result.subtask(),
              result.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              lastStagedFlinkCheckpoint));
    }
    collecting.computeIfAbsent(result.checkpointId(), id -> new ArrayList<>()).add(result);
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    long start = System.nanoTime();
    stageCollectedUpTo(context.getCheckpointId());
    LOG.debug(
        "Staged the writer results of Flink checkpoint {} in {} ms",
        context.getCheckpointId(),
        (System.nanoTime() - start) / 1_000_000);
    List<byte[]> serialized = new ArrayList<>(pending.size());
    for (PendingCheckpoint checkpoint : pending.values()) {
      serialized.add(
          SimpleVersionedSerialization.writeVersionAndSerialize(
              PendingCheckpointSerializer.INSTANCE, checkpoint));
    }
    pendingState.update(serialized);
    offsetState.update(List.of(checkpointOffset));
    lastSnapshotState.update(List.of(context.getCheckpointId()));
    pipelineIdState.update(List.of(options.pipelineId()));
    lineageState.update(List.of(PipelineProgress.encodeLineage(lineageAt(context.getCheckpointId()))));
    if (options.shards() != null) {
      List<Integer> known = new ArrayList<>(knownShards);
      known.add(KNOWN_SHARDS_TRACKED);
      knownShardsState.update(known);
    }
    metrics.pending(pending.size());
  }

  /** Turns the collected results of every Flink checkpoint ≤ {@code flinkCheckpointId} into manifests. */
  private void stageCollectedUpTo(long flinkCheckpointId) throws IOException {
    NavigableMap<Long, List<WriterResult>> ready = collecting.headMap(flinkCheckpointId, true);
    for (Map.Entry<Long, List<WriterResult>> entry : ready.entrySet()) {
      long checkpointId = entry.getKey() + checkpointOffset;
      PendingCheckpoint previous = pending.get(checkpointId);
      if (previous != null) {
        throw new IllegalStateException(
            String.format(
                "Cannot stage checkpoint %d of pipeline %s twice: writer results arrived after"
                    + " the coordinator's snapshot. Disable unaligned checkpoints for this job.",
                checkpointId, options.pipelineId()));
      }
      List<WriterResult> results = entry.getValue();
      // a re-read shard's old rows go with the checkpoint that holds the first rows of its new snapshot
      java.util.SortedSet<Integer> replaced = new java.util.TreeSet<>();
      results.forEach(r -> replaced.addAll(r.snapshotShards()));
      replaced.retainAll(rereadShards);
      checkNoBinlogWithoutSnapshot(checkpointId, results, replaced);
      if (!replaced.isEmpty()) {
        results = new ArrayList<>(results);
        results.add(rereadTruncations(entry.getKey(), replaced));
      }
      PendingCheckpoint staged =
          TempManifests.write(
              table, manifestPrefix, checkpointId, entry.getKey(), flinkJobId, results);
      try {
        checkInsertOnlyRowsBeforeStaging(staged);
      } catch (RuntimeException e) {
        TempManifests.delete(table, staged);
        throw e;
      }
      pending.put(checkpointId, staged);
      knownShards.addAll(replaced); // replaced with this checkpoint: in its state from now on
      rereadShards.removeAll(replaced);
      latestInsertOnlyScans = staged.insertOnlyScans();
      publishPendingManifests();
    }
    ready.clear();
    lastStagedFlinkCheckpoint = Math.max(lastStagedFlinkCheckpoint, flinkCheckpointId);
  }

  /**
   * A shard this restored state does not know must come from a fresh snapshot (its first rows are
   * snapshot reads): changes of it read from the binlog first mean the source went on with it from the
   * binlog alone (resumed without {@code tables.reread-shards}), and the table would keep its old rows
   * and miss the ones never changed since. This checkpoint fails before anything of it is committed.
   */
  private void checkNoBinlogWithoutSnapshot(
      long checkpointId, List<WriterResult> results, java.util.SortedSet<Integer> snapshotted) {
    if (rereadShards.isEmpty()) {
      return;
    }
    java.util.SortedSet<Integer> unread = new java.util.TreeSet<>();
    results.forEach(r -> unread.addAll(r.shardCounts().keySet()));
    unread.retainAll(rereadShards);
    unread.removeAll(snapshotted);
    if (!unread.isEmpty()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot stage checkpoint %d of pipeline %s for table %s: shard(s) %s are new to this pipeline's state"
                  + " (left out with tables.exclude-shards in the run it resumed from, or added to the config), and"
                  + " their changes are read from the binlog without a fresh snapshot of them, so the table would keep"
                  + " their old rows and miss those never changed since. Resume from the checkpoint this run started"
                  + " from (not a newer one) with tables.reread-shards: %s",
              checkpointId, options.pipelineId(), options.tableName(), unread, unread));
    }
  }

  /** The deletes that replace {@code shards}' older rows, as one more writer result of this checkpoint. */
  private WriterResult rereadTruncations(long flinkCheckpointId, java.util.SortedSet<Integer> shards) throws IOException {
    org.apache.iceberg.io.WriteResult deletes = ShardReread.truncations(table, shards, shardColumn);
    Map<Integer, ShardCounts> counts = new java.util.HashMap<>();
    shards.forEach(shard -> counts.put(shard, new ShardCounts(0, 0)));
    LOG.info(
        "Replacing the rows of shard(s) {} in table {}: their fresh snapshot began; {} delete files by shard with"
            + " checkpoint {} remove every older row",
        shards, options.tableName(), deletes.deleteFiles().length, flinkCheckpointId + checkpointOffset);
    return new WriterResult(flinkCheckpointId, -1, deletes, counts);
  }

  /**
   * Fails this checkpoint (not the commit) when another committer wrote into a shard that got
   * insert-only rows since the writers' scan: the job then restores the previous checkpoint, where
   * the writers are in a restored run and write every row as an upsert.
   */
  private void checkInsertOnlyRowsBeforeStaging(PendingCheckpoint staged) {
    SortedMap<Integer, Long> scans = staged.insertOnlyScans();
    if (scans.isEmpty()) {
      return;
    }
    long checkpointId = staged.checkpointId();
    table.refresh();
    InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), scans)
        .ifPresent(
            reason -> {
              throw new IllegalStateException(
                  String.format(
                      "Cannot stage checkpoint %d of pipeline %s for table %s: its rows of shard(s)"
                          + " %s were written insert-only (initial load), but %s. Committing them"
                          + " could duplicate keys. This checkpoint fails; the job restarts from"
                          + " its previous checkpoint and writes these rows as upserts. Stop any"
                          + " other writer of these shards.",
                      checkpointId,
                      options.pipelineId(),
                      options.tableName(),
                      scans.keySet(),
                      reason));
            });
  }

  @Override
  public void notifyCheckpointComplete(long flinkCheckpointId) throws Exception {
    super.notifyCheckpointComplete(flinkCheckpointId);
    // Late, duplicate and out-of-order notices find nothing new at or below their id.
    commitUpTo(flinkCheckpointId + checkpointOffset);
    lastCompleted = Math.max(lastCompleted, flinkCheckpointId + checkpointOffset);
    if (maintainer != null && noCompletedCheckpointPending()) {
      // Between checkpoint commits, on this same thread (and under the same guard): maintenance
      // commits are serialised with ingest by construction. Skipped while a checkpoint is stuck.
      maintainer.afterCommits(table, guard, options.lockTimeout(), maintenanceView());
      pollMaintenanceSoon();
    }
  }

  private boolean noCompletedCheckpointPending() {
    return pending.headMap(lastCompleted, true).isEmpty();
  }

  /**
   * While a compaction or merge is being written, looks every {@link #MAINTENANCE_POLL_MILLIS} on
   * this operator's thread (a processing-time timer runs in the task's mailbox, never beside a
   * checkpoint commit) and commits it once written, so a merge lands soon after the checkpoint it
   * follows rather than at the next one.
   */
  private void pollMaintenanceSoon() {
    if (maintainer == null || maintenancePollScheduled || !maintainer.hasRewriteInFlight()) {
      return;
    }
    maintenancePollScheduled = true;
    long at = getProcessingTimeService().getCurrentProcessingTime() + MAINTENANCE_POLL_MILLIS;
    getProcessingTimeService()
        .registerTimer(
            at,
            time -> {
              maintenancePollScheduled = false;
              if (maintainer == null) {
                return;
              }
              if (noCompletedCheckpointPending()) {
                maintainer.commitFinished(table, guard, options.lockTimeout());
              }
              pollMaintenanceSoon();
            });
  }

  /** The pending checkpoints' temporary manifests (as published) and the insert-only scans in use. */
  private TableMaintainer.CoordinatorView maintenanceView() {
    Set<Long> scans = new HashSet<>(latestInsertOnlyScans.values());
    for (PendingCheckpoint checkpoint : pending.values()) {
      scans.addAll(checkpoint.insertOnlyScans().values());
    }
    return new TableMaintainer.CoordinatorView(() -> pendingManifests, scans);
  }

  /**
   * Publishes the pending checkpoints' temporary manifests to maintenance's orphan removal: after a
   * checkpoint is staged, and after one is committed (so a removed entry's files are in the table by
   * then).
   */
  private void publishPendingManifests() {
    List<byte[]> manifests = new ArrayList<>();
    for (PendingCheckpoint checkpoint : pending.values()) {
      manifests.addAll(checkpoint.dataManifests());
      manifests.addAll(checkpoint.deleteManifests());
    }
    pendingManifests = List.copyOf(manifests);
  }

  @Override
  public void endInput() throws Exception {
    if (!getRuntimeContext().isCheckpointingEnabled()) {
      // No checkpoint will come: commit what the writers flushed at end of input now.
      stageCollectedUpTo(Long.MAX_VALUE);
      commitUpTo(Long.MAX_VALUE);
    }
    // With checkpointing, the final checkpoint stages and commits the end-of-input results.
  }

  private void commitUpTo(long checkpointId) throws Exception {
    long limit = checkpointId;
    boolean again = true;
    while (again) {
      again = false;
      NavigableMap<Long, PendingCheckpoint> ready = pending.headMap(limit, true);
      for (PendingCheckpoint checkpoint : new ArrayList<>(ready.values())) {
        Outcome outcome = commitOrSkip(checkpoint);
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
    }
    metrics.pending(pending.size());
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
      shifted.put(entry.checkpointId() + shift, entry.withCheckpointId(entry.checkpointId() + shift));
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

  private Outcome commitOrSkip(PendingCheckpoint checkpoint) throws Exception {
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

  private Outcome commitWithRetries(PendingCheckpoint checkpoint, boolean heartbeat)
      throws Exception {
    long backoffMs = options.retryBackoff().toMillis();
    int rebases = 0;
    long rebaseWaitMs =
        PropertyUtil.propertyAsLong(
            table.properties(),
            TableProperties.COMMIT_MIN_RETRY_WAIT_MS,
            TableProperties.COMMIT_MIN_RETRY_WAIT_MS_DEFAULT);
    for (int attempt = 1; ; attempt++) {
      try {
        long askedForLock = System.nanoTime();
        return guard.runExclusive(
            options.lockTimeout(),
            () -> {
              metrics.lockGranted((System.nanoTime() - askedForLock) / 1_000_000);
              return commitUnderLock(checkpoint, heartbeat);
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
      } catch (PinnedBaseOperations.BaseChangedException e) {
        // The table moved between the checks and the swap, and an input of the checks moved with
        // it (another instance of this pipeline committed, the schema changed, or insert-only rows
        // need their history check again). Nothing landed; everything is checked again from a
        // fresh refresh, bounded by the table's commit.retry.* properties.
        rebases++;
        int maxRebases =
            PropertyUtil.propertyAsInt(
                table.properties(),
                TableProperties.COMMIT_NUM_RETRIES,
                TableProperties.COMMIT_NUM_RETRIES_DEFAULT);
        if (rebases > maxRebases) {
          throw new IllegalStateException(
              String.format(
                  "Cannot commit checkpoint %d of pipeline %s to table %s: the table changed"
                      + " under %d commit attempts in a row (%s). Another committer keeps"
                      + " changing it; serialise the committers with the ZooKeeper lock"
                      + " (" + CoordinatorConfigOptions.ZK_PREFIX + "*) or raise %s.",
                  checkpoint.checkpointId(),
                  options.pipelineId(),
                  options.tableName(),
                  rebases,
                  e.getMessage(),
                  TableProperties.COMMIT_NUM_RETRIES),
              e);
        }
        metrics.retry();
        LOG.info(
            "Table {} changed between the checks and the swap of checkpoint {} ({}); checking"
                + " again in {} ms",
            options.tableName(),
            checkpoint.checkpointId(),
            e.getMessage(),
            rebaseWaitMs);
        Thread.sleep(rebaseWaitMs);
        rebaseWaitMs =
            Math.min(
                rebaseWaitMs * 2,
                PropertyUtil.propertyAsLong(
                    table.properties(),
                    TableProperties.COMMIT_MAX_RETRY_WAIT_MS,
                    TableProperties.COMMIT_MAX_RETRY_WAIT_MS_DEFAULT));
        attempt--; // not a failed attempt
      } catch (CommitFailedException e) {
        // The catalog kept rejecting the swap on an unchanged base until Iceberg's own retries gave
        // up. Nothing landed; everything is checked again from a fresh refresh, so a commit that
        // landed while the catalog reported a failure is not repeated.
        if (attempt >= options.commitAttempts()) {
          throw e;
        }
        metrics.retry();
        LOG.warn(
            "Commit of checkpoint {} to table {} did not land (attempt {} of {}), checking again"
                + " from a fresh table in {} ms: {}",
            checkpoint.checkpointId(),
            options.tableName(),
            attempt,
            options.commitAttempts(),
            backoffMs,
            e.getMessage());
        Thread.sleep(backoffMs);
        backoffMs *= 2;
      }
      // CommitStateUnknownException propagates: the task fails and keeps its pending checkpoints
      // and manifests; the next attempt resolves the state from the table.
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
      checkRecordNotNewerEpoch(checkpoint, progress.get(), epoch);
    }
    if (progress.isPresent() && isOwnCommit(progress.get(), checkpoint)) {
      LOG.info(
          "Checkpoint {} of pipeline {} is already in table {} (progress record: {}); not"
              + " committing it again",
          checkpoint.checkpointId(),
          options.pipelineId(),
          options.tableName(),
          progress.get());
      metrics.alreadyCommitted(progress.get().checkpointId());
      return Outcome.ALREADY_COMMITTED;
    }
    if (progress.isPresent()
        && progress.get().checkpointId() >= checkpoint.checkpointId()
        && epoch >= 0
        && progress.get().epoch() < epoch) {
      // Fencing is on and this instance is the pipeline's newest: the record is an older
      // instance's progress, made before it was fenced. Number this instance's checkpoints past it.
      renumberPast(progress.get().checkpointId());
      return Outcome.RENUMBERED;
    }
    if (progress.isPresent()) {
      checkNoOtherLineage(checkpoint, progress.get());
    }
    WriterTableCheck.validateSchema(table.schema(), options.tableName(), rowType);
    if (!checkpoint.insertOnlyScans().isEmpty()) {
      InsertOnlyCheck.foreignWrite(
              table, shardColumn, options.pipelineId(), checkpoint.insertOnlyScans())
          .ifPresent(
              reason -> {
                throw new PipelineConflictException(
                    String.format(
                        "Cannot commit checkpoint %d of pipeline %s to table %s: its rows of"
                            + " shard(s) %s were written insert-only (initial load), but %s."
                            + " Committing would duplicate keys, and the restored state holds"
                            + " them too. Stop the other writer of these shards, then start the"
                            + " pipeline without state with insert-only initial load off.",
                        checkpoint.checkpointId(),
                        options.pipelineId(),
                        options.tableName(),
                        checkpoint.insertOnlyScans().keySet(),
                        reason));
              });
    }

    TempManifests.Files files = TempManifests.read(table, checkpoint);
    // One transaction: the checkpoint's snapshot and the pipeline's progress record.
    String progressKey = PipelineProgress.propertyKey(options.pipelineId());
    String checkedProgress = base.properties().get(progressKey);
    int checkedSchema = base.currentSchemaId();
    // On a moved base only the snapshots after the checked one need the insert-only check.
    SortedMap<Integer, Long> sinceChecked = new TreeMap<>();
    long checkedSnapshot =
        base.currentSnapshot() == null
            ? PendingCheckpoint.NO_SNAPSHOT
            : base.currentSnapshot().snapshotId();
    checkpoint.insertOnlyScans().keySet().forEach(shard -> sinceChecked.put(shard, checkedSnapshot));
    Transaction transaction =
        Transactions.newTransaction(
            table.name(),
            new PinnedBaseOperations(
                ops,
                base,
                moved ->
                    moved.currentSchemaId() == checkedSchema
                        && Objects.equals(
                            moved.properties().get(progressKey), checkedProgress)
                        && InsertOnlyCheck.foreignWrite(
                                moved, table.io(), shardColumn, options.pipelineId(), sinceChecked)
                            .isEmpty()));
    SnapshotUpdate<?> update;
    if (heartbeat) {
      update = transaction.newAppend();
      update.set(SnapshotSummaryKeys.HEARTBEAT, "true");
    } else {
      // No validateDataFilesExist / validateDeletedFiles: position deletes only name data files of
      // this same checkpoint, written by the same writer, so no concurrent operation can have
      // removed them before this snapshot; and a history walk fails once old snapshots expire.
      RowDelta delta = transaction.newRowDelta();
      files.dataFiles().forEach(delta::addRows);
      files.deleteFiles().forEach(delta::addDeletes);
      update = delta;
    }
    update.set(SnapshotSummaryKeys.PIPELINE_ID, options.pipelineId());
    update.set(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(checkpoint.checkpointId()));
    update.set(
        SnapshotSummaryKeys.FLINK_CHECKPOINT_ID, Long.toString(checkpoint.flinkCheckpointId()));
    update.set(SnapshotSummaryKeys.FLINK_JOB_ID, flinkJobId);
    if (epoch >= 0) {
      update.set(SnapshotSummaryKeys.EPOCH, Long.toString(epoch));
    }
    checkpoint
        .shardCounts()
        .forEach(
            (shard, counts) -> {
              update.set(
                  SnapshotSummaryKeys.shardAddedRecords(shard),
                  Long.toString(counts.addedRecords()));
              update.set(
                  SnapshotSummaryKeys.shardDeletedRecords(shard),
                  Long.toString(counts.deletedRecords()));
            });
    update.commit();
    PipelineProgress committed =
        new PipelineProgress(
            checkpoint.checkpointId(),
            checkpoint.flinkCheckpointId(),
            checkpoint.stagedBy() != null ? checkpoint.stagedBy() : flinkJobId,
            flinkJobId,
            epoch,
            restoredFrom);
    transaction
        .updateProperties()
        .set(PipelineProgress.propertyKey(options.pipelineId()), committed.encode())
        .commit();
    transaction.commitTransaction();
    long snapshotId = transaction.table().currentSnapshot().snapshotId();
    long ms = (System.nanoTime() - start) / 1_000_000;
    if (heartbeat) {
      metrics.heartbeat(checkpoint.checkpointId(), ms);
      LOG.info(
          "Committed heartbeat for pipeline {} to table {}: checkpoint {} after {} empty"
              + " checkpoints, {} ms",
          options.pipelineId(),
          options.tableName(),
          checkpoint.checkpointId(),
          continuousEmptyCheckpoints,
          ms);
    } else {
      long records = files.dataRecords() + files.deleteRecords();
      metrics.committed(
          checkpoint.checkpointId(),
          ms,
          files.dataFiles().size(),
          files.deleteFiles().size(),
          records);
      LOG.info(
          "Committed checkpoint {} (Flink checkpoint {}) of pipeline {} to table {}: {} data files,"
              + " {} delete files, {} data records, {} delete records, {} shards touched, {} ms,"
              + " snapshot {}",
          checkpoint.checkpointId(),
          checkpoint.flinkCheckpointId(),
          options.pipelineId(),
          options.tableName(),
          files.dataFiles().size(),
          files.deleteFiles().size(),
          files.dataRecords(),
          files.deleteRecords(),
          checkpoint.shardCounts().size(),
          ms,
          snapshotId);
    }
    return Outcome.COMMITTED;
  }

  /**
   * True when the table's progress shows this entry committed by its own lineage: the record is at
   * or past this id and either was staged by the same Flink job at the same or a later Flink
   * checkpoint (one job commits its entries in order, so a later one of its own means this one
   * landed too), or its committer descends from this entry's job's state at or past this entry (a
   * restore commits every restored entry before its own). Without lineage on either side (a table or
   * state from before the record), "at or past" alone decides.
   */
  private static boolean isOwnCommit(PipelineProgress progress, PendingCheckpoint checkpoint) {
    if (progress.checkpointId() < checkpoint.checkpointId()) {
      return false;
    }
    if (progress.legacy() || checkpoint.stagedBy() == null) {
      return true;
    }
    return progress.covers(checkpoint.stagedBy(), checkpoint.flinkCheckpointId());
  }

  /** The ancestry written into state at checkpoint c: the restored jobs plus this job at c. */
  private LinkedHashMap<String, Long> lineageAt(long flinkCheckpointId) {
    LinkedHashMap<String, Long> lineage = new LinkedHashMap<>(restoredFrom);
    lineage.remove(flinkJobId);
    lineage.put(flinkJobId, flinkCheckpointId);
    while (lineage.size() > PipelineProgress.MAX_RESTORED_FROM) {
      lineage.remove(lineage.keySet().iterator().next());
    }
    return lineage;
  }

  /** A newer epoch in the record: another instance of this pipeline took over. */
  private void checkRecordNotNewerEpoch(
      PendingCheckpoint checkpoint, PipelineProgress progress, long epoch) {
    if (epoch >= 0 && progress.epoch() > epoch) {
      throw new CommitFencedException(
          String.format(
              "Cannot commit checkpoint %d of pipeline %s to table %s: the table holds a commit of"
                  + " the same pipeline with newer epoch %d (%s), this coordinator has epoch %d."
                  + " Another instance of this pipeline took over; stop this job. (If ZooKeeper's"
                  + " data was reset instead, set the pipeline's epoch node above %d.)",
              checkpoint.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              progress.epoch(),
              progress,
              epoch,
              progress.epoch()));
    }
  }

  /**
   * The record is not this entry's own commit; at or past this id it is another lineage's, so a
   * second job shares the pipeline id: skipping would lose this job's data, committing would
   * duplicate.
   */
  private void checkNoOtherLineage(PendingCheckpoint checkpoint, PipelineProgress progress) {
    if (progress.checkpointId() >= checkpoint.checkpointId()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot commit checkpoint %d of pipeline %s to table %s: the table's progress record"
                  + " shows checkpoint %d committed by Flink job %s (Flink checkpoint %d, staged by"
                  + " Flink job %s), while this checkpoint was staged by Flink job %s from Flink"
                  + " checkpoint %d; two jobs share " + CoordinatorConfigOptions.PIPELINE_ID.key() + " — stop one of them.",
              checkpoint.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              progress.checkpointId(),
              progress.committedBy(),
              progress.flinkCheckpointId(),
              progress.stagedBy(),
              checkpoint.stagedBy(),
              checkpoint.flinkCheckpointId()));
    }
  }

  @Override
  public void close() throws Exception {
    try {
      if (maintainer != null) {
        maintainer.close();
        maintainer = null;
      }
      if (guard != null) {
        guard.close();
      }
      tableLoader.close();
    } finally {
      super.close();
    }
  }

  /** For tests: the pending map's keys. */
  List<Long> pendingCheckpointIds() {
    return List.copyOf(pending.keySet());
  }
}
