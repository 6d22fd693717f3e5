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
 * @param capturedShards shards the pipeline wrote that its plan does not have: read from the binlog
 *     since their {@code CREATE TABLE} while the job ran ({@code tables.new-shards: capture}), so
 *     that the next resume knows them ({@link ShardReread}); empty in state from before them
 * @param planId the plan whose state this is ({@link CommitCoordinator}: drawn when a submission
 *     builds the job, kept by its failovers): a restore by the same plan (a failover) goes on
 *     capturing, a new plan (a resume) was discovered anew; null in state from before it
 * @param pending the staged checkpoints not committed yet, in checkpoint order
 */
record CoordinatorState(
    String pipelineId,
    long checkpointOffset,
    long flinkCheckpointId,
    Map<String, Long> lineage,
    SortedSet<Integer> knownShards,
    SortedSet<Integer> capturedShards,
    String planId,
    List<PendingCheckpoint> pending) {

  CoordinatorState {
    lineage = Collections.unmodifiableMap(new LinkedHashMap<>(lineage));
    knownShards =
        knownShards == null ? null : Collections.unmodifiableSortedSet(new TreeSet<>(knownShards));
    capturedShards =
        Collections.unmodifiableSortedSet(
            capturedShards == null ? new TreeSet<>() : new TreeSet<>(capturedShards));
    pending = List.copyOf(pending);
  }

  /** State without captured shards. */
  CoordinatorState(
      String pipelineId,
      long checkpointOffset,
      long flinkCheckpointId,
      Map<String, Long> lineage,
      SortedSet<Integer> knownShards,
      List<PendingCheckpoint> pending) {
    this(
        pipelineId, checkpointOffset, flinkCheckpointId, lineage, knownShards, null, null, pending);
  }
}
