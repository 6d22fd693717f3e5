package dev.shardberg.coordinator;

import org.apache.iceberg.RowDelta;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.util.ContentFileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Iceberg snapshot of one checkpoint: what it adds, its summary, and its log line. */
final class CheckpointSnapshot {
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointCommitter.class);

  private CheckpointSnapshot() {}

  /**
   * The checkpoint's snapshot: its rows and deletes (or a heartbeat), with the pipeline's summary.
   *
   * @param checkedSnapshot the table's current snapshot in the metadata the coordinator checked
   *     (null: none yet)
   */
  static SnapshotUpdate<?> update(
      CoordinatorOptions options,
      String runId,
      String flinkJobId,
      Transaction transaction,
      PendingCheckpoint checkpoint,
      TempManifests.Files files,
      boolean heartbeat,
      long epoch,
      Long checkedSnapshot) {
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
      files.removedDeletes().forEach(delta::removeDeletes);
      files.removedData().forEach(delta::removeRows); // rewritten by their partition's owner
      if (checkedSnapshot != null
          && (!files.removedDeletes().isEmpty()
              || !files.removedData().isEmpty()
              || files.deleteFiles().stream().anyMatch(ContentFileUtil::isDV))) {
        // Iceberg refuses a deletion vector when another one was added to its data file after this
        // snapshot (and, unset, since the start of history, the vector this commit replaces
        // included). From the metadata the coordinator checked: its own previous vectors are
        // older, another committer's newer one fails the commit instead of being dropped.
        delta.validateFromSnapshot(checkedSnapshot);
      }
      update = delta;
    }
    update.set(SnapshotSummaryKeys.PIPELINE_ID, options.pipelineId());
    update.set(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(checkpoint.checkpointId()));
    update.set(
        SnapshotSummaryKeys.FLINK_CHECKPOINT_ID, Long.toString(checkpoint.flinkCheckpointId()));
    update.set(SnapshotSummaryKeys.FLINK_JOB_ID, flinkJobId);
    update.set(SnapshotSummaryKeys.RUN_ID, runId);
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
              if (counts.removed()) {
                update.set(SnapshotSummaryKeys.shardRemoved(shard), "true");
              }
            });
    return update;
  }

  static void logCommitted(
      CoordinatorOptions options,
      CheckpointCommitter.Metrics metrics,
      int continuousEmptyCheckpoints,
      PendingCheckpoint checkpoint,
      TempManifests.Files files,
      boolean heartbeat,
      long ms,
      long snapshotId) {
    if (heartbeat) {
      metrics.heartbeat(checkpoint.checkpointId(), ms);
      LOG.info(
          "Committed heartbeat for pipeline {} to table {}: checkpoint {} after {} empty checkpoints, {} ms",
          options.pipelineId(),
          options.tableName(),
          checkpoint.checkpointId(),
          continuousEmptyCheckpoints,
          ms);
      return;
    }
    metrics.committed(
        checkpoint.checkpointId(),
        ms,
        files.dataFiles().size(),
        files.deleteFiles().size(),
        files.dataRecords() + files.deleteRecords());
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
}
