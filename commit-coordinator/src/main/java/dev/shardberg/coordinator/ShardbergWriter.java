package dev.shardberg.coordinator;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Writer subtask: Iceberg's delta task writer in upsert mode. INSERT and UPDATE_AFTER write the row
 * and an equality delete of its key, DELETE writes the key delete, UPDATE_BEFORE is dropped.
 *
 * <p>Event order per checkpoint: rows → {@link #prepareSnapshotPreBarrier} (close every file, emit
 * one {@link WriterResult} tagged with the checkpoint id) → barrier. No file stays open across a
 * barrier, so the writer has no state of its own: after a failure the source replays the rows.
 */
final class ShardbergWriter extends AbstractStreamOperator<WriterResult>
    implements OneInputStreamOperator<RowData, WriterResult>, BoundedOneInput {
  private static final long serialVersionUID = 1L;

  private final TableLoader tableLoader;
  private final String tableName;
  private final RowType rowType;
  private final List<String> equalityColumns;

  private transient RowDataTaskWriterFactory writerFactory;
  private transient TaskWriter<RowData> writer;
  private transient Map<Integer, long[]> counts;
  private transient long lastCheckpointId;
  private transient boolean inputEnded;
  private transient int subtask;

  ShardbergWriter(
      TableLoader tableLoader, String tableName, RowType rowType, List<String> equalityColumns) {
    this.tableLoader = tableLoader;
    this.tableName = tableName;
    this.rowType = rowType;
    this.equalityColumns = List.copyOf(equalityColumns);
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    // Flink's checkpoint ids only grow after a restore; end-of-input results are tagged past it.
    this.lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
  }

  @Override
  public void open() throws Exception {
    super.open();
    this.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    this.counts = new HashMap<>();
    if (!tableLoader.isOpen()) {
      tableLoader.open();
    }
    Table table = tableLoader.loadTable();
    Set<Integer> equalityFieldIds = WriterTableCheck.validate(table, tableName, rowType, equalityColumns);
    long targetFileSize =
        PropertyUtil.propertyAsLong(
            table.properties(),
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    FileFormat format =
        FileFormat.fromString(
            table
                .properties()
                .getOrDefault(
                    TableProperties.DEFAULT_FILE_FORMAT, TableProperties.DEFAULT_FILE_FORMAT_DEFAULT));
    this.writerFactory =
        new RowDataTaskWriterFactory(
            table, rowType, targetFileSize, format, table.properties(), equalityFieldIds, true);
    writerFactory.initialize(subtask, getRuntimeContext().getTaskInfo().getAttemptNumber());
  }

  @Override
  public void processElement(StreamRecord<RowData> element) throws Exception {
    RowData row = element.getValue();
    RowKind kind = row.getRowKind();
    if (kind == RowKind.UPDATE_BEFORE) {
      return; // upsert: UPDATE_AFTER deletes the key itself
    }
    if (writer == null) {
      writer = writerFactory.create();
    }
    writer.write(row);
    long[] shard = counts.computeIfAbsent(row.getInt(0), ignored -> new long[2]);
    shard[kind == RowKind.DELETE ? 1 : 0]++;
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    lastCheckpointId = checkpointId;
    if (!inputEnded) {
      emit(checkpointId);
    }
  }

  /**
   * Bounded input: the rows after the last barrier go out now, tagged with the next checkpoint id;
   * the coordinator commits them with the final checkpoint.
   */
  @Override
  public void endInput() throws Exception {
    emit(lastCheckpointId + 1);
    inputEnded = true;
  }

  private void emit(long checkpointId) throws Exception {
    WriteResult files = writer == null ? WriteResult.builder().build() : writer.complete();
    writer = null;
    Map<Integer, ShardCounts> shardCounts = new HashMap<>();
    counts.forEach((shard, c) -> shardCounts.put(shard, new ShardCounts(c[0], c[1])));
    counts.clear();
    if (files.rewrittenDeleteFiles().length > 0) {
      throw new IllegalStateException(
          "Cannot commit to table " + tableName + ": the writer rewrote delete files (format v3"
              + " deletion vectors), which Shardberg does not commit yet. Use format version 2.");
    }
    output.collect(new StreamRecord<>(new WriterResult(checkpointId, subtask, files, shardCounts)));
  }

  @Override
  public void close() throws Exception {
    try {
      if (writer != null) {
        writer.abort(); // files never handed to the coordinator: nothing will reference them
        writer = null;
      }
    } finally {
      try {
        tableLoader.close();
      } finally {
        super.close();
      }
    }
  }
}
