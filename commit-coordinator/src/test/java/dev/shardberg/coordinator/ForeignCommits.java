package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.util.StructLikeWrapper;

/**
 * Commits made to a test table by someone other than a Shardberg pipeline, the way an operator's
 * tool would make them (plain Iceberg API, no pipeline id in the summary).
 */
final class ForeignCommits {
  /** How the names of the other tool's position-delete files (v2) begin. */
  static final String FOREIGN_DELETE_PREFIX = "foreign-delete-";

  private ForeignCommits() {}

  /**
   * An external compaction of one shard: each of its partitions' live rows rewritten into one new
   * data file, its data files and their deletes by position removed, in one {@code replace}.
   * Returns how many rows were rewritten.
   */
  static int compactShard(Table table, int shard) {
    table.refresh();
    Set<DataFile> oldData = new HashSet<>();
    Set<DeleteFile> oldDeletes = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().filter(Expressions.equal("shard_number", shard)).planFiles()) {
      for (FileScanTask task : tasks) {
        oldData.add(task.file());
        task.deletes().stream()
            .filter(d -> d.content() == org.apache.iceberg.FileContent.POSITION_DELETES)
            .forEach(oldDeletes::add);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (oldData.isEmpty()) {
      return 0; // nothing of the shard to compact
    }
    Map<StructLikeWrapper, List<Record>> byPartition = new HashMap<>();
    Map<StructLikeWrapper, PartitionKey> keys = new HashMap<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).where(Expressions.equal("shard_number", shard)).build()) {
      for (Record record : records) {
        PartitionKey key = new PartitionKey(table.spec(), table.schema());
        key.partition(record);
        StructLikeWrapper wrapped =
            StructLikeWrapper.forType(table.spec().partitionType()).set(key);
        keys.putIfAbsent(wrapped, key);
        byPartition.computeIfAbsent(wrapped, k -> new ArrayList<>()).add(record.copy());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Set<DataFile> newData = new HashSet<>();
    GenericAppenderFactory appenders = new GenericAppenderFactory(table.schema(), table.spec());
    int rows = 0;
    for (Map.Entry<StructLikeWrapper, List<Record>> entry : byPartition.entrySet()) {
      PartitionKey partition = keys.get(entry.getKey());
      String location =
          table
              .locationProvider()
              .newDataLocation(
                  table.spec(), partition, "foreign-compaction-" + System.nanoTime() + ".parquet");
      EncryptedOutputFile out =
          EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location));
      DataWriter<Record> writer = appenders.newDataWriter(out, FileFormat.PARQUET, partition);
      try (writer) {
        entry.getValue().forEach(writer::write);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      newData.add(writer.toDataFile());
      rows += entry.getValue().size();
    }
    table
        .newRewrite()
        .validateFromSnapshot(table.currentSnapshot().snapshotId())
        .rewriteFiles(oldData, oldDeletes, newData, Set.of())
        .commit();
    return rows;
  }

  /**
   * A row-level {@code DELETE} by another tool, as an engine's merge-on-read delete makes it: the
   * live rows of {@code keys} (shard, id) found with their file and position, then on a format-v3
   * table one deletion vector per data file, merged with the file's current one (which the commit
   * removes), on v2 one position-delete file per data file; one {@code RowDelta} validated from the
   * snapshot it read. Keys not live now are skipped; returns how many rows it deleted (0: no
   * commit).
   */
  static int deleteRows(Table table, java.util.Collection<List<Long>> keys) {
    table.refresh();
    org.apache.iceberg.Snapshot base = table.currentSnapshot();
    if (base == null || keys.isEmpty()) {
      return 0;
    }
    Set<List<Long>> wanted = new HashSet<>(keys);
    org.apache.iceberg.Schema projection =
        org.apache.iceberg.types.TypeUtil.join(
            table.schema().select("shard_number", "id"),
            new org.apache.iceberg.Schema(
                org.apache.iceberg.MetadataColumns.FILE_PATH,
                org.apache.iceberg.MetadataColumns.ROW_POSITION));
    Map<String, java.util.TreeSet<Long>> positions = new java.util.TreeMap<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).useSnapshot(base.snapshotId()).project(projection).build()) {
      for (Record record : records) {
        List<Long> key =
            List.of(
                ((Integer) record.getField("shard_number")).longValue(),
                (Long) record.getField("id"));
        if (wanted.contains(key)) {
          positions
              .computeIfAbsent(record.getField("_file").toString(), f -> new java.util.TreeSet<>())
              .add((Long) record.getField("_pos"));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (positions.isEmpty()) {
      return 0;
    }
    Map<String, DataFile> dataFiles = new HashMap<>();
    Map<String, DeleteFile> currentDvs = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(base.snapshotId()).planFiles()) {
      for (FileScanTask task : tasks) {
        String location = task.file().location();
        if (positions.containsKey(location)) {
          dataFiles.put(location, task.file());
          task.deletes().stream()
              .filter(org.apache.iceberg.util.ContentFileUtil::isDV)
              .forEach(dv -> currentDvs.put(location, dv));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<DeleteFile> added = new ArrayList<>();
    List<DeleteFile> removed = new ArrayList<>();
    int deleted = 0;
    try {
      if (org.apache.iceberg.TableUtil.formatVersion(table) >= 3) {
        org.apache.iceberg.data.BaseDeleteLoader loader =
            new org.apache.iceberg.data.BaseDeleteLoader(dv -> table.io().newInputFile(dv));
        org.apache.iceberg.deletes.BaseDVFileWriter writer =
            new org.apache.iceberg.deletes.BaseDVFileWriter(
                org.apache.iceberg.io.OutputFileFactory.builderFor(table, 9_999, System.nanoTime())
                    .format(FileFormat.PUFFIN)
                    .build(),
                file -> {
                  DeleteFile previous = currentDvs.get(file);
                  return previous == null
                      ? null
                      : loader.loadPositionDeletes(List.of(previous), file);
                });
        try (writer) {
          for (Map.Entry<String, java.util.TreeSet<Long>> e : positions.entrySet()) {
            DataFile file = dataFiles.get(e.getKey());
            for (long position : e.getValue()) {
              writer.delete(
                  e.getKey(), position, table.specs().get(file.specId()), file.partition());
              deleted++;
            }
          }
        }
        added.addAll(writer.result().deleteFiles());
        removed.addAll(writer.result().rewrittenDeleteFiles());
      } else {
        GenericAppenderFactory appenders = new GenericAppenderFactory(table.schema(), table.spec());
        for (Map.Entry<String, java.util.TreeSet<Long>> e : positions.entrySet()) {
          DataFile file = dataFiles.get(e.getKey());
          String location =
              table
                  .locationProvider()
                  .newDataLocation(
                      table.specs().get(file.specId()),
                      file.partition(),
                      FOREIGN_DELETE_PREFIX + System.nanoTime() + ".parquet");
          org.apache.iceberg.deletes.PositionDeleteWriter<Record> writer =
              appenders.newPosDeleteWriter(
                  EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
                  FileFormat.PARQUET,
                  file.partition());
          try (writer) {
            org.apache.iceberg.deletes.PositionDelete<Record> delete =
                org.apache.iceberg.deletes.PositionDelete.create();
            for (long position : e.getValue()) {
              writer.write(delete.set(e.getKey(), position, null));
              deleted++;
            }
          }
          added.add(writer.toDeleteFile());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    org.apache.iceberg.RowDelta delta =
        table
            .newRowDelta()
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist(positions.keySet())
            .validateDeletedFiles()
            .validateNoConflictingDeleteFiles();
    added.forEach(delta::addDeletes);
    removed.forEach(delta::removeDeletes);
    delta.commit();
    return deleted;
  }
}
