package dev.shardberg.coordinator;

import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;

/**
 * Why {@link CheckpointCommitter} will not commit a checkpoint, each message saying what happened,
 * what committing or skipping would do, and what the operator does next.
 */
final class CommitRefusals {
  private CommitRefusals() {}

  /** A newer epoch in the record: another instance of this pipeline took over. */
  static void checkRecordNotNewerEpoch(
      CoordinatorOptions options,
      PendingCheckpoint checkpoint,
      PipelineProgress progress,
      long epoch) {
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
   * Insert-only rows of a completed checkpoint that cannot be committed: a foreign write into their
   * shards since the last check (committing would duplicate keys), or history that can no longer be
   * read (expired past the last verified point: nothing known wrong, nothing can be told).
   */
  static PipelineConflictException insertOnlyRefused(
      CoordinatorOptions options,
      PendingCheckpoint checkpoint,
      SortedMap<Integer, Long> scans,
      InsertOnlyCheck.Finding finding) {
    String why =
        finding.historyGone()
            ? "Whether another writer wrote these shards since cannot be told: the table's snapshots"
                + " were expired (by another pipeline's maintenance.expire-snapshots.* or an expiry"
                + " tool) past the last point this pipeline checked, which it checks at every"
                + " checkpoint. Keep snapshots longer than this pipeline's checkpoints take."
            : "Committing would duplicate keys. Stop the other writer of these shards.";
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: its rows of shard(s) %s were"
                + " written insert-only (initial load), but %s. %s The restored state holds these"
                + " rows too: start the pipeline without state with "
                + CoordinatorConfigOptions.INSERT_ONLY_INITIAL_LOAD.key()
                + ": false.",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            scans.keySet(),
            finding,
            why));
  }

  /**
   * A restored entry of an earlier run, never committed, while the table holds later commits of
   * this pipeline made without it: the state restored is a superseded branch (an operator restored
   * an older checkpoint of a run after another run, restored from an even older one, committed).
   * Committing it now would put older changes over newer ones; skipping it would lose them.
   */
  static PipelineConflictException supersededRun(
      CoordinatorOptions options, PendingCheckpoint checkpoint, PipelineProgress progress) {
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: it is restored state of"
                + " superseded run %s (its Flink checkpoint %d was never committed), and the table"
                + " already holds checkpoint %d, committed by run %s of Flink job %s since. The"
                + " state this job was restored from is older than the table's%s. Restore the job"
                + " from the newest retained checkpoint or savepoint of the run that committed"
                + " checkpoint %d, or start it without state (it then reads every shard again).",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            checkpoint.stagedBy(),
            checkpoint.flinkCheckpointId(),
            progress.checkpointId(),
            progress.committedBy(),
            progress.flinkJobId(),
            progress.knows(checkpoint.stagedBy())
                ? ""
                : " (run "
                    + checkpoint.stagedBy()
                    + " is not among the "
                    + PipelineProgress.MAX_RUNS
                    + " runs the table's progress record keeps)",
            progress.checkpointId()));
  }

  /**
   * This run's own entry is not committed and the table is past it: another job committed for the
   * same pipeline id since this run started. Skipping would lose this job's data, committing would
   * duplicate.
   */
  static PipelineConflictException otherJob(
      CoordinatorOptions options,
      String runId,
      String flinkJobId,
      PendingCheckpoint checkpoint,
      PipelineProgress progress) {
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: the table's progress record"
                + " shows checkpoint %d committed by run %s of Flink job %s (Flink checkpoint %d,"
                + " staged by run %s) since this run (%s, Flink job %s) started; two jobs share "
                + CoordinatorConfigOptions.PIPELINE_ID.key()
                + " — stop one of them.",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            progress.checkpointId(),
            progress.committedBy(),
            progress.flinkJobId(),
            progress.flinkCheckpointId(),
            progress.stagedBy(),
            runId,
            flinkJobId));
  }

  /**
   * Insert-only rows met another committer's write (or expired history) when their checkpoint was
   * staged.
   */
  static IllegalStateException insertOnlyNotStaged(
      CoordinatorOptions options,
      PendingCheckpoint staged,
      SortedMap<Integer, Long> scans,
      InsertOnlyCheck.Finding finding) {
    return new IllegalStateException(
        String.format(
            "Cannot stage checkpoint %d of pipeline %s for table %s: its rows of shard(s) %s were"
                + " written insert-only (initial load), but %s. %s This checkpoint fails; the job"
                + " restarts from its previous checkpoint and writes these rows as upserts.",
            staged.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            scans.keySet(),
            finding,
            finding.historyGone()
                ? "Whether another writer wrote these shards meanwhile cannot be told."
                : "Committing them could duplicate keys; stop any other writer of these shards."));
  }

  /**
   * Deletes by position of a completed checkpoint that cannot be committed: another committer
   * changed files of their shards after the writers (the partitions' owners) last checked them, so
   * the positions may point at rows that moved; or the history since that check cannot be read.
   */
  static PipelineConflictException ownerKnowledgeStale(
      CoordinatorOptions options,
      PendingCheckpoint checkpoint,
      Optional<PipelineProgress> lastCommit,
      InsertOnlyCheck.Finding finding) {
    String landed =
        lastCommit
            .filter(p -> p.flinkCheckpointId() >= 0)
            .map(
                p ->
                    String.format(
                        " (pipeline checkpoint %d, Flink checkpoint %d of job %s)",
                        p.checkpointId(), p.flinkCheckpointId(), p.flinkJobId()))
            .orElse("");
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: its writers delete by position"
                + " (target.delete-mode: position) and checked shard(s) %s as of snapshot(s) %s, but"
                + " %s. %s Nothing was committed. Stop the other writer of these shards, then resume"
                + " the pipeline from the checkpoint or savepoint of its last commit that landed%s:"
                + " its writers then read the changed partitions again from the table.",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            checkpoint.ownerChecks().keySet(),
            checkpoint.ownerChecks().values(),
            finding,
            finding.historyGone()
                ? "Whether another committer changed them cannot be told."
                : "Committing would delete rows at places that moved and leave their newer copies"
                    + " behind (duplicate keys).",
            landed));
  }

  /**
   * With deletes by position, a restored state must know every commit of the pipeline in the table:
   * its writers know where the rows are as of that state, so a restore to an older checkpoint while
   * newer commits exist (or to another branch of runs) would delete replayed rows at places that
   * moved, and leave the newer copies behind as duplicates. Refused until the writers learn such
   * partitions again (docs/owner-write-path.md).
   *
   * @param lineage the restored state's runs, each with the Flink checkpoint up to which its
   *     entries are part of that state
   */
  static void checkNotRewoundForPositionDeletes(
      CoordinatorOptions options,
      Optional<PipelineProgress> progress,
      Map<String, Long> lineage,
      long restoredFlinkCheckpoint) {
    if (progress.isEmpty()) {
      return; // nothing of the pipeline in the table yet
    }
    PipelineProgress last = progress.get();
    Long known = last.stagedBy() == null ? null : lineage.get(last.stagedBy());
    if (known != null && known >= last.flinkCheckpointId()) {
      return;
    }
    throw new PipelineConflictException(
        String.format(
            "Cannot restore pipeline %s from Flink checkpoint %d with %s: position: table %s already"
                + " holds the pipeline's checkpoint %d (run %s, Flink checkpoint %d), which the"
                + " restored state does not know: a restore to an older checkpoint or savepoint, or"
                + " of another branch of runs. The writers' index of where each row is would be"
                + " older than the table, and replayed changes would leave duplicates. Restore from"
                + " the newest retained checkpoint, or run this restore with %s: equality"
                + " (docs/owner-write-path.md).",
            options.pipelineId(),
            restoredFlinkCheckpoint,
            CoordinatorConfigOptions.DELETE_MODE.key(),
            options.tableName(),
            last.checkpointId(),
            last.stagedBy(),
            last.flinkCheckpointId(),
            CoordinatorConfigOptions.DELETE_MODE.key()));
  }
}
