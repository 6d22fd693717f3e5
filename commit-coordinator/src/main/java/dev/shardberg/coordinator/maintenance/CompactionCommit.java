package dev.shardberg.coordinator.maintenance;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import java.time.Duration;
import java.util.StringJoiner;
import java.util.concurrent.ExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit of a finished compaction or merge, on the committer's thread under the guard's lock: a
 * {@link RewriteFiles} validated from the planned snapshot S, its new files at S's sequence number.
 * Inputs changed under it: dropped, its files deleted on the maintenance thread, planned again in a
 * later cycle; a commit reported failed that landed anyway: done.
 */
final class CompactionCommit {
  /** Maintenance's logger: every maintenance line goes under {@link TableMaintainer}'s name. */
  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private final String tableName;
  private final ExecutorService executor;
  private final LongSupplier clock;
  private final MaintenanceMetrics metrics;

  /** The maintenance thread's own table instance (only called on that thread). */
  private final Supplier<Table> backgroundTable;

  CompactionCommit(
      String tableName,
      ExecutorService executor,
      LongSupplier clock,
      MaintenanceMetrics metrics,
      Supplier<Table> backgroundTable) {
    this.tableName = tableName;
    this.executor = executor;
    this.clock = clock;
    this.metrics = metrics;
    this.backgroundTable = backgroundTable;
  }

  /**
   * Commits {@code result} (null or empty: nothing to commit) under the guard's lock; a compaction
   * whose inputs changed is dropped and its files deleted. False when the lock could not be taken
   * now (the result is kept for the next call).
   *
   * @param startedAt when the rewrite started (its log line and metrics give the time in all)
   */
  boolean commit(
      Table table,
      CommitGuard guard,
      Duration lockTimeout,
      PartitionRewrite.Result result,
      long startedAt)
      throws Exception {
    if (result == null || result.isEmpty()) {
      return true;
    }
    long start = System.nanoTime();
    try {
      guard.runExclusive(
          lockTimeout,
          () -> {
            table.refresh();
            RewriteFiles rewrite =
                table
                    .newRewrite()
                    .validateFromSnapshot(result.snapshotId())
                    .dataSequenceNumber(result.sequenceNumber());
            result.rewritten().forEach(rewrite::deleteFile);
            result.droppedDeletes().forEach(rewrite::deleteFile);
            result.added().forEach(rewrite::addFile);
            // Merged equality deletes at S's sequence number: they apply to the base files as the
            // deletes they replace did, not to the merged data files (same sequence number).
            result.addedDeletes().forEach(d -> rewrite.addFile(d, result.sequenceNumber()));
            rewrite.set(TableHealth.MAINTENANCE, result.kind());
            if (!result.isMerge()) {
              StringJoiner shards = new StringJoiner(",");
              result.shards().forEach(s -> shards.add(Integer.toString(s)));
              rewrite.set(TableHealth.COMPACTED_SHARDS, shards.toString());
            }
            rewrite.commit();
            return null;
          });
    } catch (CommitDeferredException e) {
      LOG.info("Compaction of table {} waits for the commit lock: {}", tableName, e.getMessage());
      return false;
    } catch (CommitFencedException e) {
      throw e;
    } catch (RuntimeException e) {
      if (Interruptions.isInterruption(e)) {
        // Whether or not it landed, its files stay: orphan removal collects them if it did not.
        throw Interruptions.stopped(
            (result.isMerge() ? "Merge" : "Compaction") + " commit", tableName, e);
      }
      return commitFailed(table, result, e, startedAt);
    }
    long now = clock.getAsLong();
    long ms = (System.nanoTime() - start) / 1_000_000;
    metrics.compacted(result, now, now - startedAt);
    String message =
        (result.isMerge() ? "Merged the recent files of table {}" : "Compacted table {}")
            + ": {} partitions of shards {}, {} data files and {} delete files ({} bytes) into {}"
            + " data files and {} delete files, planned on snapshot {}, commit {} ms, {} ms in all";
    Object[] args = {
      tableName,
      result.partitions().size(),
      result.shards(),
      result.rewritten().size(),
      result.droppedDeletes().size(),
      result.bytesRead(),
      result.added().size(),
      result.addedDeletes().size(),
      result.snapshotId(),
      ms,
      now - startedAt
    };
    if (result.isMerge()) {
      LOG.debug(message, args); // after every checkpoint: the counters tell
    } else {
      LOG.info(message, args);
    }
    return true;
  }

  /**
   * A compaction or merge commit that failed (not interrupted): dropped, or kept when it may have
   * landed.
   */
  private boolean commitFailed(
      Table table, PartitionRewrite.Result result, RuntimeException e, long startedAt) {
    if (e instanceof ValidationException || e instanceof CommitFailedException) {
      if (landed(table, result)) {
        // A catalog may report a conflict for a swap that landed; Iceberg's retry then fails
        // validation against its own commit. It is in the table: done, keep its files.
        LOG.info(
            "Compaction of table {} was reported failed but is in the table: {}",
            tableName,
            e.getMessage());
        metrics.compacted(result, clock.getAsLong(), clock.getAsLong() - startedAt);
        return true;
      }
      metrics.compactionDropped();
      LOG.info(
          "Compaction of {} partitions of table {} planned on snapshot {} is dropped, its inputs"
              + " changed under it; planned again in a later cycle: {}",
          result.partitions().size(),
          tableName,
          result.snapshotId(),
          e.getMessage());
      executor.submit(() -> PartitionRewrite.deleteAdded(backgroundTable.get(), result));
      return true;
    }
    metrics.compactionFailed();
    if (e instanceof CommitStateUnknownException) {
      // It may have landed: keep its files; orphan-file removal collects them if it did not.
      LOG.warn(
          "Compaction commit of table {} has an unknown state; its files are kept", tableName, e);
    } else {
      LOG.warn(
          "Compaction commit of table {} failed; dropped, planned again in a later cycle",
          tableName,
          e);
    }
    return true;
  }

  /** True when a compaction snapshot after the planned one added this result's first file. */
  private static boolean landed(Table table, PartitionRewrite.Result result) {
    if (result.added().isEmpty()) {
      return false;
    }
    String first = result.added().get(0).location();
    table.refresh();
    for (Snapshot s = table.currentSnapshot();
        s != null && s.snapshotId() != result.snapshotId();
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (result.kind().equals(s.summary().get(TableHealth.MAINTENANCE))) {
        for (DataFile file : s.addedDataFiles(table.io())) {
          if (file.location().equals(first)) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
