package dev.shardberg.coordinator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.WriteResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writer subtask: upserts into the Iceberg table with our {@link DeltaTaskWriter}. UPDATE_AFTER
 * (and INSERT) write the row and delete its key, DELETE deletes the key, UPDATE_BEFORE is dropped
 * (a change of the key arrives as DELETE of the old key, see {@link ShardbergSink}).
 *
 * <p><b>Insert-only initial load</b> (when enabled): an INSERT row, which the sink's contract
 * reserves for a snapshot read, is written without a key delete when (1) this is the pipeline's
 * first attempt (no restored state: nothing of this pipeline has been committed, since commits
 * follow completed checkpoints and every failover restores the latest one) and (2) its shard had no
 * data file in the table when this writer opened. Otherwise it is an upsert. The writer reports
 * which shards got insert-only rows and which snapshot it scanned; the coordinator refuses to
 * commit them if any other committer added files to those shards since that snapshot. See
 * docs/commit-coordinator.md.
 *
 * <p>Event order per checkpoint: rows → {@link #prepareSnapshotPreBarrier} (close every file, emit
 * one {@link WriterResult} tagged with the checkpoint id) → barrier. No file stays open across a
 * barrier, so the writer keeps no rows in state: after a failure the source replays them. Its only
 * state is a marker that a checkpoint was taken, which tells a restored run from a first attempt.
 */
final class ShardbergWriter extends AbstractStreamOperator<WriterResult>
    implements OneInputStreamOperator<RowData, WriterResult>, BoundedOneInput {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ShardbergWriter.class);
  static final String RUN_MARKER_STATE_NAME = "shardberg-writer-checkpointed";

  /**
   * Deletes by position: the shards the pipeline's state knows, as the writers saw them, each with
   * the Flink checkpoint after which it was last read again (-1: never); a union list state whose
   * entry {@code (-1, -1)} marks that it was written.
   */
  static final String KNOWN_SHARDS_STATE_NAME = "shardberg-writer-known-shards";

  private static final Tuple2<Integer, Long> KNOWN_SHARDS_PRESENT = Tuple2.of(-1, -1L);

  private final TableLoader tableLoader;
  private final String tableName;
  private final RowType rowType;
  private final List<String> equalityColumns;
  private final boolean insertOnlyInitialLoad;

  /**
   * target.delete-mode position: this writer owns its partitions ({@link PartitionOwner}) and skips
   * this pipeline's own commits when it checks the table for changes by others; null: the writer
   * deletes by key.
   */
  private final String ownerPipelineId;

  /** With deletes by position: when the owners compact their partitions (null: never). */
  private final PartitionOwner.OwnerCompaction ownerCompaction;

  private transient PartitionOwner owner;

  /** Partitions (keys) whose changes wait for the writer's earlier ones to land: see hold. */
  private transient Set<Object> heldPartitions;

  /**
   * Deletes by position: the shards of the plan this job writes (null: not known). With the known
   * shards of the restored state they say which shards this run reads again from a fresh snapshot,
   * exactly as the coordinator decides it ({@link ShardReread}).
   */
  private SortedSet<Integer> plannedShards;

  private transient ListState<Tuple2<Integer, Long>> knownShardsState;

  /**
   * Known shards read again in an earlier run, each with the Flink checkpoint that run restored
   * from: a partition of such a shard untouched since then still holds what its owner knew before
   * the shard's files were removed, so it starts empty too.
   */
  private transient Map<Integer, Long> readAgainAfter;

  /**
   * Shards of the plan the restored state does not know: read again from a fresh snapshot in this
   * run, their old files removed by the coordinator; their partitions start empty here.
   */
  private transient SortedSet<Integer> freshShards;

  /** Of {@link #freshShards}, those this writer got snapshot rows of in this run. */
  private transient SortedSet<Integer> freshShardsSeen;

  /** The Flink checkpoint this run restored from (0: none). */
  private transient long restoredCheckpointId;

  /** Files closed at once at a checkpoint ({@link DeltaTaskWriter.Factory}). */
  private final int closeConcurrency;

  /**
   * Rows carry their table schema id as a last field and follow the table's schema (see
   * ShardbergSink).
   */
  private final boolean versionedRows;

  private transient Table table;
  private transient Set<Integer> equalityFieldIds;
  private transient DeltaTaskWriter.Factory writers;
  private transient DeltaTaskWriter writer;
  private transient Map<Integer, long[]> counts;
  private transient long lastCheckpointId;
  private transient boolean restored;
  private transient ListState<Long> runMarker;
  private transient boolean inputEnded;
  private transient int subtask;

  /**
   * Shards with data files when this writer opened; null: insert-only writes are off for this run.
   */
  private transient Set<Integer> shardsWithData;

  /** The snapshot that scan read ({@link PendingCheckpoint#NO_SNAPSHOT}: the table had none). */
  private transient long scannedSnapshotId;

  /**
   * Shards that got insert-only rows since the last barrier; reported for the coordinator's check.
   */
  private transient Set<Integer> insertOnlyShards;

  /** Shards that got snapshot reads (INSERT rows) since the last barrier; see ShardReread. */
  private transient Set<Integer> snapshotShards;

  private transient Counter insertOnlyRows;
  private transient Counter upsertRows;
  private transient Counter deleteRows;
  private transient Counter filesOpened;
  private transient Counter truncatedPartitions;

  /**
   * Versioned rows: the schema the writer writes now (the newest it met), and rows of older ones
   * adapted to it.
   */
  private transient Schema schema;

  private transient Map<Integer, RowAdapter> adapters;

  ShardbergWriter(
      TableLoader tableLoader,
      String tableName,
      RowType rowType,
      List<String> equalityColumns,
      boolean insertOnlyInitialLoad) {
    this(tableLoader, tableName, rowType, equalityColumns, insertOnlyInitialLoad, false);
  }

  ShardbergWriter(
      TableLoader tableLoader,
      String tableName,
      RowType rowType,
      List<String> equalityColumns,
      boolean insertOnlyInitialLoad,
      boolean versionedRows) {
    this(
        tableLoader,
        tableName,
        rowType,
        equalityColumns,
        insertOnlyInitialLoad,
        versionedRows,
        null);
  }

  /**
   * @param ownerPipelineId with deletes by position (the writer owns its partitions, never deletes
   *     by key): the pipeline's id, whose commits are not changes by others; null: delete by key
   */
  ShardbergWriter(
      TableLoader tableLoader,
      String tableName,
      RowType rowType,
      List<String> equalityColumns,
      boolean insertOnlyInitialLoad,
      boolean versionedRows,
      String ownerPipelineId) {
    this(
        tableLoader,
        tableName,
        rowType,
        equalityColumns,
        insertOnlyInitialLoad,
        versionedRows,
        ownerPipelineId,
        null,
        DeltaTaskWriter.Factory.DEFAULT_CLOSE_CONCURRENCY);
  }

  /**
   * @param ownerCompaction with deletes by position, when the owners compact their partitions;
   *     null: never
   * @param closeConcurrency files closed at once at a checkpoint ({@code target.close-concurrency};
   *     1: on the task thread)
   */
  ShardbergWriter(
      TableLoader tableLoader,
      String tableName,
      RowType rowType,
      List<String> equalityColumns,
      boolean insertOnlyInitialLoad,
      boolean versionedRows,
      String ownerPipelineId,
      PartitionOwner.OwnerCompaction ownerCompaction,
      int closeConcurrency) {
    this.closeConcurrency = closeConcurrency;
    this.ownerPipelineId = ownerPipelineId;
    this.ownerCompaction = ownerCompaction;
    this.versionedRows = versionedRows;
    this.tableLoader = tableLoader;
    this.tableName = tableName;
    this.rowType = rowType;
    this.equalityColumns = List.copyOf(equalityColumns);
    this.insertOnlyInitialLoad = insertOnlyInitialLoad;
  }

  /**
   * Deletes by position: the shards of the plan this job writes, which (with the restored state)
   * say which shards this run reads again; null: not known, none is read again.
   */
  ShardbergWriter plannedShards(SortedSet<Integer> shards) {
    this.plannedShards = shards == null ? null : new TreeSet<>(shards);
    return this;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    // Flink hands no restore to a task without state, so context.isRestored() alone is false after
    // a
    // failover of these (otherwise stateless) writers. A union list state that subtask 0 fills at
    // every
    // checkpoint reaches every subtask of a restored run, at any parallelism.
    this.runMarker =
        context
            .getOperatorStateStore()
            .getUnionListState(
                new ListStateDescriptor<>(RUN_MARKER_STATE_NAME, LongSerializer.INSTANCE));
    this.restored = context.isRestored() || runMarker.get().iterator().hasNext();
    // Flink's checkpoint ids only grow after a restore; end-of-input results are tagged past it.
    this.lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
    this.restoredCheckpointId = lastCheckpointId;
    this.freshShards = new TreeSet<>();
    this.freshShardsSeen = new TreeSet<>();
    this.readAgainAfter = new HashMap<>();
    if (ownerPipelineId != null && plannedShards != null) {
      this.knownShardsState =
          context
              .getOperatorStateStore()
              .getUnionListState(
                  new ListStateDescriptor<>(
                      KNOWN_SHARDS_STATE_NAME,
                      org.apache.flink.api.common.typeinfo.Types.TUPLE(
                          org.apache.flink.api.common.typeinfo.Types.INT,
                          org.apache.flink.api.common.typeinfo.Types.LONG)));
      SortedSet<Integer> known = new TreeSet<>();
      boolean present = false;
      for (Tuple2<Integer, Long> entry : knownShardsState.get()) {
        if (entry.f0 < 0) {
          present = true;
          continue;
        }
        known.add(entry.f0);
        if (entry.f1 >= 0) {
          readAgainAfter.merge(entry.f0, entry.f1, Math::max);
        }
      }
      // Without state, or state of a release before this list: every shard of the plan is known,
      // as the coordinator takes it (its check then refuses a shard it would replace).
      if (restored && present) {
        freshShards.addAll(plannedShards);
        freshShards.removeAll(known);
      }
    }
  }

  @Override
  public void open() throws Exception {
    super.open();
    this.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    this.counts = new HashMap<>();
    if (!tableLoader.isOpen()) {
      tableLoader.open();
    }
    this.table = tableLoader.loadTable();
    this.equalityFieldIds =
        WriterTableCheck.validate(
            table,
            tableName,
            rowType,
            equalityColumns,
            ownerPipelineId != null ? DeleteMode.POSITION : DeleteMode.EQUALITY);
    this.writers =
        DeltaTaskWriter.factory(
            table,
            rowType,
            equalityFieldIds,
            subtask,
            getRuntimeContext().getTaskInfo().getAttemptNumber(),
            closeConcurrency);
    if (versionedRows) {
      this.schema = table.schema();
      this.adapters = new HashMap<>();
      this.writers = writers.forSchema(schema, FlinkSchemaUtil.convert(schema));
    }
    this.insertOnlyShards = new HashSet<>();
    this.snapshotShards = new HashSet<>();
    if (ownerPipelineId != null) {
      this.owner =
          new PartitionOwner(
              getRuntimeContext(),
              table,
              ownerPipelineId,
              equalityFieldIds,
              WriterTableCheck.shardColumn(rowType),
              subtask,
              getRuntimeContext().getTaskInfo().getAttemptNumber(),
              ownerCompaction,
              heldRowSerializer());
      this.heldPartitions = new java.util.LinkedHashSet<>();
      try (java.util.stream.Stream<Object> keys =
          getKeyedStateBackend()
              .getKeys(
                  PartitionOwner.HELD_STATE,
                  org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
        keys.forEach(heldPartitions::add); // restored with changes held
      }
      if (!heldPartitions.isEmpty()) {
        LOG.info(
            "Writer {} of {}: partition(s) {} hold changes from before the restore; written once"
                + " the writer's earlier changes to them have landed",
            subtask,
            tableName,
            heldPartitions);
      }
    }
    if (!freshShards.isEmpty()) {
      LOG.info(
          "Writer {} of {}: shard(s) {} are new to the restored state and read again from a fresh"
              + " snapshot; their partitions start empty (the coordinator removes their old files"
              + " with the checkpoint of their first snapshot rows)",
          subtask,
          tableName,
          freshShards);
    }
    if (insertOnlyInitialLoad && !restored) {
      this.scannedSnapshotId =
          table.currentSnapshot() == null
              ? PendingCheckpoint.NO_SNAPSHOT
              : table.currentSnapshot().snapshotId();
      this.shardsWithData =
          ShardsWithData.in(table, tableName, WriterTableCheck.shardColumn(rowType));
      if (shardsWithData != null) {
        LOG.info(
            "Writer {} of {}: first attempt; snapshot rows of shards without data files are written"
                + " insert-only ({} shard(s) already hold data and take upserts)",
            subtask,
            tableName,
            shardsWithData.size());
      }
    } else {
      this.shardsWithData = null;
      if (insertOnlyInitialLoad) {
        LOG.info("Writer {} of {}: restored run; every row is an upsert", subtask, tableName);
      }
    }
    var metrics = getMetricGroup().addGroup("shardberg");
    this.insertOnlyRows = metrics.counter("insertOnlyRows");
    this.upsertRows = metrics.counter("upsertRows");
    this.deleteRows = metrics.counter("deleteRows");
    this.filesOpened = metrics.counter("filesOpened");
    this.truncatedPartitions = metrics.counter("truncatedPartitions");
    if (owner != null) {
      PartitionOwner partitions = owner;
      metrics.<Integer, org.apache.flink.metrics.Gauge<Integer>>gauge(
          "ownerRewritesInFlight", partitions::rewritesInFlight);
      metrics.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
          "ownerRewrites", partitions::rewritesHandedOver);
      metrics.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
          "ownerRowsCarried", partitions::rowsCarried);
      metrics.<Long, org.apache.flink.metrics.Gauge<Long>>gauge(
          "ownerRewriteMillis", partitions::rewriteMillis);
    }
  }

  @Override
  public void processElement(StreamRecord<RowData> element) throws Exception {
    process(element.getValue());
  }

  /** One change, of the partition that is the current key. */
  private void process(RowData raw) throws Exception {
    RowData row = raw;
    RowKind kind = row.getRowKind();
    if (kind == RowKind.UPDATE_BEFORE) {
      return; // upsert: UPDATE_AFTER deletes the key itself; a key change came as DELETE of the old
      // key
    }
    if (owner != null && heldPartitions.contains(getCurrentKey())) {
      owner.hold(raw); // after the ones it holds already
      return;
    }
    if (versionedRows && PartitionKeySelector.isTruncateMarker(row)) {
      truncate(raw, row.getInt(0), row.getInt(1));
      return;
    }
    if (versionedRows) {
      row = followSchema(row);
    }
    if (writer == null) {
      writer = writers.create();
    }
    int shard = row.getInt(0);
    boolean insertOnly =
        kind == RowKind.INSERT && shardsWithData != null && !shardsWithData.contains(shard);
    if (owner != null) {
      PartitionKey partition = writer.partitionOf(row);
      if (!owner.touch(
          getCurrentKey(),
          partition,
          shard,
          insertOnly,
          lastCheckpointId + 1,
          readAgainAfter(shard))) {
        hold(raw);
        return;
      }
      if (kind == RowKind.INSERT && freshShards.contains(shard)) {
        freshShardsSeen.add(shard);
      }
      if (kind != RowKind.INSERT || !insertOnly) {
        owner.delete(writer.keyOf(row), partition);
      }
      if (kind != RowKind.DELETE) {
        owner.written(writer.keyOf(row), writer.insertAt(row));
      }
      (kind == RowKind.DELETE ? deleteRows : insertOnly ? insertOnlyRows : upsertRows).inc();
      if (insertOnly) {
        insertOnlyShards.add(shard);
      }
    } else if (kind == RowKind.DELETE) {
      writer.deleteKey(row);
      deleteRows.inc();
    } else if (insertOnly) {
      writer.insert(row);
      insertOnlyShards.add(shard);
      insertOnlyRows.inc();
    } else {
      writer.upsert(row);
      upsertRows.inc();
    }
    if (kind == RowKind.INSERT) {
      snapshotShards.add(shard);
    }
    long[] shardCounts = counts.computeIfAbsent(shard, ignored -> new long[2]);
    shardCounts[kind == RowKind.DELETE ? 1 : 0]++;
  }

  /**
   * A truncate marker ({@link ShardbergSink#TRUNCATE_MARKER}): partition (shard, bucket) loses
   * every row written before it, in this checkpoint (dropped here) and committed (an equality
   * delete by the shard column, committed with this checkpoint, in order with every other change).
   */
  private void truncate(RowData marker, int shard, int bucket) throws Exception {
    if (writer == null) {
      writer = writers.create();
    }
    PartitionKey partition =
        PartitionKeySelector.partitionOf(table.spec(), table.schema(), shard, bucket);
    if (owner != null) {
      if (!owner.touch(
          getCurrentKey(), partition, shard, false, lastCheckpointId + 1, readAgainAfter(shard))) {
        hold(marker);
        return;
      }
      int deleted = owner.truncate(partition);
      truncatedPartitions.inc();
      counts.computeIfAbsent(shard, ignored -> new long[2]);
      LOG.info(
          "Writer {} of {}: truncated partition {} (shard {} truncated on MySQL); {} rows deleted by"
              + " position with this checkpoint",
          subtask,
          tableName,
          table.spec().partitionToPath(partition),
          shard,
          deleted);
      return;
    }
    int dropped = writer.truncate(partition, shard);
    truncatedPartitions.inc();
    counts.computeIfAbsent(shard, ignored -> new long[2]);
    LOG.info(
        "Writer {} of {}: truncated partition {} (shard {} truncated on MySQL); dropped {} files written of it since the"
            + " last checkpoint, the committed rows go with this checkpoint's commit",
        subtask,
        tableName,
        table.spec().partitionToPath(partition),
        shard,
        dropped);
  }

  /**
   * {@code table} refreshed. A Hadoop table's refresh looks for the metadata file of the version it
   * loaded last; a writer that loaded the table at its start and refreshes only when the schema
   * changes finds that file gone once the coordinator's commits have cleaned it up ({@code
   * write.metadata.delete-after-commit.enabled}, Iceberg's ValidationException "Metadata file for
   * version 1 is missing"), which failed the job at a schema change after enough commits. Then the
   * table is loaded anew.
   */
  static Table refreshed(Table table, TableLoader loader) {
    try {
      table.refresh();
      return table;
    } catch (org.apache.iceberg.exceptions.ValidationException
        | org.apache.iceberg.exceptions.NotFoundException e) {
      LOG.info("Table {} cannot be refreshed ({}): loading it anew", table.name(), e.getMessage());
      if (!loader.isOpen()) {
        loader.open();
      }
      return loader.loadTable();
    }
  }

  /**
   * A versioned row in the layout of the schema this writer writes: a row of a newer schema (its
   * columns were committed to the table before the row left the source) moves the writer to that
   * schema, mid-checkpoint if need be; a row of an older one is padded with NULLs and widened.
   */
  private RowData followSchema(RowData row) throws IOException {
    int rowSchemaId = row.getInt(row.getArity() - 1);
    if (rowSchemaId == schema.schemaId()) {
      return row;
    }
    if (rowSchemaId > schema.schemaId()) {
      // Iceberg schema ids grow with every change here: columns are only added, widened or made
      // optional
      Schema newer = table.schemas().get(rowSchemaId);
      if (newer == null) {
        table = refreshed(table, tableLoader);
        newer = table.schemas().get(rowSchemaId);
      }
      if (newer == null) {
        throw new IllegalStateException(
            String.format(
                "Cannot write a row of schema %d to table %s: the table has no such schema (schemas %s). The"
                    + " source commits a schema before its rows; was the table replaced under the job?",
                rowSchemaId, tableName, table.schemas().keySet()));
      }
      LOG.info(
          "Writer {} of {}: rows now follow table schema {} (was {})",
          subtask,
          tableName,
          rowSchemaId,
          schema.schemaId());
      schema = newer;
      adapters.clear();
      writers = writers.forSchema(schema, FlinkSchemaUtil.convert(schema));
      if (writer != null) {
        writer.evolve(writers);
      }
      return row;
    }
    RowAdapter adapter = adapters.computeIfAbsent(rowSchemaId, id -> new RowAdapter(schema));
    return adapter.adapt(row);
  }

  /**
   * The Flink checkpoint after which {@code shard}'s old files left the table (at the latest with
   * the checkpoint of its first snapshot rows), -1 when it was never read again: a partition of it
   * not changed since starts empty.
   */
  private long readAgainAfter(int shard) {
    if (freshShards.contains(shard)) {
      return restoredCheckpointId;
    }
    return readAgainAfter.getOrDefault(shard, -1L);
  }

  /**
   * How held changes are kept in state: as the input's rows travel (the stream's serializer), or,
   * where the operator has none configured (a test harness), as the row type's internal rows.
   */
  private org.apache.flink.api.common.typeutils.TypeSerializer<RowData> heldRowSerializer() {
    org.apache.flink.api.common.typeutils.TypeSerializer<RowData> input =
        getOperatorConfig().getInputs(getUserCodeClassloader()).length == 0
            ? null
            : getOperatorConfig().getTypeSerializerIn(0, getUserCodeClassloader());
    return input != null
        ? input
        : new org.apache.flink.table.runtime.typeutils.RowDataSerializer(rowType);
  }

  /** The partition (the current key) waits: this change and every later one of it are held. */
  private void hold(RowData raw) throws Exception {
    owner.hold(raw);
    heldPartitions.add(getCurrentKey());
  }

  /**
   * At a barrier, before the files close: each partition that holds changes and whose owner's
   * changes have landed meanwhile is read again from the table, and its held changes are written
   * into this checkpoint, in the order they came; the others go on holding.
   */
  private void writeHeld(boolean last) throws Exception {
    if (owner == null || heldPartitions.isEmpty()) {
      return;
    }
    owner.refreshNow();
    for (Object key : new ArrayList<>(heldPartitions)) {
      setCurrentKey(key);
      heldPartitions.remove(key);
      List<RowData> rows = owner.takeHeld();
      for (RowData row : rows) {
        process(row); // holds it again, and those after it, while the partition still waits
      }
    }
    if (last && !heldPartitions.isEmpty()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot end the input of writer %d of table %s: partition(s) %s hold changes until"
                  + " the writer's earlier changes to them land (another committer changed their"
                  + " shards meanwhile), and the input ended first. Resume the pipeline from its"
                  + " last checkpoint: the changes are in its state.",
              subtask, tableName, heldPartitions));
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    if (subtask == 0) {
      runMarker.update(List.of(context.getCheckpointId()));
    }
    if (knownShardsState != null) {
      // Known to the state as the coordinator's is: a shard read again once a checkpoint holds
      // some of its snapshot rows (the union of every writer's list is what a restore finds).
      List<Tuple2<Integer, Long>> known = new ArrayList<>();
      known.add(KNOWN_SHARDS_PRESENT);
      for (Integer shard : plannedShards) {
        if (freshShardsSeen.contains(shard)) {
          known.add(Tuple2.of(shard, restoredCheckpointId));
        } else if (!freshShards.contains(shard)) {
          known.add(Tuple2.of(shard, readAgainAfter.getOrDefault(shard, -1L)));
        }
      }
      knownShardsState.update(known);
    }
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    lastCheckpointId = checkpointId;
    if (!inputEnded) {
      LOG.debug(
          "Writer {} of {}: barrier of checkpoint {} arrived", subtask, tableName, checkpointId);
      emit(checkpointId, false);
    }
  }

  /**
   * Bounded input: the rows after the last barrier go out now, tagged with the next checkpoint id;
   * the coordinator commits them with the final checkpoint.
   */
  @Override
  public void endInput() throws Exception {
    emit(lastCheckpointId + 1, true);
    inputEnded = true;
  }

  /**
   * @param last the writer's last result (its input ended): an owner's compaction started now is
   *     handed over at once
   */
  private void emit(long checkpointId, boolean last) throws Exception {
    writeHeld(last);
    WriteResult files = WriteResult.builder().build();
    if (writer != null) {
      long start = System.nanoTime();
      files = writer.complete();
      filesOpened.inc(writer.filesOpened());
      LOG.debug(
          "Writer {} of {} closed {} files for checkpoint {} in {} ms",
          subtask,
          tableName,
          writer.filesOpened(),
          checkpointId,
          (System.nanoTime() - start) / 1_000_000);
      writer = null;
    }
    Map<Integer, Long> ownerChecks = Map.of();
    List<DataFile> removedDataFiles = List.of();
    if (owner != null) {
      long start = System.nanoTime();
      PartitionOwner.Compacted compacted =
          owner.compact(files.dataFiles(), this::setCurrentKey, last);
      long compactedAt = System.nanoTime();
      ownerChecks = owner.checks(); // a rewrite handed over carries the check it began from
      removedDataFiles = compacted.removed();
      DeleteWriteResult deletes = owner.complete(this::setCurrentKey);
      LOG.debug(
          "Writer {} of {}, checkpoint {}: owner compaction (hand-overs, starts) {} ms ({}),"
              + " checks and deletes by position {} ms",
          subtask,
          tableName,
          checkpointId,
          (compactedAt - start) / 1_000_000,
          owner.lastBarrierTimes(),
          (System.nanoTime() - compactedAt) / 1_000_000);
      files =
          WriteResult.builder()
              .add(files)
              .addDataFiles(compacted.written())
              .addDeleteFiles(deletes.deleteFiles())
              .addRewrittenDeleteFiles(deletes.rewrittenDeleteFiles())
              .addRewrittenDeleteFiles(compacted.vectors())
              .addReferencedDataFiles(deletes.referencedDataFiles())
              .build();
    }
    Map<Integer, ShardCounts> shardCounts = new HashMap<>();
    counts.forEach((shard, c) -> shardCounts.put(shard, new ShardCounts(c[0], c[1])));
    counts.clear();
    Map<Integer, Long> scans = new HashMap<>();
    insertOnlyShards.forEach(shard -> scans.put(shard, scannedSnapshotId));
    insertOnlyShards.clear();
    Set<Integer> snapshots = new HashSet<>(snapshotShards);
    snapshotShards.clear();
    output.collect(
        new StreamRecord<>(
            new WriterResult(
                checkpointId,
                subtask,
                files,
                shardCounts,
                scans,
                snapshots,
                ownerChecks,
                removedDataFiles,
                freshShards)));
  }

  @Override
  public void close() throws Exception {
    try {
      if (owner != null) {
        owner.close(); // rewrites not handed over: dropped, their files deleted
      }
      if (writer != null) {
        writer.abort(); // files never handed to the coordinator: nothing will reference them
        writer = null;
      }
    } finally {
      try {
        if (writers != null) {
          writers.close();
        }
        tableLoader.close();
      } finally {
        super.close();
      }
    }
  }
}
