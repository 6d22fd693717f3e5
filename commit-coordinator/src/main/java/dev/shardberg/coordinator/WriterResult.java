package dev.shardberg.coordinator;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.io.WriteResult;

/**
 * What one writer subtask completed for one checkpoint: its closed files and per-shard counts. Sent
 * from the writers to the coordinator; never kept in state (the coordinator turns it into manifests
 * at snapshot time).
 */
final class WriterResult implements Serializable {
  private static final long serialVersionUID = 1L;

  private final long checkpointId;
  private final int subtask;
  private final WriteResult files;
  private final TreeMap<Integer, ShardCounts> shardCounts;
  private final TreeMap<Integer, Long> insertOnlyScans;

  /**
   * Shards with snapshot reads (INSERT rows) in this checkpoint: a re-read shard's snapshot
   * started.
   */
  private final TreeSet<Integer> snapshotShards;

  /**
   * As the owner of its partitions: the shards changed in this checkpoint, each with the snapshot
   * up to which the writer checked that no other committer changed them (null from a writer of a
   * release before the check).
   */
  private final TreeMap<Integer, Long> ownerChecks;

  /** Data files the owners' compaction rewrote: the commit removes them (null: none). */
  private final ArrayList<DataFile> removedDataFiles;

  /**
   * As the owner of its partitions: the shards this writer takes as read again in this run, their
   * partitions started empty (null: none). The coordinator removes such a shard's old files only
   * when every writer says so.
   */
  private final TreeSet<Integer> freshShards;

  WriterResult(
      long checkpointId, int subtask, WriteResult files, Map<Integer, ShardCounts> counts) {
    this(checkpointId, subtask, files, counts, Map.of());
  }

  /**
   * @param insertOnlyScans shards this writer wrote insert-only rows of in this checkpoint, each
   *     with the snapshot id it scanned to find them empty ({@link PendingCheckpoint#NO_SNAPSHOT}:
   *     none)
   */
  WriterResult(
      long checkpointId,
      int subtask,
      WriteResult files,
      Map<Integer, ShardCounts> counts,
      Map<Integer, Long> insertOnlyScans) {
    this(checkpointId, subtask, files, counts, insertOnlyScans, Set.of());
  }

  /**
   * @param snapshotShards shards this writer got snapshot reads (INSERT rows) of in this checkpoint
   */
  WriterResult(
      long checkpointId,
      int subtask,
      WriteResult files,
      Map<Integer, ShardCounts> counts,
      Map<Integer, Long> insertOnlyScans,
      Set<Integer> snapshotShards) {
    this(checkpointId, subtask, files, counts, insertOnlyScans, snapshotShards, Map.of());
  }

  /**
   * @param ownerChecks as the owner of its partitions, the shards changed in this checkpoint, each
   *     with the snapshot up to which the writer checked them
   */
  WriterResult(
      long checkpointId,
      int subtask,
      WriteResult files,
      Map<Integer, ShardCounts> counts,
      Map<Integer, Long> insertOnlyScans,
      Set<Integer> snapshotShards,
      Map<Integer, Long> ownerChecks) {
    this(
        checkpointId,
        subtask,
        files,
        counts,
        insertOnlyScans,
        snapshotShards,
        ownerChecks,
        List.of());
  }

  /**
   * @param removedDataFiles data files the owners' compaction rewrote (their rows are in {@code
   *     files}' new data files): the commit removes them
   */
  WriterResult(
      long checkpointId,
      int subtask,
      WriteResult files,
      Map<Integer, ShardCounts> counts,
      Map<Integer, Long> insertOnlyScans,
      Set<Integer> snapshotShards,
      Map<Integer, Long> ownerChecks,
      List<DataFile> removedDataFiles) {
    this(
        checkpointId,
        subtask,
        files,
        counts,
        insertOnlyScans,
        snapshotShards,
        ownerChecks,
        removedDataFiles,
        Set.of());
  }

  /**
   * @param freshShards as the owner of its partitions, the shards this writer takes as read again
   *     in this run (their partitions start empty)
   */
  WriterResult(
      long checkpointId,
      int subtask,
      WriteResult files,
      Map<Integer, ShardCounts> counts,
      Map<Integer, Long> insertOnlyScans,
      Set<Integer> snapshotShards,
      Map<Integer, Long> ownerChecks,
      List<DataFile> removedDataFiles,
      Set<Integer> freshShards) {
    this.freshShards = new TreeSet<>(freshShards);
    this.removedDataFiles = new ArrayList<>(removedDataFiles);
    this.ownerChecks = new TreeMap<>(ownerChecks);
    this.snapshotShards = new TreeSet<>(snapshotShards);
    this.checkpointId = checkpointId;
    this.subtask = subtask;
    this.files = files;
    this.shardCounts = new TreeMap<>(counts);
    this.insertOnlyScans = new TreeMap<>(insertOnlyScans);
  }

  SortedMap<Integer, Long> insertOnlyScans() {
    return Collections.unmodifiableSortedMap(insertOnlyScans);
  }

  SortedMap<Integer, Long> ownerChecks() {
    return ownerChecks == null
        ? Collections.emptySortedMap()
        : Collections.unmodifiableSortedMap(ownerChecks);
  }

  List<DataFile> removedDataFiles() {
    return removedDataFiles == null ? List.of() : Collections.unmodifiableList(removedDataFiles);
  }

  SortedSet<Integer> freshShards() {
    return freshShards == null
        ? Collections.emptySortedSet()
        : Collections.unmodifiableSortedSet(freshShards);
  }

  SortedSet<Integer> snapshotShards() {
    return Collections.unmodifiableSortedSet(snapshotShards);
  }

  long checkpointId() {
    return checkpointId;
  }

  int subtask() {
    return subtask;
  }

  WriteResult files() {
    return files;
  }

  SortedMap<Integer, ShardCounts> shardCounts() {
    return Collections.unmodifiableSortedMap(shardCounts);
  }

  boolean isEmpty() {
    return files.dataFiles().length == 0
        && files.deleteFiles().length == 0
        && removedDataFiles().isEmpty();
  }

  @Override
  public String toString() {
    return "WriterResult{checkpoint="
        + checkpointId
        + ", subtask="
        + subtask
        + ", dataFiles="
        + files.dataFiles().length
        + ", deleteFiles="
        + files.deleteFiles().length
        + ", shards="
        + shardCounts.keySet()
        + '}';
  }
}
