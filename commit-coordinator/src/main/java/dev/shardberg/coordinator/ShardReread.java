package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.util.StructLikeWrapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shards read again from a fresh snapshot in a restored job (excluded for a while, then included
 * again: the source snapshots them as newly added tables) replace their rows: the coordinator adds,
 * to the checkpoint that holds the first snapshot rows of such a shard, an equality delete by the
 * shard column alone for every partition of it that holds files. Those deletes carry that
 * checkpoint's sequence number, so they remove every older row of the shard and none that the new
 * snapshot writes (in that checkpoint or later). Triggered by the snapshot rows themselves, not by
 * the restore alone: a source that does not read the shard again (its position survived in the
 * restored state) leaves the rows as they are rather than emptying the shard. (A shard that is
 * empty on MySQL when read again sends no row, so its old rows stay.)
 *
 * <p>Shards gone from the plan ({@code tables.dropped-shards: delete}): a shard the restored state
 * knows that the plan no longer has and {@code tables.exclude-shards} does not list — its MySQL
 * table dropped while the job was stopped, or its host removed from the config — loses every row
 * with the first checkpoint this run stages, by the same delete by shard. Ordered: no row of such a
 * shard is written by this run, so the delete with that checkpoint's sequence number removes
 * exactly the shard's rows. Across restores: the state keeps knowing the shard until the checkpoint
 * holding the delete is staged (it then travels in that pending checkpoint), so a restore from
 * before does it again and one from after commits it. A shard dropped while the job runs takes this
 * way too, at the next resume: the running job does not remove it (the delete by shard of a
 * checkpoint cannot remove rows the same checkpoint writes, and Flink CDC does not deliver the DROP
 * in order with the shard's rows), so its rows stay until then.
 *
 * <p>Shards the running job captured ({@code tables.new-shards: capture}: a {@code CREATE TABLE}
 * read from the binlog, not in the plan the job started with) are known to the state from the first
 * checkpoint that writes them, apart from the plan's ({@link #captured}): at the next resume one
 * whose table is still there is in the plan and read again from a fresh snapshot (the source never
 * snapshotted it), its rows replaced; one dropped meanwhile is gone from the plan like any other
 * shard, and with {@code tables.dropped-shards: delete} its rows leave the table.
 */
final class ShardReread {
  private static final Logger LOG = LoggerFactory.getLogger(ShardReread.class);

  private final CoordinatorOptions options;

  /** The shards this pipeline's state knows; null when the pipeline's shards are not known. */
  private final SortedSet<Integer> known;

  /** Shards of this run the restored state did not know: read again, their old rows replaced. */
  private final SortedSet<Integer> reread = new TreeSet<>();

  /** Shards gone from the plan whose rows go with the next staged checkpoint. */
  private final SortedSet<Integer> removing = new TreeSet<>();

  /**
   * Shards this run wrote that its plan does not have (captured while the job runs), and shards
   * captured in the run it resumed from that are being removed; kept in state apart from {@link
   * #known}.
   */
  private final SortedSet<Integer> captured = new TreeSet<>();

  private ShardReread(CoordinatorOptions options, SortedSet<Integer> known) {
    this.options = options;
    this.known = known;
  }

  /**
   * Which shards the state knows, and which of this run's shards to replace: those a restored state
   * does not know. A first run knows every shard it writes (a start without state on a table with
   * data is checked before the job starts); state from before this bookkeeping ({@code
   * restoredKnown} null) knows every shard too. A shard new to the restored state is replaced when
   * it is in {@code options.rereadShards()} (the job passes every shard when its source snapshots
   * new shards by itself, the {@code initial} startup mode); any other is refused, naming the way
   * on: a source that would read it from the binlog alone.
   *
   * @param restoredKnown the shards the restored state knows; null without state, or state from
   *     before the bookkeeping
   */
  static ShardReread start(CoordinatorOptions options, SortedSet<Integer> restoredKnown) {
    return start(options, restoredKnown, java.util.Collections.emptySortedSet(), false);
  }

  /**
   * As above, with the shards the restored run captured while it ran ({@code restoredCaptured}):
   * known to the restored state like its plan's. Restored with the plan it started with ({@code
   * samePlan}: a failover), the job goes on capturing them, so they stay captured; restored with a
   * new plan (a resume, whatever its Flink job id), that plan was discovered anew and holds those
   * still on MySQL.
   */
  static ShardReread start(
      CoordinatorOptions options,
      SortedSet<Integer> restoredKnown,
      SortedSet<Integer> restoredCaptured,
      boolean samePlan) {
    if (samePlan && options.shards() != null && restoredKnown != null) {
      ShardReread failover = start(options, restoredKnown);
      failover.captured.addAll(restoredCaptured);
      failover.captured.removeAll(options.shards());
      return failover;
    }
    if (options.shards() == null) {
      return new ShardReread(options, restoredKnown == null ? null : new TreeSet<>(restoredKnown));
    }
    if (restoredKnown == null) {
      return new ShardReread(options, new TreeSet<>(options.shards()));
    }
    ShardReread bookkeeping = new ShardReread(options, new TreeSet<>(restoredKnown));
    SortedSet<Integer> left = new TreeSet<>(restoredKnown);
    left.addAll(restoredCaptured);
    left.removeAll(options.shards());
    SortedSet<Integer> excluded = new TreeSet<>(left);
    if (options.excludedShards() != null) {
      excluded.retainAll(options.excludedShards());
    } else {
      excluded.clear();
    }
    SortedSet<Integer> gone = new TreeSet<>(left);
    gone.removeAll(excluded);
    if (!excluded.isEmpty()) {
      LOG.info(
          "Pipeline {} no longer writes shard(s) {} of table {} (excluded): their rows stay as they are; included again"
              + " later, each is read from a fresh snapshot and its rows replaced",
          options.pipelineId(),
          excluded,
          options.tableName());
    }
    if (!gone.isEmpty() && options.removeGoneShards()) {
      LOG.info(
          "Pipeline {} no longer finds shard(s) {} of table {} (their MySQL table dropped, or their host removed from"
              + " the config): tables.dropped-shards is delete, so every row of them leaves the table with this run's"
              + " first checkpoint",
          options.pipelineId(),
          gone,
          options.tableName());
      bookkeeping.removing.addAll(gone);
    } else if (!gone.isEmpty()) {
      LOG.info(
          "Pipeline {} no longer finds shard(s) {} of table {} (their MySQL table dropped, or their host removed from"
              + " the config): their rows stay in the table (tables.dropped-shards: keep). Delete them yourself if"
              + " they must go (DELETE … WHERE shard_number IN …)",
          options.pipelineId(),
          gone,
          options.tableName());
    }
    // the shards being removed stay known until the checkpoint that removes them is staged
    bookkeeping.known.retainAll(
        java.util.stream.Stream.concat(options.shards().stream(), bookkeeping.removing.stream())
            .collect(java.util.stream.Collectors.toSet()));
    // captured shards still there are in the plan now: new to the state, so read again below
    bookkeeping.captured.addAll(restoredCaptured);
    bookkeeping.captured.retainAll(bookkeeping.removing);
    bookkeeping.reread.addAll(options.shards());
    bookkeeping.reread.removeAll(bookkeeping.known);
    SortedSet<Integer> undeclared = new TreeSet<>(bookkeeping.reread);
    if (options.rereadShards() != null) {
      undeclared.removeAll(options.rereadShards());
    }
    if (!undeclared.isEmpty()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot resume pipeline %s on table %s: shard(s) %s are new to the restored state (created since, or"
                  + " left out with tables.exclude-shards in the run it resumes from), and this run would read them"
                  + " from the binlog alone (source.startup-mode is not initial): the table would keep their old rows"
                  + " and miss those never changed since. Resume again from the same checkpoint with"
                  + " tables.reread-shards: %s (they are then read from a fresh snapshot and their old rows"
                  + " replaced), or leave them in tables.exclude-shards",
              options.pipelineId(), options.tableName(), undeclared, undeclared));
    }
    if (!bookkeeping.reread.isEmpty()) {
      LOG.info(
          "Pipeline {} writes shard(s) {} of table {} that the restored state does not know (created since, or left"
              + " out before): the source reads each alone from a fresh snapshot, and the checkpoint that holds its"
              + " first rows deletes any older rows of that shard number in the table",
          options.pipelineId(),
          bookkeeping.reread,
          options.tableName());
    }
    return bookkeeping;
  }

  /** The shards the state knows (to keep in state); null when not known. */
  SortedSet<Integer> known() {
    return known == null ? null : java.util.Collections.unmodifiableSortedSet(known);
  }

  /**
   * The shards whose old rows go with this checkpoint: those read again whose fresh snapshot began
   * in it. A shard read again whose changes come from the binlog before any snapshot row means the
   * source went on with it from the binlog alone (resumed without {@code tables.reread-shards}):
   * the table would keep its old rows and miss the ones never changed since, so the checkpoint
   * fails before anything of it is committed.
   */
  SortedSet<Integer> replacedBy(long checkpointId, List<WriterResult> results) {
    SortedSet<Integer> replaced = new TreeSet<>();
    if (reread.isEmpty()) {
      return replaced;
    }
    results.forEach(r -> replaced.addAll(r.snapshotShards()));
    replaced.retainAll(reread);
    SortedSet<Integer> unread = new TreeSet<>();
    results.forEach(r -> unread.addAll(r.shardCounts().keySet()));
    unread.retainAll(reread);
    unread.removeAll(replaced);
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
    return replaced;
  }

  /**
   * Deletes by position: the checkpoint that removes the old files of {@code replaced} must not
   * delete a row of theirs by position, so every writer must have started those shards' partitions
   * empty. A writer restored from the state of a release that did not keep the known shards takes
   * every shard as known: refused, naming the way on, before anything is committed.
   */
  static void checkWritersStartEmpty(
      CoordinatorOptions options,
      long checkpointId,
      SortedSet<Integer> replaced,
      List<WriterResult> results) {
    for (WriterResult result : results) {
      SortedSet<Integer> missing = new TreeSet<>(replaced);
      missing.removeAll(result.freshShards());
      if (!missing.isEmpty()) {
        throw new PipelineConflictException(
            String.format(
                "Cannot stage checkpoint %d of pipeline %s for table %s: shard(s) %s are read again from a"
                    + " fresh snapshot, and with 'target.delete-mode' = position their old files leave the"
                    + " table with this checkpoint, but writer %d still takes their old rows as live (its"
                    + " state was written by an older release, which did not keep the shards it knows)."
                    + " Resume from the same checkpoint with tables.exclude-shards: %s, let one checkpoint"
                    + " complete, then resume from that one with them included",
                checkpointId,
                options.pipelineId(),
                options.tableName(),
                missing,
                result.subtask(),
                missing));
      }
    }
  }

  /**
   * The shards gone from the plan whose rows go with the next staged checkpoint (empty once they
   * went; see {@link #removed}).
   */
  SortedSet<Integer> removing() {
    return java.util.Collections.unmodifiableSortedSet(new TreeSet<>(removing));
  }

  /**
   * The shards this run captured (and those of the resumed run being removed): to keep in state,
   * and recorded with the plan's in the table ({@link PipelineShards}).
   */
  SortedSet<Integer> captured() {
    return java.util.Collections.unmodifiableSortedSet(new TreeSet<>(captured));
  }

  /**
   * A checkpoint's writer results are staged: a shard they write that the plan does not have was
   * captured while the job runs ({@code tables.new-shards: capture}); known from now on.
   */
  void written(List<WriterResult> results) {
    if (options.shards() == null) {
      return;
    }
    for (WriterResult result : results) {
      for (Map.Entry<Integer, ShardCounts> shard : result.shardCounts().entrySet()) {
        if (!shard.getValue().removed() && !options.shards().contains(shard.getKey())) {
          captured.add(shard.getKey());
        }
      }
    }
  }

  /** {@code shards} were removed with a staged checkpoint: no longer known to the state. */
  void removed(SortedSet<Integer> shards) {
    removing.removeAll(shards);
    captured.removeAll(shards);
    if (known != null) {
      known.removeAll(shards);
    }
  }

  /**
   * The deletes that replace {@code shards}' older rows, as one more writer result of Flink
   * checkpoint c.
   */
  WriterResult truncations(
      Table table,
      String shardColumn,
      long flinkCheckpointId,
      long checkpointId,
      SortedSet<Integer> shards)
      throws IOException {
    return truncations(
        table, shardColumn, flinkCheckpointId, checkpointId, shards, new TreeSet<>());
  }

  /**
   * The deletes that replace {@code replaced}' older rows and remove every row of {@code gone}, as
   * one more writer result of Flink checkpoint c; {@code gone}'s counts say so ({@link
   * ShardCounts#removed}), for the snapshot summary.
   */
  WriterResult truncations(
      Table table,
      String shardColumn,
      long flinkCheckpointId,
      long checkpointId,
      SortedSet<Integer> replaced,
      SortedSet<Integer> gone)
      throws IOException {
    SortedSet<Integer> shards = new TreeSet<>(replaced);
    shards.addAll(gone);
    Map<Integer, ShardCounts> counts = new HashMap<>();
    replaced.forEach(shard -> counts.put(shard, new ShardCounts(0, 0)));
    gone.forEach(shard -> counts.put(shard, ShardCounts.REMOVED));
    if (options.deleteMode() == DeleteMode.POSITION) {
      return filesRemoved(table, shardColumn, flinkCheckpointId, checkpointId, shards, counts);
    }
    WriteResult deletes = deletesEmptying(table, shards, shardColumn);
    if (!replaced.isEmpty()) {
      LOG.info(
          "Replacing the rows of shard(s) {} in table {}: their fresh snapshot began; delete files by shard with"
              + " checkpoint {} remove every older row",
          replaced,
          options.tableName(),
          checkpointId);
    }
    if (!gone.isEmpty()) {
      LOG.info(
          "Removing every row of shard(s) {} from table {} with checkpoint {} (their MySQL table is gone;"
              + " tables.dropped-shards: delete)",
          gone,
          options.tableName(),
          checkpointId);
    }
    LOG.info(
        "{} delete files by shard for shard(s) {} of table {} with checkpoint {}",
        deletes.deleteFiles().length,
        shards,
        options.tableName(),
        checkpointId);
    return new WriterResult(flinkCheckpointId, -1, deletes, counts);
  }

  /**
   * Deletes by position: the shards' rows leave the table with their files. Every data file of
   * {@code shards} in the table now, and every delete file of theirs, is removed by the
   * checkpoint's commit (no equality delete): files this pipeline adds to them later (the fresh
   * snapshot's, in this checkpoint or after) stay. The shards' owners start their partitions empty
   * in this run ({@link PartitionOwner}), and the commit is refused if another committer changed
   * the shards after this listing ({@link WriterResult#ownerChecks}).
   */
  private WriterResult filesRemoved(
      Table table,
      String shardColumn,
      long flinkCheckpointId,
      long checkpointId,
      SortedSet<Integer> shards,
      Map<Integer, ShardCounts> counts)
      throws IOException {
    table.refresh();
    Snapshot listed = table.currentSnapshot();
    List<DataFile> dataFiles = new ArrayList<>();
    Map<String, DeleteFile> deleteFiles = new LinkedHashMap<>();
    if (listed != null && !shards.isEmpty()) {
      try (CloseableIterable<FileScanTask> tasks =
          table
              .newScan()
              .useSnapshot(listed.snapshotId())
              .filter(Expressions.in(shardColumn, shards.toArray()))
              .ignoreResiduals()
              .planFiles()) {
        for (FileScanTask task : tasks) {
          checkSpec(table, task.file());
          dataFiles.add(task.file().copyWithoutStats());
          for (DeleteFile delete : task.deletes()) {
            deleteFiles.putIfAbsent(delete.location(), delete.copyWithoutStats());
          }
        }
      }
    }
    Map<Integer, Long> checks = new HashMap<>();
    long at = listed == null ? PendingCheckpoint.NO_SNAPSHOT : listed.snapshotId();
    shards.forEach(shard -> checks.put(shard, at));
    LOG.info(
        "Shard(s) {} of table {} leave it with checkpoint {} by their files: {} data files and {} delete"
            + " files removed (deletes by position write no delete by shard)",
        shards,
        options.tableName(),
        checkpointId,
        dataFiles.size(),
        deleteFiles.size());
    WriteResult files = WriteResult.builder().addRewrittenDeleteFiles(deleteFiles.values()).build();
    return new WriterResult(
        flinkCheckpointId, -1, files, counts, Map.of(), Set.of(), checks, dataFiles);
  }

  /** {@code shards} were replaced with a staged checkpoint: known to the state from now on. */
  void replaced(SortedSet<Integer> shards) {
    if (known != null) {
      known.addAll(shards);
    }
    reread.removeAll(shards);
  }

  /**
   * The delete files that empty {@code shards} in {@code table} as of now (none for a shard without
   * files).
   */
  private static WriteResult deletesEmptying(
      Table table, SortedSet<Integer> shards, String shardColumn) throws IOException {
    table.refresh();
    if (shards.isEmpty() || table.currentSnapshot() == null) {
      return WriteResult.builder().build();
    }
    Map<Integer, Map<StructLikeWrapper, PartitionKey>> partitions = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks =
        table
            .newScan()
            .filter(Expressions.in(shardColumn, shards.toArray()))
            .ignoreResiduals()
            .planFiles()) {
      for (FileScanTask task : tasks) {
        add(partitions, task.file(), table);
        for (DeleteFile delete : task.deletes()) {
          add(partitions, delete, table);
        }
      }
    }
    List<DeleteFile> deletes = new ArrayList<>();
    Set<Integer> identifier = table.schema().identifierFieldIds();
    try (DeltaTaskWriter.Factory factory =
        DeltaTaskWriter.factory(table, FlinkSchemaUtil.convert(table.schema()), identifier, 0, 0)) {
      DeltaTaskWriter writer = factory.create();
      for (Map.Entry<Integer, Map<StructLikeWrapper, PartitionKey>> shard : partitions.entrySet()) {
        for (PartitionKey partition : shard.getValue().values()) {
          writer.truncate(partition, shard.getKey());
        }
      }
      WriteResult written = writer.complete();
      deletes.addAll(List.of(written.deleteFiles()));
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    return WriteResult.builder().addDeleteFiles(deletes).build();
  }

  private static void add(
      Map<Integer, Map<StructLikeWrapper, PartitionKey>> partitions,
      ContentFile<?> file,
      Table table) {
    checkSpec(table, file);
    StructLike partition = file.partition();
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    for (int i = 0; i < table.spec().fields().size(); i++) {
      key.set(i, partition.get(i, Object.class));
    }
    int shard = partition.get(0, Integer.class);
    partitions
        .computeIfAbsent(shard, s -> new HashMap<>())
        .putIfAbsent(StructLikeWrapper.forType(table.spec().partitionType()).set(key), key);
  }

  private static void checkSpec(Table table, ContentFile<?> file) {
    int specId = table.spec().specId();
    if (file.specId() != specId) {
      throw new IllegalStateException(
          String.format(
              "Cannot replace the rows of a shard read again in table %s: file %s is of partition spec %d, not the"
                  + " table's spec %d; Shardberg tables keep one spec",
              table.name(), file.location(), file.specId(), specId));
    }
  }
}
