package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.TableMaintainer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single commit coordinator (parallelism 1, max parallelism 1): one Iceberg snapshot per
 * checkpoint, in checkpoint order, exactly once for the table's whole life — across failures,
 * restores, snapshot expiry, compaction, orphan-file removal and a second job or a zombie instance
 * of the same pipeline. The operator only moves results and state; what is committed, and whether,
 * is {@link CheckpointCommitter}'s decision (its javadoc holds the rules and invariants).
 *
 * <pre>
 *  writer results ──► collecting (by Flink checkpoint id, memory only; their files shown to orphan removal)
 *                          │ snapshotState(c): every result tagged ≤ c becomes temporary manifests,
 *                          │ stamped with this coordinator's run id (drawn at each start), plus the
 *                          │ deletes of shards read again ({@link ShardReread}); a result for a
 *                          │ checkpoint already staged fails the job
 *                          ▼
 *                      CheckpointCommitter.stage → pending; the whole state as one {@link CoordinatorState}
 *                          │ notifyCheckpointComplete(c): CheckpointCommitter.commitUpTo(c + offset)
 *                          ▼
 *                      committed; then table maintenance on this thread, under the same guard
 * </pre>
 *
 * <p>Requires aligned checkpoints: every writer's result for checkpoint c must reach the
 * coordinator before its barrier c, which unaligned checkpoints do not guarantee.
 */
final class CommitCoordinator extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<WriterResult, Void>, BoundedOneInput {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(CommitCoordinator.class);

  /** Operator state name: never rename, restores match state by name. */
  static final String STATE_NAME = "shardberg-coordinator-state";

  /** How often a finished compaction or merge is looked for between checkpoint commits. */
  static final long MAINTENANCE_POLL_MILLIS = 100;

  private final TableLoader tableLoader;
  private final RowType rowType;
  private final CoordinatorOptions options;
  private final CommitGuardFactory guardFactory;

  /**
   * The plan this operator was built with, drawn when a submission builds the job: a failover
   * restores the same operator (same plan, which still lacks the shards captured while it ran), a
   * resume builds a new one from a new discovery. Not the Flink job id, which a deployment may keep
   * across resumes (a fixed job id in application mode with HA).
   */
  private final String planId = java.util.UUID.randomUUID().toString();

  private transient Table table;
  private transient CommitGuard guard;
  private transient CheckpointCommitter committer;
  private transient ShardReread reread;
  private transient ListState<byte[]> state;

  /** This coordinator's run (see {@link PipelineProgress}): drawn at each start, never restored. */
  private transient String runId;

  private transient String manifestPrefix;
  private transient String shardColumn;
  private transient NavigableMap<Long, List<WriterResult>> collecting;

  /**
   * The locations of the files in {@code collecting}, read by the maintenance thread's orphan
   * removal; a staged checkpoint's files leave it after the committer published its manifests.
   */
  private transient Set<String> collectedFiles;

  /** Highest Flink checkpoint whose results were staged (or restored); later results only. */
  private transient long lastStagedFlinkCheckpoint;

  /** The newest completed checkpoint (pipeline numbering) this instance was told of. */
  private transient long lastCompleted = Long.MIN_VALUE;

  private transient CoordinatorMetrics metrics;

  /** Null when maintenance is off. */
  private transient TableMaintainer maintainer;

  /** A timer is registered to commit a finished compaction or merge. */
  private transient boolean maintenancePollScheduled;

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
    String flinkJobId = getRuntimeContext().getJobInfo().getJobId().toString();
    this.runId = PipelineProgress.newRunId();
    this.manifestPrefix =
        "shardberg-" + options.pipelineId().replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + runId;
    this.collecting = new TreeMap<>();
    this.collectedFiles = ConcurrentHashMap.newKeySet();
    this.metrics = new CoordinatorMetrics(getRuntimeContext().getMetricGroup());
    if (!tableLoader.isOpen()) {
      tableLoader.open();
    }
    this.table = tableLoader.loadTable();
    this.shardColumn = WriterTableCheck.shardColumn(rowType);
    this.guard = guardFactory.open(options.pipelineId(), options.tableName());
    this.committer =
        new CheckpointCommitter(
            table,
            guard,
            options,
            shardColumn,
            schema -> WriterTableCheck.validateSchema(schema, options.tableName(), rowType),
            runId,
            flinkJobId,
            metrics);
    this.state =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(STATE_NAME, BytePrimitiveArraySerializer.INSTANCE));
    CoordinatorState restored = context.isRestored() ? restoredState(context) : null;

    PipelineShards.check(table.properties(), options);
    this.reread =
        restored == null
            ? ShardReread.start(options, null)
            : ShardReread.start(
                options,
                restored.knownShards(),
                restored.capturedShards(),
                planId.equals(restored.planId()));
    committer.capturedShards(reread::captured);
    LOG.info(
        "Coordinator of pipeline {} for table {} starts run {} (Flink job {}, {})",
        options.pipelineId(),
        options.tableName(),
        runId,
        flinkJobId,
        context.isRestored() ? "restored" : "without state");

    long restoredFlinkCheckpoint = context.getRestoredCheckpointId().orElse(0L);
    if (restored != null) {
      restoredFlinkCheckpoint = Math.max(restoredFlinkCheckpoint, restored.flinkCheckpointId());
      committer.restore(restored.checkpointOffset(), restored.lineage(), restored.pending());
      LOG.info(
          "Restored coordinator of pipeline {} for table {} from Flink checkpoint {}: {} pending"
              + " checkpoints {}",
          options.pipelineId(),
          options.tableName(),
          restoredFlinkCheckpoint,
          restored.pending().size(),
          restored.pending().stream().map(PendingCheckpoint::checkpointId).toList());
      // Every restored entry belongs to a completed checkpoint: commit what the table lacks.
      committer.commitUpTo(Long.MAX_VALUE);
      if (options.deleteMode() == DeleteMode.POSITION) {
        table.refresh();
        CommitRefusals.checkNotRewoundForPositionDeletes(
            options,
            PipelineProgress.read(table, options.pipelineId()),
            restored.lineage(),
            restoredFlinkCheckpoint);
      }
    }
    this.lastStagedFlinkCheckpoint = restoredFlinkCheckpoint;
    committer.numberPastTheTable(restoredFlinkCheckpoint);
    metrics.pending(committer.pending().size());
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
   * The restored state, from this release's one value or from the list states of releases before.
   */
  private CoordinatorState restoredState(StateInitializationContext context) throws Exception {
    CoordinatorState restored = null;
    for (byte[] bytes : state.get()) {
      restored =
          SimpleVersionedSerialization.readVersionAndDeSerialize(
              CoordinatorStateSerializer.INSTANCE, bytes);
    }
    if (restored == null) {
      restored =
          LegacyCoordinatorState.readAndClear(
              context.getOperatorStateStore(), options.pipelineId());
    }
    if (restored != null && !restored.pipelineId().equals(options.pipelineId())) {
      throw new PipelineConflictException(
          String.format(
              "Cannot restore the coordinator of pipeline %s for table %s: the restored state"
                  + " belongs to pipeline %s. Restoring it under another id would commit its"
                  + " checkpoints again. Set "
                  + CoordinatorConfigOptions.PIPELINE_ID.key()
                  + " back to %s, or start the new pipeline"
                  + " without this state.",
              options.pipelineId(),
              options.tableName(),
              restored.pipelineId(),
              restored.pipelineId()));
    }
    return restored;
  }

  @Override
  public void processElement(StreamRecord<WriterResult> element) {
    WriterResult result = element.getValue();
    if (result.checkpointId() <= lastStagedFlinkCheckpoint) {
      // Dropping it would lose its files; committing it in a later checkpoint would reorder
      // changes.
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
    collectedFiles.addAll(fileLocations(result));
  }

  private static List<String> fileLocations(WriterResult result) {
    List<String> locations = new ArrayList<>();
    for (DataFile f : result.files().dataFiles()) {
      locations.add(f.location());
    }
    for (DeleteFile f : result.files().deleteFiles()) {
      locations.add(f.location());
    }
    return locations;
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
    CoordinatorState snapshot =
        new CoordinatorState(
            options.pipelineId(),
            committer.offset(),
            context.getCheckpointId(),
            committer.lineageAt(context.getCheckpointId()),
            reread.known(),
            reread.captured(),
            planId,
            committer.pending());
    state.update(
        List.of(
            SimpleVersionedSerialization.writeVersionAndSerialize(
                CoordinatorStateSerializer.INSTANCE, snapshot)));
    metrics.pending(snapshot.pending().size());
  }

  /**
   * Turns the collected results of every Flink checkpoint ≤ {@code flinkCheckpointId} into
   * manifests.
   */
  private void stageCollectedUpTo(long flinkCheckpointId) throws Exception {
    if (!reread.removing().isEmpty() && flinkCheckpointId != Long.MAX_VALUE) {
      // shards gone from the plan go with this checkpoint, even one without any writer result
      collecting.computeIfAbsent(flinkCheckpointId, id -> new ArrayList<>());
    }
    NavigableMap<Long, List<WriterResult>> ready = collecting.headMap(flinkCheckpointId, true);
    for (Map.Entry<Long, List<WriterResult>> entry : ready.entrySet()) {
      long checkpointId = entry.getKey() + committer.offset();
      List<WriterResult> results = entry.getValue();
      // a re-read shard's old rows go with the checkpoint that holds the first rows of its new
      // snapshot
      SortedSet<Integer> replaced = reread.replacedBy(checkpointId, results);
      // shards the running job captured (tables.new-shards: capture): known from this checkpoint
      reread.written(results);
      if (options.deleteMode() == DeleteMode.POSITION) {
        ShardReread.checkWritersStartEmpty(options, checkpointId, replaced, results);
      }
      // shards gone from the plan (tables.dropped-shards: delete): with the first staged checkpoint
      SortedSet<Integer> removed = reread.removing();
      if (!replaced.isEmpty() || !removed.isEmpty()) {
        results = new ArrayList<>(results);
        results.add(
            reread.truncations(
                table, shardColumn, entry.getKey(), checkpointId, replaced, removed));
      }
      PendingCheckpoint written =
          TempManifests.write(table, manifestPrefix, checkpointId, entry.getKey(), runId, results);
      try {
        committer.stage(written);
      } catch (RuntimeException e) {
        TempManifests.delete(table, written);
        throw e;
      }
      reread.replaced(replaced); // replaced with this checkpoint: in its state from now on
      reread.removed(removed); // removed with this checkpoint: out of its state from now on
      entry
          .getValue()
          .forEach(
              r -> fileLocations(r).forEach(collectedFiles::remove)); // now in a pending manifest
    }
    ready.clear();
    lastStagedFlinkCheckpoint = Math.max(lastStagedFlinkCheckpoint, flinkCheckpointId);
  }

  @Override
  public void notifyCheckpointComplete(long flinkCheckpointId) throws Exception {
    super.notifyCheckpointComplete(flinkCheckpointId);
    // Late, duplicate and out-of-order notices find nothing new at or below their id.
    committer.commitUpTo(flinkCheckpointId + committer.offset());
    lastCompleted = Math.max(lastCompleted, flinkCheckpointId + committer.offset());
    if (maintainer != null && !committer.pendingUpTo(lastCompleted)) {
      // Between checkpoint commits, on this same thread (and under the same guard): maintenance
      // commits are serialised with ingest by construction. Skipped while a checkpoint is stuck.
      maintainer.afterCommits(table, guard, options.lockTimeout(), maintenanceView());
      pollMaintenanceSoon();
    }
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
              if (!committer.pendingUpTo(lastCompleted)) {
                maintainer.commitFinished(table, guard, options.lockTimeout());
              }
              pollMaintenanceSoon();
            });
  }

  /**
   * What maintenance must keep: collected files, the pending manifests, the insert-only scans in
   * use.
   */
  private TableMaintainer.CoordinatorView maintenanceView() {
    Set<String> collected = collectedFiles;
    CheckpointCommitter commits = committer;
    return new TableMaintainer.CoordinatorView(
        () -> collected, commits::pendingManifests, commits.insertOnlyScansInUse());
  }

  @Override
  public void endInput() throws Exception {
    if (!getRuntimeContext().isCheckpointingEnabled()) {
      // No checkpoint will come: commit what the writers flushed at end of input now.
      stageCollectedUpTo(Long.MAX_VALUE);
      committer.commitUpTo(Long.MAX_VALUE);
    }
    // With checkpointing, the final checkpoint stages and commits the end-of-input results.
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

  /** For tests: the snapshots whose history the insert-only checks still walk (expiry keeps it). */
  java.util.Set<Long> insertOnlyHistoryInUse() {
    return committer.insertOnlyScansInUse();
  }

  /** For tests: the pending checkpoints' ids. */
  List<Long> pendingCheckpointIds() {
    return committer.pending().stream().map(PendingCheckpoint::checkpointId).toList();
  }
}
