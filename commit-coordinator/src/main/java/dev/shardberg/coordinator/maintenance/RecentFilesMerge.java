package dev.shardberg.coordinator.maintenance;

import dev.shardberg.coordinator.TableFormats;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.ContentFileUtil;
import org.apache.iceberg.util.StructLikeSet;

/**
 * Merges the recent files of a partition (shard x bucket) into one data file and one equality
 * delete file, leaving its base files alone. Runs on the maintenance thread after every checkpoint
 * commit; a whole-partition {@link PartitionRewrite} still runs every cycle.
 *
 * <p>Why: every checkpoint adds a data file, an equality-delete file and a position-delete file to
 * each partition it changed, and a reader opens every equality-delete file once per older data file
 * of its partition. Between two compaction cycles the files a full scan opens grow with the square
 * of the checkpoints since the last one. Merging the recent files after each checkpoint keeps a
 * partition at its base files, one merged data file, one merged equality-delete file and the newest
 * checkpoint's files, at a cost in proportion to the changes since the last compaction, not to the
 * partition.
 *
 * <p>Per partition of snapshot S, with k0 the lowest data sequence number of its live data files:
 *
 * <ul>
 *   <li><b>base</b> = its data files at k0 (what the last compaction wrote), kept as they are;
 *       <b>recent</b> = every other data file, read with the deletes that apply to it and written
 *       into new files (the merged data file) at S's sequence number;
 *   <li>equality deletes of sequence number &gt; k0 apply to the base files: their keys go into one
 *       new equality-delete file at S's sequence number, which applies to the base files (k0 &lt;
 *       seq(S)) exactly as they did, and not to the merged data file (same sequence number); those
 *       of sequence number &le; k0 applied to no live file and are dropped;
 *   <li>position deletes that name one recent file are dropped with it (they are applied in the
 *       merged file); any other stays.
 * </ul>
 *
 * Equality deletes committed after S still apply to base and merged files (higher sequence
 * numbers); Iceberg's validation from S drops the merge when a recent file got a new position
 * delete or went away. A partition whose merged equality deletes use different key columns (a
 * truncate's shard-only delete) is left to the next compaction.
 */
final class RecentFilesMerge {
  private RecentFilesMerge() {}

  /** One partition's merge, planned. */
  private record Plan(
      String path,
      Integer shard,
      StructLike partition,
      List<FileScanTask> recent,
      List<DeleteFile> mergedEqualityDeletes,
      List<DeleteFile> dropped,
      int[] equalityFieldIds,
      long bytes) {}

  /**
   * Plans and writes the merges of every partition of {@code snapshotId} with at least {@code
   * minFiles} files to merge, within {@code maxBytes} (the first is always taken); {@code null}
   * when none needs one.
   */
  static PartitionRewrite.Result merge(
      Table table,
      long snapshotId,
      int minFiles,
      long maxBytes,
      long targetFileSizeBytes,
      int attempt)
      throws IOException {
    Snapshot snapshot = table.snapshot(snapshotId);
    PartitionSpec spec = table.spec();
    int shardPosition = TableHealth.shardPosition(spec, table.schema().columns().get(0).fieldId());
    PartitionFiles files = PartitionFiles.of(table, snapshotId);

    List<Plan> plans = new ArrayList<>();
    long bytes = 0;
    for (Map.Entry<String, List<FileScanTask>> entry : files.tasks().entrySet()) {
      Plan plan =
          plan(
              entry.getKey(),
              entry.getValue(),
              files.deletesOf(entry.getKey()),
              shardPosition,
              minFiles);
      if (plan == null || (!plans.isEmpty() && bytes + plan.bytes() > maxBytes)) {
        continue;
      }
      plans.add(plan);
      bytes += plan.bytes();
    }
    if (plans.isEmpty()) {
      return null;
    }

    List<FileScanTask> recent = new ArrayList<>();
    List<DataFile> rewritten = new ArrayList<>();
    List<DeleteFile> dropped = new ArrayList<>();
    List<String> partitions = new ArrayList<>();
    SortedSet<Integer> shards = new TreeSet<>();
    for (Plan plan : plans) {
      recent.addAll(plan.recent());
      plan.recent().forEach(t -> rewritten.add(t.file().copy()));
      dropped.addAll(plan.dropped());
      partitions.add(plan.path());
      if (plan.shard() != null) {
        shards.add(plan.shard());
      }
    }
    List<DataFile> added = PartitionRewrite.write(table, recent, targetFileSizeBytes, attempt);
    List<DeleteFile> addedDeletes = new ArrayList<>();
    try {
      for (Plan plan : plans) {
        if (!plan.mergedEqualityDeletes().isEmpty()) {
          addedDeletes.add(writeMergedKeys(table, plan, attempt));
        }
      }
    } catch (IOException | RuntimeException e) {
      PartitionRewrite.deleteAdded(
          table,
          new PartitionRewrite.Result(
              PartitionRewrite.MERGE,
              snapshotId,
              0,
              partitions,
              shards,
              List.of(),
              List.of(),
              added,
              addedDeletes,
              0));
      throw e;
    }
    return new PartitionRewrite.Result(
        PartitionRewrite.MERGE,
        snapshotId,
        snapshot.sequenceNumber(),
        partitions,
        shards,
        rewritten,
        dropped,
        added,
        addedDeletes,
        bytes);
  }

  /**
   * The merge of one partition, or {@code null} when it has fewer than {@code minFiles} to merge.
   */
  private static Plan plan(
      String path,
      List<FileScanTask> tasks,
      List<DeleteFile> deletes,
      int shardPosition,
      int minFiles) {
    long base = Long.MAX_VALUE;
    for (FileScanTask task : tasks) {
      base = Math.min(base, task.file().dataSequenceNumber());
    }
    List<FileScanTask> recent = new ArrayList<>();
    Set<String> recentPaths = new HashSet<>();
    long bytes = 0;
    for (FileScanTask task : tasks) {
      if (task.file().dataSequenceNumber() > base) {
        recent.add(task);
        recentPaths.add(task.file().location());
        bytes += task.file().fileSizeInBytes();
      }
    }
    if (recent.isEmpty()) {
      return null;
    }
    List<DeleteFile> merged = new ArrayList<>();
    List<DeleteFile> dropped = new ArrayList<>();
    Set<List<Integer>> keyColumns = new HashSet<>();
    for (DeleteFile delete : deletes) {
      if (delete.content() == FileContent.EQUALITY_DELETES) {
        if (delete.dataSequenceNumber() > base) {
          merged.add(delete);
          keyColumns.add(List.copyOf(delete.equalityFieldIds()));
        }
        dropped.add(delete);
        bytes += delete.fileSizeInBytes();
      } else {
        String referenced = ContentFileUtil.referencedDataFileLocation(delete);
        if (referenced != null && recentPaths.contains(referenced)) {
          dropped.add(delete);
          bytes += delete.fileSizeInBytes();
        }
      }
    }
    if (keyColumns.size() > 1 || recent.size() + dropped.size() < minFiles) {
      return null;
    }
    int[] ids =
        keyColumns.isEmpty()
            ? new int[0]
            : keyColumns.iterator().next().stream().mapToInt(Integer::intValue).toArray();
    StructLike partition = tasks.get(0).file().partition();
    Integer shard = shardPosition < 0 ? null : partition.get(shardPosition, Integer.class);
    return new Plan(path, shard, partition, recent, merged, dropped, ids, bytes);
  }

  /**
   * One equality-delete file with every distinct key of the partition's merged equality deletes.
   */
  private static DeleteFile writeMergedKeys(Table table, Plan plan, int attempt)
      throws IOException {
    Set<Integer> idSet = new HashSet<>();
    for (int id : plan.equalityFieldIds()) {
      idSet.add(id);
    }
    Schema keys = TypeUtil.select(table.schema(), idSet);
    FileFormat format = TableFormats.deletes(table);
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table)
            .deleteFileFormat(format)
            .equalityFieldIds(plan.equalityFieldIds())
            .equalityDeleteRowSchema(keys)
            .build();
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 0, attempt)
            .format(format)
            .suffix("merged-deletes")
            .build();
    PartitionSpec spec = table.spec();
    EqualityDeleteWriter<Record> writer =
        writers.newEqualityDeleteWriter(
            files.newOutputFile(spec, plan.partition()), spec, plan.partition());
    StructLikeSet seen = StructLikeSet.create(keys.asStruct());
    InternalRecordWrapper wrapper = new InternalRecordWrapper(keys.asStruct());
    try (EqualityDeleteWriter<Record> w = writer) {
      for (DeleteFile delete : plan.mergedEqualityDeletes()) {
        try (CloseableIterable<Record> rows =
            FormatModelRegistry.readBuilder(
                    delete.format(), Record.class, table.io().newInputFile(delete))
                .project(keys)
                .build()) {
          for (Record row : rows) {
            if (seen.add(wrapper.copyFor(row))) {
              w.write(row);
            }
          }
        }
      }
    }
    return writer.toDeleteFile();
  }
}
