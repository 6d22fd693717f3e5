package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * What the cluster end-to-end tests read of the orders table a pipeline commits to, through Iceberg's
 * generic reader (independent of the job's verify): its rows rendered like the shards', and the
 * checkpoints the pipeline committed, from the snapshot summaries.
 */
record PipelineCommits(Supplier<Table> table, String pipelineId, Duration catchUp, String where) {

  /** Every row, rendered like the shards' ({@link OrdersWorkload#render}). */
  Set<String> rows() {
    Set<String> rows = new TreeSet<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table.get()).build()) {
      for (Record r : records) {
        rows.add(OrdersWorkload.render((Integer) r.getField("shard_number"), (Long) r.getField("order_id"),
            (String) r.getField("status"), (BigDecimal) r.getField("amount"), (String) r.getField("note")));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  void awaitRowsEqual(Set<String> expected, String what) {
    await(where + " equals the shards: " + what).atMost(catchUp).pollInterval(Duration.ofSeconds(2))
        .ignoreExceptions()
        .until(this::rows, rows -> rows.equals(expected));
  }

  /** The snapshots this pipeline committed, oldest first. */
  List<Snapshot> snapshots() {
    List<Snapshot> snapshots = new ArrayList<>();
    for (Snapshot s : table.get().snapshots()) {
      if (pipelineId.equals(s.summary().get(SnapshotSummaryKeys.PIPELINE_ID))) {
        snapshots.add(s);
      }
    }
    return snapshots;
  }

  static long checkpointOf(Snapshot s) {
    return Long.parseLong(s.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID));
  }

  long lastCommittedCheckpoint() {
    return snapshots().stream().mapToLong(PipelineCommits::checkpointOf).max().orElse(-1);
  }

  /** Waits for a commit of a checkpoint newer than {@code checkpointId}; returns the newest committed one. */
  long awaitNewCommit(long checkpointId) {
    return await("a commit of a checkpoint after " + checkpointId).atMost(catchUp).ignoreExceptions()
        .until(this::lastCommittedCheckpoint, last -> last > checkpointId);
  }

  void assertEachCheckpointCommittedOnce() {
    List<Long> checkpoints = snapshots().stream().map(PipelineCommits::checkpointOf).toList();
    assertThat(checkpoints).as("checkpoint ids in the snapshot summaries of pipeline %s", pipelineId)
        .doesNotHaveDuplicates()
        .isSorted();
  }
}
