package dev.shardberg.coordinator.owner;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.SortedMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;

/**
 * The rewrite of a partition owner's compaction: the live rows of some data files of one partition
 * — the positions the owner's index holds, so its own deletes not yet committed count — copied in
 * file order into one new data file of the table's current schema. Says where each kept row went,
 * so the index can follow, and describes the source files for the commit that removes them.
 */
public final class LiveRowsRewrite {
  private LiveRowsRewrite() {}

  /**
   * What a rewrite wrote and read.
   *
   * @param written the new data file; null when no row was kept
   * @param removed the source files, as the commit removes them
   * @param moved each kept row's place in the new file
   */
  public record Result(DataFile written, List<DataFile> removed, Map<FilePosition, Long> moved) {}

  /**
   * Rewrites the rows at {@code keep} (data file → live positions; a file with none is read for its
   * row count and removed) of {@code partition} into one new file from {@code files}.
   */
  public static Result rewrite(
      Table table,
      PartitionSpec spec,
      StructLike partition,
      SortedMap<String, NavigableSet<Long>> keep,
      OutputFileFactory files)
      throws IOException {
    Schema schema = table.schema();
    Schema withPosition = TypeUtil.join(schema, new Schema(MetadataColumns.ROW_POSITION));
    GenericAppenderFactory appenders = new GenericAppenderFactory(schema, spec);
    appenders.setAll(table.properties());
    List<DataFile> removed = new ArrayList<>();
    Map<FilePosition, Long> moved = new HashMap<>();
    DataWriter<Record> writer = null;
    long next = 0;
    try {
      for (Map.Entry<String, NavigableSet<Long>> source : keep.entrySet()) {
        InputFile input = table.io().newInputFile(source.getKey());
        FileFormat sourceFormat = FileFormat.fromFileName(source.getKey());
        if (sourceFormat == null) {
          sourceFormat = FileFormat.PARQUET;
        }
        NavigableSet<Long> positions = source.getValue();
        long rows = 0;
        try (CloseableIterable<Record> records =
            FormatModelRegistry.<Record, Object>readBuilder(sourceFormat, Record.class, input)
                .project(withPosition)
                .build()) {
          for (Record record : records) {
            rows++;
            long position = (Long) record.getField(MetadataColumns.ROW_POSITION.name());
            if (!positions.contains(position)) {
              continue;
            }
            if (writer == null) {
              writer =
                  appenders.newDataWriter(
                      files.newOutputFile(spec, partition), FileFormat.PARQUET, partition);
            }
            Record row = org.apache.iceberg.data.GenericRecord.create(schema);
            for (int i = 0; i < schema.columns().size(); i++) {
              row.set(i, record.get(i));
            }
            writer.write(row);
            moved.put(new FilePosition(source.getKey(), position), next++);
          }
        }
        removed.add(describe(spec, partition, input, sourceFormat, rows));
      }
    } finally {
      if (writer != null) {
        writer.close();
      }
    }
    return new Result(writer == null ? null : writer.toDataFile(), removed, moved);
  }

  /** A source file as a commit that removes it names it (path, partition, size, rows). */
  private static DataFile describe(
      PartitionSpec spec, StructLike partition, InputFile input, FileFormat format, long rows) {
    return DataFiles.builder(spec)
        .withPath(input.location())
        .withPartition(partition)
        .withFormat(format)
        .withFileSizeInBytes(input.getLength())
        .withRecordCount(rows)
        .build();
  }
}
