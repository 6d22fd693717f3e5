package dev.shardberg.coordinator;

import java.util.List;
import java.util.SortedMap;

/**
 * One checkpoint's changes, snapshotted but not yet committed: the coordinator's only state.
 *
 * <p>Files are kept as temporary Iceberg manifests (their encoded {@code ManifestFile} handles), not
 * as raw file lists, so state size does not grow with the number of files.
 *
 * @param checkpointId the pipeline's checkpoint sequence number, written as {@code
 *     shardberg.checkpoint-id}; the key of the pending map
 * @param flinkCheckpointId the Flink checkpoint whose barrier closed these files
 * @param dataManifests encoded manifests of the data files, one per partition spec
 * @param deleteManifests encoded manifests of the delete files, one per partition spec
 * @param referencedDataFiles data files named by position deletes; must still exist at commit
 * @param shardCounts per-shard changes, by shard number
 */
record PendingCheckpoint(
    long checkpointId,
    long flinkCheckpointId,
    List<byte[]> dataManifests,
    List<byte[]> deleteManifests,
    List<String> referencedDataFiles,
    SortedMap<Integer, ShardCounts> shardCounts) {

  PendingCheckpoint {
    dataManifests = List.copyOf(dataManifests);
    deleteManifests = List.copyOf(deleteManifests);
    referencedDataFiles = List.copyOf(referencedDataFiles);
    shardCounts = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(shardCounts));
  }

  boolean isEmpty() {
    return dataManifests.isEmpty() && deleteManifests.isEmpty();
  }
}
