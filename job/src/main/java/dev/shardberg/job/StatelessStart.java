package dev.shardberg.job;

import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.job.config.OnStatelessStart;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.config.ShardbergOptions;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableLayout;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a start without state (no checkpoint, no savepoint) does on a table that already holds
 * commits of this pipeline, decided on the client before the job is submitted.
 *
 * <p>A fresh snapshot on top of such a table upserts every current row but never deletes: every row
 * deleted in MySQL since the last commit would stay in the table for good. So by default the start
 * is refused with the command that resumes ({@code pipeline.on-stateless-start: fail}). With {@code
 * resnapshot} the rows of this pipeline's shards are removed in ONE Iceberg commit first (a {@code
 * DeleteFiles} by row filter on {@code shard_number}; the table is partitioned by {@code
 * identity(shard_number)}, so whole data and delete files go), then the job snapshots them again —
 * insert-only, as a shard without data always is. Afterwards the table holds exactly the shards'
 * current rows. Readers see those shards empty from that commit until the snapshot's first commit.
 * (Not built: replacing each shard's files at its own snapshot boundary, which would keep the old
 * rows visible until the new ones land, at the cost of a second file set per shard in the writers.)
 */
final class StatelessStart {
  private static final Logger LOG = LoggerFactory.getLogger(StatelessStart.class);

  /** Snapshot summary keys of the removal commit. */
  static final String RESNAPSHOT_PIPELINE = "shardberg.resnapshot.pipeline-id";

  static final String RESNAPSHOT_SHARDS = "shardberg.resnapshot.shards";
  static final String RESNAPSHOT_AFTER_CHECKPOINT = "shardberg.resnapshot.after-checkpoint";

  private StatelessStart() {}

  /**
   * The one place the job asks whether {@code pipelineId} has already committed to {@code table}:
   * its newest committed checkpoint, or empty.
   */
  static OptionalLong lastCommittedCheckpoint(Table table, String pipelineId) {
    table.refresh();
    return CommittedCheckpoints.maxCommittedCheckpoint(table, pipelineId);
  }

  /** How the start was requested, for the message that says how to resume. */
  record Launch(boolean local, String checkpointDir) {}

  /**
   * Refuses the start, or removes the shards' rows, when the table holds commits of this pipeline;
   * does nothing otherwise. Call only for a start without state.
   */
  static void apply(Table table, ShardbergConfig config, ShardPlan plan, Launch launch) {
    String pipelineId = config.pipeline().id();
    OptionalLong last = lastCommittedCheckpoint(table, pipelineId);
    if (last.isEmpty()) {
      return;
    }
    if (config.pipeline().onStatelessStart() == OnStatelessStart.RESNAPSHOT) {
      removeShardRows(table, config, plan, last.getAsLong());
      return;
    }
    throw new StatelessStartRefusedException(refusal(config, last.getAsLong(), launch));
  }

  static String refusal(ShardbergConfig config, long lastCheckpoint, Launch launch) {
    String head =
        String.format(
            "Cannot start pipeline '%s' without state: table %s already holds its commits up to checkpoint %d, and a new"
                + " snapshot on top would keep every row deleted in MySQL since then. ",
            config.pipeline().id(), config.target().qualifiedName(), lastCheckpoint);
    String resume =
        launch.local()
            ? String.format(
                "No retained checkpoint to resume from was found under %s (or --fresh was given): `bin/shardberg run --config"
                    + " FILE` resumes by itself from the newest checkpoint there ("
                    + ShardbergOptions.PIPELINE_CHECKPOINT_DIR.key()
                    + ").",
                launch.checkpointDir())
            : String.format(
                "Resume from the job's last retained checkpoint or a savepoint: use `flink run -s <retained checkpoint or"
                    + " savepoint> ... --config FILE` (retained checkpoints: %s/<flink-job-id>/chk-<n>).",
                launch.checkpointDir() == null
                    ? ShardbergOptions.PIPELINE_CHECKPOINT_DIR.key()
                    : launch.checkpointDir());
    return head
        + resume
        + " To snapshot the shards again instead, set "
        + ShardbergOptions.PIPELINE_ON_STATELESS_START.key()
        + ": resnapshot (their rows are removed"
        + " from the table first; readers see them empty until the snapshot commits).";
  }

  private static void removeShardRows(
      Table table, ShardbergConfig config, ShardPlan plan, long lastCheckpoint) {
    List<Integer> shards = plan.allTables().stream().map(ShardTable::shard).sorted().toList();
    String shardList = shards.stream().map(String::valueOf).collect(Collectors.joining(","));
    long start = System.nanoTime();
    DeleteFiles delete =
        table
            .newDelete()
            .deleteFromRowFilter(Expressions.in(TableLayout.SHARD_COLUMN, shards.toArray()))
            .set(RESNAPSHOT_PIPELINE, config.pipeline().id())
            .set(RESNAPSHOT_SHARDS, shardList)
            .set(RESNAPSHOT_AFTER_CHECKPOINT, Long.toString(lastCheckpoint));
    delete.commit();
    Snapshot snapshot = table.currentSnapshot();
    LOG.warn(
        "Re-snapshot of pipeline {} ("
            + ShardbergOptions.PIPELINE_ON_STATELESS_START.key()
            + ": resnapshot; it had committed up to checkpoint {}):"
            + " removed the rows of shards [{}] from table {} in snapshot {} ({} data files, {} delete files, {} ms);"
            + " readers see these shards empty until the new snapshot commits",
        config.pipeline().id(),
        lastCheckpoint,
        shardList,
        config.target().qualifiedName(),
        snapshot == null ? null : snapshot.snapshotId(),
        snapshot == null ? "0" : snapshot.summary().getOrDefault("deleted-data-files", "0"),
        snapshot == null ? "0" : snapshot.summary().getOrDefault("removed-delete-files", "0"),
        (System.nanoTime() - start) / 1_000_000);
  }

  /** A start without state on a table this pipeline already wrote, refused. */
  static final class StatelessStartRefusedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    StatelessStartRefusedException(String message) {
      super(message);
    }
  }
}
