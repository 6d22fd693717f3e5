package dev.shardberg.coordinator;

import java.util.List;
import java.util.SortedMap;

/**
 * One checkpoint's changes, snapshotted but not yet committed: the coordinator's only state.
 *
 * <p>Files are kept as temporary Iceberg manifests (their encoded {@code ManifestFile} handles),
 * not as raw file lists, so state size does not grow with the number of files.
 *
 * @param checkpointId the pipeline's checkpoint sequence number, written as {@code
 *     shardberg.checkpoint-id}; the key of the pending map
 * @param flinkCheckpointId the Flink checkpoint whose barrier closed these files
 * @param dataManifests encoded manifests of the data files, one per partition spec
 * @param deleteManifests encoded manifests of the delete files, one per partition spec
 * @param referencedDataFiles data files named by position deletes; must still exist at commit
 * @param shardCounts per-shard changes, by shard number
 * @param stagedBy run of the coordinator that staged this checkpoint ({@link PipelineProgress}: its
 *     Flink job id in state of releases before runs); null when restored from version-1 state
 * @param insertOnlyScans shards that got insert-only rows in this checkpoint, each with the
 *     snapshot id from which their check must start: the writers' scan, or a later snapshot up to
 *     which the check already held ({@link VerifiedPoints}) ({@code -1}: the table had no
 *     snapshot); empty when the checkpoint has no insert-only rows
 * @param removedDeleteManifests encoded manifests of the delete files the commit removes, one per
 *     partition spec: deletion vectors the writers merged into new ones (a data file keeps one);
 *     empty in state of releases before deletion vectors
 * @param ownerChecks with deletes by position ({@code target.delete-mode: position}): the shards
 *     this checkpoint changed, each with the snapshot up to which their writers (the partitions'
 *     owners) checked that no other committer changed them; the commit checks the rest of the way
 *     ({@link InsertOnlyCheck#foreignChange}). Empty in the other mode and in state of releases
 *     before this check
 * @param removedDataManifests encoded manifests of the data files the commit removes, one per
 *     partition spec: files the partitions' owners rewrote (their rows are in this checkpoint's
 *     data files); empty in state of releases before owner compaction
 */
record PendingCheckpoint(
    long checkpointId,
    long flinkCheckpointId,
    List<byte[]> dataManifests,
    List<byte[]> deleteManifests,
    List<String> referencedDataFiles,
    SortedMap<Integer, ShardCounts> shardCounts,
    String stagedBy,
    SortedMap<Integer, Long> insertOnlyScans,
    List<byte[]> removedDeleteManifests,
    SortedMap<Integer, Long> ownerChecks,
    List<byte[]> removedDataManifests) {

  /** No snapshot in the table when the writer scanned it. */
  static final long NO_SNAPSHOT = -1L;

  /** An entry that removes no delete file. */
  PendingCheckpoint(
      long checkpointId,
      long flinkCheckpointId,
      List<byte[]> dataManifests,
      List<byte[]> deleteManifests,
      List<String> referencedDataFiles,
      SortedMap<Integer, ShardCounts> shardCounts,
      String stagedBy,
      SortedMap<Integer, Long> insertOnlyScans) {
    this(
        checkpointId,
        flinkCheckpointId,
        dataManifests,
        deleteManifests,
        referencedDataFiles,
        shardCounts,
        stagedBy,
        insertOnlyScans,
        List.of(),
        java.util.Collections.emptySortedMap(),
        List.of());
  }

  PendingCheckpoint {
    removedDataManifests = removedDataManifests == null ? List.of() : removedDataManifests;
    ownerChecks =
        ownerChecks == null
            ? java.util.Collections.emptySortedMap()
            : java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(ownerChecks));
    removedDeleteManifests = removedDeleteManifests == null ? List.of() : removedDeleteManifests;
    insertOnlyScans =
        java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(insertOnlyScans));
    dataManifests = List.copyOf(dataManifests);
    deleteManifests = List.copyOf(deleteManifests);
    referencedDataFiles = List.copyOf(referencedDataFiles);
    shardCounts = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(shardCounts));
  }

  /** The same entry under another pipeline checkpoint id (renumbered past another instance's). */
  PendingCheckpoint withCheckpointId(long id) {
    return new PendingCheckpoint(
        id,
        flinkCheckpointId,
        dataManifests,
        deleteManifests,
        referencedDataFiles,
        shardCounts,
        stagedBy,
        insertOnlyScans,
        removedDeleteManifests,
        ownerChecks,
        removedDataManifests);
  }

  /** The same entry with its insert-only scans moved to later verified points. */
  PendingCheckpoint withInsertOnlyScans(SortedMap<Integer, Long> scans) {
    return new PendingCheckpoint(
        checkpointId,
        flinkCheckpointId,
        dataManifests,
        deleteManifests,
        referencedDataFiles,
        shardCounts,
        stagedBy,
        scans,
        removedDeleteManifests,
        ownerChecks,
        removedDataManifests);
  }

  boolean isEmpty() {
    return dataManifests.isEmpty()
        && deleteManifests.isEmpty()
        && removedDeleteManifests.isEmpty()
        && removedDataManifests.isEmpty();
  }
}
