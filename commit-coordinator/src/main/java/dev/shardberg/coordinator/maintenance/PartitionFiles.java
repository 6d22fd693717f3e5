package dev.shardberg.coordinator.maintenance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The live files of one snapshot in the table's current spec, by partition path (e.g. {@code
 * shard_number=3/id_bucket=1}): its data files as scan tasks (each with the deletes that apply to
 * it) and its delete files. What a compaction and a merge plan their rewrites on.
 */
record PartitionFiles(
    Map<String, List<FileScanTask>> tasks, Map<String, List<DeleteFile>> deletes) {

  static PartitionFiles of(Table table, long snapshotId) throws IOException {
    PartitionSpec spec = table.spec();
    Map<String, List<FileScanTask>> tasks = new TreeMap<>();
    try (CloseableIterable<FileScanTask> planned =
        table.newScan().useSnapshot(snapshotId).ignoreResiduals().planFiles()) {
      for (FileScanTask task : planned) {
        if (task.file().specId() == spec.specId()) {
          tasks
              .computeIfAbsent(
                  spec.partitionToPath(task.file().partition()), p -> new ArrayList<>())
              .add(task);
        }
      }
    }
    Map<String, List<DeleteFile>> deletes = new TreeMap<>();
    for (ManifestFile manifest : table.snapshot(snapshotId).deleteManifests(table.io())) {
      try (ManifestReader<DeleteFile> reader =
          ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
        for (DeleteFile file : reader) {
          if (file.specId() == spec.specId()) {
            deletes
                .computeIfAbsent(spec.partitionToPath(file.partition()), p -> new ArrayList<>())
                .add(file.copy());
          }
        }
      }
    }
    return new PartitionFiles(tasks, deletes);
  }

  List<FileScanTask> tasksOf(String path) {
    return tasks.getOrDefault(path, List.of());
  }

  List<DeleteFile> deletesOf(String path) {
    return deletes.getOrDefault(path, List.of());
  }
}
