package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * What the cluster end-to-end tests read of the orders table a pipeline commits to, through
 * Iceberg's generic reader (independent of the job's verify): its rows rendered like the shards',
 * and the checkpoints the pipeline committed, from the snapshot summaries.
 */
record PipelineCommits(Supplier<Table> table, String pipelineId, Duration catchUp, String where) {

  /**
   * Every row, rendered like the shards' ({@link OrdersWorkload#render}). Fails at once with a
   * {@link DuplicateKey} when a key (shard_number, order_id) is read twice: a set of rendered rows
   * would hide a key committed twice with the same values.
   */
  Set<String> rows() {
    Map<List<Object>, String> byKey = new HashMap<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table.get()).build()) {
      for (Record r : records) {
        Integer shard = (Integer) r.getField("shard_number");
        Long orderId = (Long) r.getField("order_id");
        String row =
            OrdersWorkload.render(
                shard,
                orderId,
                (String) r.getField("status"),
                (BigDecimal) r.getField("amount"),
                (String) r.getField("note"));
        String before = byKey.put(List.of(shard, orderId), row);
        if (before != null) {
          throw new DuplicateKey(
              String.format(
                  "%s holds key (shard_number %d, order_id %d) twice: %s and %s",
                  where, shard, orderId, before, row));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TreeSet<>(byKey.values());
  }

  /** A key read twice: never transient, so the waits below fail on it at once. */
  static final class DuplicateKey extends AssertionError {
    DuplicateKey(String message) {
      super(message);
    }
  }

  void awaitRowsEqual(Set<String> expected, String what) {
    await(where + " equals the shards: " + what)
        .atMost(catchUp)
        .pollInterval(Duration.ofSeconds(2))
        .ignoreExceptionsMatching(
            e -> !(e instanceof DuplicateKey)) // a read racing a commit or cleanup: try again
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

  /**
   * Waits for a commit of a checkpoint newer than {@code checkpointId}; returns the newest
   * committed one.
   */
  long awaitNewCommit(long checkpointId) {
    return await("a commit of a checkpoint after " + checkpointId)
        .atMost(catchUp)
        .ignoreExceptions()
        .until(this::lastCommittedCheckpoint, last -> last > checkpointId);
  }

  /**
   * Waits for a commit after {@code checkpointId} that holds delete files: binlog updates/deletes,
   * not the snapshot; returns the newest such checkpoint.
   */
  long awaitCommitOfBinlogChanges(long checkpointId) {
    return await("a commit of binlog changes after checkpoint " + checkpointId)
        .atMost(catchUp)
        .ignoreExceptions()
        .until(
            () ->
                snapshots().stream()
                    .filter(s -> checkpointOf(s) > checkpointId)
                    .filter(
                        s ->
                            Long.parseLong(s.summary().getOrDefault("added-delete-files", "0")) > 0)
                    .mapToLong(PipelineCommits::checkpointOf)
                    .max()
                    .orElse(-1),
            last -> last > checkpointId);
  }

  /**
   * By id: increasing checkpoint ids in the summaries. By content: no data or delete file is added
   * by two of the pipeline's snapshots — a checkpoint committed again (under a new id too) adds its
   * files again, and the table reads those rows twice or deletes them twice.
   */
  void assertEachCheckpointCommittedOnce() {
    List<Snapshot> snapshots = snapshots();
    List<Long> checkpoints = snapshots.stream().map(PipelineCommits::checkpointOf).toList();
    assertThat(checkpoints)
        .as("checkpoint ids in the snapshot summaries of pipeline %s", pipelineId)
        .doesNotHaveDuplicates()
        .isSorted();
    Table t = table.get();
    Map<String, Long> addedBy = new HashMap<>();
    List<String> again = new ArrayList<>();
    for (Snapshot s : snapshots) {
      List<String> files = new ArrayList<>();
      s.addedDataFiles(t.io()).forEach(f -> files.add(f.location()));
      s.addedDeleteFiles(t.io()).forEach(f -> files.add(f.location()));
      for (String file : files) {
        Long first = addedBy.putIfAbsent(file, checkpointOf(s));
        if (first != null) {
          again.add(file + " by checkpoints " + first + " and " + checkpointOf(s));
        }
      }
    }
    assertThat(again).as("files added twice by the snapshots of pipeline %s", pipelineId).isEmpty();
  }
}
