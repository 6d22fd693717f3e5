package dev.shardberg.coordinator.zk;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.source.RichSourceFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;

/**
 * A synthetic changelog for a set of shards: batch b inserts {@code rowsPerShard} new keys per
 * shard and updates the first key of batch b-1. Exactly one batch per completed checkpoint, so
 * every batch becomes its own commit; its position is in state, so a restore resumes where the
 * checkpoint was.
 *
 * <p>Tests in the same JVM see its progress ({@link Progress}) and can hold it before a batch.
 */
final class BatchPerCheckpointSource extends RichSourceFunction<RowData>
    implements CheckpointedFunction, CheckpointListener {
  private static final long serialVersionUID = 1L;

  static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {
            new IntType(false), new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)
          },
          new String[] {"shard_number", "id", "payload"});

  /** Progress of a named source, shared with the test (MiniCluster runs in the test's JVM). */
  static final class Progress {
    final AtomicInteger emittedBatches = new AtomicInteger();
    final AtomicLong completedCheckpoints = new AtomicLong();
    final CountDownLatch release = new CountDownLatch(1);
  }

  private static final Map<String, Progress> PROGRESS = new ConcurrentHashMap<>();

  static Progress progress(String name) {
    return PROGRESS.computeIfAbsent(name, n -> new Progress());
  }

  private final String name;
  private final int[] shards;
  private final int batches;
  private final int rowsPerShard;
  private final int holdBeforeBatch;

  private transient ListState<Integer> nextBatchState;
  private transient Object monitor;
  private transient NavigableMap<Long, Integer> batchesAtCheckpoint;
  private volatile int nextBatch;
  private volatile int batchesInCompletedCheckpoint;
  private volatile boolean running = true;

  /**
   * @param holdBeforeBatch batch before which the source waits for {@link Progress#release}; -1 for
   *     none
   */
  BatchPerCheckpointSource(
      String name, int[] shards, int batches, int rowsPerShard, int holdBeforeBatch) {
    this.name = name;
    this.shards = shards.clone();
    this.batches = batches;
    this.rowsPerShard = rowsPerShard;
    this.holdBeforeBatch = holdBeforeBatch;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    monitor = new Object();
    batchesAtCheckpoint = new TreeMap<>();
    nextBatchState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("next-batch", IntSerializer.INSTANCE));
    for (Integer restored : nextBatchState.get()) {
      nextBatch = restored;
    }
    batchesInCompletedCheckpoint = nextBatch;
  }

  @Override
  public void run(SourceContext<RowData> ctx) throws Exception {
    Progress progress = progress(name);
    while (running && nextBatch < batches) {
      if (nextBatch == holdBeforeBatch) {
        progress.release.await();
      }
      synchronized (ctx.getCheckpointLock()) {
        emitBatch(ctx, nextBatch);
        nextBatch++;
        progress.emittedBatches.set(nextBatch);
      }
      synchronized (monitor) {
        while (running && batchesInCompletedCheckpoint < nextBatch) {
          monitor.wait(50); // woken by notifyCheckpointComplete
        }
      }
    }
  }

  private void emitBatch(SourceContext<RowData> ctx, int batch) {
    for (int shard : shards) {
      for (int r = 0; r < rowsPerShard; r++) {
        long id = (long) batch * rowsPerShard + r;
        ctx.collect(row(RowKind.INSERT, shard, id, payload(batch, shard, r)));
      }
      if (batch > 0) {
        long updated = (long) (batch - 1) * rowsPerShard;
        ctx.collect(row(RowKind.UPDATE_BEFORE, shard, updated, payload(batch - 1, shard, 0)));
        ctx.collect(row(RowKind.UPDATE_AFTER, shard, updated, "updated-in-" + batch));
      }
    }
  }

  private static String payload(int batch, int shard, int r) {
    return "b" + batch + "-s" + shard + "-r" + r;
  }

  private static GenericRowData row(RowKind kind, int shard, long id, String payload) {
    return GenericRowData.ofKind(kind, shard, id, StringData.fromString(payload));
  }

  /** The rows the table must hold after all batches: "shard|id|payload". */
  static Set<String> expectedRows(int[] shards, int batches, int rowsPerShard) {
    Map<String, String> rows = new HashMap<>();
    for (int batch = 0; batch < batches; batch++) {
      for (int shard : shards) {
        for (int r = 0; r < rowsPerShard; r++) {
          long id = (long) batch * rowsPerShard + r;
          rows.put(shard + "|" + id, payload(batch, shard, r));
        }
        if (batch > 0) {
          rows.put(shard + "|" + (long) (batch - 1) * rowsPerShard, "updated-in-" + batch);
        }
      }
    }
    Set<String> expected = new TreeSet<>();
    rows.forEach((key, payload) -> expected.add(key + "|" + payload));
    return expected;
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    nextBatchState.update(List.of(nextBatch));
    synchronized (monitor) {
      batchesAtCheckpoint.put(context.getCheckpointId(), nextBatch);
    }
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    synchronized (monitor) {
      Map.Entry<Long, Integer> done = batchesAtCheckpoint.floorEntry(checkpointId);
      if (done != null) {
        batchesInCompletedCheckpoint = Math.max(batchesInCompletedCheckpoint, done.getValue());
        batchesAtCheckpoint.headMap(checkpointId, true).clear();
      }
      monitor.notifyAll();
    }
    progress(name).completedCheckpoints.incrementAndGet();
  }

  @Override
  public void cancel() {
    running = false;
    progress(name).release.countDown();
  }
}
