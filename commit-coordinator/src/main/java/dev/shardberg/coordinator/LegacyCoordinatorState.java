package dev.shardberg.coordinator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.io.SimpleVersionedSerialization;

/**
 * Reads the coordinator state of releases before {@link CoordinatorState}: six operator list states
 * (pending entries, offset, last snapshot, pipeline id, lineage, known shards with a sentinel).
 * Read once at a restore, then cleared: the next checkpoint holds the one versioned state only.
 */
final class LegacyCoordinatorState {
  static final String PENDING = "shardberg-coordinator-pending-checkpoints";
  static final String OFFSET = "shardberg-coordinator-checkpoint-offset";
  static final String LAST_SNAPSHOT = "shardberg-coordinator-last-snapshot-checkpoint";
  static final String PIPELINE_ID = "shardberg-coordinator-pipeline-id";
  static final String LINEAGE = "shardberg-coordinator-lineage";
  static final String KNOWN_SHARDS = "shardberg-coordinator-known-shards";

  /** In {@link #KNOWN_SHARDS}: the list is kept (state from before it has no entry at all). */
  static final int KNOWN_SHARDS_TRACKED = Integer.MIN_VALUE;

  private LegacyCoordinatorState() {}

  /** The restored legacy state as one value, or null when the store holds none; clears it. */
  static CoordinatorState readAndClear(OperatorStateStore store, String pipelineIdIfAbsent)
      throws Exception {
    if (!store.getRegisteredStateNames().contains(PENDING)
        && !store.getRegisteredStateNames().contains(PIPELINE_ID)) {
      return null;
    }
    ListState<byte[]> pendingState =
        store.getListState(
            new ListStateDescriptor<>(PENDING, BytePrimitiveArraySerializer.INSTANCE));
    ListState<Long> offsetState =
        store.getListState(new ListStateDescriptor<>(OFFSET, LongSerializer.INSTANCE));
    ListState<Long> lastSnapshotState =
        store.getListState(new ListStateDescriptor<>(LAST_SNAPSHOT, LongSerializer.INSTANCE));
    ListState<String> pipelineIdState =
        store.getListState(new ListStateDescriptor<>(PIPELINE_ID, StringSerializer.INSTANCE));
    ListState<String> lineageState =
        store.getListState(new ListStateDescriptor<>(LINEAGE, StringSerializer.INSTANCE));
    ListState<Integer> knownShardsState =
        store.getListState(new ListStateDescriptor<>(KNOWN_SHARDS, IntSerializer.INSTANCE));

    String pipelineId = pipelineIdIfAbsent;
    for (String id : pipelineIdState.get()) {
      pipelineId = id;
    }
    long offset = 0;
    for (Long o : offsetState.get()) {
      offset = Math.max(offset, o);
    }
    long lastSnapshot = 0;
    for (Long c : lastSnapshotState.get()) {
      lastSnapshot = Math.max(lastSnapshot, c);
    }
    LinkedHashMap<String, Long> lineage = new LinkedHashMap<>();
    for (String text : lineageState.get()) {
      PipelineProgress.decodeLineage(text).forEach((run, c) -> lineage.merge(run, c, Math::max));
    }
    SortedSet<Integer> known = new TreeSet<>();
    boolean tracked = false;
    for (Integer shard : knownShardsState.get()) {
      if (shard == KNOWN_SHARDS_TRACKED) {
        tracked = true;
      } else {
        known.add(shard);
      }
    }
    List<PendingCheckpoint> pending = new ArrayList<>();
    for (byte[] bytes : pendingState.get()) {
      pending.add(
          SimpleVersionedSerialization.readVersionAndDeSerialize(
              PendingCheckpointSerializer.INSTANCE, bytes));
    }
    for (ListState<?> state :
        List.of(
            pendingState,
            offsetState,
            lastSnapshotState,
            pipelineIdState,
            lineageState,
            knownShardsState)) {
      state.clear();
    }
    return new CoordinatorState(
        pipelineId, offset, lastSnapshot, lineage, tracked ? known : null, pending);
  }
}
