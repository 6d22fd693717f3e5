package dev.shardberg.coordinator.maintenance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.BaseCombinedScanTask;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.flink.source.DataIterator;
import org.apache.iceberg.flink.source.RowDataFileScanTaskReader;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Rewrites whole partitions of one snapshot: every live data file of each chosen partition is read
 * with the deletes that apply to it (Iceberg's Flink {@link RowDataFileScanTaskReader}) and written
 * into target-size files (Iceberg's Flink {@link RowDataTaskWriterFactory}). Runs on the
 * maintenance thread; it only writes new files, it commits nothing.
 *
 * <p>Why whole partitions: an equality delete of sequence number d applies to every data file of
 * its partition with a lower sequence number. Only when every data file of the partition as of the
 * planned snapshot S is rewritten (the new files carry S's sequence number) does no live file
 * remain that a delete of S or older could apply to, so all those delete files can be dropped in
 * the same commit. Rewriting a subset would leave the delete files in place for good.
 */
final class PartitionRewrite {
  private PartitionRewrite() {}

  /** A whole-partition rewrite (every delete file dropped), or a merge of the recent files. */
  static final String COMPACTION = "compaction";

  static final String MERGE = "merge";

  /**
   * A rewrite ready to commit: replace {@code rewritten} and {@code droppedDeletes} by {@code
   * added} and {@code addedDeletes}, validated from snapshot {@code snapshotId}, every new file
   * (data and delete) at its {@code sequenceNumber}.
   *
   * @param kind {@link #COMPACTION} or {@link #MERGE}, written to the snapshot summary
   */
  record Result(
      String kind,
      long snapshotId,
      long sequenceNumber,
      List<String> partitions,
      SortedSet<Integer> shards,
      List<DataFile> rewritten,
      List<DeleteFile> droppedDeletes,
      List<DataFile> added,
      List<DeleteFile> addedDeletes,
      long bytesRead) {

    boolean isEmpty() {
      return rewritten.isEmpty() && droppedDeletes.isEmpty();
    }

    boolean isMerge() {
      return MERGE.equals(kind);
    }
  }

  static Result rewrite(
      Table table,
      long snapshotId,
      List<PartitionHealth> chosen,
      long targetFileSizeBytes,
      int attempt)
      throws IOException {
    Snapshot snapshot = table.snapshot(snapshotId);
    Set<String> paths = new java.util.HashSet<>();
    SortedSet<Integer> shards = new TreeSet<>();
    for (PartitionHealth p : chosen) {
      paths.add(p.path());
      if (p.shard() != null) {
        shards.add(p.shard());
      }
    }

    PartitionFiles files = PartitionFiles.of(table, snapshotId);
    List<FileScanTask> tasks = new ArrayList<>();
    List<DeleteFile> deletes = new ArrayList<>();
    for (String path : new TreeSet<>(paths)) {
      tasks.addAll(files.tasksOf(path));
      deletes.addAll(files.deletesOf(path));
    }

    List<DataFile> rewritten = new ArrayList<>();
    long bytesRead = deletes.stream().mapToLong(DeleteFile::fileSizeInBytes).sum();
    for (FileScanTask task : tasks) {
      rewritten.add(task.file().copy());
      bytesRead += task.file().fileSizeInBytes();
    }
    List<DataFile> added = new ArrayList<>();
    if (!tasks.isEmpty()) {
      added.addAll(write(table, tasks, targetFileSizeBytes, attempt));
    }
    return new Result(
        COMPACTION,
        snapshotId,
        snapshot.sequenceNumber(),
        new ArrayList<>(new TreeSet<>(paths)),
        shards,
        rewritten,
        deletes,
        added,
        List.of(),
        bytesRead);
  }

  static List<DataFile> write(
      Table table, List<FileScanTask> tasks, long targetFileSizeBytes, int attempt)
      throws IOException {
    FileFormat format =
        FileFormat.fromString(
            PropertyUtil.propertyAsString(
                table.properties(),
                TableProperties.DEFAULT_FILE_FORMAT,
                TableProperties.DEFAULT_FILE_FORMAT_DEFAULT));
    RowDataTaskWriterFactory factory =
        new RowDataTaskWriterFactory(
            table,
            FlinkSchemaUtil.convert(table.schema()),
            targetFileSizeBytes,
            format,
            table.properties(),
            null,
            false);
    factory.initialize(0, attempt);
    TaskWriter<RowData> writer = factory.create();
    RowDataFileScanTaskReader reader =
        new RowDataFileScanTaskReader(
            table.schema(),
            table.schema(),
            table.properties().get(TableProperties.DEFAULT_NAME_MAPPING),
            false,
            List.of());
    try (DataIterator<RowData> rows =
        new DataIterator<>(
            reader, new BaseCombinedScanTask(tasks), table.io(), table.encryption())) {
      while (rows.hasNext()) {
        writer.write(rows.next());
      }
    } catch (IOException | RuntimeException e) {
      abort(writer, e);
      throw e;
    }
    return List.of(writer.dataFiles());
  }

  private static void abort(TaskWriter<RowData> writer, Exception cause) {
    try {
      writer.abort();
    } catch (IOException | RuntimeException e) {
      cause.addSuppressed(e);
    }
  }

  /** Best effort: files of a rewrite that was not committed are orphans at worst. */
  static void deleteAdded(Table table, Result result) {
    List<String> locations = new ArrayList<>();
    result.added().forEach(f -> locations.add(f.location()));
    result.addedDeletes().forEach(f -> locations.add(f.location()));
    for (String location : locations) {
      try {
        table.io().deleteFile(location);
      } catch (RuntimeException e) {
        // left for orphan-file removal
      }
    }
  }
}
