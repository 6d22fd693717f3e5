package dev.shardberg.coordinator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
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
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single commit coordinator (parallelism 1, max parallelism 1): one Iceberg snapshot per
 * checkpoint, in checkpoint order, exactly once across failures and restarts.
 *
 * <pre>
 *  writer results ──► collecting (by Flink checkpoint id, memory only)
 *                          │ snapshotState(c): every result tagged ≤ c becomes temporary manifests
 *                          ▼
 *                      pending (NavigableMap by pipeline checkpoint id; manifest bytes in state)
 *                          │ notifyCheckpointComplete(c): commit each entry ≤ c in order,
 *                          │ one RowDelta each, under guard.runExclusive
 *                          ▼
 *                      committed (table snapshot summary: pipeline id + checkpoint id)
 * </pre>
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Checkpoints are never merged: an equality delete does not apply to data files of its own
 *       sequence number, so merging two checkpoints would resurrect rows deleted by the later one.
 *   <li>Pipeline checkpoint ids strictly increase along the table's ancestry, so "already committed"
 *       is "≤ the newest committed id of this pipeline". The check runs inside the lock, right before
 *       each commit attempt, so a commit that landed while its answer was lost is never repeated.
 *   <li>The pipeline checkpoint id is the Flink checkpoint id plus an offset kept in state. The offset
 *       is 0 unless the job starts without state (or from an old savepoint) on a table where the
 *       pipeline already committed higher ids; then it shifts new ids past them, so nothing new is
 *       mistaken for already committed.
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

  static final String OFFSET_STATE_NAME = "shardberg-coordinator-checkpoint-offset";

  static final String LAST_SNAPSHOT_STATE_NAME = "shardberg-coordinator-last-snapshot-checkpoint";

  private enum Outcome {
    COMMITTED,
    ALREADY_COMMITTED,
    LEFT_PENDING
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
  private transient CoordinatorMetrics metrics;

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
    this.metrics = new CoordinatorMetrics(getRuntimeContext().getMetricGroup());
    if (!tableLoader.isOpen()) {
      tableLoader.open();
    }
    this.table = tableLoader.loadTable();
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

    long restoredFlinkCheckpoint = context.getRestoredCheckpointId().orElse(0L);
    if (context.isRestored()) {
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

    table.refresh();
    long maxCommitted =
        CommittedCheckpoints.maxCommittedCheckpoint(table, options.pipelineId()).orElse(-1L);
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
  }

  @Override
  public void processElement(StreamRecord<WriterResult> element) {
    WriterResult result = element.getValue();
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
      PendingCheckpoint staged =
          TempManifests.write(
              table, manifestPrefix, checkpointId, entry.getKey(), entry.getValue());
      pending.put(checkpointId, staged);
    }
    ready.clear();
  }

  @Override
  public void notifyCheckpointComplete(long flinkCheckpointId) throws Exception {
    super.notifyCheckpointComplete(flinkCheckpointId);
    // Late, duplicate and out-of-order notices find nothing new at or below their id.
    commitUpTo(flinkCheckpointId + checkpointOffset);
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
    NavigableMap<Long, PendingCheckpoint> ready = pending.headMap(checkpointId, true);
    for (PendingCheckpoint checkpoint : new ArrayList<>(ready.values())) {
      Outcome outcome = commitOrSkip(checkpoint);
      if (outcome == Outcome.LEFT_PENDING) {
        break; // later checkpoints wait too: commits happen in checkpoint order
      }
      pending.remove(checkpoint.checkpointId());
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
    metrics.pending(pending.size());
  }

  private Outcome commitOrSkip(PendingCheckpoint checkpoint) throws Exception {
    boolean heartbeat = checkpoint.isEmpty();
    if (heartbeat && continuousEmptyCheckpoints + 1 < options.maxContinuousEmptyCommits()) {
      continuousEmptyCheckpoints++;
      return Outcome.COMMITTED; // nothing to write, no heartbeat due: no snapshot
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
    if (outcome == Outcome.LEFT_PENDING) {
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
    for (int attempt = 1; ; attempt++) {
      try {
        return guard.runExclusive(
            options.lockTimeout(), () -> commitUnderLock(checkpoint, heartbeat));
      } catch (CommitLockTimeoutException e) {
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
      } catch (CommitFailedException e) {
        // Iceberg's own retries on a stale base gave up. The commit did not land; try again from a
        // fresh table (the already-committed check runs again first).
        if (attempt >= options.commitAttempts()) {
          throw e;
        }
        metrics.retry();
        LOG.warn(
            "Commit of checkpoint {} to table {} failed (attempt {} of {}), retrying in {} ms: {}",
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

  private Outcome commitUnderLock(PendingCheckpoint checkpoint, boolean heartbeat)
      throws IOException {
    long start = System.nanoTime();
    table.refresh();
    Optional<CommitRecord> latest = CommittedCheckpoints.latest(table, options.pipelineId());
    if (latest.isPresent() && latest.get().checkpointId() >= checkpoint.checkpointId()) {
      LOG.info(
          "Checkpoint {} of pipeline {} is already in table {} (newest committed: {}, snapshot"
              + " {}); not committing it again",
          checkpoint.checkpointId(),
          options.pipelineId(),
          options.tableName(),
          latest.get().checkpointId(),
          latest.get().snapshotId());
      metrics.alreadyCommitted(latest.get().checkpointId());
      return Outcome.ALREADY_COMMITTED;
    }
    guard.checkNotFenced();
    long epoch = guard.epoch();
    if (epoch >= 0 && latest.isPresent() && latest.get().epoch() > epoch) {
      throw new CommitFencedException(
          String.format(
              "Cannot commit checkpoint %d of pipeline %s to table %s: the table holds a commit of"
                  + " the same pipeline with newer epoch %d (snapshot %d), this coordinator has"
                  + " epoch %d. Another instance of this pipeline took over; stop this job. (If"
                  + " ZooKeeper's data was reset instead, set the pipeline's epoch node above %d.)",
              checkpoint.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              latest.get().epoch(),
              latest.get().snapshotId(),
              epoch,
              latest.get().epoch()));
    }
    WriterTableCheck.validateSchema(table.schema(), options.tableName(), rowType);

    TempManifests.Files files = TempManifests.read(table, checkpoint);
    SnapshotUpdate<?> update;
    if (heartbeat) {
      AppendFiles append = table.newAppend();
      update = append;
      update.set(SnapshotSummaryKeys.HEARTBEAT, "true");
    } else {
      RowDelta delta = table.newRowDelta();
      files.dataFiles().forEach(delta::addRows);
      files.deleteFiles().forEach(delta::addDeletes);
      if (!checkpoint.referencedDataFiles().isEmpty()) {
        delta.validateDataFilesExist(checkpoint.referencedDataFiles());
      }
      delta.validateDeletedFiles();
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
    try {
      update.commit();
    } catch (ValidationException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot commit checkpoint %d of pipeline %s to table %s: %s. Position deletes of this"
                  + " checkpoint name data files that are gone (was the table compacted or"
                  + " rewritten while the job ran?).",
              checkpoint.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              e.getMessage()),
          e);
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    if (heartbeat) {
      metrics.heartbeat(checkpoint.checkpointId());
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
          table.currentSnapshot().snapshotId());
    }
    return Outcome.COMMITTED;
  }

  @Override
  public void close() throws Exception {
    try {
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
