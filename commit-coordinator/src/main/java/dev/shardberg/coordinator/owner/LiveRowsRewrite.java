package dev.shardberg.coordinator.owner;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.formats.FileWriterBuilder;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * The rewrite of a partition owner's compaction: the live rows of some data files of one partition
 * — the positions the owner's index holds, so its own deletes not yet committed count — copied in
 * file order into one new data file of the table's current schema: the files in the order of their
 * paths, each file's rows in the order of their positions, so the k-th kept row is at position k of
 * the new file and the index can follow without a map of where each row went. Describes the source
 * files for the commit that removes them.
 */
public final class LiveRowsRewrite {
  private LiveRowsRewrite() {}

  /**
   * What a rewrite wrote and read.
   *
   * @param written the new data file; null when no row was kept
   * @param removed the source files, as the commit removes them, in the order they were read (the
   *     order of their paths)
   * @param rows the rows copied: the kept positions of every source file, in that order
   */
  public record Result(DataFile written, List<DataFile> removed, long rows) {}

  /**
   * Rewrites the rows at {@code keep} (data file → its live positions, ascending; a file with none
   * is read for its row count and removed) of {@code partition} into one new file from {@code
   * files}.
   */
  public static Result rewrite(
      Table table,
      PartitionSpec spec,
      StructLike partition,
      SortedMap<String, long[]> keep,
      OutputFileFactory files)
      throws IOException {
    return rewrite(table, spec, partition, keep, files, FlinkRows.fits(table.schema()));
  }

  /**
   * As {@link #rewrite(Table, PartitionSpec, StructLike, SortedMap, OutputFileFactory)}, the rows
   * copied as Flink rows ({@code flinkRows}, for a schema {@link #flinkRowsFit} allows) or as
   * Iceberg's generic records: the choice made explicit, for measuring one against the other.
   */
  public static Result rewrite(
      Table table,
      PartitionSpec spec,
      StructLike partition,
      SortedMap<String, long[]> keep,
      OutputFileFactory files,
      boolean flinkRows)
      throws IOException {
    Schema schema = table.schema();
    return flinkRows
        ? copy(table, spec, partition, keep, files, new FlinkRows(schema))
        : copy(table, spec, partition, keep, files, new GenericRows(schema));
  }

  /** Whether a rewrite can copy rows of {@code schema} as Flink rows without changing a value. */
  public static boolean flinkRowsFit(Schema schema) {
    return FlinkRows.fits(schema);
  }

  /**
   * How one in-memory row model reads a source file's rows with their position and hands them to a
   * data writer of the table's schema.
   */
  private interface RowModel<T> {
    Class<T> type();

    /** Null for a model whose writer needs no engine schema. */
    Object engineSchema();

    long position(T row);

    /** The row as the writer takes it (the reader may reuse {@code row} for the next one). */
    T toWrite(T row);
  }

  /**
   * Flink's {@link RowData}: strings stay bytes and timestamps stay numbers from read to write, the
   * cheaper copy (the owners rewrite whole partitions on a thread beside the writer, so this is CPU
   * the writer and the source share). Not for a schema with a TIME column: Flink holds times in
   * milliseconds, and a file another tool wrote could hold microseconds.
   */
  private static final class FlinkRows implements RowModel<RowData> {
    private final RowType rowType;
    private final int positionField;

    FlinkRows(Schema schema) {
      this.rowType = FlinkSchemaUtil.convert(schema);
      this.positionField = schema.columns().size();
    }

    static boolean fits(Schema schema) {
      boolean[] unfit = {false};
      TypeUtil.visit(
          schema,
          new TypeUtil.SchemaVisitor<Void>() {
            @Override
            public Void primitive(Type.PrimitiveType primitive) {
              if (primitive.typeId() == Type.TypeID.TIME
                  || primitive.typeId() == Type.TypeID.UUID) {
                unfit[0] = true;
              }
              return null;
            }

            @Override
            public Void variant(Types.VariantType variant) {
              unfit[0] = true;
              return null;
            }
          });
      if (unfit[0]) {
        return false;
      }
      try {
        FlinkSchemaUtil.convert(schema);
        return true;
      } catch (RuntimeException e) {
        return false; // a type Flink has no row type for: the generic model copies it
      }
    }

    @Override
    public Class<RowData> type() {
      return RowData.class;
    }

    @Override
    public Object engineSchema() {
      return rowType;
    }

    @Override
    public long position(RowData row) {
      return row.getLong(positionField);
    }

    @Override
    public RowData toWrite(RowData row) {
      return row; // the writer reads the table's columns by index; the position after them is left
    }
  }

  /** Iceberg's generic {@link Record}: any type the table holds. */
  private static final class GenericRows implements RowModel<Record> {
    private final Schema schema;

    GenericRows(Schema schema) {
      this.schema = schema;
    }

    @Override
    public Class<Record> type() {
      return Record.class;
    }

    @Override
    public Object engineSchema() {
      return null;
    }

    @Override
    public long position(Record row) {
      return (Long) row.getField(MetadataColumns.ROW_POSITION.name());
    }

    @Override
    public Record toWrite(Record row) {
      Record copy = GenericRecord.create(schema);
      for (int i = 0; i < schema.columns().size(); i++) {
        copy.set(i, row.get(i));
      }
      return copy;
    }
  }

  private static <T> Result copy(
      Table table,
      PartitionSpec spec,
      StructLike partition,
      SortedMap<String, long[]> keep,
      OutputFileFactory files,
      RowModel<T> model)
      throws IOException {
    Schema schema = table.schema();
    Schema withPosition = TypeUtil.join(schema, new Schema(MetadataColumns.ROW_POSITION));
    List<DataFile> removed = new ArrayList<>();
    DataWriter<T> writer = null;
    long next = 0;
    try {
      for (Map.Entry<String, long[]> source : keep.entrySet()) {
        InputFile input = table.io().newInputFile(source.getKey());
        FileFormat sourceFormat = FileFormat.fromFileName(source.getKey());
        if (sourceFormat == null) {
          sourceFormat = FileFormat.PARQUET;
        }
        long[] positions = source.getValue();
        int kept = 0;
        long rows = 0;
        try (CloseableIterable<T> records =
            FormatModelRegistry.<T, Object>readBuilder(sourceFormat, model.type(), input)
                .project(withPosition)
                .reuseContainers()
                .build()) {
          for (T record : records) {
            rows++;
            if (kept == positions.length || model.position(record) != positions[kept]) {
              continue; // the positions ascend, as the file's rows do
            }
            if (writer == null) {
              writer = newWriter(table, spec, partition, files, model);
            }
            writer.write(model.toWrite(record));
            kept++;
            next++;
          }
        }
        if (kept != positions.length) {
          throw new IOException(
              String.format(
                  "Cannot rewrite %s: %d of its %d live positions are not among its %d rows (from"
                      + " position %d on)",
                  source.getKey(),
                  positions.length - kept,
                  positions.length,
                  rows,
                  positions[kept]));
        }
        removed.add(describe(spec, partition, input, sourceFormat, rows));
      }
    } catch (IOException | RuntimeException e) {
      if (writer != null) {
        // a source file gone or unreadable: the new file is not handed over, so it goes now
        // rather than to orphan-file removal
        try {
          writer.close();
          table.io().deleteFile(writer.toDataFile().location());
        } catch (IOException | RuntimeException cleanup) {
          e.addSuppressed(cleanup);
        }
      }
      throw e;
    }
    if (writer != null) {
      writer.close();
    }
    return new Result(writer == null ? null : writer.toDataFile(), removed, next);
  }

  private static <T> DataWriter<T> newWriter(
      Table table,
      PartitionSpec spec,
      StructLike partition,
      OutputFileFactory files,
      RowModel<T> model)
      throws IOException {
    FileWriterBuilder<DataWriter<T>, Object> builder =
        FormatModelRegistry.<T, Object>dataWriteBuilder(
                FileFormat.PARQUET, model.type(), files.newOutputFile(spec, partition))
            .schema(table.schema())
            .spec(spec)
            .partition(partition)
            .setAll(table.properties())
            .metricsConfig(MetricsConfig.forTable(table))
            .overwrite();
    if (model.engineSchema() != null) {
      builder.engineSchema(model.engineSchema());
    }
    return builder.build();
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
