package dev.shardberg.coordinator.owner;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;
import org.apache.iceberg.util.StructLikeMap;

/**
 * Where the live rows of one partition are in the committed table: key → {@link FilePosition}, at
 * one snapshot. It reads only the key columns and each row's position ({@code _pos}) of the
 * partition's data files, and applies every delete that applies to them (deletion vectors, position
 * and equality deletes), as any reader of the table would: a row counts as live exactly when a
 * reader of that snapshot sees it.
 *
 * <p>This is how a partition owner learns a partition it has not touched since it started, and how
 * it learns a partition again after the table moved past what it knew (a rewind, a foreign commit,
 * a shard read again). Two live rows with one key mean the table already holds a duplicate: the
 * read fails naming the partition, the key and both places, since no delete by position could then
 * keep the key unique.
 */
public final class CommittedRows {
  private CommittedRows() {}

  /**
   * The live rows of {@code partition} (of the table's current spec) at {@code snapshotId}, by key.
   * An empty map when the table has no snapshot yet ({@code snapshotId} null).
   *
   * @param keyFieldIds the table's key (its equality fields), whose values identify a row
   */
  public static StructLikeMap<FilePosition> live(
      Table table, Long snapshotId, StructLike partition, Set<Integer> keyFieldIds) {
    return read(table, snapshotId, partition, keyFieldIds, Expressions.alwaysTrue()).rows();
  }

  /**
   * A partition as its owner learns it: where its live rows are, and each data file's position
   * deletes (those a new delete file of the data file must merge, see {@link CommittedRowDeletes}).
   *
   * @param rows the live rows by key (generic records of the key columns)
   * @param positionDeletes by data file location, the position deletes a reader applies to it: its
   *     deletion vector, or the position-delete files (v2, or written before an upgrade to v3)
   */
  public record Partition(
      StructLikeMap<FilePosition> rows, Map<String, List<DeleteFile>> positionDeletes) {}

  /**
   * {@link #live}, and the partition's position deletes.
   *
   * @param filter a row filter that keeps at least the partition's files (e.g. its shard), so the
   *     scan plans only those
   */
  public static Partition read(
      Table table,
      Long snapshotId,
      StructLike partition,
      Set<Integer> keyFieldIds,
      Expression filter) {
    Schema keys = TypeUtil.select(table.schema(), keyFieldIds);
    StructLikeMap<FilePosition> live = StructLikeMap.create(keys.asStruct());
    Map<String, List<DeleteFile>> positionDeletes = new HashMap<>();
    if (snapshotId == null) {
      return new Partition(live, positionDeletes);
    }
    Snapshot snapshot = table.snapshot(snapshotId);
    if (snapshot == null) {
      throw new IllegalArgumentException(
          String.format(
              "Cannot read the live rows of table %s at snapshot %s: the table has no such snapshot"
                  + " (expired?)",
              table.name(), snapshotId));
    }
    PartitionSpec spec = table.spec();
    String partitionPath = spec.partitionToPath(partition);
    Schema projection = TypeUtil.join(keys, new Schema(MetadataColumns.ROW_POSITION));
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(snapshotId).planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.spec().specId() != spec.specId()
            || !partitionPath.equals(spec.partitionToPath(task.file().partition()))) {
          continue;
        }
        read(table, task, keys, projection, partitionPath, live);
        List<DeleteFile> positions = new ArrayList<>();
        for (DeleteFile delete : task.deletes()) {
          if (delete.content() == FileContent.POSITION_DELETES) {
            positions.add(delete);
          }
        }
        if (!positions.isEmpty()) {
          positionDeletes.put(task.file().location(), positions);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          String.format(
              "Cannot read the live rows of partition %s of table %s at snapshot %s",
              partitionPath, table.name(), snapshotId),
          e);
    }
    return new Partition(live, positionDeletes);
  }

  /**
   * The keys of the rows at {@code positions} of data file {@code location} (as written, whatever
   * deletes apply to it since), in position order: what a checkpoint's deletes by position of that
   * file removed, as keys. Reads only the key columns and {@code _pos}.
   *
   * @throws IllegalStateException a position beyond the file's rows, or a row without a key
   */
  public static List<Record> keysAt(
      Table table,
      String location,
      java.util.NavigableSet<Long> positions,
      Set<Integer> keyFieldIds)
      throws IOException {
    List<Record> found = new ArrayList<>();
    if (positions.isEmpty()) {
      return found;
    }
    Schema keys = TypeUtil.select(table.schema(), keyFieldIds);
    Schema projection = TypeUtil.join(keys, new Schema(MetadataColumns.ROW_POSITION));
    org.apache.iceberg.FileFormat format = org.apache.iceberg.FileFormat.fromFileName(location);
    try (CloseableIterable<Record> rows =
        FormatModelRegistry.<Record, Object>readBuilder(
                format == null ? org.apache.iceberg.FileFormat.PARQUET : format,
                Record.class,
                table.io().newInputFile(location))
            .project(projection)
            .build()) {
      for (Record row : rows) {
        long position = (Long) row.getField(MetadataColumns.ROW_POSITION.name());
        if (!positions.contains(position)) {
          continue;
        }
        Record key = GenericRecord.create(keys);
        for (Types.NestedField field : keys.columns()) {
          Object value = row.getField(field.name());
          if (value == null) {
            throw new IllegalStateException(
                String.format(
                    "Cannot read the key of row %d of data file %s of table %s: its column %s is"
                        + " missing or null",
                    position, location, table.name(), field.name()));
          }
          key.setField(field.name(), value);
        }
        found.add(key);
      }
    }
    if (found.size() != positions.size()) {
      throw new IllegalStateException(
          String.format(
              "Cannot read the keys of %d deleted row(s) of data file %s of table %s: it has only %d"
                  + " of those positions",
              positions.size(), location, table.name(), found.size()));
    }
    return found;
  }

  private static void read(
      Table table,
      FileScanTask task,
      Schema keys,
      Schema projection,
      String partitionPath,
      StructLikeMap<FilePosition> live)
      throws IOException {
    GenericDeleteFilter deletes =
        new GenericDeleteFilter(table.io(), task, table.schema(), projection);
    Schema required = deletes.requiredSchema();
    String file = task.file().location();
    try (CloseableIterable<Record> rows =
        deletes.filter(
            FormatModelRegistry.<Record, Object>readBuilder(
                    task.file().format(), Record.class, table.io().newInputFile(task.file()))
                .project(required)
                .idToConstant(
                    PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant))
                .build())) {
      for (Record row : rows) {
        Record key = GenericRecord.create(keys);
        for (Types.NestedField field : keys.columns()) {
          key.setField(field.name(), row.getField(field.name()));
        }
        long position = (Long) row.getField(MetadataColumns.ROW_POSITION.name());
        FilePosition here = new FilePosition(file, position);
        FilePosition before = live.put(key, here);
        if (before != null) {
          throw new IllegalStateException(
              String.format(
                  "Cannot index partition %s of table %s: key %s is live twice, at %s and at %s;"
                      + " the table already holds a duplicate row. Find who wrote it (the"
                      + " snapshots that added both files), delete one copy, and start again",
                  partitionPath, table.name(), key, before, here));
        }
      }
    }
  }
}
