package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.io.OutputFile;

/**
 * The coordinator's temporary manifests: written at snapshot time so that state holds manifest
 * handles instead of file lists, read back at commit time, deleted once the commit landed (the
 * commit writes its own manifests, so the table never references these).
 */
final class TempManifests {
  /**
   * Placeholder snapshot id of the temporary manifests: their encoded handle needs one, and the
   * entries never reach table metadata (the commit re-adds each file under the new snapshot).
   */
  private static final long PLACEHOLDER_SNAPSHOT_ID = 0L;

  private TempManifests() {}

  /**
   * Checkpoint files of one commit, read back from the temporary manifests: what it adds, and the
   * delete files it removes (deletion vectors merged into new ones).
   */
  record Files(
      List<DataFile> dataFiles,
      List<DeleteFile> deleteFiles,
      List<DeleteFile> removedDeletes,
      List<DataFile> removedData) {
    Files(List<DataFile> dataFiles, List<DeleteFile> deleteFiles) {
      this(dataFiles, deleteFiles, List.of(), List.of());
    }

    long dataRecords() {
      return dataFiles.stream().mapToLong(ContentFile::recordCount).sum();
    }

    long deleteRecords() {
      return deleteFiles.stream().mapToLong(ContentFile::recordCount).sum();
    }
  }

  static PendingCheckpoint write(
      Table table,
      String filePrefix,
      long checkpointId,
      long flinkCheckpointId,
      String stagedBy,
      Collection<WriterResult> results)
      throws IOException {
    SortedMap<Integer, Long> scans = new TreeMap<>();
    SortedMap<Integer, Long> ownerChecks = new TreeMap<>();
    SortedMap<Integer, List<DataFile>> dataBySpec = new TreeMap<>();
    SortedMap<Integer, List<DeleteFile>> deletesBySpec = new TreeMap<>();
    SortedMap<Integer, List<DeleteFile>> removedBySpec = new TreeMap<>();
    SortedMap<Integer, List<DataFile>> removedDataBySpec = new TreeMap<>();
    List<String> referenced = new ArrayList<>();
    SortedMap<Integer, ShardCounts> counts = new TreeMap<>();
    for (WriterResult result : results) {
      for (DataFile file : result.files().dataFiles()) {
        dataBySpec.computeIfAbsent(file.specId(), id -> new ArrayList<>()).add(file);
      }
      for (DeleteFile file : result.files().deleteFiles()) {
        deletesBySpec.computeIfAbsent(file.specId(), id -> new ArrayList<>()).add(file);
      }
      for (DataFile file : result.removedDataFiles()) {
        removedDataBySpec.computeIfAbsent(file.specId(), id -> new ArrayList<>()).add(file);
      }
      for (DeleteFile file : result.files().rewrittenDeleteFiles()) {
        removedBySpec.computeIfAbsent(file.specId(), id -> new ArrayList<>()).add(file);
      }
      for (CharSequence path : result.files().referencedDataFiles()) {
        referenced.add(path.toString());
      }
      result.shardCounts().forEach((shard, c) -> counts.merge(shard, c, ShardCounts::plus));
      result
          .insertOnlyScans()
          .forEach((shard, scan) -> scans.merge(shard, scan, (a, b) -> older(table, a, b)));
      result
          .ownerChecks()
          .forEach(
              (shard, checked) -> ownerChecks.merge(shard, checked, (a, b) -> older(table, a, b)));
    }
    List<byte[]> dataManifests =
        writeDataManifests(table, filePrefix, checkpointId, "data", dataBySpec);
    List<byte[]> removedDataManifests =
        writeDataManifests(table, filePrefix, checkpointId, "removed-data", removedDataBySpec);
    List<byte[]> deleteManifests =
        writeDeleteManifests(table, filePrefix, checkpointId, "deletes", deletesBySpec);
    List<byte[]> removedManifests =
        writeDeleteManifests(table, filePrefix, checkpointId, "removed-deletes", removedBySpec);
    return new PendingCheckpoint(
        checkpointId,
        flinkCheckpointId,
        dataManifests,
        deleteManifests,
        referenced,
        counts,
        stagedBy,
        scans,
        removedManifests,
        ownerChecks,
        removedDataManifests);
  }

  private static List<byte[]> writeDataManifests(
      Table table,
      String filePrefix,
      long checkpointId,
      String kind,
      SortedMap<Integer, List<DataFile>> bySpec)
      throws IOException {
    int formatVersion = TableUtil.formatVersion(table);
    List<byte[]> manifests = new ArrayList<>();
    for (Map.Entry<Integer, List<DataFile>> entry : bySpec.entrySet()) {
      OutputFile out = newFile(table, filePrefix, checkpointId, kind, entry.getKey());
      ManifestWriter<DataFile> writer =
          ManifestFiles.write(
              formatVersion, spec(table, entry.getKey()), out, PLACEHOLDER_SNAPSHOT_ID);
      try (writer) {
        entry.getValue().forEach(writer::add);
      }
      manifests.add(ManifestFiles.encode(writer.toManifestFile()));
    }
    return manifests;
  }

  private static List<byte[]> writeDeleteManifests(
      Table table,
      String filePrefix,
      long checkpointId,
      String kind,
      SortedMap<Integer, List<DeleteFile>> bySpec)
      throws IOException {
    int formatVersion = TableUtil.formatVersion(table);
    List<byte[]> manifests = new ArrayList<>();
    for (Map.Entry<Integer, List<DeleteFile>> entry : bySpec.entrySet()) {
      OutputFile out = newFile(table, filePrefix, checkpointId, kind, entry.getKey());
      ManifestWriter<DeleteFile> writer =
          ManifestFiles.writeDeleteManifest(
              formatVersion, spec(table, entry.getKey()), out, PLACEHOLDER_SNAPSHOT_ID);
      try (writer) {
        entry.getValue().forEach(writer::add);
      }
      manifests.add(ManifestFiles.encode(writer.toManifestFile()));
    }
    return manifests;
  }

  /**
   * Of two writers' scans of one shard, the older one (its check covers more history): no snapshot
   * is oldest, then the lower sequence number; a snapshot the table no longer has counts as older.
   */
  static long older(Table table, long a, long b) {
    if (a == PendingCheckpoint.NO_SNAPSHOT || b == PendingCheckpoint.NO_SNAPSHOT) {
      return PendingCheckpoint.NO_SNAPSHOT;
    }
    if (a == b) {
      return a;
    }
    var snapshotA = table.snapshot(a);
    var snapshotB = table.snapshot(b);
    if (snapshotA == null || snapshotB == null) {
      return snapshotA == null ? a : b;
    }
    return snapshotA.sequenceNumber() <= snapshotB.sequenceNumber() ? a : b;
  }

  static Files read(Table table, PendingCheckpoint pending) throws IOException {
    return new Files(
        readDataManifests(table, pending.dataManifests()),
        readDeleteManifests(table, pending.deleteManifests()),
        readDeleteManifests(table, pending.removedDeleteManifests()),
        readDataManifests(table, pending.removedDataManifests()));
  }

  private static List<DataFile> readDataManifests(Table table, List<byte[]> manifests)
      throws IOException {
    List<DataFile> dataFiles = new ArrayList<>();
    for (byte[] encoded : manifests) {
      ManifestFile manifest = ManifestFiles.decode(encoded);
      try (ManifestReader<DataFile> reader =
          ManifestFiles.read(manifest, table.io(), table.specs())) {
        for (DataFile file : reader) {
          dataFiles.add(file.copy());
        }
      }
    }
    return dataFiles;
  }

  private static List<DeleteFile> readDeleteManifests(Table table, List<byte[]> manifests)
      throws IOException {
    List<DeleteFile> deleteFiles = new ArrayList<>();
    for (byte[] encoded : manifests) {
      ManifestFile manifest = ManifestFiles.decode(encoded);
      try (ManifestReader<DeleteFile> reader =
          ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
        for (DeleteFile file : reader) {
          deleteFiles.add(file.copy());
        }
      }
    }
    return deleteFiles;
  }

  /** Best effort: a leftover temporary manifest is an orphan file, never a correctness problem. */
  static int delete(Table table, PendingCheckpoint pending) {
    int deleted = 0;
    List<byte[]> all = new ArrayList<>(pending.dataManifests());
    all.addAll(pending.deleteManifests());
    all.addAll(pending.removedDeleteManifests());
    all.addAll(pending.removedDataManifests());
    for (byte[] encoded : all) {
      try {
        table.io().deleteFile(ManifestFiles.decode(encoded).path());
        deleted++;
      } catch (IOException | RuntimeException e) {
        // logged by the caller as a count; the file is left for orphan-file cleanup
      }
    }
    return deleted;
  }

  private static PartitionSpec spec(Table table, int specId) {
    PartitionSpec spec = table.specs().get(specId);
    if (spec == null) {
      throw new IllegalStateException(
          String.format(
              "Cannot commit to table %s: the writers wrote files with partition spec %d, which the"
                  + " table no longer has (specs %s). The table layout no longer matches what the"
                  + " writers write; restart the job.",
              table.name(), specId, table.specs().keySet()));
    }
    return spec;
  }

  private static OutputFile newFile(
      Table table, String prefix, long checkpointId, String kind, int specId) {
    String dir =
        table
            .properties()
            .getOrDefault(TableProperties.WRITE_METADATA_LOCATION, table.location() + "/metadata");
    String name =
        String.format(
            Locale.ROOT,
            "%s-%d-%s-%d-%s.avro",
            prefix,
            checkpointId,
            kind,
            specId,
            UUID.randomUUID());
    try {
      return table.io().newOutputFile(dir + "/" + name);
    } catch (RuntimeException e) {
      throw new UncheckedIOException(
          new IOException("Cannot create temporary manifest " + name + " in " + dir, e));
    }
  }
}
