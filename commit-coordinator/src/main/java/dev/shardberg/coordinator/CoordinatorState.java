package dev.shardberg.coordinator;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Everything the coordinator keeps in a checkpoint, as one value ({@link
 * CoordinatorStateSerializer}).
 *
 * @param pipelineId the pipeline the state belongs to; a restore under another id is refused
 * @param checkpointOffset pipeline checkpoint id = Flink checkpoint id + this ({@link
 *     CheckpointCommitter#offset()})
 * @param flinkCheckpointId the Flink checkpoint this state was taken at; results of it or earlier
 *     arriving after a restore came after the barrier
 * @param lineage the runs this state descends from, each with its Flink checkpoint in this state's
 *     history, oldest first (at most {@link PipelineProgress#MAX_RUNS})
 * @param knownShards the shards the state knows ({@link ShardReread}); null when not known (a
 *     pipeline whose shards were not given, or state from before the bookkeeping)
 * @param pending the staged checkpoints not committed yet, in checkpoint order
 */
record CoordinatorState(
    String pipelineId,
    long checkpointOffset,
    long flinkCheckpointId,
    Map<String, Long> lineage,
    SortedSet<Integer> knownShards,
    List<PendingCheckpoint> pending) {

  CoordinatorState {
    lineage = Collections.unmodifiableMap(new LinkedHashMap<>(lineage));
    knownShards =
        knownShards == null ? null : Collections.unmodifiableSortedSet(new TreeSet<>(knownShards));
    pending = List.copyOf(pending);
  }
}
