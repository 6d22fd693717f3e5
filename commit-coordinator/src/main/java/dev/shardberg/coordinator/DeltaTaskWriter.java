package dev.shardberg.coordinator;

import dev.shardberg.coordinator.owner.FilePosition;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.Preconditions;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.flink.data.RowDataProjection;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.io.RollingEqualityDeleteWriter;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.PropertyUtil;

/**
 * One writer subtask's Iceberg files for one checkpoint: per partition, a data file, a key-only
 * equality-delete file and a position-delete file, each opened only when its first record arrives
 * (a {@link PartitionDelta} each).
 *
 * <p>Three writes: {@link #upsert} (delete the key, then write the row), {@link #insert} (write the
 * row only: the caller guarantees no earlier version of the key can be in the table) and {@link
 * #deleteKey}. Every row written in this checkpoint is remembered by key, so a later upsert or
 * delete of the same key in the same checkpoint deletes it by position (an equality delete would
 * not: it carries the same sequence number as the data file). That is what makes mixing insert-only
 * and upsert writes of one key in one checkpoint safe, and why both go through this one writer.
 *
 * <p>Unlike Iceberg's own delta writer, nothing is opened eagerly: a partition that only receives
 * inserts never creates (and then deletes) an empty equality-delete file, and one that only
 * receives deletes never creates an empty data file.
 *
 * <p>{@link #complete} closes the partitions' files {@code target.close-concurrency} at a time
 * (default {@value Factory#DEFAULT_CLOSE_CONCURRENCY}; 1: one after the other on the calling
 * thread, no pool). Closing a file on a remote file system is mostly waiting (on HDFS: the last
 * packets acknowledged by the DataNode pipeline, then the NameNode's {@code complete}, which the
 * client retries with back-off until the DataNode has reported the block), and with
 * identity(shard_number) + bucket every partition a checkpoint touches costs one to three files;
 * closed one after the other, ~80 files per writer took seconds per checkpoint on HDFS
 * (BENCHMARKS.md, issue 18). Partitions are independent (own files, own results), so each close
 * runs on its own and the results are merged on the calling thread, in no particular order. On an
 * object store each close is one or more requests (a small file's single PUT, or a multipart
 * upload's last part and its completion), so the closes of a checkpoint take about files × request
 * latency / concurrency (BENCHMARKS.md, issue 29).
 */
final class DeltaTaskWriter implements TaskWriter<RowData> {
  private final PartitionSpec spec;
  private FileWriterFactory<RowData> fileWriters;
  private final OutputFileFactory outputFiles;
  private final FileIO io;
  private final long targetFileSize;
  private final Schema keySchema;
  private RowDataWrapper rowWrapper;
  private final RowDataWrapper keyWrapper;
  private RowDataProjection keyProjection;
  private PartitionKey partitionKey;
  private final Map<PartitionKey, PartitionDelta> partitions = new HashMap<>();
  private final List<DataFile> dataFiles = new ArrayList<>();
  private final List<DeleteFile> deleteFiles = new ArrayList<>();
  private final List<CharSequence> referencedDataFiles = new ArrayList<>();
  private long filesOpened;

  /** Equality deletes by the shard column alone: what a truncate of a partition writes. */
  private final FileWriterFactory<RowData> shardDeletes;

  /** Runs the partitions' closes; null: one after the other on the calling thread. */
  private final ExecutorService closePool;

  DeltaTaskWriter(
      Schema schema,
      PartitionSpec spec,
      RowType rowType,
      Set<Integer> equalityFieldIds,
      FileWriterFactory<RowData> fileWriters,
      OutputFileFactory outputFiles,
      FileIO io,
      long targetFileSize,
      ExecutorService closePool,
      FileWriterFactory<RowData> shardDeletes) {
    this.closePool = closePool;
    this.shardDeletes = shardDeletes;
    this.spec = spec;
    this.fileWriters = fileWriters;
    this.outputFiles = outputFiles;
    this.io = io;
    this.targetFileSize = targetFileSize;
    this.keySchema = TypeUtil.select(schema, equalityFieldIds);
    this.rowWrapper = new RowDataWrapper(rowType, schema.asStruct());
    this.keyWrapper = new RowDataWrapper(FlinkSchemaUtil.convert(keySchema), keySchema.asStruct());
    this.keyProjection = RowDataProjection.create(rowType, schema.asStruct(), keySchema.asStruct());
    this.partitionKey = new PartitionKey(spec, schema);
  }

  /**
   * Creates one writer per checkpoint for a writer subtask: file formats, target file size and file
   * names from the table, as the job's writer uses them.
   */
  static Factory factory(
      Table table, RowType rowType, Set<Integer> equalityFieldIds, int subtask, int attempt) {
    return factory(
        table, rowType, equalityFieldIds, subtask, attempt, Factory.DEFAULT_CLOSE_CONCURRENCY);
  }

  /**
   * The same, closing a checkpoint's partitions {@code closeConcurrency} at a time ({@code
   * target.close-concurrency}; 1: on the calling thread).
   */
  static Factory factory(
      Table table,
      RowType rowType,
      Set<Integer> equalityFieldIds,
      int subtask,
      int attempt,
      int closeConcurrency) {
    return new Factory(table, rowType, equalityFieldIds, subtask, attempt, closeConcurrency);
  }

  static final class Factory implements AutoCloseable {
    /**
     * Partitions closed at once per writer subtask by default ({@link DeltaTaskWriter#complete}).
     */
    static final int DEFAULT_CLOSE_CONCURRENCY =
        CoordinatorConfigOptions.CLOSE_CONCURRENCY.defaultValue();

    private final Table table;
    private final Schema schema;
    private final RowType rowType;
    private final Set<Integer> equalityFieldIds;
    private final RowDataFileWriterFactory fileWriters;
    private final OutputFileFactory outputFiles;
    private final long targetFileSize;
    private final int subtask;
    private final int closeConcurrency;
    private ExecutorService closePool;
    private RowDataFileWriterFactory shardDeletes;

    private Factory(
        Table table,
        RowType rowType,
        Set<Integer> equalityFieldIds,
        int subtask,
        int attempt,
        int closeConcurrency) {
      this(table, table.schema(), rowType, equalityFieldIds, subtask, attempt, closeConcurrency);
    }

    private Factory(
        Table table,
        Schema schema,
        RowType rowType,
        Set<Integer> equalityFieldIds,
        int subtask,
        int attempt,
        int closeConcurrency) {
      Preconditions.checkArgument(
          closeConcurrency >= 1,
          "Cannot close a writer's files %s at a time: %s must be at least 1",
          closeConcurrency,
          CoordinatorConfigOptions.CLOSE_CONCURRENCY.key());
      this.closeConcurrency = closeConcurrency;
      this.table = table;
      this.schema = schema;
      this.rowType = rowType;
      this.equalityFieldIds = equalityFieldIds;
      this.targetFileSize =
          PropertyUtil.propertyAsLong(
              table.properties(),
              TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
              TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
      this.fileWriters =
          RowDataFileWriterFactory.create(
              table, schema, dataFormat(table), deleteFormat(table), rowType, equalityFieldIds);
      this.outputFiles =
          OutputFileFactory.builderFor(table, subtask, attempt).format(dataFormat(table)).build();
      this.subtask = subtask;
    }

    private Factory(Factory previous, Schema schema, RowType rowType) {
      this.table = previous.table;
      this.schema = schema;
      this.rowType = rowType;
      this.equalityFieldIds = previous.equalityFieldIds;
      this.targetFileSize = previous.targetFileSize;
      this.outputFiles =
          previous.outputFiles; // one file name sequence per writer subtask and attempt
      this.subtask = previous.subtask;
      this.closeConcurrency = previous.closeConcurrency;
      this.closePool = previous.closePool; // handed over: the previous factory is no longer used
      previous.closePool = null;
      this.fileWriters =
          RowDataFileWriterFactory.create(
              table, schema, dataFormat(table), deleteFormat(table), rowType, equalityFieldIds);
    }

    private static FileFormat dataFormat(Table table) {
      return TableFormats.data(table);
    }

    private static FileFormat deleteFormat(Table table) {
      return TableFormats.deletes(table);
    }

    /** The same writers for rows of a later schema of the table (same key, same file names). */
    Factory forSchema(Schema newSchema, RowType newRowType) {
      return new Factory(this, newSchema, newRowType);
    }

    Schema schema() {
      return schema;
    }

    RowType rowType() {
      return rowType;
    }

    DeltaTaskWriter create() {
      if (closePool == null && closeConcurrency > 1) {
        AtomicInteger threads = new AtomicInteger();
        closePool =
            Executors.newFixedThreadPool(
                closeConcurrency,
                r -> {
                  Thread t =
                      new Thread(
                          r, "shardberg-writer-" + subtask + "-close-" + threads.incrementAndGet());
                  t.setDaemon(true);
                  return t;
                });
      }
      return new DeltaTaskWriter(
          schema,
          table.spec(),
          rowType,
          equalityFieldIds,
          fileWriters,
          outputFiles,
          table.io(),
          targetFileSize,
          closePool,
          shardDeletes());
    }

    private int shardFieldId() {
      return schema.findField(rowType.getFieldNames().get(0)).fieldId();
    }

    /**
     * Writers of equality deletes keyed by the shard column alone (truncate markers; made on first
     * use).
     */
    private RowDataFileWriterFactory shardDeletes() {
      if (shardDeletes == null) {
        shardDeletes =
            RowDataFileWriterFactory.create(
                table,
                schema,
                dataFormat(table),
                deleteFormat(table),
                rowType,
                Set.of(shardFieldId()));
      }
      return shardDeletes;
    }

    /** Stops the close threads (the writer subtask is closing). */
    @Override
    public void close() {
      if (closePool != null) {
        closePool.shutdownNow();
        closePool = null;
      }
    }
  }

  /**
   * Upsert semantics by row kind: +I/+U upsert, -D deletes the key, -U is dropped (a key change
   * arrives as -D of the old key; see {@link ShardbergSink}).
   */
  @Override
  public void write(RowData row) throws IOException {
    switch (row.getRowKind()) {
      case INSERT, UPDATE_AFTER -> upsert(row);
      case DELETE -> deleteKey(row);
      case UPDATE_BEFORE -> {}
      default -> throw new UnsupportedOperationException("Unknown row kind: " + row.getRowKind());
    }
  }

  void upsert(RowData row) {
    PartitionDelta partition = route(row);
    filesOpened += partition.deleteKey(fileWriters, keyProjection.wrap(row));
    filesOpened += partition.write(fileWriters, row, keyProjection.wrap(row));
  }

  /** Writes the row without deleting its key: only for keys no committed file can hold. */
  void insert(RowData row) {
    PartitionDelta partition = route(row);
    filesOpened += partition.write(fileWriters, row, keyProjection.wrap(row));
  }

  /**
   * The partition owner's write: the row, with no delete of its key and not remembered here (the
   * owner deletes older versions by position itself); returns where the row went.
   */
  FilePosition insertAt(RowData row) {
    PartitionDelta partition = route(row);
    filesOpened += partition.write(fileWriters, row, null);
    return partition.lastWritten();
  }

  /** The partition of {@code row} (a copy). */
  PartitionKey partitionOf(RowData row) {
    partitionKey.partition(rowWrapper.wrap(row));
    return partitionKey.copy();
  }

  /** The key columns of {@code row}, valid until the next call. */
  RowData keyOf(RowData row) {
    return keyProjection.wrap(row);
  }

  void deleteKey(RowData row) {
    PartitionDelta partition = route(row);
    filesOpened += partition.deleteKey(fileWriters, keyProjection.wrap(row));
  }

  /**
   * Truncates {@code partition} (of {@code shard}) here: what this writer wrote of it since the
   * last barrier is dropped (its files deleted, its keys forgotten), and an equality delete by the
   * shard column alone removes every row of the partition committed before this checkpoint. That
   * delete carries this checkpoint's sequence number, so the partition's rows written after this
   * call, in the same checkpoint or later, stay.
   *
   * @return files of the partition dropped
   */
  int truncate(PartitionKey partition, int shard) throws IOException {
    int dropped = 0;
    PartitionDelta open = partitions.remove(partition);
    if (open != null) {
      PartitionDelta.Closed closed = open.close(fileWriters);
      filesOpened += closed.filesOpened();
      for (ContentFile<?> file : closed.dataFiles()) {
        io.deleteFile(file.location());
        dropped++;
      }
      for (ContentFile<?> file : closed.deleteFiles()) {
        io.deleteFile(file.location());
        dropped++;
      }
    }
    // data files of the partition closed earlier in this checkpoint (a schema switch)
    for (java.util.Iterator<DataFile> it = dataFiles.iterator(); it.hasNext(); ) {
      DataFile file = it.next();
      if (file.specId() == spec.specId() && samePartition(partition, file.partition())) {
        io.deleteFile(file.location());
        it.remove();
        dropped++;
      }
    }
    RollingEqualityDeleteWriter<RowData> writer =
        new RollingEqualityDeleteWriter<>(
            shardDeletes, outputFiles, io, targetFileSize, spec, partition);
    try (writer) {
      writer.write(GenericRowData.of(shard));
    }
    filesOpened++;
    deleteFiles.addAll(writer.result().deleteFiles());
    return dropped;
  }

  private boolean samePartition(StructLike a, StructLike b) {
    for (int i = 0; i < spec.fields().size(); i++) {
      if (!java.util.Objects.equals(a.get(i, Object.class), b.get(i, Object.class))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Switches to rows of a later schema of the table in the middle of a checkpoint: the open data
   * files are closed (they keep the older schema, which Iceberg reads with NULLs for the new
   * columns and promoted types), the next rows go to new files of {@code factory}'s schema. The
   * keys written so far stay remembered with their positions, so a later change of one of them in
   * this checkpoint still deletes it by position; the key columns do not change (a key change is
   * not evolvable), so the equality-delete files stay open.
   */
  void evolve(Factory factory) throws IOException {
    for (PartitionDelta partition : partitions.values()) {
      dataFiles.addAll(partition.closeData());
    }
    Schema schema = factory.schema();
    this.fileWriters = factory.fileWriters;
    this.rowWrapper = new RowDataWrapper(factory.rowType(), schema.asStruct());
    this.keyProjection =
        RowDataProjection.create(factory.rowType(), schema.asStruct(), keySchema.asStruct());
    this.partitionKey = new PartitionKey(spec, schema);
  }

  /** Files this writer opened since it was created (data, equality- and position-delete files). */
  long filesOpened() {
    return filesOpened;
  }

  private PartitionDelta route(RowData row) {
    partitionKey.partition(rowWrapper.wrap(row));
    PartitionDelta partition = partitions.get(partitionKey);
    if (partition == null) {
      PartitionKey copy = partitionKey.copy();
      partition =
          new PartitionDelta(
              copy, spec, outputFiles, io, targetFileSize, keySchema.asStruct(), keyWrapper);
      partitions.put(copy, partition);
    }
    return partition;
  }

  @Override
  public WriteResult complete() throws IOException {
    closePartitions();
    return WriteResult.builder()
        .addDataFiles(dataFiles)
        .addDeleteFiles(deleteFiles)
        .addReferencedDataFiles(referencedDataFiles)
        .build();
  }

  /** Closes every open file and deletes every file written: nothing of this writer is committed. */
  @Override
  public void abort() throws IOException {
    try {
      closePartitions();
    } finally {
      for (ContentFile<?> file : dataFiles) {
        io.deleteFile(file.location());
      }
      for (ContentFile<?> file : deleteFiles) {
        io.deleteFile(file.location());
      }
      dataFiles.clear();
      deleteFiles.clear();
    }
  }

  @Override
  public void close() throws IOException {
    closePartitions();
  }

  /**
   * Closes every partition's files, {@code target.close-concurrency} at a time when there is a pool
   * (none at 1); waits for all of them, then adds their files to this writer's result. Every
   * partition is closed even when one fails; the first failure is thrown with the others
   * suppressed.
   */
  private void closePartitions() throws IOException {
    List<PartitionDelta> open = new ArrayList<>(partitions.values());
    partitions.clear();
    PartitionDelta.closeAll(
        open,
        fileWriters,
        closePool,
        closed -> {
          dataFiles.addAll(closed.dataFiles());
          deleteFiles.addAll(closed.deleteFiles());
          referencedDataFiles.addAll(closed.referencedDataFiles());
          filesOpened += closed.filesOpened();
        });
  }
}
