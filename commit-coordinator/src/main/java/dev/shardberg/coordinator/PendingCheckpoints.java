package dev.shardberg.coordinator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CheckpointCommitter}'s pending checkpoints by pipeline checkpoint id, with what numbers
 * them: the offset from Flink checkpoint ids and the runs this run descends from (what the
 * coordinator keeps of the committer in its state).
 *
 * <p>Not thread-safe: one thread changes it. {@link #manifests()} alone may be read from another
 * thread (maintenance's orphan removal).
 */
final class PendingCheckpoints {
  /** The committer's logger: its numbering lines go where its commit lines go. */
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointCommitter.class);

  private final CoordinatorOptions options;
  private final String runId;

  private NavigableMap<Long, PendingCheckpoint> pending = new TreeMap<>();
  private long checkpointOffset;

  /**
   * Runs this run was restored from, each with the Flink checkpoint restored (the lineage in
   * state).
   */
  private final LinkedHashMap<String, Long> restoredFrom = new LinkedHashMap<>();

  private volatile List<byte[]> pendingManifests = List.of();

  /**
   * @param runId this run ({@link PipelineProgress#newRunId()}), the newest of the lineage
   */
  PendingCheckpoints(CoordinatorOptions options, String runId) {
    this.options = options;
    this.runId = runId;
  }

  /** Takes restored state: the offset, the runs it descends from, its pending entries. */
  void restore(long offset, Map<String, Long> lineage, List<PendingCheckpoint> entries) {
    checkpointOffset = Math.max(checkpointOffset, offset);
    lineage.forEach((run, c) -> restoredFrom.merge(run, c, Math::max));
    entries.forEach(entry -> pending.put(entry.checkpointId(), entry));
    publishPendingManifests();
  }

  /** The pipeline checkpoint id of Flink checkpoint {@code flinkCheckpointId} is it plus this. */
  long offset() {
    return checkpointOffset;
  }

  /**
   * Numbers this run's checkpoints after {@code lastFlinkCheckpoint} past {@code maxCommitted}, the
   * highest checkpoint id the table holds of the pipeline ({@code -1}: none).
   */
  void numberPast(long maxCommitted, long lastFlinkCheckpoint) {
    long needed = maxCommitted - lastFlinkCheckpoint;
    if (needed > checkpointOffset) {
      LOG.info(
          "Table {} already holds checkpoint {} of pipeline {}, past this job's Flink checkpoint {};"
              + " numbering this job's commits from {}",
          options.tableName(),
          maxCommitted,
          options.pipelineId(),
          lastFlinkCheckpoint,
          maxCommitted + 1);
      checkpointOffset = needed;
    }
  }

  /**
   * Shifts every pending id (and the offset for later ones) past {@code committed}: this instance
   * holds the newest epoch (ZooKeeper said so under the lock) and the table holds an older
   * instance's commits up to {@code committed}, made while this one started.
   */
  void renumberPast(long committed) {
    long shift = committed - pending.firstKey() + 1;
    NavigableMap<Long, PendingCheckpoint> shifted = new TreeMap<>();
    for (PendingCheckpoint entry : pending.values()) {
      shifted.put(
          entry.checkpointId() + shift, entry.withCheckpointId(entry.checkpointId() + shift));
    }
    LOG.info(
        "Table {} holds checkpoint {} of pipeline {}, committed by an older instance (older epoch)"
            + " while this one started; numbering this instance's pending checkpoints {} from {}",
        options.tableName(),
        committed,
        options.pipelineId(),
        pending.keySet(),
        pending.firstKey() + shift);
    pending = shifted;
    checkpointOffset += shift;
  }

  /** The ancestry to keep in state at Flink checkpoint c: the restored runs plus this run at c. */
  LinkedHashMap<String, Long> lineageAt(long flinkCheckpointId) {
    LinkedHashMap<String, Long> lineage = new LinkedHashMap<>(restoredFrom);
    lineage.remove(runId);
    lineage.put(runId, flinkCheckpointId);
    while (lineage.size() > PipelineProgress.MAX_RUNS) {
      lineage.remove(lineage.keySet().iterator().next());
    }
    return lineage;
  }

  /** The runs this run was restored from, each with the Flink checkpoint restored. */
  Map<String, Long> restoredFrom() {
    return Collections.unmodifiableMap(restoredFrom);
  }

  /** The entries in checkpoint order (a live view). */
  Collection<PendingCheckpoint> values() {
    return pending.values();
  }

  /** The entries at or below {@code checkpointId}, in checkpoint order (a copy). */
  List<PendingCheckpoint> upTo(long checkpointId) {
    return new ArrayList<>(pending.headMap(checkpointId, true).values());
  }

  /** Whether an entry at or below {@code checkpointId} still waits. */
  boolean anyUpTo(long checkpointId) {
    return !pending.headMap(checkpointId, true).isEmpty();
  }

  /** The ids of the entries at or above {@code checkpointId}. */
  Set<Long> idsFrom(long checkpointId) {
    return pending.tailMap(checkpointId, true).keySet();
  }

  boolean contains(long checkpointId) {
    return pending.containsKey(checkpointId);
  }

  /** The lowest pending id; fails when nothing is pending. */
  long firstId() {
    return pending.firstKey();
  }

  int size() {
    return pending.size();
  }

  void add(PendingCheckpoint entry) {
    pending.put(entry.checkpointId(), entry);
    publishPendingManifests();
  }

  /** Removes an entry (committed, or done like a committed one). */
  void remove(PendingCheckpoint entry) {
    pending.remove(entry.checkpointId());
    publishPendingManifests();
  }

  /**
   * The insert-only check of {@code checked} held up to snapshot {@code upTo}: later checks of
   * these shards start there, in memory and in the pending checkpoints (and so in state).
   */
  void advanceVerifiedPoints(
      InsertOnlyLedger insertOnly, SortedMap<Integer, Long> checked, long upTo) {
    insertOnly.advance(checked, upTo);
    pending.replaceAll((id, entry) -> insertOnly.resolve(entry));
  }

  /**
   * The pending entries' temporary manifests, for maintenance's orphan removal (any thread):
   * published after each staging and after each commit, never before the commit landed.
   */
  List<byte[]> manifests() {
    return pendingManifests;
  }

  private void publishPendingManifests() {
    List<byte[]> manifests = new ArrayList<>();
    for (PendingCheckpoint checkpoint : pending.values()) {
      manifests.addAll(checkpoint.dataManifests());
      manifests.addAll(checkpoint.deleteManifests());
    }
    pendingManifests = List.copyOf(manifests);
  }
}
