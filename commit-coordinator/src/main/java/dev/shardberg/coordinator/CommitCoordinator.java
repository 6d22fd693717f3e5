package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.TableMaintainer;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single commit coordinator (parallelism 1, max parallelism 1): one Iceberg snapshot per
 * checkpoint, in checkpoint order, exactly once for the table's whole life — across failures,
 * restores, snapshot expiry, compaction, orphan-file removal and a second job or a zombie instance
 * of the same pipeline.
 *
 * <pre>
 *  writer results ──► collecting (by Flink checkpoint id, memory only)
 *                          │ snapshotState(c): every result tagged ≤ c becomes temporary manifests,
 *                          │ stamped with this coordinator's run id (drawn at each start); a
 *                          │ result for a checkpoint already staged fails the job
 *                          ▼
 *                      pending (NavigableMap by pipeline checkpoint id; manifest bytes in state)
 *                          │ notifyCheckpointComplete(c): commit each entry ≤ c in order
 *                          │ ("commit one checkpoint", under guard.runExclusive):
 *                          │   refresh → read the progress record from that base
 *                          │   → newer epoch?                 CommitFencedException (job fails)
 *                          │   → record's id ≥ this id and its run's mark ≥ this entry's Flink
 *                          │     checkpoint?                    skip (ALREADY_COMMITTED)
 *                          │   → record past it, entry empty?   skip (nothing to place)
 *                          │   → record past it, entry of an earlier run (restored)?
 *                          │                                  superseded state: PipelineConflictException
 *                          │   → record past it, own entry, older epoch?  renumber own entries past it
 *                          │   → record past it, own entry?   two jobs: PipelineConflictException
 *                          │   → one transaction: RowDelta (no history validation) + progress record
 *                          │   → swap only from that base, or from a newer one where the progress
 *                          │     record and schema are unchanged (a foreign commit); else start over
 *                          ▼
 *                      committed (table property shardberg.progress.&lt;pipeline&gt; + snapshot summary)
 * </pre>
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Checkpoints are never merged: an equality delete does not apply to data files of its own
 *       sequence number, so merging two checkpoints would resurrect rows deleted by the later one.
 *   <li>What the pipeline committed is read from its {@link PipelineProgress} record only, from the
 *       very metadata the commit is built on; the record is written in the same Iceberg transaction
 *       as the data, so it is never ahead of or behind the data, and it never expires.
 *   <li>Pipeline checkpoint ids strictly increase, so "already committed" needs "the record's id ≥
 *       ours", and the entry's run known committed at or past its Flink checkpoint: the record
 *       keeps, per run, the highest Flink checkpoint of that run's entries committed (runs are
 *       drawn by the coordinator at each start, never the Flink job id, which two deployments can
 *       share). So any earlier state of any run is recognised, whatever committed since. Otherwise,
 *       at ≥ ours: a restored entry of another run is a superseded branch and an own entry means two
 *       jobs share the pipeline id; the coordinator stops the job instead of skipping (which would
 *       lose data) or committing (which would duplicate or put older changes over newer) — unless
 *       fencing shows this instance is the newest, then it numbers its own entries past.
 *   <li>A commit lands only on metadata where its checks hold ({@link PinnedBaseOperations}): the
 *       base they ran on, or a later one whose progress record and schema are the same (a foreign
 *       commit such as maintenance; Iceberg's retry re-applies onto it). Never onto a table where
 *       another instance of the pipeline committed since the checks: the catalog's compare-and-swap
 *       is the final fence, also for an instance whose ZooKeeper lock expired mid-commit.
 *   <li>No history validation: position deletes only name data files of the same checkpoint (the
 *       writer deletes by position only keys it wrote since its last barrier), and equality deletes
 *       need no validation, so expiry and compaction between commits cannot fail a commit.
 *   <li>The pipeline checkpoint id is the Flink checkpoint id plus an offset kept in state. The offset
 *       is 0 unless the job starts without state (or from an old savepoint) on a table where the
 *       pipeline already committed higher ids; then it shifts new ids past them, so nothing new is
 *       mistaken for already committed.
 *   <li>The pipeline id is kept in state; a restore under another id is refused.
 *   <li>Insert-only rows are committed only if no other committer added files to their shards since
 *       the writers' scan ({@link InsertOnlyCheck}), checked when staged and again at the commit,
 *       each check starting where the last one held ({@link VerifiedPoints}).
 *   <li>A checkpoint that cannot be committed now (lock timeout, guard disconnected) stays pending,
 *       with every later one, and is retried at the next checkpoint completion.
 * </ul>
 *
 * <p>Requires aligned checkpoints: every writer's result for checkpoint c must reach the coordinator
 * before its barrier c, which unaligned checkpoints do not guarantee.
 */
final class CommitCoordinator extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<WriterResult, Void>, BoundedOneInput {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(CommitCoordinator.class);

  /** Operator state names: never rename, restores match state by name. */
  static final String PENDING_STATE_NAME = "shardberg-coordinator-pending-checkpoints";

  /** How often a finished compaction or merge is looked for between checkpoint commits. */
  static final long MAINTENANCE_POLL_MILLIS = 100;

  static final String OFFSET_STATE_NAME = "shardberg-coordinator-checkpoint-offset";

  static final String LAST_SNAPSHOT_STATE_NAME = "shardberg-coordinator-last-snapshot-checkpoint";

  static final String PIPELINE_ID_STATE_NAME = "shardberg-coordinator-pipeline-id";

  static final String LINEAGE_STATE_NAME = "shardberg-coordinator-lineage";

  /** The shards this pipeline's state knows (see {@link ShardReread}), with {@link #KNOWN_SHARDS_TRACKED}. */
  static final String KNOWN_SHARDS_STATE_NAME = "shardberg-coordinator-known-shards";

  /** In {@link #KNOWN_SHARDS_STATE_NAME}: the list is kept (state from before it has no entry at all). */
  static final int KNOWN_SHARDS_TRACKED = Integer.MIN_VALUE;

  private enum Outcome {
    COMMITTED,
    /** An empty checkpoint with no heartbeat due: nothing written, done like a committed one. */
    SKIPPED_EMPTY,
    ALREADY_COMMITTED,
    LEFT_PENDING,
    /** Pending ids were shifted past an older instance's commits; commit again from the start. */
    RENUMBERED
  }

  private final TableLoader tableLoader;
  private final RowType rowType;
  private final CoordinatorOptions options;
  private final CommitGuardFactory guardFactory;

  private transient Table table;
  private transient CommitGuard guard;
  private transient String flinkJobId;
  /** This coordinator's run (see {@link PipelineProgress}): drawn at each start, never restored. */
  private transient String runId;
  private transient String manifestPrefix;
  private transient NavigableMap<Long, List<WriterResult>> collecting;
  private transient NavigableMap<Long, PendingCheckpoint> pending;
  private transient long checkpointOffset;
  private transient int continuousEmptyCheckpoints;
  private transient ListState<byte[]> pendingState;
  private transient ListState<Long> offsetState;
  private transient ListState<Long> lastSnapshotState;
  private transient ListState<String> pipelineIdState;
  private transient ListState<String> lineageState;
  private transient ListState<Integer> knownShardsState;
  /** The shards this pipeline's state knows: written before, or read since its last restore. */
  private transient java.util.SortedSet<Integer> knownShards;
  /** Shards to replace at the first staged checkpoint of this run (see {@link ShardReread}). */
  private transient java.util.SortedSet<Integer> rereadShards;
  /**
   * The Flink jobs whose state this coordinator descends from, each with the newest Flink
   * checkpoint of it restored (directly or through earlier restores), oldest first.
   */
  private transient LinkedHashMap<String, Long> restoredFrom;
  /** Highest Flink checkpoint whose results were staged (or restored); later results only. */
  private transient long lastStagedFlinkCheckpoint;
  private transient String shardColumn;
  private transient CoordinatorMetrics metrics;
  /** Null when maintenance is off. */
  private transient TableMaintainer maintainer;
  /** The newest completed checkpoint (our numbering) this instance was told of. */
  private transient long lastCompleted = Long.MIN_VALUE;
  /** A timer is registered to commit a finished compaction or merge. */
  private transient boolean maintenancePollScheduled;
  /** Insert-only scans of the newest staged checkpoint: the next ones likely carry them too. */
  private transient SortedMap<Integer, Long> latestInsertOnlyScans;
  /** How far each shard's insert-only check has held; later checks start there. */
  private transient VerifiedPoints verifiedPoints;
  /** Read by the maintenance thread; see {@link #publishPendingManifests()}. */
  private transient volatile List<byte[]> pendingManifests;
  /**
   * The locations of the files in {@code collecting}, read by the maintenance thread's orphan removal;
   * a staged checkpoint's files leave it after {@link #publishPendingManifests()} published them.
   */
  private transient Set<String> collectedFiles;

  CommitCoordinator(
      TableLoader tableLoader,
      RowType rowType,
      CoordinatorOptions options,
      CommitGuardFactory guardFactory) {
    this.tableLoader = tableLoader;
    this.rowType = rowType;
    this.options = options;
    this.guardFactory = guardFactory;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    this.flinkJobId = getRuntimeContext().getJobInfo().getJobId().toString();
    this.runId = PipelineProgress.newRunId();
    this.manifestPrefix =
        "shardberg-" + options.pipelineId().replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + runId;
    this.collecting = new TreeMap<>();
    this.pending = new TreeMap<>();
    this.verifiedPoints = new VerifiedPoints();
    this.latestInsertOnlyScans = new TreeMap<>();
    this.pendingManifests = List.of();
    this.collectedFiles = java.util.concurrent.ConcurrentHashMap.newKeySet();
    this.metrics = new CoordinatorMetrics(getRuntimeContext().getMetricGroup());
    if (!tableLoader.isOpen()) {
      tableLoader.open();
    }
    this.table = tableLoader.loadTable();
    this.shardColumn = WriterTableCheck.shardColumn(rowType);
    this.guard = guardFactory.open(options.pipelineId(), options.tableName());

    this.pendingState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(PENDING_STATE_NAME, BytePrimitiveArraySerializer.INSTANCE));
    this.offsetState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>(OFFSET_STATE_NAME, LongSerializer.INSTANCE));
    this.lastSnapshotState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(LAST_SNAPSHOT_STATE_NAME, LongSerializer.INSTANCE));
    this.pipelineIdState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(PIPELINE_ID_STATE_NAME, StringSerializer.INSTANCE));
    this.lineageState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>(LINEAGE_STATE_NAME, StringSerializer.INSTANCE));
    this.knownShardsState =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>(KNOWN_SHARDS_STATE_NAME, org.apache.flink.api.common.typeutils.base.IntSerializer.INSTANCE));
    this.restoredFrom = new LinkedHashMap<>();
    checkNoOtherPipelineWritesTheseShards(table.properties());
    initKnownShards(context.isRestored());
    LOG.info(
        "Coordinator of pipeline {} for table {} starts run {} (Flink job {}, {})",
        options.pipelineId(),
        options.tableName(),
        runId,
        flinkJobId,
        context.isRestored() ? "restored" : "without state");

    long restoredFlinkCheckpoint = context.getRestoredCheckpointId().orElse(0L);
    if (context.isRestored()) {
      for (String restoredId : pipelineIdState.get()) {
        if (!restoredId.equals(options.pipelineId())) {
          throw new PipelineConflictException(
              String.format(
                  "Cannot restore the coordinator of pipeline %s for table %s: the restored state"
                      + " belongs to pipeline %s. Restoring it under another id would commit its"
                      + " checkpoints again. Set " + CoordinatorConfigOptions.PIPELINE_ID.key() + " back to %s, or start the new pipeline"
                      + " without this state.",
                  options.pipelineId(), options.tableName(), restoredId, restoredId));
        }
      }
      for (String lineage : lineageState.get()) {
        PipelineProgress.decodeLineage(lineage).forEach((job, c) -> restoredFrom.merge(job, c, Math::max));
      }
      for (Long offset : offsetState.get()) {
        checkpointOffset = Math.max(checkpointOffset, offset);
      }
      for (Long snapshotted : lastSnapshotState.get()) {
        restoredFlinkCheckpoint = Math.max(restoredFlinkCheckpoint, snapshotted);
      }
      for (byte[] bytes : pendingState.get()) {
        PendingCheckpoint restored =
            SimpleVersionedSerialization.readVersionAndDeSerialize(
                PendingCheckpointSerializer.INSTANCE, bytes);
        pending.put(restored.checkpointId(), restored);
      }
      publishPendingManifests();
      LOG.info(
          "Restored coordinator of pipeline {} for table {} from Flink checkpoint {}: {} pending"
              + " checkpoints {}",
          options.pipelineId(),
          options.tableName(),
          restoredFlinkCheckpoint,
          pending.size(),
          pending.keySet());
      // Every restored entry belongs to a completed checkpoint: commit what the table lacks.
      commitUpTo(Long.MAX_VALUE);
    }
    this.lastStagedFlinkCheckpoint = restoredFlinkCheckpoint;

    // Only numbering: which ids are committed is decided again under the lock at every commit.
    table.refresh();
    long maxCommitted =
        PipelineProgress.read(table, options.pipelineId())
            .map(PipelineProgress::checkpointId)
            .orElse(-1L);
    long neededOffset = maxCommitted - restoredFlinkCheckpoint;
    if (neededOffset > checkpointOffset) {
      LOG.info(
          "Table {} already holds checkpoint {} of pipeline {}, past this job's Flink checkpoint {};"
              + " numbering this job's commits from {}",
          options.tableName(),
          maxCommitted,
          options.pipelineId(),
          restoredFlinkCheckpoint,
          maxCommitted + 1);
      checkpointOffset = neededOffset;
    }
    metrics.pending(pending.size());
    if (options.maintenance().enabled()) {
      TableMaintainer.checkMetadataCleanup(table, options.tableName());
      this.maintainer =
          TableMaintainer.start(
              tableLoader,
              options.tableName(),
              options.maintenance(),
              getRuntimeContext().getMetricGroup().addGroup("shardberg"));
    }
  }

  /** Another pipeline recorded in the table writes one of this job's shard numbers: refused. */
  private void checkNoOtherPipelineWritesTheseShards(Map<String, String> properties) {
    if (options.shards() == null) {
      return;
    }
    String conflict =
        PipelineShards.conflict(properties, options.pipelineId(), options.tableName(), options.shards());
    if (conflict != null) {
      throw new PipelineConflictException(conflict);
    }
  }

  /**
   * Which shards the state knows, and which of this job's shards to replace ({@link ShardReread}):
   * those a restored state does not know. A first run knows every shard it writes (a start without
   * state on a table with data is checked before the job starts); state from before this bookkeeping
   * knows every shard too.
   */
  private void initKnownShards(boolean restored) throws Exception {
    this.knownShards = new java.util.TreeSet<>();
    this.rereadShards = new java.util.TreeSet<>();
    if (options.shards() == null) {
      return;
    }
    boolean tracked = false;
    if (restored) {
      for (Integer shard : knownShardsState.get()) {
        if (shard == KNOWN_SHARDS_TRACKED) {
          tracked = true;
        } else {
          knownShards.add(shard);
        }
      }
    }
    if (!restored || !tracked) {
      knownShards.addAll(options.shards());
      return;
    }
    java.util.SortedSet<Integer> left = new java.util.TreeSet<>(knownShards);
    left.removeAll(options.shards());
    if (!left.isEmpty()) {
      LOG.info(
          "Pipeline {} no longer writes shard(s) {} of table {} (excluded): their rows stay as they are; included again"
              + " later, each is read from a fresh snapshot and its rows replaced",
          options.pipelineId(), left, options.tableName());
    }
    knownShards.retainAll(options.shards());
    rereadShards.addAll(options.shards());
    rereadShards.removeAll(knownShards);
    java.util.SortedSet<Integer> undeclared = new java.util.TreeSet<>(rereadShards);
    if (options.rereadShards() != null) {
      undeclared.removeAll(options.rereadShards());
    }
    if (!undeclared.isEmpty()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot resume pipeline %s on table %s: shard(s) %s are new to the restored state (left out with"
                  + " tables.exclude-shards in the run it resumes from, or added to the config since), and this run"
                  + " would read them from the binlog alone: the table would keep their old rows and miss those never"
                  + " changed since. Resume again from the same checkpoint with tables.reread-shards: %s (they are"
                  + " then read from a fresh snapshot and their old rows replaced), or leave them in tables.exclude-shards",
              options.pipelineId(), options.tableName(), undeclared, undeclared));
    }
    if (!rereadShards.isEmpty()) {
      LOG.info(
          "Pipeline {} writes shard(s) {} of table {} again after leaving them out: the source reads them from a fresh"
              + " snapshot, and the checkpoint that holds the first rows of it deletes their older rows in the table",
          options.pipelineId(), rereadShards, options.tableName());
    }
  }

  @Override
  public void processElement(StreamRecord<WriterResult> element) {
    WriterResult result = element.getValue();
    if (result.checkpointId() <= lastStagedFlinkCheckpoint) {
      // Dropping it would lose its files; committing it in a later checkpoint would reorder changes.
      throw new IllegalStateException(
          String.format(
              "Cannot accept the files of writer %d for Flink checkpoint %d of pipeline %s (table"
                  + " %s): the coordinator already staged checkpoint %d, so they arrived after the"
                  + " barrier. Disable unaligned checkpoints for this job; the job restarts from"
                  + " its last checkpoint and rewrites them.",
              result.subtask(),
              result.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              lastStagedFlinkCheckpoint));
    }
    collecting.computeIfAbsent(result.checkpointId(), id -> new ArrayList<>()).add(result);
    collectedFiles.addAll(fileLocations(result));
  }

  private static List<String> fileLocations(WriterResult result) {
    List<String> locations = new ArrayList<>();
    for (org.apache.iceberg.DataFile f : result.files().dataFiles()) {
      locations.add(f.location());
    }
    for (org.apache.iceberg.DeleteFile f : result.files().deleteFiles()) {
      locations.add(f.location());
    }
    return locations;
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    long start = System.nanoTime();
    stageCollectedUpTo(context.getCheckpointId());
    LOG.debug(
        "Staged the writer results of Flink checkpoint {} in {} ms",
        context.getCheckpointId(),
        (System.nanoTime() - start) / 1_000_000);
    List<byte[]> serialized = new ArrayList<>(pending.size());
    for (PendingCheckpoint checkpoint : pending.values()) {
      serialized.add(
          SimpleVersionedSerialization.writeVersionAndSerialize(
              PendingCheckpointSerializer.INSTANCE, checkpoint));
    }
    pendingState.update(serialized);
    offsetState.update(List.of(checkpointOffset));
    lastSnapshotState.update(List.of(context.getCheckpointId()));
    pipelineIdState.update(List.of(options.pipelineId()));
    lineageState.update(List.of(PipelineProgress.encodeLineage(lineageAt(context.getCheckpointId()))));
    if (options.shards() != null) {
      List<Integer> known = new ArrayList<>(knownShards);
      known.add(KNOWN_SHARDS_TRACKED);
      knownShardsState.update(known);
    }
    metrics.pending(pending.size());
  }

  /** Turns the collected results of every Flink checkpoint ≤ {@code flinkCheckpointId} into manifests. */
  private void stageCollectedUpTo(long flinkCheckpointId) throws IOException {
    NavigableMap<Long, List<WriterResult>> ready = collecting.headMap(flinkCheckpointId, true);
    for (Map.Entry<Long, List<WriterResult>> entry : ready.entrySet()) {
      long checkpointId = entry.getKey() + checkpointOffset;
      PendingCheckpoint previous = pending.get(checkpointId);
      if (previous != null) {
        throw new IllegalStateException(
            String.format(
                "Cannot stage checkpoint %d of pipeline %s twice: writer results arrived after"
                    + " the coordinator's snapshot. Disable unaligned checkpoints for this job.",
                checkpointId, options.pipelineId()));
      }
      List<WriterResult> results = entry.getValue();
      // a re-read shard's old rows go with the checkpoint that holds the first rows of its new snapshot
      java.util.SortedSet<Integer> replaced = new java.util.TreeSet<>();
      results.forEach(r -> replaced.addAll(r.snapshotShards()));
      replaced.retainAll(rereadShards);
      checkNoBinlogWithoutSnapshot(checkpointId, results, replaced);
      if (!replaced.isEmpty()) {
        results = new ArrayList<>(results);
        results.add(rereadTruncations(entry.getKey(), replaced));
      }
      PendingCheckpoint written =
          TempManifests.write(
              table, manifestPrefix, checkpointId, entry.getKey(), runId, results);
      PendingCheckpoint staged =
          written.withInsertOnlyScans(verifiedPoints.resolve(written.insertOnlyScans()));
      try {
        checkInsertOnlyRowsBeforeStaging(staged);
      } catch (RuntimeException e) {
        TempManifests.delete(table, staged);
        throw e;
      }
      pending.put(checkpointId, staged);
      knownShards.addAll(replaced); // replaced with this checkpoint: in its state from now on
      rereadShards.removeAll(replaced);
      latestInsertOnlyScans = staged.insertOnlyScans();
      publishPendingManifests();
      entry.getValue().forEach(r -> fileLocations(r).forEach(collectedFiles::remove)); // now in a pending manifest
    }
    ready.clear();
    lastStagedFlinkCheckpoint = Math.max(lastStagedFlinkCheckpoint, flinkCheckpointId);
  }

  /**
   * A shard this restored state does not know must come from a fresh snapshot (its first rows are
   * snapshot reads): changes of it read from the binlog first mean the source went on with it from the
   * binlog alone (resumed without {@code tables.reread-shards}), and the table would keep its old rows
   * and miss the ones never changed since. This checkpoint fails before anything of it is committed.
   */
  private void checkNoBinlogWithoutSnapshot(
      long checkpointId, List<WriterResult> results, java.util.SortedSet<Integer> snapshotted) {
    if (rereadShards.isEmpty()) {
      return;
    }
    java.util.SortedSet<Integer> unread = new java.util.TreeSet<>();
    results.forEach(r -> unread.addAll(r.shardCounts().keySet()));
    unread.retainAll(rereadShards);
    unread.removeAll(snapshotted);
    if (!unread.isEmpty()) {
      throw new PipelineConflictException(
          String.format(
              "Cannot stage checkpoint %d of pipeline %s for table %s: shard(s) %s are new to this pipeline's state"
                  + " (left out with tables.exclude-shards in the run it resumed from, or added to the config), and"
                  + " their changes are read from the binlog without a fresh snapshot of them, so the table would keep"
                  + " their old rows and miss those never changed since. Resume from the checkpoint this run started"
                  + " from (not a newer one) with tables.reread-shards: %s",
              checkpointId, options.pipelineId(), options.tableName(), unread, unread));
    }
  }

  /** The deletes that replace {@code shards}' older rows, as one more writer result of this checkpoint. */
  private WriterResult rereadTruncations(long flinkCheckpointId, java.util.SortedSet<Integer> shards) throws IOException {
    org.apache.iceberg.io.WriteResult deletes = ShardReread.truncations(table, shards, shardColumn);
    Map<Integer, ShardCounts> counts = new java.util.HashMap<>();
    shards.forEach(shard -> counts.put(shard, new ShardCounts(0, 0)));
    LOG.info(
        "Replacing the rows of shard(s) {} in table {}: their fresh snapshot began; {} delete files by shard with"
            + " checkpoint {} remove every older row",
        shards, options.tableName(), deletes.deleteFiles().length, flinkCheckpointId + checkpointOffset);
    return new WriterResult(flinkCheckpointId, -1, deletes, counts);
  }

  /**
   * Fails this checkpoint (not the commit) when another committer wrote into a shard that got
   * insert-only rows since the writers' scan: the job then restores the previous checkpoint, where
   * the writers are in a restored run and write every row as an upsert.
   */
  private void checkInsertOnlyRowsBeforeStaging(PendingCheckpoint staged) {
    SortedMap<Integer, Long> scans = staged.insertOnlyScans();
    if (scans.isEmpty()) {
      return;
    }
    long checkpointId = staged.checkpointId();
    table.refresh();
    Optional<InsertOnlyCheck.Finding> finding =
        InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), scans);
    if (finding.isPresent()) {
      throw new IllegalStateException(
          String.format(
              "Cannot stage checkpoint %d of pipeline %s for table %s: its rows of shard(s) %s were"
                  + " written insert-only (initial load), but %s. %s This checkpoint fails; the job"
                  + " restarts from its previous checkpoint and writes these rows as upserts.",
              checkpointId,
              options.pipelineId(),
              options.tableName(),
              scans.keySet(),
              finding.get(),
              finding.get().historyGone()
                  ? "Whether another writer wrote these shards meanwhile cannot be told."
                  : "Committing them could duplicate keys; stop any other writer of these shards."));
    }
    if (table.currentSnapshot() != null) {
      advanceVerifiedPoints(scans, table.currentSnapshot().snapshotId());
    }
  }

  /**
   * The insert-only check of {@code checked} held up to snapshot {@code upTo}: later checks of these
   * shards start there, in memory and in the pending checkpoints (and so in state).
   */
  private void advanceVerifiedPoints(SortedMap<Integer, Long> checked, long upTo) {
    verifiedPoints.advance(checked, upTo);
    pending.replaceAll(
        (id, entry) ->
            entry.insertOnlyScans().isEmpty()
                ? entry
                : entry.withInsertOnlyScans(verifiedPoints.resolve(entry.insertOnlyScans())));
    latestInsertOnlyScans = verifiedPoints.resolve(latestInsertOnlyScans);
  }

  @Override
  public void notifyCheckpointComplete(long flinkCheckpointId) throws Exception {
    super.notifyCheckpointComplete(flinkCheckpointId);
    // Late, duplicate and out-of-order notices find nothing new at or below their id.
    commitUpTo(flinkCheckpointId + checkpointOffset);
    lastCompleted = Math.max(lastCompleted, flinkCheckpointId + checkpointOffset);
    if (maintainer != null && noCompletedCheckpointPending()) {
      // Between checkpoint commits, on this same thread (and under the same guard): maintenance
      // commits are serialised with ingest by construction. Skipped while a checkpoint is stuck.
      maintainer.afterCommits(table, guard, options.lockTimeout(), maintenanceView());
      pollMaintenanceSoon();
    }
  }

  private boolean noCompletedCheckpointPending() {
    return pending.headMap(lastCompleted, true).isEmpty();
  }

  /**
   * While a compaction or merge is being written, looks every {@link #MAINTENANCE_POLL_MILLIS} on
   * this operator's thread (a processing-time timer runs in the task's mailbox, never beside a
   * checkpoint commit) and commits it once written, so a merge lands soon after the checkpoint it
   * follows rather than at the next one.
   */
  private void pollMaintenanceSoon() {
    if (maintainer == null || maintenancePollScheduled || !maintainer.hasRewriteInFlight()) {
      return;
    }
    maintenancePollScheduled = true;
    long at = getProcessingTimeService().getCurrentProcessingTime() + MAINTENANCE_POLL_MILLIS;
    getProcessingTimeService()
        .registerTimer(
            at,
            time -> {
              maintenancePollScheduled = false;
              if (maintainer == null) {
                return;
              }
              if (noCompletedCheckpointPending()) {
                maintainer.commitFinished(table, guard, options.lockTimeout());
              }
              pollMaintenanceSoon();
            });
  }

  /** The pending checkpoints' temporary manifests (as published) and the insert-only scans in use. */
  private TableMaintainer.CoordinatorView maintenanceView() {
    Set<Long> scans = new HashSet<>(latestInsertOnlyScans.values());
    scans.addAll(verifiedPoints.newest());
    for (PendingCheckpoint checkpoint : pending.values()) {
      scans.addAll(checkpoint.insertOnlyScans().values());
    }
    Set<String> collected = collectedFiles;
    return new TableMaintainer.CoordinatorView(() -> collected, () -> pendingManifests, scans);
  }

  /**
   * Publishes the pending checkpoints' temporary manifests to maintenance's orphan removal: after a
   * checkpoint is staged, and after one is committed (so a removed entry's files are in the table by
   * then).
   */
  private void publishPendingManifests() {
    List<byte[]> manifests = new ArrayList<>();
    for (PendingCheckpoint checkpoint : pending.values()) {
      manifests.addAll(checkpoint.dataManifests());
      manifests.addAll(checkpoint.deleteManifests());
    }
    pendingManifests = List.copyOf(manifests);
  }

  @Override
  public void endInput() throws Exception {
    if (!getRuntimeContext().isCheckpointingEnabled()) {
      // No checkpoint will come: commit what the writers flushed at end of input now.
      stageCollectedUpTo(Long.MAX_VALUE);
      commitUpTo(Long.MAX_VALUE);
    }
    // With checkpointing, the final checkpoint stages and commits the end-of-input results.
  }

  private void commitUpTo(long checkpointId) throws Exception {
    long limit = checkpointId;
    boolean again = true;
    while (again) {
      again = false;
      NavigableMap<Long, PendingCheckpoint> ready = pending.headMap(limit, true);
      for (PendingCheckpoint checkpoint : new ArrayList<>(ready.values())) {
        Outcome outcome = commitOrSkip(checkpoint);
        if (outcome == Outcome.RENUMBERED) {
          long shift = pending.firstKey() - checkpoint.checkpointId();
          limit = limit == Long.MAX_VALUE ? limit : limit + shift;
          again = true;
          break;
        }
        if (outcome == Outcome.LEFT_PENDING) {
          break; // later checkpoints wait too: commits happen in checkpoint order
        }
        pending.remove(checkpoint.checkpointId());
        publishPendingManifests();
        int deleted = TempManifests.delete(table, checkpoint);
        int staged = checkpoint.dataManifests().size() + checkpoint.deleteManifests().size();
        if (deleted < staged) {
          LOG.warn(
              "Could not delete {} of {} temporary manifests of checkpoint {} in table {}; they are"
                  + " orphan files now, removable by Iceberg's orphan-file cleanup",
              staged - deleted,
              staged,
              checkpoint.checkpointId(),
              options.tableName());
        }
      }
    }
    metrics.pending(pending.size());
  }

  /**
   * Shifts every pending id (and the offset for later ones) past {@code committed}: this instance
   * holds the newest epoch (ZooKeeper said so under the lock) and the table holds an older
   * instance's commits up to {@code committed}, made while this one started.
   */
  private void renumberPast(long committed) {
    long shift = committed - pending.firstKey() + 1;
    NavigableMap<Long, PendingCheckpoint> shifted = new TreeMap<>();
    for (PendingCheckpoint entry : pending.values()) {
      shifted.put(entry.checkpointId() + shift, entry.withCheckpointId(entry.checkpointId() + shift));
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

  private Outcome commitOrSkip(PendingCheckpoint checkpoint) throws Exception {
    boolean heartbeat = checkpoint.isEmpty();
    if (heartbeat && continuousEmptyCheckpoints + 1 < options.maxContinuousEmptyCommits()) {
      continuousEmptyCheckpoints++;
      return Outcome.SKIPPED_EMPTY; // nothing to write, no heartbeat due: no snapshot
    }
    if (!guard.canCommit()) {
      LOG.warn(
          "Cannot commit checkpoints {} of pipeline {} to table {} now: the commit guard is not"
              + " connected. They stay pending and are retried at the next completed checkpoint;"
              + " check the ZooKeeper connection if this repeats.",
          pending.tailMap(checkpoint.checkpointId(), true).keySet(),
          options.pipelineId(),
          options.tableName());
      return Outcome.LEFT_PENDING;
    }
    if (heartbeat) {
      continuousEmptyCheckpoints++; // counted in the heartbeat's log line
    }
    Outcome outcome = commitWithRetries(checkpoint, heartbeat);
    if (outcome == Outcome.LEFT_PENDING || outcome == Outcome.RENUMBERED) {
      if (heartbeat) {
        continuousEmptyCheckpoints--;
      }
    } else {
      continuousEmptyCheckpoints = 0;
    }
    return outcome;
  }

  private Outcome commitWithRetries(PendingCheckpoint checkpoint, boolean heartbeat)
      throws Exception {
    long backoffMs = options.retryBackoff().toMillis();
    int rebases = 0;
    long rebaseWaitMs =
        PropertyUtil.propertyAsLong(
            table.properties(),
            TableProperties.COMMIT_MIN_RETRY_WAIT_MS,
            TableProperties.COMMIT_MIN_RETRY_WAIT_MS_DEFAULT);
    for (int attempt = 1; ; attempt++) {
      try {
        long askedForLock = System.nanoTime();
        return guard.runExclusive(
            options.lockTimeout(),
            () -> {
              metrics.lockGranted((System.nanoTime() - askedForLock) / 1_000_000);
              return commitUnderLock(checkpoint, heartbeat);
            });
      } catch (CommitDeferredException e) {
        metrics.lockTimeout();
        LOG.warn(
            "Cannot commit checkpoint {} of pipeline {} to table {} now: {}. It stays pending and"
                + " is retried at the next completed checkpoint.",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            e.getMessage());
        return Outcome.LEFT_PENDING;
      } catch (CommitFencedException e) {
        // Non-recoverable by its annotation: Flink fails the job instead of restarting a zombie
        // that would take a newer epoch and fence the instance that rightly took over.
        LOG.error(
            "Stopping pipeline {} for good: {} Nothing was committed for checkpoint {}.",
            options.pipelineId(),
            e.getMessage(),
            checkpoint.checkpointId());
        throw e;
      } catch (PinnedBaseOperations.BaseChangedException e) {
        // The table moved between the checks and the swap, and an input of the checks moved with
        // it (another instance of this pipeline committed, the schema changed, or insert-only rows
        // need their history check again). Nothing landed; everything is checked again from a
        // fresh refresh, bounded by the table's commit.retry.* properties.
        rebases++;
        int maxRebases =
            PropertyUtil.propertyAsInt(
                table.properties(),
                TableProperties.COMMIT_NUM_RETRIES,
                TableProperties.COMMIT_NUM_RETRIES_DEFAULT);
        if (rebases > maxRebases) {
          throw new IllegalStateException(
              String.format(
                  "Cannot commit checkpoint %d of pipeline %s to table %s: the table changed"
                      + " under %d commit attempts in a row (%s). Another committer keeps"
                      + " changing it; serialise the committers with the ZooKeeper lock"
                      + " (" + CoordinatorConfigOptions.ZK_PREFIX + "*) or raise %s.",
                  checkpoint.checkpointId(),
                  options.pipelineId(),
                  options.tableName(),
                  rebases,
                  e.getMessage(),
                  TableProperties.COMMIT_NUM_RETRIES),
              e);
        }
        metrics.retry();
        LOG.info(
            "Table {} changed between the checks and the swap of checkpoint {} ({}); checking"
                + " again in {} ms",
            options.tableName(),
            checkpoint.checkpointId(),
            e.getMessage(),
            rebaseWaitMs);
        Thread.sleep(rebaseWaitMs);
        rebaseWaitMs =
            Math.min(
                rebaseWaitMs * 2,
                PropertyUtil.propertyAsLong(
                    table.properties(),
                    TableProperties.COMMIT_MAX_RETRY_WAIT_MS,
                    TableProperties.COMMIT_MAX_RETRY_WAIT_MS_DEFAULT));
        attempt--; // not a failed attempt
      } catch (CommitFailedException e) {
        // The catalog kept rejecting the swap on an unchanged base until Iceberg's own retries gave
        // up. Nothing landed; everything is checked again from a fresh refresh, so a commit that
        // landed while the catalog reported a failure is not repeated.
        if (attempt >= options.commitAttempts()) {
          throw e;
        }
        metrics.retry();
        LOG.warn(
            "Commit of checkpoint {} to table {} did not land (attempt {} of {}), checking again"
                + " from a fresh table in {} ms: {}",
            checkpoint.checkpointId(),
            options.tableName(),
            attempt,
            options.commitAttempts(),
            backoffMs,
            e.getMessage());
        Thread.sleep(backoffMs);
        backoffMs *= 2;
      }
      // CommitStateUnknownException propagates: the task fails and keeps its pending checkpoints
      // and manifests; the next attempt resolves the state from the table.
    }
  }

  /**
   * "Commit one checkpoint", holding the guard's lock: every decision is taken on the metadata the
   * commit is built on, and the commit swaps from exactly that metadata or not at all.
   */
  private Outcome commitUnderLock(PendingCheckpoint checkpoint, boolean heartbeat)
      throws IOException {
    long start = System.nanoTime();
    TableOperations ops = ((HasTableOperations) table).operations();
    TableMetadata base = ops.refresh();
    Optional<PipelineProgress> progress = PipelineProgress.read(table, options.pipelineId());
    // Fencing first, on the metadata the commit swaps from (the guard checked ZooKeeper's epoch
    // when it took the lock): a newer epoch in the record means this instance was superseded, even
    // if the newer one already committed this very entry for it.
    long epoch = guard.epoch();
    if (progress.isPresent()) {
      checkRecordNotNewerEpoch(checkpoint, progress.get(), epoch);
    }
    if (progress.isPresent() && isCommitted(progress.get(), checkpoint)) {
      LOG.info(
          "Checkpoint {} of pipeline {} (run {}, Flink checkpoint {}) is already in table {}"
              + " (progress record: {}); not committing it again",
          checkpoint.checkpointId(),
          options.pipelineId(),
          checkpoint.stagedBy(),
          checkpoint.flinkCheckpointId(),
          options.tableName(),
          progress.get());
      metrics.alreadyCommitted(progress.get().checkpointId());
      return Outcome.ALREADY_COMMITTED;
    }
    if (progress.isPresent() && progress.get().checkpointId() >= checkpoint.checkpointId()) {
      // Not committed, and the table is past it: who is past it decides.
      if (checkpoint.isEmpty() && !heartbeat) {
        return Outcome.SKIPPED_EMPTY; // nothing of it to place
      }
      if (checkpoint.stagedBy() != null && !checkpoint.stagedBy().equals(runId)) {
        throw supersededRun(checkpoint, progress.get());
      }
      if (epoch >= 0 && progress.get().epoch() < epoch) {
        // Fencing is on and this instance is the pipeline's newest: the record is an older
        // instance's progress, made before it was fenced. Number this run's own checkpoints past
        // it (never another run's: its entries are committed or superseded, decided above).
        renumberPast(progress.get().checkpointId());
        return Outcome.RENUMBERED;
      }
      throw otherJob(checkpoint, progress.get());
    }
    WriterTableCheck.validateSchema(table.schema(), options.tableName(), rowType);
    checkNoOtherPipelineWritesTheseShards(base.properties());
    SortedMap<Integer, Long> insertOnlyScans = verifiedPoints.resolve(checkpoint.insertOnlyScans());
    if (!insertOnlyScans.isEmpty()) {
      Optional<InsertOnlyCheck.Finding> finding =
          InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), insertOnlyScans);
      if (finding.isPresent()) {
        throw insertOnlyRefused(checkpoint, insertOnlyScans, finding.get());
      }
    }

    TempManifests.Files files = TempManifests.read(table, checkpoint);
    // One transaction: the checkpoint's snapshot and the pipeline's progress record.
    String progressKey = PipelineProgress.propertyKey(options.pipelineId());
    String checkedProgress = base.properties().get(progressKey);
    int checkedSchema = base.currentSchemaId();
    // On a moved base only the snapshots after the checked one need the insert-only check.
    SortedMap<Integer, Long> sinceChecked = new TreeMap<>();
    long checkedSnapshot =
        base.currentSnapshot() == null
            ? PendingCheckpoint.NO_SNAPSHOT
            : base.currentSnapshot().snapshotId();
    insertOnlyScans.keySet().forEach(shard -> sinceChecked.put(shard, checkedSnapshot));
    Transaction transaction =
        Transactions.newTransaction(
            table.name(),
            new PinnedBaseOperations(
                ops,
                base,
                moved ->
                    moved.currentSchemaId() == checkedSchema
                        && Objects.equals(
                            moved.properties().get(progressKey), checkedProgress)
                        && InsertOnlyCheck.foreignWrite(
                                moved, table.io(), shardColumn, options.pipelineId(), sinceChecked)
                            .isEmpty()));
    SnapshotUpdate<?> update;
    if (heartbeat) {
      update = transaction.newAppend();
      update.set(SnapshotSummaryKeys.HEARTBEAT, "true");
    } else {
      // No validateDataFilesExist / validateDeletedFiles: position deletes only name data files of
      // this same checkpoint, written by the same writer, so no concurrent operation can have
      // removed them before this snapshot; and a history walk fails once old snapshots expire.
      RowDelta delta = transaction.newRowDelta();
      files.dataFiles().forEach(delta::addRows);
      files.deleteFiles().forEach(delta::addDeletes);
      update = delta;
    }
    update.set(SnapshotSummaryKeys.PIPELINE_ID, options.pipelineId());
    update.set(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(checkpoint.checkpointId()));
    update.set(
        SnapshotSummaryKeys.FLINK_CHECKPOINT_ID, Long.toString(checkpoint.flinkCheckpointId()));
    update.set(SnapshotSummaryKeys.FLINK_JOB_ID, flinkJobId);
    update.set(SnapshotSummaryKeys.RUN_ID, runId);
    if (epoch >= 0) {
      update.set(SnapshotSummaryKeys.EPOCH, Long.toString(epoch));
    }
    checkpoint
        .shardCounts()
        .forEach(
            (shard, counts) -> {
              update.set(
                  SnapshotSummaryKeys.shardAddedRecords(shard),
                  Long.toString(counts.addedRecords()));
              update.set(
                  SnapshotSummaryKeys.shardDeletedRecords(shard),
                  Long.toString(counts.deletedRecords()));
            });
    update.commit();
    PipelineProgress committed =
        PipelineProgress.next(
            progress.filter(p -> !p.legacy()),
            checkpoint.checkpointId(),
            checkpoint.flinkCheckpointId(),
            checkpoint.stagedBy() != null ? checkpoint.stagedBy() : runId,
            runId,
            flinkJobId,
            epoch,
            restoredFrom);
    var properties =
        transaction
            .updateProperties()
            .set(PipelineProgress.propertyKey(options.pipelineId()), committed.encode());
    publishInsertOnlyHistoryNeeded(
        properties, base, checkpoint, insertOnlyScans, transaction.table().currentSnapshot().snapshotId());
    if (options.shards() != null) {
      String shards = PipelineShards.encode(options.shards());
      if (!shards.equals(base.properties().get(PipelineShards.propertyKey(options.pipelineId())))) {
        properties.set(PipelineShards.propertyKey(options.pipelineId()), shards);
      }
    }
    properties.commit();
    transaction.commitTransaction();
    long snapshotId = transaction.table().currentSnapshot().snapshotId();
    if (!insertOnlyScans.isEmpty()) {
      advanceVerifiedPoints(insertOnlyScans, snapshotId); // checked up to the base, own commit on it
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    if (heartbeat) {
      metrics.heartbeat(checkpoint.checkpointId(), ms);
      LOG.info(
          "Committed heartbeat for pipeline {} to table {}: checkpoint {} after {} empty"
              + " checkpoints, {} ms",
          options.pipelineId(),
          options.tableName(),
          checkpoint.checkpointId(),
          continuousEmptyCheckpoints,
          ms);
    } else {
      long records = files.dataRecords() + files.deleteRecords();
      metrics.committed(
          checkpoint.checkpointId(),
          ms,
          files.dataFiles().size(),
          files.deleteFiles().size(),
          records);
      LOG.info(
          "Committed checkpoint {} (Flink checkpoint {}) of pipeline {} to table {}: {} data files,"
              + " {} delete files, {} data records, {} delete records, {} shards touched, {} ms,"
              + " snapshot {}",
          checkpoint.checkpointId(),
          checkpoint.flinkCheckpointId(),
          options.pipelineId(),
          options.tableName(),
          files.dataFiles().size(),
          files.deleteFiles().size(),
          files.dataRecords(),
          files.deleteRecords(),
          checkpoint.shardCounts().size(),
          ms,
          snapshotId);
    }
    return Outcome.COMMITTED;
  }

  /**
   * True when the table's progress shows this entry committed: the record is at or past its id (ids
   * are committed in increasing order) and its run's committed mark is at or past the entry's Flink
   * checkpoint ({@link PipelineProgress#covers}). The first condition keeps a restored run's
   * ancestry mark, written with its first commit, from covering restored entries not committed yet.
   * Without runs on either side (a table or state from before the record), the first alone decides.
   */
  private static boolean isCommitted(PipelineProgress progress, PendingCheckpoint checkpoint) {
    if (progress.checkpointId() < checkpoint.checkpointId()) {
      return false;
    }
    if (progress.legacy() || checkpoint.stagedBy() == null) {
      return true;
    }
    return progress.covers(checkpoint.stagedBy(), checkpoint.flinkCheckpointId());
  }

  /** The ancestry written into state at checkpoint c: the restored jobs plus this job at c. */
  private LinkedHashMap<String, Long> lineageAt(long flinkCheckpointId) {
    LinkedHashMap<String, Long> lineage = new LinkedHashMap<>(restoredFrom);
    lineage.remove(runId);
    lineage.put(runId, flinkCheckpointId);
    while (lineage.size() > PipelineProgress.MAX_RUNS) {
      lineage.remove(lineage.keySet().iterator().next());
    }
    return lineage;
  }

  /** A newer epoch in the record: another instance of this pipeline took over. */
  private void checkRecordNotNewerEpoch(
      PendingCheckpoint checkpoint, PipelineProgress progress, long epoch) {
    if (epoch >= 0 && progress.epoch() > epoch) {
      throw new CommitFencedException(
          String.format(
              "Cannot commit checkpoint %d of pipeline %s to table %s: the table holds a commit of"
                  + " the same pipeline with newer epoch %d (%s), this coordinator has epoch %d."
                  + " Another instance of this pipeline took over; stop this job. (If ZooKeeper's"
                  + " data was reset instead, set the pipeline's epoch node above %d.)",
              checkpoint.checkpointId(),
              options.pipelineId(),
              options.tableName(),
              progress.epoch(),
              progress,
              epoch,
              progress.epoch()));
    }
  }

  /**
   * Publishes, with the commit, the oldest snapshot the insert-only checks of this pipeline will
   * still read history from once it lands ({@link TableMaintainer#INSERT_ONLY_FROM_PREFIX}), so that
   * snapshot expiry — this pipeline's or another's on the same table — keeps it; removes it once
   * no insert-only rows are pending or coming.
   */
  private void publishInsertOnlyHistoryNeeded(
      org.apache.iceberg.UpdateProperties properties,
      TableMetadata base,
      PendingCheckpoint committing,
      SortedMap<Integer, Long> committingScans,
      long committingSnapshot) {
    Set<Long> needed = new HashSet<>();
    java.util.function.BiConsumer<Integer, Long> need =
        (shard, scan) ->
            needed.add(
                Objects.equals(committingScans.get(shard), scan) ? committingSnapshot : scan);
    for (PendingCheckpoint entry : pending.values()) {
      if (entry.checkpointId() != committing.checkpointId()) {
        verifiedPoints.resolve(entry.insertOnlyScans()).forEach(need);
      }
    }
    verifiedPoints.resolve(latestInsertOnlyScans).forEach(need);
    if (!committingScans.isEmpty()) {
      needed.add(committingSnapshot);
    }
    String key = TableMaintainer.INSERT_ONLY_FROM_PREFIX + options.pipelineId();
    if (needed.isEmpty()) {
      if (base.properties().containsKey(key)) {
        properties.remove(key);
      }
      return;
    }
    long oldest = committingSnapshot;
    for (long id : needed) {
      if (id == PendingCheckpoint.NO_SNAPSHOT) {
        oldest = id;
        break;
      }
      var snapshot = base.snapshot(id);
      var current = base.snapshot(oldest);
      if (snapshot != null && (current == null || snapshot.sequenceNumber() < current.sequenceNumber())) {
        oldest = id;
      }
    }
    if (!Long.toString(oldest).equals(base.properties().get(key))) {
      properties.set(key, Long.toString(oldest));
    }
  }

  /**
   * Insert-only rows of a completed checkpoint that cannot be committed: a foreign write into their
   * shards since the last check (committing would duplicate keys), or history that can no longer be
   * read (expired past the last verified point: nothing known wrong, nothing can be told).
   */
  private PipelineConflictException insertOnlyRefused(
      PendingCheckpoint checkpoint, SortedMap<Integer, Long> scans, InsertOnlyCheck.Finding finding) {
    String why =
        finding.historyGone()
            ? "Whether another writer wrote these shards since cannot be told: the table's snapshots"
                + " were expired (by another pipeline's maintenance.expire-snapshots.* or an expiry"
                + " tool) past the last point this pipeline checked, which it checks at every"
                + " checkpoint. Keep snapshots longer than this pipeline's checkpoints take."
            : "Committing would duplicate keys. Stop the other writer of these shards.";
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: its rows of shard(s) %s were"
                + " written insert-only (initial load), but %s. %s The restored state holds these"
                + " rows too: start the pipeline without state with "
                + CoordinatorConfigOptions.INSERT_ONLY_INITIAL_LOAD.key()
                + ": false.",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            scans.keySet(),
            finding,
            why));
  }

  /**
   * A restored entry of an earlier run, never committed, while the table holds later commits of
   * this pipeline made without it: the state restored is a superseded branch (an operator restored
   * an older checkpoint of a run after another run, restored from an even older one, committed).
   * Committing it now would put older changes over newer ones; skipping it would lose them.
   */
  private PipelineConflictException supersededRun(
      PendingCheckpoint checkpoint, PipelineProgress progress) {
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: it is restored state of"
                + " superseded run %s (its Flink checkpoint %d was never committed), and the table"
                + " already holds checkpoint %d, committed by run %s of Flink job %s since. The"
                + " state this job was restored from is older than the table's%s. Restore the job"
                + " from the newest retained checkpoint or savepoint of the run that committed"
                + " checkpoint %d, or start it without state (it then reads every shard again).",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            checkpoint.stagedBy(),
            checkpoint.flinkCheckpointId(),
            progress.checkpointId(),
            progress.committedBy(),
            progress.flinkJobId(),
            progress.knows(checkpoint.stagedBy())
                ? ""
                : " (run " + checkpoint.stagedBy() + " is not among the "
                    + PipelineProgress.MAX_RUNS + " runs the table's progress record keeps)",
            progress.checkpointId()));
  }

  /**
   * This run's own entry is not committed and the table is past it: another job committed for the
   * same pipeline id since this run started. Skipping would lose this job's data, committing would
   * duplicate.
   */
  private PipelineConflictException otherJob(
      PendingCheckpoint checkpoint, PipelineProgress progress) {
    return new PipelineConflictException(
        String.format(
            "Cannot commit checkpoint %d of pipeline %s to table %s: the table's progress record"
                + " shows checkpoint %d committed by run %s of Flink job %s (Flink checkpoint %d,"
                + " staged by run %s) since this run (%s, Flink job %s) started; two jobs share "
                + CoordinatorConfigOptions.PIPELINE_ID.key()
                + " — stop one of them.",
            checkpoint.checkpointId(),
            options.pipelineId(),
            options.tableName(),
            progress.checkpointId(),
            progress.committedBy(),
            progress.flinkJobId(),
            progress.flinkCheckpointId(),
            progress.stagedBy(),
            runId,
            flinkJobId));
  }

  @Override
  public void close() throws Exception {
    try {
      if (maintainer != null) {
        maintainer.close();
        maintainer = null;
      }
      if (guard != null) {
        guard.close();
      }
      tableLoader.close();
    } finally {
      super.close();
    }
  }

  /** For tests: the pending map's keys. */
  List<Long> pendingCheckpointIds() {
    return List.copyOf(pending.keySet());
  }
}
