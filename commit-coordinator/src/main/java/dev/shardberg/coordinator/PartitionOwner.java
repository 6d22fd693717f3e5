package dev.shardberg.coordinator;

import dev.shardberg.coordinator.owner.CommittedRowDeletes;
import dev.shardberg.coordinator.owner.CommittedRows;
import dev.shardberg.coordinator.owner.FilePosition;
import dev.shardberg.coordinator.owner.KeyCodec;
import dev.shardberg.coordinator.owner.LiveRowsRewrite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SerializableTable;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.ContentFileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writer's knowledge as the owner of its partitions ({@code target.delete-mode: position}):
 * where each live row of a partition is, in the writer's keyed state (keyed by partition, as the
 * writer's input is), and each data file's position deletes (its deletion vector; file-scoped
 * position-delete files on format v2). A partition is learned from the committed table on its first
 * change since the state began ({@link CommittedRows}); from then on every row written moves its
 * key's place, and every delete of a row becomes a delete by position ({@link
 * CommittedRowDeletes}), so no equality delete is ever written.
 *
 * <p>Consistency: the index and the files it points to change together before a barrier, so a
 * checkpoint holds an index that matches the files its commit adds. The index is a cache of the
 * committed table: at the first change to a partition in each checkpoint the owner checks that no
 * other committer changed the partition's shard since the snapshot the index reflects ({@link
 * InsertOnlyCheck#foreignChange}); if one did (an external compaction, a Spark {@code DELETE},
 * another pipeline) or that history expired, the partition is read again from the table — when
 * every change the owner made to it has landed — or the job stops naming the commit. The snapshot
 * each check held up to travels with the checkpoint ({@link WriterResult#ownerChecks}), and the
 * coordinator checks the rest of the way before it commits. A restore to a checkpoint older than
 * the table is refused at the restore ({@link CommitRefusals#checkNotRewoundForPositionDeletes}).
 */
final class PartitionOwner {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwner.class);

  /** The file name suffix of the data files an owner's compaction writes. */
  static final String COMPACTED_SUFFIX = "compacted";

  private final Table table;
  private final String pipelineId;
  private final Set<Integer> keyFieldIds;
  private final String shardColumn;
  private final KeyCodec codec;
  private final RowDataWrapper keyWrapper;
  private final InternalRecordWrapper recordKeyWrapper;
  private final OutputFileFactory dvFiles;
  private final OutputFileFactory positionFiles;

  /** Key → where its live row is: {@link #pack}ed (file id, position). */
  private final MapState<String, Long> rowAt;

  /**
   * The partition's file dictionary: id → data file path, and back (an int per row, not a path).
   */
  private final MapState<Integer, String> fileOf;

  private final MapState<String, Integer> fileId;
  private final ValueState<Integer> nextFileId;

  /**
   * The index as versions before the file dictionary kept it (key → file path, position): moved to
   * the dictionary at the partition's first change after a restore, then empty.
   */
  private final MapState<String, Tuple2<String, Long>> legacyRows;

  /**
   * Data file → the position deletes a reader applies to it (serialized {@code DeleteFile[]}: its
   * deletion vector, or position-delete files), merged into its next delete file.
   */
  private final MapState<String, byte[]> vectors;

  private final ValueState<Long> indexedAt;

  /** The Flink checkpoint whose rows changed the partition last. */
  private final ValueState<Long> writtenIn;

  /** Data files this owner added to the partition since its last compaction (or its start). */
  private final ValueState<Integer> filesAdded;

  /** The keyed state of the changes a partition holds (see {@link #touch}). */
  static final String HELD_STATE = "shardberg-owner-held";

  /**
   * Changes to the partition held while it waits for its own changes to land after another
   * committer changed its shard, in arrival order; null without a serializer for them.
   */
  private final ListState<RowData> held;

  /** The Flink checkpoint whose commit the partition waits for; null: not waiting. */
  private final ValueState<Long> waitingFor;

  /**
   * What the partition's state holds: {@link #STATE_VERSION} once learned by this version; absent
   * in a state kept by an older one (read again from the table at its first change).
   */
  private final ValueState<Integer> stateVersion;

  /** 2: each data file's every position delete in {@code shardberg-owner-vectors}. */
  static final int STATE_VERSION = 2;

  /** When and how much the owner compacts; null: never. */
  private final OwnerCompaction compaction;

  private final OutputFileFactory compactedFiles;

  private final CommittedRowDeletes deletes;

  /** Partitions (their keys in the writer's keyed state) checked in this checkpoint. */
  private final Set<Object> checked = new HashSet<>();

  /** Changed shards of this checkpoint, each with the oldest snapshot a check held up to. */
  private final SortedMap<Integer, Long> checks = new TreeMap<>();

  /** The table was refreshed in this checkpoint. */
  private boolean refreshed;

  /**
   * This checkpoint's data files with deletes, and the position deletes in the table for each
   * (merged into its new delete file; the file-scoped ones replaced).
   */
  private final Map<String, List<DeleteFile>> previousVectors = new HashMap<>();

  PartitionOwner(
      RuntimeContext context,
      Table table,
      String pipelineId,
      Set<Integer> keyFieldIds,
      String shardColumn,
      int subtask,
      int attempt,
      OwnerCompaction compaction,
      TypeSerializer<RowData> rows) {
    this.table = table;
    this.pipelineId = pipelineId;
    this.compaction = compaction;
    this.compactedFiles =
        OutputFileFactory.builderFor(table, subtask, attempt)
            .format(FileFormat.PARQUET)
            .suffix(COMPACTED_SUFFIX)
            .build();
    this.keyFieldIds = keyFieldIds;
    this.shardColumn = shardColumn;
    Schema keys = TypeUtil.select(table.schema(), keyFieldIds);
    this.codec = new KeyCodec(keys.asStruct());
    RowType keyRowType = FlinkSchemaUtil.convert(keys);
    this.keyWrapper = new RowDataWrapper(keyRowType, keys.asStruct());
    this.recordKeyWrapper = new InternalRecordWrapper(keys.asStruct());
    this.dvFiles =
        OutputFileFactory.builderFor(table, subtask, attempt).format(FileFormat.PUFFIN).build();
    this.positionFiles =
        OutputFileFactory.builderFor(table, subtask, attempt)
            .format(FileFormat.PARQUET)
            .suffix("positions")
            .build();
    this.rowAt =
        context.getMapState(
            new MapStateDescriptor<>("shardberg-owner-row-at", Types.STRING, Types.LONG));
    this.fileOf =
        context.getMapState(
            new MapStateDescriptor<>("shardberg-owner-file-of", Types.INT, Types.STRING));
    this.fileId =
        context.getMapState(
            new MapStateDescriptor<>("shardberg-owner-file-id", Types.STRING, Types.INT));
    this.nextFileId =
        context.getState(new ValueStateDescriptor<>("shardberg-owner-next-file-id", Types.INT));
    this.legacyRows =
        context.getMapState(
            new MapStateDescriptor<>(
                "shardberg-owner-rows", Types.STRING, Types.TUPLE(Types.STRING, Types.LONG)));
    this.vectors =
        context.getMapState(
            new MapStateDescriptor<>(
                "shardberg-owner-vectors",
                Types.STRING,
                PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
    this.indexedAt =
        context.getState(new ValueStateDescriptor<>("shardberg-owner-indexed-at", Types.LONG));
    this.writtenIn =
        context.getState(new ValueStateDescriptor<>("shardberg-owner-written-in", Types.LONG));
    this.filesAdded =
        context.getState(new ValueStateDescriptor<>("shardberg-owner-files-added", Types.INT));
    this.deletes = new CommittedRowDeletes(table);
    this.held =
        rows == null ? null : context.getListState(new ListStateDescriptor<>(HELD_STATE, rows));
    this.waitingFor =
        context.getState(new ValueStateDescriptor<>("shardberg-owner-waiting-for", Types.LONG));
    this.stateVersion =
        context.getState(new ValueStateDescriptor<>("shardberg-owner-state-version", Types.INT));
  }

  /**
   * Before a change to {@code partition} (the current key, {@code key}) of Flink checkpoint {@code
   * checkpoint}: at the first since the state began, learns the partition's rows from the committed
   * table, or marks it empty when the caller knows it is ({@code knownEmpty}: an insert-only
   * shard); at the first of each later checkpoint, checks that no other committer changed the
   * partition's shard since the index's snapshot, and reads the partition again if one did.
   *
   * <p>When another committer changed the shard while changes of this owner to the partition are
   * not committed yet, neither the index nor the table says where the partition's rows are until
   * those changes land (the coordinator carries them over by key, {@link CheckpointRebase}): the
   * partition then waits, and this returns false — the caller {@link #hold}s the change, and every
   * later one of the partition, until a call finds the owner's changes landed; that call reads the
   * partition again from the table and returns true (the caller then writes what it held first:
   * {@link #takeHeld}).
   *
   * @return false: the change must be held, not written
   */
  boolean touch(Object key, PartitionKey partition, int shard, boolean knownEmpty, long checkpoint)
      throws Exception {
    return touch(key, partition, shard, knownEmpty, checkpoint, -1);
  }

  /**
   * As {@link #touch(Object, PartitionKey, int, boolean, long)}, for a partition of a shard this
   * run reads again from a fresh snapshot ({@code replacedAfter} ≥ 0: the Flink checkpoint the run
   * restored from): the coordinator removes every file of the shard that is in the table with the
   * checkpoint of the shard's first snapshot rows, which is this checkpoint or an earlier one of
   * this run. So at the partition's first change since {@code replacedAfter} whatever the index
   * held is dropped, and the partition starts empty: no delete of an older row, no read of the
   * table.
   *
   * @param replacedAfter the Flink checkpoint the run restored from, when the partition's shard is
   *     read again in this run; -1 otherwise
   */
  boolean touch(
      Object key,
      PartitionKey partition,
      int shard,
      boolean knownEmpty,
      long checkpoint,
      long replacedAfter)
      throws Exception {
    Long waiting = waitingFor.value();
    if (waiting != null) {
      long landed = landedCheckpoint();
      if (landed < waiting) {
        return false;
      }
      LOG.info(
          "Partition {} of table {}: its writer's changes of Flink checkpoint {} have landed (the"
              + " pipeline's last commit is of Flink checkpoint {}); it reads the partition again"
              + " from the table and writes the changes it held",
          table.spec().partitionToPath(partition),
          table.name(),
          waiting,
          landed);
      waitingFor.clear();
      checked.remove(key);
      dropRewrite(partition);
      clearRows();
      vectors.clear();
      learn(partition, shard);
    }
    if (!checked.add(key)) {
      return true;
    }
    moveLegacyRows();
    if (replacedAfter >= 0) {
      Long written = writtenIn.value();
      if (written == null || written <= replacedAfter) {
        startEmpty(partition, shard);
      }
    }
    Long at = indexedAt.value();
    if (at != null && !Objects.equals(stateVersion.value(), STATE_VERSION)) {
      // kept by a version that held one position-delete file per data file, not every one that
      // applies to it: a deletion vector merged from that would drop the others' rows
      refreshOnce();
      if (!learnAgain(
          partition,
          shard,
          at,
          new InsertOnlyCheck.Finding(
              false,
              "its writer's state was kept by an older version (a data file's last"
                  + " position-delete file only, not every one that applies to it)"))) {
        checked.remove(key);
        return false;
      }
    } else if (at == null) {
      if (knownEmpty) {
        Snapshot current = table.currentSnapshot(); // an insert-only shard needs no read
        indexedAt.update(current == null ? PendingCheckpoint.NO_SNAPSHOT : current.snapshotId());
        stateVersion.update(STATE_VERSION);
      } else {
        learn(partition, shard);
      }
    } else {
      refreshOnce();
      Snapshot current = table.currentSnapshot();
      long now = current == null ? PendingCheckpoint.NO_SNAPSHOT : current.snapshotId();
      if (at != now) {
        Optional<InsertOnlyCheck.Finding> finding =
            InsertOnlyCheck.foreignChange(
                ((HasTableOperations) table).operations().current(),
                table.io(),
                shardColumn,
                pipelineId,
                new TreeMap<>(Map.of(shard, at)));
        if (finding.isEmpty()) {
          indexedAt.update(now);
        } else if (!learnAgain(partition, shard, at, finding.get())) {
          checked.remove(key);
          return false;
        }
      }
    }
    checks.merge(shard, indexedAt.value(), (a, b) -> TempManifests.older(table, a, b));
    writtenIn.update(checkpoint);
    return true;
  }

  /** Holds a change of the partition (the current key) that waits: see {@link #touch}. */
  void hold(RowData row) throws Exception {
    held.add(row);
  }

  /** The changes the partition (the current key) held, in arrival order; it holds none after. */
  List<RowData> takeHeld() throws Exception {
    List<RowData> rows = new ArrayList<>();
    if (held != null) {
      Iterable<RowData> kept = held.get();
      if (kept != null) {
        kept.forEach(rows::add);
      }
      held.clear();
    }
    return rows;
  }

  /**
   * Reads the table again now (at a barrier, to find whether a waiting partition's commit landed).
   */
  void refreshNow() {
    table.refresh();
    refreshed = true;
  }

  /** The Flink checkpoint of the pipeline's last commit in the table as last read; -1: none. */
  private long landedCheckpoint() {
    return PipelineProgress.read(table, pipelineId).map(p -> p.flinkCheckpointId()).orElse(-1L);
  }

  /**
   * The index of the partition no longer reflects the table: drops it and reads the partition from
   * the table, when every change of this owner to it has landed (true); otherwise the partition
   * waits for them (false).
   */
  private boolean learnAgain(
      PartitionKey partition, int shard, long at, InsertOnlyCheck.Finding finding)
      throws Exception {
    String path = table.spec().partitionToPath(partition);
    Long written = writtenIn.value();
    long landed = landedCheckpoint();
    if (written != null && written > landed) {
      if (held == null) {
        throw new PipelineConflictException(
            String.format(
                "Cannot write partition %s of table %s by position (target.delete-mode: position):"
                    + " its writer knows its rows as of snapshot %d, but %s, and the writer's"
                    + " changes to it of Flink checkpoint %d are not committed yet (the last commit"
                    + " of pipeline %s that landed is of Flink checkpoint %d)",
                path, table.name(), at, finding, written, pipelineId, landed));
      }
      LOG.info(
          "Partition {} of table {}: {}, while its writer's changes to it of Flink checkpoint {} are"
              + " not committed yet (the last commit of pipeline {} that landed is of Flink"
              + " checkpoint {}). The coordinator carries those over by key; the writer holds the"
              + " partition's next changes until they have landed, then reads the partition again"
              + " from the table",
          path,
          table.name(),
          finding,
          written,
          pipelineId,
          landed);
      waitingFor.update(written);
      return false;
    }
    LOG.info(
        "Partition {} of table {}: {}; its writer reads the partition again from the table (every"
            + " change it made to it has landed)",
        path,
        table.name(),
        finding);
    dropRewrite(partition);
    clearRows();
    vectors.clear();
    learn(partition, shard);
    return true;
  }

  /**
   * The partition of a shard read again: its old files leave the table with the checkpoint of the
   * shard's first snapshot rows (the coordinator's), so whatever the index held is gone and the
   * partition starts empty as of the current snapshot (the coordinator checks from there that no
   * other committer changed the shard).
   */
  private void startEmpty(PartitionKey partition, int shard) throws Exception {
    boolean held = !rowAt.isEmpty() || !vectors.isEmpty() || indexedAt.value() != null;
    dropRewrite(partition);
    clearRows();
    legacyRows.clear();
    vectors.clear();
    filesAdded.clear();
    refreshOnce();
    Snapshot current = table.currentSnapshot();
    indexedAt.update(current == null ? PendingCheckpoint.NO_SNAPSHOT : current.snapshotId());
    stateVersion.update(STATE_VERSION);
    if (held) {
      LOG.debug(
          "Partition {} of table {}: shard {} is read again from a fresh snapshot; its writer drops"
              + " what it knew of the partition (its old files leave the table with the shard's"
              + " first snapshot rows)",
          table.spec().partitionToPath(partition),
          table.name(),
          shard);
    }
  }

  private void learn(PartitionKey partition, int shard) throws Exception {
    refreshOnce();
    Snapshot readAt = table.currentSnapshot();
    CommittedRows.Partition read =
        CommittedRows.read(
            table,
            readAt == null ? null : readAt.snapshotId(),
            partition,
            keyFieldIds,
            Expressions.equal(shardColumn, shard));
    Map<String, Integer> ids = new HashMap<>();
    Map<String, Long> entries = new HashMap<>();
    int next = nextFileId.value() == null ? 0 : nextFileId.value();
    for (Map.Entry<? extends StructLike, FilePosition> row : read.rows().entrySet()) {
      FilePosition at = row.getValue();
      Integer id = ids.get(at.file());
      if (id == null) {
        id = fileId.get(at.file());
        if (id == null) {
          id = next++;
          fileOf.put(id, at.file());
          fileId.put(at.file(), id);
        }
        ids.put(at.file(), id);
      }
      entries.put(codec.encode(recordKeyWrapper.copyFor(row.getKey())), pack(id, at.position()));
    }
    nextFileId.update(next);
    rowAt.putAll(entries);
    for (Map.Entry<String, List<DeleteFile>> vector : read.positionDeletes().entrySet()) {
      vectors.put(vector.getKey(), serialize(vector.getValue()));
    }
    indexedAt.update(readAt == null ? PendingCheckpoint.NO_SNAPSHOT : readAt.snapshotId());
    stateVersion.update(STATE_VERSION);
  }

  private void refreshOnce() {
    if (!refreshed) {
      table.refresh();
      refreshed = true;
    }
  }

  /**
   * This checkpoint's changed shards, each with the oldest snapshot up to which a check of its
   * partitions held: the coordinator checks from there before it commits.
   */
  SortedMap<Integer, Long> checks() {
    return new TreeMap<>(checks);
  }

  /**
   * Deletes the live row of {@code key} of {@code partition} (the current key), if there is one.
   */
  void delete(RowData key, PartitionKey partition) throws Exception {
    String encoded = codec.encode(keyWrapper.wrap(key));
    Long at = rowAt.get(encoded);
    if (at == null) {
      return; // not in the table, nor written since: nothing to delete
    }
    deleteAt(new FilePosition(fileOf.get(fileIdOf(at)), positionOf(at)), partition);
    rowAt.remove(encoded);
  }

  /** The row of {@code key} now is at {@code at}. */
  void written(RowData key, FilePosition at) throws Exception {
    rowAt.put(codec.encode(keyWrapper.wrap(key)), pack(idOf(at.file()), at.position()));
  }

  /** Deletes every live row of {@code partition} (the current key): a truncate of its shard. */
  int truncate(PartitionKey partition) throws Exception {
    dropRewrite(partition);
    Map<Integer, String> files = files();
    List<FilePosition> all = new ArrayList<>();
    for (Long at : rowAt.values()) {
      all.add(new FilePosition(files.get(fileIdOf(at)), positionOf(at)));
    }
    for (FilePosition at : all) {
      deleteAt(at, partition);
    }
    rowAt.clear(); // the files stay in the dictionary: their vectors are written at the barrier
    return all.size();
  }

  private void deleteAt(FilePosition at, StructLike partition) throws IOException {
    if (!previousVectors.containsKey(at.file())) {
      byte[] vector;
      try {
        vector = vectors.get(at.file());
      } catch (Exception e) {
        throw new IOException("Cannot read the deletion vector state of " + at.file(), e);
      }
      previousVectors.put(at.file(), vector == null ? List.of() : deserialize(vector));
    }
    deletes.delete(at, table.spec(), partition);
  }

  /** The partition's id of data file {@code path}, given one if it has none yet. */
  private int idOf(String path) throws Exception {
    Integer id = fileId.get(path);
    if (id == null) {
      id = nextFileId.value() == null ? 0 : nextFileId.value();
      nextFileId.update(Math.addExact(id, 1));
      fileOf.put(id, path);
      fileId.put(path, id);
    }
    return id;
  }

  /** The partition's file dictionary, id → path. */
  private Map<Integer, String> files() throws Exception {
    Map<Integer, String> files = new HashMap<>();
    for (Map.Entry<Integer, String> e : fileOf.entries()) {
      files.put(e.getKey(), e.getValue());
    }
    return files;
  }

  private void clearRows() {
    rowAt.clear();
    fileOf.clear();
    fileId.clear();
    nextFileId.clear();
  }

  /** Drops {@code path} from the partition's dictionary (the file leaves the table). */
  private void forgetFile(String path) throws Exception {
    Integer id = fileId.get(path);
    if (id != null) {
      fileId.remove(path);
      fileOf.remove(id);
    }
  }

  /**
   * The partition's index as an older version kept it (a path with every row), moved into the
   * dictionary: once per partition after a restore from such a state, then the legacy state is
   * empty.
   */
  private void moveLegacyRows() throws Exception {
    if (legacyRows.isEmpty()) {
      return;
    }
    Map<String, Long> moved = new HashMap<>();
    for (Map.Entry<String, Tuple2<String, Long>> row : legacyRows.entries()) {
      moved.put(row.getKey(), pack(idOf(row.getValue().f0), row.getValue().f1));
    }
    rowAt.putAll(moved);
    legacyRows.clear();
  }

  /**
   * Positions below 2^32 per data file (4 billion rows, far beyond a data file's target size), file
   * ids below 2^31 per partition (ids are not reused: a new file every second for 68 years).
   */
  static final int POSITION_BITS = 32;

  static long pack(int fileId, long position) {
    if (position < 0 || position >= (1L << POSITION_BITS) || fileId < 0) {
      throw new IllegalStateException(
          String.format(
              "Cannot index row position %d of data file %d of a partition: the owner's index holds"
                  + " positions below 2^32 and 2^31 files per partition",
              position, fileId));
    }
    return ((long) fileId << POSITION_BITS) | position;
  }

  static int fileIdOf(long packed) {
    return (int) (packed >>> POSITION_BITS);
  }

  static long positionOf(long packed) {
    return packed & ((1L << POSITION_BITS) - 1);
  }

  /**
   * When the owners compact their partitions: a partition to which this owner added {@code
   * minFiles} data files since its last compaction is rewritten at the next checkpoint barrier that
   * adds one more — those of its older files that are small (under {@code smallFileBytes}) or have
   * at least {@link #DELETED_SHARE} of their rows deleted, live rows only (the owner's own deletes
   * applied), into one; a large file with few deleted rows stays as it is, with its deletion vector
   * — at most {@code maxPartitions} partitions and about {@code maxBytes} bytes read per checkpoint
   * per writer.
   */
  record OwnerCompaction(
      int minFiles, int maxPartitions, long maxBytes, long smallFileBytes, int barriersInFlight)
      implements java.io.Serializable {
    /**
     * A data file with at least this share of its rows deleted is rewritten whatever its size (the
     * default of Iceberg's own rewrite action, {@code delete-ratio-threshold}).
     */
    static final double DELETED_SHARE = 0.3;

    /**
     * How many barriers a rewrite may pass unfinished before a barrier waits for it: the rewrites
     * share the machine's cores with the source and the writers, and a barrier that waits for one
     * holds the checkpoint (and every row's freshness) back by what is left of it.
     */
    static final int BARRIERS_IN_FLIGHT = 8;

    /**
     * The owner has fallen behind, and a barrier waits for its rewrites in flight, once a partition
     * it adds a file to has {@code minFiles} + this many files added since its last compaction: the
     * bound on the files per partition when the rewrites cannot keep up.
     */
    static final int FILES_BEHIND = 4;

    OwnerCompaction {
      if (barriersInFlight < 1) {
        throw new IllegalArgumentException("barriersInFlight must be at least 1");
      }
    }

    OwnerCompaction(int minFiles, int maxPartitions, long maxBytes, long smallFileBytes) {
      this(minFiles, maxPartitions, maxBytes, smallFileBytes, BARRIERS_IN_FLIGHT);
    }

    /** Each rewrite handed over at the barrier after its start, waiting for it if need be. */
    OwnerCompaction(int minFiles, int maxPartitions, long maxBytes) {
      this(minFiles, maxPartitions, maxBytes, Long.MAX_VALUE, 1);
    }
  }

  /** What one checkpoint's compaction did: files written and removed, vectors removed. */
  record Compacted(List<DataFile> written, List<DataFile> removed, List<DeleteFile> vectors) {
    static final Compacted NONE = new Compacted(List.of(), List.of(), List.of());
  }

  /**
   * The live positions of each data file of the partition (the current key) the index knows, but
   * those of {@code current}, ascending: what a rewrite started now keeps. A file with deletes of
   * its owner's and no live row is there with none. Built from the index's packed places alone (no
   * object per row: a partition holds hundreds of thousands, and this runs at the barrier).
   */
  private SortedMap<String, long[]> livePositions(Set<String> current) throws Exception {
    Map<Integer, long[]> byFileId = new HashMap<>();
    Map<Integer, Integer> counts = new HashMap<>();
    int lastId = -1;
    long[] last = null;
    int lastCount = 0;
    for (Long packed : rowAt.values()) {
      int id = fileIdOf(packed);
      if (id != lastId) {
        if (last != null) {
          byFileId.put(lastId, last);
          counts.put(lastId, lastCount);
        }
        lastId = id;
        last = byFileId.getOrDefault(id, new long[16]);
        lastCount = counts.getOrDefault(id, 0);
      }
      if (lastCount == last.length) {
        last = Arrays.copyOf(last, last.length * 2);
      }
      last[lastCount++] = positionOf(packed);
    }
    if (last != null) {
      byFileId.put(lastId, last);
      counts.put(lastId, lastCount);
    }
    Map<Integer, String> files = files();
    SortedMap<String, long[]> keep = new TreeMap<>();
    for (Map.Entry<Integer, long[]> file : byFileId.entrySet()) {
      String path = files.get(file.getKey());
      if (!current.contains(path)) {
        long[] positions = Arrays.copyOf(file.getValue(), counts.get(file.getKey()));
        Arrays.sort(positions);
        keep.put(path, positions);
      }
    }
    for (String path : vectors.keys()) {
      if (!current.contains(path)) {
        keep.putIfAbsent(path, new long[0]);
      }
    }
    return keep;
  }

  /**
   * What a rewrite did off the writer's thread: its result (null when nothing was worth it), or
   * {@code skipped} when the barrier's byte budget was spent before it began.
   */
  private record Outcome(LiveRowsRewrite.Result result, boolean skipped) {}

  /**
   * A partition's rewrite started at one barrier, handed over at a later one; {@code shard} and
   * {@code checkedAt}: the partition's shard and the snapshot its index reflected when the rewrite
   * began, the check its hand-over carries (another committer's change since would make it keep
   * rows that are gone, or drop rows that moved).
   */
  private record Rewrite(
      String path,
      StructLike partition,
      int specId,
      SortedMap<String, long[]> kept,
      CompletableFuture<Outcome> outcome,
      Integer shard,
      Long checkedAt,
      long startedAtBarrier,
      int filesAddedAtStart) {}

  /** Barriers this owner has compacted at since it opened. */
  private long barriers;

  /** Where the last barrier's compaction spent its time, for the writer's DEBUG line. */
  private static final class BarrierTimes {
    long waitNanos;
    int waitedFor;
    long followNanos;
    int handedOver;
    long startNanos;
    int leftRunning;

    @Override
    public String toString() {
      return String.format(
          "waited %d ms for %d rewrite(s) still running, %d handed over (index follows %d ms),"
              + " starts %d ms, %d in flight after",
          waitNanos / 1_000_000,
          waitedFor,
          handedOver,
          followNanos / 1_000_000,
          startNanos / 1_000_000,
          leftRunning);
    }
  }

  private BarrierTimes lastBarrier = new BarrierTimes();

  /**
   * Where the last barrier's compaction spent its time: waiting for rewrites, the index following
   * them, starting new ones.
   */
  String lastBarrierTimes() {
    return lastBarrier.toString();
  }

  /**
   * Rewrites started at earlier barriers, by partition path: each handed over at the first barrier
   * that finds it done ({@link OwnerCompaction#barriersInFlight}).
   */
  private final Map<String, Rewrite> inFlight = new LinkedHashMap<>();

  /** Runs the rewrites, one at a time, off the writer's thread; created at the first. */
  private ExecutorService rewriter;

  /** For the writer's metrics (read by the metric reporter's thread). */
  private volatile int rewritesInFlight;

  private final AtomicLong rewritesHandedOver = new AtomicLong();
  private final AtomicLong rowsCarried = new AtomicLong();
  private final AtomicLong rewriteNanos = new AtomicLong();

  /**
   * At a barrier, before {@link #complete}: hands over the rewrites the last barrier started, then
   * counts this checkpoint's new data files per partition and starts rewriting the partitions due
   * ({@link OwnerCompaction}) on a thread of its own, one at a time, while the writer goes on with
   * the next checkpoint's rows; this checkpoint's own files are left as they are. The first later
   * barrier that finds a rewrite done hands it over; one still running is left running (the
   * checkpoint does not wait for it: a barrier that waited would hold every row's freshness back by
   * what is left of the rewrite, and a rewrite shares the cores with the source and the writers),
   * until it has passed {@code barriersInFlight} barriers: then the barrier waits, which holds the
   * files per partition bounded (the writers slow the source down rather than fall ever further
   * behind). At the hand-over each row the index still holds where the rewrite read it moves to its
   * place in the new file; a row deleted or changed meanwhile (in this checkpoint, or in any since
   * the rewrite began) is deleted from the new file by position in this checkpoint — the deletes
   * are carried to the new positions. A partition is rewritten once at a time. The rewritten files
   * and their current deletion vectors are removed by the same commit that adds the new file. At
   * most {@code max-partitions-per-cycle} partitions are started per barrier. A partition the
   * writer reads again from the table, starts empty or truncates meanwhile drops its rewrite; so
   * does a failover (a rewrite is not part of a checkpoint until it is handed over: its file is
   * deleted when the writer closes, or left to orphan-file removal). Format v2 and v3 alike: each
   * data file has one delete file of its owner's, a deletion vector or a file-scoped
   * position-delete file, which leaves with it; a position-delete file that names other data files
   * too (another tool's, or written before the switch) stays, and once those files are rewritten it
   * applies to nothing.
   *
   * @param last the writer's last barrier (its input ended): what it starts is handed over at once
   */
  Compacted compact(DataFile[] added, Consumer<String> setPartition, boolean last)
      throws Exception {
    if (compaction == null) {
      return Compacted.NONE;
    }
    List<DataFile> written = new ArrayList<>();
    List<DataFile> removed = new ArrayList<>();
    List<DeleteFile> removedVectors = new ArrayList<>();
    barriers++;
    lastBarrier = new BarrierTimes();
    handOver(setPartition, written, removed, removedVectors, last || behind(added, setPartition));
    if (added.length > 0) {
      long began = System.nanoTime();
      start(added, setPartition);
      lastBarrier.startNanos = System.nanoTime() - began;
      if (last) {
        handOver(setPartition, written, removed, removedVectors, true);
      }
    }
    lastBarrier.leftRunning = inFlight.size();
    if (written.isEmpty() && removed.isEmpty()) {
      return Compacted.NONE;
    }
    return new Compacted(written, removed, removedVectors);
  }

  /**
   * Whether a partition {@code added} adds files to now has {@link OwnerCompaction#FILES_BEHIND}
   * files more than a compaction needs, counting these: the rewrites do not keep up.
   */
  private boolean behind(DataFile[] added, Consumer<String> setPartition) throws Exception {
    if (inFlight.isEmpty()) {
      return false;
    }
    Map<String, Integer> files = new HashMap<>();
    for (DataFile file : added) {
      if (file.specId() == table.spec().specId()) {
        files.merge(table.spec().partitionToPath(file.partition()), 1, Integer::sum);
      }
    }
    for (Map.Entry<String, Integer> partition : files.entrySet()) {
      setPartition.accept(partition.getKey());
      int count = (filesAdded.value() == null ? 0 : filesAdded.value()) + partition.getValue();
      if (count >= compaction.minFiles() + OwnerCompaction.FILES_BEHIND) {
        return true;
      }
    }
    return false;
  }

  /** Counts {@code added} per partition and starts rewriting the partitions due. */
  private void start(DataFile[] added, Consumer<String> setPartition) throws Exception {
    Set<String> current = new HashSet<>();
    Map<String, StructLike> due = new LinkedHashMap<>();
    Map<String, Integer> dueFiles = new HashMap<>();
    for (DataFile file : added) {
      current.add(file.location());
      if (file.specId() != table.spec().specId()) {
        continue;
      }
      String key = table.spec().partitionToPath(file.partition());
      setPartition.accept(key);
      int count = filesAdded.value() == null ? 1 : filesAdded.value() + 1;
      filesAdded.update(count);
      if (count >= compaction.minFiles()) {
        due.putIfAbsent(key, file.partition());
        dueFiles.put(key, count);
      }
    }
    // the partitions with the most files first: under max-partitions-per-cycle, one compacted at
    // every barrier must not keep the others waiting for ever
    List<Map.Entry<String, StructLike>> byFiles = new ArrayList<>(due.entrySet());
    byFiles.sort((a, b) -> Integer.compare(dueFiles.get(b.getKey()), dueFiles.get(a.getKey())));
    Table frozen = null;
    AtomicLong bytes = new AtomicLong();
    for (Map.Entry<String, StructLike> partition : byFiles) {
      if (inFlight.containsKey(partition.getKey())) {
        continue; // still rewriting: its files since count towards the next one
      }
      if (inFlight.size() >= compaction.maxPartitions()) {
        break; // the next barrier that adds a file to it takes it
      }
      setPartition.accept(partition.getKey());
      SortedMap<String, long[]> keep = livePositions(current);
      if (keep.isEmpty()) {
        continue;
      }
      if (frozen == null) {
        frozen = SerializableTable.copyOf(table); // the table as of this barrier, for the thread
      }
      Table read = frozen;
      StructLike values = partition.getValue();
      CompletableFuture<Outcome> outcome =
          CompletableFuture.supplyAsync(
              () -> {
                if (bytes.get() >= compaction.maxBytes()) {
                  return new Outcome(null, true);
                }
                long began = System.nanoTime();
                try {
                  SortedMap<String, long[]> chosen = worthRewriting(read, values, keep);
                  if (chosen.isEmpty()) {
                    return new Outcome(null, false);
                  }
                  LiveRowsRewrite.Result result =
                      LiveRowsRewrite.rewrite(read, read.spec(), values, chosen, compactedFiles);
                  for (DataFile file : result.removed()) {
                    bytes.addAndGet(file.fileSizeInBytes());
                  }
                  return new Outcome(result, false);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                } finally {
                  rewriteNanos.addAndGet(System.nanoTime() - began);
                }
              },
              rewriter());
      inFlight.put(
          partition.getKey(),
          new Rewrite(
              partition.getKey(),
              values,
              table.spec().specId(),
              keep,
              outcome,
              shardOf(table, table.spec(), values),
              indexedAt.value(),
              barriers,
              dueFiles.get(partition.getKey())));
    }
    rewritesInFlight = inFlight.size();
  }

  /**
   * Hands every rewrite in flight over into this checkpoint, waiting for what is left of it: the
   * index follows the rows, deletes since the rewrite's start are carried to the new file.
   */
  private void handOver(
      Consumer<String> setPartition,
      List<DataFile> written,
      List<DataFile> removed,
      List<DeleteFile> removedVectors,
      boolean waitForAll)
      throws Exception {
    for (java.util.Iterator<Rewrite> rewrites = inFlight.values().iterator();
        rewrites.hasNext(); ) {
      Rewrite rewrite = rewrites.next();
      if (!waitForAll
          && !rewrite.outcome().isDone()
          && barriers - rewrite.startedAtBarrier() < compaction.barriersInFlight()) {
        continue; // handed over at a later barrier: this checkpoint does not wait for it
      }
      rewrites.remove();
      Outcome outcome;
      try {
        if (!rewrite.outcome().isDone()) {
          long began = System.nanoTime();
          try {
            rewrite.outcome().get();
          } finally {
            lastBarrier.waitNanos += System.nanoTime() - began;
            lastBarrier.waitedFor++;
          }
        }
        outcome = rewrite.outcome().get();
      } catch (ExecutionException e) {
        // another committer that rewrote the partition's files and expired them meanwhile (an
        // external compaction, another pipeline's expiry) leaves the rewrite without its files:
        // it would have been dropped anyway, and the partition is read again at its next change
        Optional<InsertOnlyCheck.Finding> moved = foreignChangeSince(rewrite);
        if (moved.isPresent()) {
          LOG.warn(
              "Partition {} of table {}: its owner's rewrite failed ({}) after another committer"
                  + " changed the shard; the rewrite is dropped and the partition read again at"
                  + " its next change: {}",
              rewrite.path(),
              table.name(),
              e.getCause() == null ? e : e.getCause().toString(),
              moved.get());
          continue;
        }
        throw new IOException(
            String.format(
                "Cannot compact partition %s of table %s: its owner's rewrite failed",
                rewrite.path(), table.name()),
            e.getCause());
      }
      setPartition.accept(rewrite.path());
      if (outcome.skipped()) {
        continue; // the byte budget of its barrier was spent: the next barrier adding a file
      }
      if (outcome.result() != null) {
        // the rewrite kept the rows its index held: another committer's change to the shard since
        // (a DELETE, a compaction) makes it wrong. Checked here up to the table as this
        // checkpoint read it; from there the coordinator checks on before it commits.
        Optional<InsertOnlyCheck.Finding> finding = foreignChangeSince(rewrite);
        if (finding.isPresent()) {
          LOG.info(
              "Partition {} of table {}: its owner's rewrite is dropped: {}",
              rewrite.path(),
              table.name(),
              finding.get());
          discard(rewrite.path(), outcome.result());
          continue; // the partition is read again at its next change
        }
        if (rewrite.shard() != null && rewrite.checkedAt() != null) {
          Snapshot current = table.currentSnapshot();
          long now = current == null ? PendingCheckpoint.NO_SNAPSHOT : current.snapshotId();
          checks.merge(rewrite.shard(), now, (a, b) -> TempManifests.older(table, a, b));
        }
      }
      // the files it did not read (this partition's of the checkpoint it began at, and of every
      // checkpoint since) count towards its next compaction
      filesAdded.update(
          1
              + Math.max(
                  0,
                  (filesAdded.value() == null ? 0 : filesAdded.value())
                      - rewrite.filesAddedAtStart()));
      LiveRowsRewrite.Result result = outcome.result();
      if (result == null) {
        continue;
      }
      if (table.spec().specId() != rewrite.specId()) {
        discard(rewrite.path(), result);
        continue; // the partition spec changed meanwhile: its next compaction takes it
      }
      int carried = 0;
      DataFile file = result.written();
      long followed = System.nanoTime();
      if (file != null) {
        carried = follow(rewrite, result);
        written.add(file);
      }
      lastBarrier.followNanos += System.nanoTime() - followed;
      lastBarrier.handedOver++;
      for (DataFile source : result.removed()) {
        String path = source.location();
        forgetFile(path);
        deletes.forget(path); // this checkpoint's deletes of its rows were carried
        previousVectors.remove(path);
        byte[] vector = vectors.get(path);
        if (vector != null) {
          for (DeleteFile delete : deserialize(vector)) {
            if (ContentFileUtil.isFileScoped(delete)) {
              removedVectors.add(delete); // one naming other files too stays (it applies to them)
            }
          }
          vectors.remove(path);
        }
      }
      removed.addAll(result.removed());
      rewritesHandedOver.incrementAndGet();
      rowsCarried.addAndGet(carried);
      LOG.info(
          "Partition {} of table {}: its owner rewrote {} data file(s) into one ({} rows, {} of"
              + " them deleted since the rewrite began); they and their deletion vectors leave the"
              + " table with this checkpoint's commit",
          rewrite.path(),
          table.name(),
          result.removed().size(),
          result.rows(),
          carried);
    }
    rewritesInFlight = inFlight.size();
  }

  /**
   * The index follows a rewrite handed over: the k-th row the rewrite copied (the kept positions of
   * its files, in their order) is at position k of the new file. Each row the index still holds in
   * a file the rewrite read moves there (a row never moves into an older file, so one still there
   * is where the rewrite read it); every other copied row was deleted or changed since the rewrite
   * began and is deleted from the new file by position. Returns how many were.
   */
  private int follow(Rewrite rewrite, LiveRowsRewrite.Result result) throws Exception {
    DataFile file = result.written();
    int to = idOf(file.location());
    int sources = result.removed().size();
    int[] sourceIds = new int[sources];
    long[][] positions = new long[sources][];
    long[] offsets = new long[sources];
    long offset = 0;
    for (int i = 0; i < sources; i++) {
      String path = result.removed().get(i).location();
      Integer id = fileId.get(path);
      sourceIds[i] = id == null ? -1 : id; // a file without a live row has no id
      positions[i] = rewrite.kept().get(path);
      offsets[i] = offset;
      offset += positions[i].length;
    }
    if (offset != result.rows()) {
      throw new IllegalStateException(
          String.format(
              "Partition %s of table %s: the rewrite copied %d rows, its files kept %d",
              rewrite.path(), table.name(), result.rows(), offset));
    }
    boolean[] stayed = new boolean[Math.toIntExact(offset)];
    Map<String, Long> moved = new HashMap<>();
    for (Map.Entry<String, Long> row : rowAt.entries()) {
      long packed = row.getValue();
      int id = fileIdOf(packed);
      for (int i = 0; i < sources; i++) {
        if (sourceIds[i] != id) {
          continue;
        }
        int k = Arrays.binarySearch(positions[i], positionOf(packed));
        if (k < 0) {
          throw new IllegalStateException(
              String.format(
                  "Partition %s of table %s: the index holds row %s at position %d of %s, which"
                      + " its rewrite did not copy",
                  rewrite.path(),
                  table.name(),
                  row.getKey(),
                  positionOf(packed),
                  result.removed().get(i).location()));
        }
        long at = offsets[i] + k;
        stayed[(int) at] = true;
        moved.put(row.getKey(), pack(to, at));
        break;
      }
    }
    rowAt.putAll(moved);
    int carried = 0;
    for (int at = 0; at < stayed.length; at++) {
      if (!stayed[at]) {
        deleteAt(new FilePosition(file.location(), at), rewrite.partition());
        carried++;
      }
    }
    return carried;
  }

  /** Rewrites started and not handed over yet. */
  int rewritesInFlight() {
    return rewritesInFlight;
  }

  /** Rewrites handed over into a checkpoint since the writer opened. */
  long rewritesHandedOver() {
    return rewritesHandedOver.get();
  }

  /** Rows deleted from rewritten files by position since their rewrite began (carried). */
  long rowsCarried() {
    return rowsCarried.get();
  }

  /** Time the rewrite thread spent on rewrites (handed over or not), in milliseconds. */
  long rewriteMillis() {
    return rewriteNanos.get() / 1_000_000;
  }

  /**
   * The partition's rewrite in flight, if any, is dropped (its index is read again or emptied): its
   * file, once written, is deleted.
   */
  private void dropRewrite(StructLike partition) {
    Rewrite rewrite = inFlight.remove(table.spec().partitionToPath(partition));
    rewritesInFlight = inFlight.size();
    if (rewrite != null) {
      rewrite
          .outcome()
          .thenAccept(
              outcome -> {
                if (outcome.result() != null) {
                  discard(rewrite.path(), outcome.result());
                }
              });
    }
  }

  /**
   * Another committer's change to the shard of {@code rewrite} since the snapshot its index
   * reflected when the rewrite began, up to the table as this checkpoint read it (refreshed once
   * per checkpoint); none for a partition without a shard or a check.
   */
  private Optional<InsertOnlyCheck.Finding> foreignChangeSince(Rewrite rewrite) {
    if (rewrite.shard() == null || rewrite.checkedAt() == null) {
      return Optional.empty();
    }
    refreshOnce();
    Snapshot current = table.currentSnapshot();
    long now = current == null ? PendingCheckpoint.NO_SNAPSHOT : current.snapshotId();
    return rewrite.checkedAt() == now
        ? Optional.empty()
        : InsertOnlyCheck.foreignChange(
            ((HasTableOperations) table).operations().current(),
            table.io(),
            shardColumn,
            pipelineId,
            new TreeMap<>(Map.of(rewrite.shard(), rewrite.checkedAt())));
  }

  private void discard(String path, LiveRowsRewrite.Result result) {
    if (result.written() != null) {
      LOG.info(
          "Partition {} of table {}: its owner's rewrite is dropped (the partition changed under"
              + " it); deleting {}",
          path,
          table.name(),
          result.written().location());
      table.io().deleteFile(result.written().location());
    }
  }

  private ExecutorService rewriter() {
    if (rewriter == null) {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      String name = "shardberg-owner-rewrite-" + table.name();
      rewriter =
          Executors.newSingleThreadExecutor(
              task -> {
                Thread thread = new Thread(task, name);
                thread.setDaemon(true);
                thread.setContextClassLoader(loader);
                return thread;
              });
    }
    return rewriter;
  }

  /** The writer closes: rewrites not handed over are dropped, their files deleted. */
  void close() {
    for (Rewrite rewrite : new ArrayList<>(inFlight.values())) {
      dropRewrite(rewrite.partition());
    }
    if (rewriter != null) {
      rewriter.shutdownNow(); // the queued ones never start
    }
  }

  /**
   * The files of a due partition its owner rewrites (of {@code candidates}, each older file with
   * the positions of its live rows as the index holds them, this checkpoint's deletes included):
   * the small ones, and the large ones that shed rows — no live row left, at least {@link
   * OwnerCompaction#DELETED_SHARE} of their rows deleted, or an equality delete still applying to
   * them (a table switched from {@code target.delete-mode: equality}). Empty when that leaves
   * nothing worth a rewrite: fewer than two files, unless the one file sheds rows. A large file
   * with few deleted rows is never read, however often the partition is compacted: the owner's work
   * per compaction follows what changed, not the partition's size. A large file not committed yet
   * (of a checkpoint in flight) waits.
   */
  private SortedMap<String, long[]> worthRewriting(
      Table table, StructLike partition, SortedMap<String, long[]> candidates) throws IOException {
    SortedMap<String, long[]> chosen = new TreeMap<>();
    Map<String, FileScanTask> committed = null;
    boolean shedsRows = false;
    for (Map.Entry<String, long[]> file : candidates.entrySet()) {
      if (compaction.smallFileBytes() == Long.MAX_VALUE
          || table.io().newInputFile(file.getKey()).getLength() < compaction.smallFileBytes()) {
        chosen.put(file.getKey(), file.getValue());
        continue;
      }
      long live = file.getValue().length;
      if (committed == null) {
        committed = committedFiles(table, partition);
      }
      FileScanTask task = committed.get(file.getKey());
      boolean sheds =
          live == 0
              || task != null
                  && (live <= (1 - OwnerCompaction.DELETED_SHARE) * task.file().recordCount()
                      || task.deletes().stream()
                          .anyMatch(d -> d.content() == FileContent.EQUALITY_DELETES));
      if (sheds) {
        chosen.put(file.getKey(), file.getValue());
        shedsRows = true;
      }
    }
    if (chosen.size() < 2 && !(chosen.size() == 1 && shedsRows)) {
      return new TreeMap<>();
    }
    return chosen;
  }

  /** The committed data files of {@code partition} now, by location, with their deletes. */
  private Map<String, FileScanTask> committedFiles(Table table, StructLike partition)
      throws IOException {
    PartitionSpec spec = table.spec();
    String path = spec.partitionToPath(partition);
    org.apache.iceberg.TableScan scan = table.newScan();
    Integer shard = shardOf(table, spec, partition);
    if (shard != null) {
      scan = scan.filter(Expressions.equal(shardColumn, shard));
    }
    Map<String, FileScanTask> files = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.spec().specId() == spec.specId()
            && path.equals(spec.partitionToPath(task.file().partition()))) {
          files.put(task.file().location(), task);
        }
      }
    }
    return files;
  }

  /** The shard of {@code partition}, from its identity field of the shard column; null if none. */
  private Integer shardOf(Table table, PartitionSpec spec, StructLike partition) {
    org.apache.iceberg.types.Types.NestedField column = table.schema().findField(shardColumn);
    int position = column == null ? -1 : ShardsWithData.identityPosition(spec, column.fieldId());
    Object value = position < 0 ? null : partition.get(position, Object.class);
    return value instanceof Integer shard ? shard : null;
  }

  /**
   * Writes this checkpoint's deletes and remembers each data file's new vector (under its
   * partition, which {@code setPartition} makes the current key).
   */
  DeleteWriteResult complete(Consumer<String> setPartition) throws Exception {
    Map<String, List<DeleteFile>> previous = new HashMap<>();
    previousVectors.forEach(
        (file, before) -> {
          if (!before.isEmpty()) {
            previous.put(file, before);
          }
        });
    Function<FileFormat, OutputFileFactory> files =
        format -> format == FileFormat.PUFFIN ? dvFiles : positionFiles;
    DeleteWriteResult written = deletes.write(files, previous);
    for (DeleteFile vector : written.deleteFiles()) {
      String dataFile = ContentFileUtil.referencedDataFileLocation(vector);
      if (dataFile == null) {
        throw new IllegalStateException(
            String.format(
                "Cannot follow the deletes of table %s by position: delete file %s does not name"
                    + " its one data file (its file_path bounds are missing; a"
                    + " write.metadata.metrics.* table property?)",
                table.name(), vector.location()));
      }
      setPartition.accept(table.specs().get(vector.specId()).partitionToPath(vector.partition()));
      vectors.put(dataFile, serialize(List.of(vector)));
    }
    previousVectors.clear();
    checked.clear();
    checks.clear();
    refreshed = false;
    return written;
  }

  /** A data file's position deletes as the state keeps them. */
  static byte[] serialize(List<DeleteFile> deletes) throws IOException {
    return InstantiationUtil.serializeObject(deletes.toArray(new DeleteFile[0]));
  }

  /**
   * A data file's position deletes from the state: an array of them, or one deletion vector (as
   * versions before kept it).
   */
  static List<DeleteFile> deserialize(byte[] bytes) throws IOException {
    Object kept;
    try {
      kept = InstantiationUtil.deserializeObject(bytes, PartitionOwner.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IOException(
          "Cannot read a data file's position deletes from the writer's state", e);
    }
    return kept instanceof DeleteFile[] deletes ? List.of(deletes) : List.of((DeleteFile) kept);
  }
}
