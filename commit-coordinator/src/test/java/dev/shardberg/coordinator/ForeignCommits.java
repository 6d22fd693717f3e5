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
}
