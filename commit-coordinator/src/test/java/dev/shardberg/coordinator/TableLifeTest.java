package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.TestTables.row;
import static org.apache.flink.types.RowKind.DELETE;
import static org.apache.flink.types.RowKind.INSERT;
import static org.apache.flink.types.RowKind.UPDATE_AFTER;
import static org.apache.flink.types.RowKind.UPDATE_BEFORE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.coordinator.OperatorHarnesses.Coordinator;
import dev.shardberg.coordinator.OperatorHarnesses.Writer;
import dev.shardberg.coordinator.TestTables.Row;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.actions.Actions;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once for the table's whole life: what operations do between commits (snapshot expiry,
 * compaction, orphan-file removal), restores from state taken before them, a second job with the
 * same pipeline id, a coordinator that loses its lock between its checks and the metadata swap, a
 * restore under another pipeline id, and insert-only rows against a foreign committer. Real tables
 * on disk, the real writer and coordinator in operator harnesses.
 */
class TableLifeTest {
  @TempDir Path warehouse;
  private Table table;

  @BeforeEach
  void createTable() {
    table = TestTables.create(warehouse, 4);
  }

  private Writer writer() throws Exception {
    return new Writer(TestTables.loader(warehouse));
  }

  private Coordinator coordinator(JobID job) throws Exception {
    return new Coordinator(TestTables.loader(warehouse), job, CommitGuardFactory.none(), 10);
  }

  private static void commit(Coordinator coordinator, long checkpoint, WriterResult result)
      throws Exception {
    coordinator.add(result);
    coordinator.harness.snapshot(checkpoint, checkpoint);
    coordinator.harness.notifyOfCompletedCheckpoint(checkpoint);
  }

  /** Issue 13, item 1, exactly: before the fix the third commit failed for good. */
  @Test
  void expiringTheOldestSnapshotDoesNotStopACheckpointThatUpdatesAKeyTwice() throws Exception {
    try (Writer writer = writer();
        Coordinator coordinator = coordinator(new JobID())) {
      coordinator.harness.open();
      commit(coordinator, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a"), row(INSERT, 1, 2, "b")));
      commit(coordinator, 2, writer.checkpoint(2, row(INSERT, 1, 3, "c")));
      table.refresh();
      long oldest = SnapshotUtil.oldestAncestor(table).snapshotId();
      table.expireSnapshots().expireSnapshotId(oldest).commit();

      commit(
          coordinator,
          3,
          writer.checkpoint(
              3,
              row(UPDATE_BEFORE, 1, 1, "a"),
              row(UPDATE_AFTER, 1, 1, "a2"),
              row(UPDATE_BEFORE, 1, 1, "a2"),
              row(UPDATE_AFTER, 1, 1, "a3")));
      assertThat(coordinator.pending()).isEmpty();
    }
    assertThat(TestTables.summaries(table).get(1))
        .containsEntry("added-position-delete-files", "1");
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(2L, 3L);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "a3"), new Row(1, 2, "b"), new Row(1, 3, "c"));
  }

  /**
   * The job is killed after checkpoint 3 completed but before its commit; while it is down,
   * maintenance compacts (Iceberg's Flink rewrite action), expires every old snapshot of the
   * pipeline and removes orphan files older than the kill. The restore commits checkpoint 3 from
   * its temporary manifests, and later checkpoints keep committing position and equality deletes. A
   * second restore from the same state, now committed, skips it without reading its manifests.
   */
  @Test
  void restoreAfterCompactionExpiryAndOrphanRemovalCommitsOnceAndKeepsCommitting()
      throws Exception {
    JobID firstJob = new JobID();
    OperatorSubtaskState killedAfterCheckpoint3;
    long orphanCutoff;
    try (Writer writer = writer();
        Coordinator first = coordinator(firstJob)) {
      first.harness.open();
      WriterResult inserts =
          writer.checkpoint(
              1,
              row(INSERT, 1, 1, "v1"),
              row(INSERT, 1, 2, "v1"),
              row(INSERT, 1, 3, "v1"),
              row(INSERT, 1, 4, "v1"),
              row(INSERT, 2, 1, "v1"));
      commit(first, 1, inserts);
      commit(
          first,
          2,
          writer.checkpoint(
              2,
              row(UPDATE_BEFORE, 1, 1, "v1"),
              row(UPDATE_AFTER, 1, 1, "v2"),
              row(UPDATE_BEFORE, 1, 2, "v1"),
              row(UPDATE_AFTER, 1, 2, "v2"),
              row(INSERT, 1, 5, "v2"),
              row(INSERT, 2, 2, "v2")));
      orphanCutoff = System.currentTimeMillis();
      first.add(
          writer.checkpoint(
              3,
              row(DELETE, 1, 3, "v1"),
              row(UPDATE_BEFORE, 1, 4, "v1"),
              row(UPDATE_AFTER, 1, 4, "v3"),
              row(UPDATE_BEFORE, 1, 4, "v3"),
              row(UPDATE_AFTER, 1, 4, "v3b")));
      killedAfterCheckpoint3 = first.harness.snapshot(3, 3);
      // killed: checkpoint 3 completed, its notice never arrived
    }

    int rewritten = compact(table);
    assertThat(rewritten).isPositive();
    expireAllButCurrent(table);
    int orphans = Maintenance.removeOrphanFiles(table, orphanCutoff);
    table.refresh();
    assertThat(SnapshotUtil.oldestAncestor(table).summary())
        .doesNotContainKey(SnapshotSummaryKeys.PIPELINE_ID); // the pipeline's snapshots are gone
    assertThat(orphans)
        .as("files orphan removal deleted: the restore below runs after a real removal")
        .isPositive();

    try (Writer writer = writer();
        Coordinator restored = coordinator(new JobID())) {
      restored.harness.initializeState(killedAfterCheckpoint3);
      restored.harness.open();
      assertThat(restored.pending()).isEmpty();
      table.refresh();
      assertThat(PipelineProgress.read(table, OperatorHarnesses.PIPELINE))
          .hasValueSatisfying(p -> assertThat(p.checkpointId()).isEqualTo(3));
      commit(
          restored,
          4,
          writer.checkpoint(
              4,
              row(UPDATE_BEFORE, 1, 1, "v2"),
              row(UPDATE_AFTER, 1, 1, "v4"),
              row(UPDATE_BEFORE, 1, 1, "v4"),
              row(UPDATE_AFTER, 1, 1, "v4b"),
              row(DELETE, 2, 1, "v1"),
              row(INSERT, 3, 1, "v4")));
      expireAllButCurrent(table);
      commit(restored, 5, writer.checkpoint(5, row(DELETE, 1, 5, "v2"), row(INSERT, 1, 6, "v5")));
    }
    Set<Row> expected =
        Set.of(
            new Row(1, 1, "v4b"),
            new Row(1, 2, "v2"),
            new Row(1, 4, "v3b"),
            new Row(1, 6, "v5"),
            new Row(2, 2, "v2"),
            new Row(3, 1, "v4"));
    assertThat(TestTables.read(table)).containsExactlyInAnyOrderElementsOf(expected);

    // The same old state once more (checkpoint 3 is committed now, its temporary manifests are
    // gone): the progress record shows it committed by its own lineage, so it is skipped unread.
    Maintenance.removeOrphanFiles(table, System.currentTimeMillis() + 1);
    try (Coordinator again = coordinator(new JobID())) {
      again.harness.initializeState(killedAfterCheckpoint3);
      again.harness.open();
      assertThat(again.pending()).isEmpty();
    }
    assertThat(TestTables.read(table)).containsExactlyInAnyOrderElementsOf(expected);
    table.refresh();
    assertThat(PipelineProgress.read(table, OperatorHarnesses.PIPELINE))
        .hasValueSatisfying(
            p -> {
              assertThat(p.checkpointId()).isEqualTo(5);
              assertThat(p.flinkCheckpointId()).isEqualTo(5);
            });
  }

  @Test
  void aSecondJobWithTheSamePipelineIdFailsLoudlyAndTheFirstLosesNothing() throws Exception {
    JobID blue = new JobID();
    JobID green = new JobID();
    OperatorSubtaskState savepoint;
    try (Writer blueWriter = writer();
        Writer greenWriter = writer();
        Coordinator first = coordinator(blue)) {
      first.harness.open();
      commit(first, 1, blueWriter.checkpoint(1, row(INSERT, 1, 1, "blue-1")));
      first.add(blueWriter.checkpoint(2, row(INSERT, 1, 2, "blue-2")));
      savepoint = first.harness.snapshot(2, 2);
      first.harness.notifyOfCompletedCheckpoint(2);

      // a blue/green fork from the same savepoint: both number their next checkpoint 3
      try (Coordinator second = coordinator(green)) {
        second.harness.initializeState(savepoint);
        second.harness.open(); // checkpoint 2 is its own lineage's (staged by blue): skipped
        commit(first, 3, blueWriter.checkpoint(3, row(INSERT, 1, 3, "blue-3")));

        second.add(greenWriter.checkpoint(3, row(INSERT, 1, 3, "green-3")));
        second.harness.snapshot(3, 3);
        assertThatThrownBy(() -> second.harness.notifyOfCompletedCheckpoint(3))
            .isInstanceOf(PipelineConflictException.class)
            .hasMessageStartingWith(
                "Cannot commit checkpoint 3 of pipeline orders-pipeline to table hadoop.shop.orders:"
                    + " the table's progress record shows checkpoint 3 committed by run ")
            .hasMessageContaining(" of Flink job " + blue + " (Flink checkpoint 3, staged by run ")
            .hasMessageContaining(", Flink job " + green + ") started")
            .hasMessageEndingWith("two jobs share pipeline.id — stop one of them.");
      }
      commit(first, 4, blueWriter.checkpoint(4, row(UPDATE_AFTER, 1, 1, "blue-4")));
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new Row(1, 1, "blue-4"), new Row(1, 2, "blue-2"), new Row(1, 3, "blue-3"));
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L, 3L, 4L);
  }

  @Test
  void aJobWithoutStateThatOvertakesARunningOneStopsTheRunningOneLoudly() throws Exception {
    JobID running = new JobID();
    try (Writer writer = writer();
        Writer freshWriter = writer();
        Coordinator first = coordinator(running)) {
      first.harness.open();
      commit(first, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      try (Coordinator fresh = coordinator(new JobID())) {
        fresh.harness.open(); // numbers its checkpoints past the table's: its 1 is 2
        commit(fresh, 1, freshWriter.checkpoint(1, row(INSERT, 1, 2, "fresh")));
      }
      first.add(writer.checkpoint(2, row(INSERT, 1, 3, "late")));
      first.harness.snapshot(2, 2);
      assertThatThrownBy(() -> first.harness.notifyOfCompletedCheckpoint(2))
          .isInstanceOf(PipelineConflictException.class)
          .hasMessageContaining("shows checkpoint 2 committed by run ")
          .hasMessageContaining("two jobs share pipeline.id — stop one of them");
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "a"), new Row(1, 2, "fresh"));
  }

  /** With fencing: the newer instance numbers past what the older one committed meanwhile. */
  @Test
  void theNewestInstanceNumbersPastAnOlderInstancesCommitsAndTheOlderIsFenced() throws Exception {
    try (Writer oldWriter = writer();
        Writer newWriter = writer();
        Coordinator older =
            new Coordinator(
                TestTables.loader(warehouse), new JobID(), new ScriptedGuard(1).factory(), 10)) {
      older.harness.open();
      commit(older, 1, oldWriter.checkpoint(1, row(INSERT, 1, 1, "old-1")));
      try (Coordinator newer =
          new Coordinator(
              TestTables.loader(warehouse), new JobID(), new ScriptedGuard(2).factory(), 10)) {
        newer.harness.open(); // without state: its Flink checkpoint 1 is pipeline checkpoint 2
        commit(older, 2, oldWriter.checkpoint(2, row(INSERT, 1, 2, "old-2")));
        commit(older, 3, oldWriter.checkpoint(3, row(INSERT, 1, 3, "old-3")));
        commit(newer, 1, newWriter.checkpoint(1, row(UPDATE_AFTER, 1, 1, "new-1")));
        assertThat(newer.pending()).isEmpty();
      }
      older.add(oldWriter.checkpoint(4, row(INSERT, 1, 4, "old-4")));
      older.harness.snapshot(4, 4);
      assertThatThrownBy(() -> older.harness.notifyOfCompletedCheckpoint(4))
          .isInstanceOf(CommitFencedException.class)
          .hasMessageContaining("newer epoch 2");
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L, 3L, 4L);
    assertThat(TestTables.summaries(table).get(3))
        .containsEntry(SnapshotSummaryKeys.FLINK_CHECKPOINT_ID, "1")
        .containsEntry(SnapshotSummaryKeys.EPOCH, "2");
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new Row(1, 1, "new-1"), new Row(1, 2, "old-2"), new Row(1, 3, "old-3"));
  }

  /**
   * Issue 13, item 3: the old instance passed its checks (its lock was still valid), then lost the
   * lock; a newer instance restored the same checkpoint and committed it plus one of its own before
   * the old instance's metadata swap. The swap must not land: Iceberg's retry must not re-base it.
   */
  @Test
  void aCoordinatorThatLostItsLockBeforeTheSwapIsFencedByTheSwapItself() throws Exception {
    FaultInjection.arm(List.of(new FaultInjection.Fault(FaultInjection.Point.AT_SWAP, 2)));
    TableLoader faulty = new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse));
    JobID oldJob = new JobID();
    try (Writer writer = writer();
        Coordinator old = new Coordinator(faulty, oldJob, new ScriptedGuard(1).factory(), 10)) {
      old.harness.open();
      commit(old, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      old.add(writer.checkpoint(2, row(UPDATE_AFTER, 1, 1, "b"), row(INSERT, 1, 2, "c")));
      OperatorSubtaskState checkpoint2 = old.harness.snapshot(2, 2);
      FaultInjection.atSwap(
          operations -> {
            try (Writer newWriter = writer();
                Coordinator newer =
                    new Coordinator(
                        TestTables.loader(warehouse),
                        new JobID(),
                        new ScriptedGuard(2).factory(),
                        10)) {
              newer.harness.initializeState(checkpoint2);
              newer.harness.open(); // commits checkpoint 2 with epoch 2
              commit(newer, 3, newWriter.checkpoint(3, row(UPDATE_AFTER, 1, 2, "d")));
            }
          });

      assertThatThrownBy(() -> old.harness.notifyOfCompletedCheckpoint(2))
          .isInstanceOf(CommitFencedException.class)
          .hasMessageContaining("newer epoch 2")
          .hasMessageContaining("this coordinator has epoch 1");
    }
    assertThat(FaultInjection.fired()).hasSize(1);
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L, 3L);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "b"), new Row(1, 2, "d"));
  }

  /** The same without fencing epochs: the re-check finds its own checkpoint committed, once. */
  @Test
  void aSwapOnAMovedTableIsRefusedAndTheRecheckFindsTheCheckpointCommitted() throws Exception {
    FaultInjection.arm(List.of(new FaultInjection.Fault(FaultInjection.Point.AT_SWAP, 2)));
    TableLoader faulty = new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse));
    try (Writer writer = writer();
        Coordinator old = new Coordinator(faulty, new JobID(), CommitGuardFactory.none(), 10)) {
      old.harness.open();
      commit(old, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      old.add(writer.checkpoint(2, row(UPDATE_AFTER, 1, 1, "b"), row(INSERT, 1, 2, "c")));
      OperatorSubtaskState checkpoint2 = old.harness.snapshot(2, 2);
      FaultInjection.atSwap(
          operations -> {
            try (Coordinator newer = coordinator(new JobID())) {
              newer.harness.initializeState(checkpoint2);
              newer.harness.open();
            }
          });
      old.harness.notifyOfCompletedCheckpoint(2);
      assertThat(old.pending()).isEmpty();
      // and it goes on committing on the table as it is now
      commit(old, 3, writer.checkpoint(3, row(DELETE, 1, 2, "c")));
    }
    assertThat(FaultInjection.fired()).hasSize(1);
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L, 3L);
    assertThat(TestTables.read(table)).containsExactly(new Row(1, 1, "b"));
  }

  /** A table written before the progress record: the summaries decide once, then the record. */
  @Test
  void aTableWithoutTheProgressRecordFallsBackToTheSummariesAndGetsTheRecord() throws Exception {
    OperatorSubtaskState state;
    try (Writer writer = writer();
        Coordinator first = coordinator(new JobID())) {
      first.harness.open();
      first.add(writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      state = first.harness.snapshot(1, 1);
      first.harness.notifyOfCompletedCheckpoint(1);
    }
    String key = PipelineProgress.propertyKey(OperatorHarnesses.PIPELINE);
    table.refresh();
    table.updateProperties().remove(key).commit(); // as an older release left it
    table.refresh();
    assertThat(PipelineProgress.read(table, OperatorHarnesses.PIPELINE))
        .hasValueSatisfying(
            p -> {
              assertThat(p.legacy()).isTrue();
              assertThat(p.checkpointId()).isEqualTo(1);
            });

    try (Writer writer = writer();
        Coordinator restored = coordinator(new JobID())) {
      restored.harness.initializeState(state);
      restored.harness.open(); // checkpoint 1 is in the summaries: skipped
      commit(restored, 2, writer.checkpoint(2, row(UPDATE_AFTER, 1, 1, "b")));
    }
    table.refresh();
    assertThat(table.properties()).containsKey(key);
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);
    assertThat(TestTables.read(table)).containsExactly(new Row(1, 1, "b"));
  }

  @Test
  void aRestoreUnderAnotherPipelineIdIsRefused() throws Exception {
    OperatorSubtaskState state;
    try (Writer writer = writer();
        Coordinator first = coordinator(new JobID())) {
      first.harness.open();
      first.add(writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      state = first.harness.snapshot(1, 1);
    }
    try (Coordinator renamed =
        new Coordinator(
            TestTables.loader(warehouse),
            new JobID(),
            CommitGuardFactory.none(),
            10,
            3,
            "renamed")) {
      assertThatThrownBy(() -> renamed.harness.initializeState(state))
          .isInstanceOf(PipelineConflictException.class)
          .hasMessage(
              "Cannot restore the coordinator of pipeline renamed for table hadoop.shop.orders: the"
                  + " restored state belongs to pipeline orders-pipeline. Restoring it under another"
                  + " id would commit its checkpoints again. Set pipeline.id back to"
                  + " orders-pipeline, or start the new pipeline without this state.");
    }
    assertThat(TestTables.summaries(table)).isEmpty();
  }

  @Test
  void aWriterResultForACheckpointAlreadyStagedFailsInsteadOfBeingDropped() throws Exception {
    try (Writer writer = writer();
        Coordinator coordinator = coordinator(new JobID())) {
      coordinator.harness.open();
      coordinator.add(writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      coordinator.harness.snapshot(2, 2);
      WriterResult late = writer.checkpoint(2, row(INSERT, 1, 2, "late"));
      assertThatThrownBy(() -> coordinator.add(late))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("Cannot accept the files of writer 0 for Flink checkpoint 2")
          .hasMessageContaining("already staged checkpoint 2")
          .hasMessageContaining("Disable unaligned checkpoints");
    }
  }

  /** Another committer wrote shard 1 after the writers found it empty: never committed silently. */
  @Test
  void insertOnlyRowsOfAShardAnotherCommitterWroteAreRefusedWhenStagedAndWhenCommitted()
      throws Exception {
    try (Writer loadWriter = new Writer(TestTables.loader(warehouse), true);
        Coordinator load = coordinator(new JobID())) {
      load.harness.open();
      // the initial load of shard 1 and 2: both empty when the writer opened
      commit(load, 1, loadWriter.checkpoint(1, row(INSERT, 2, 1, "load")));
      WriterResult shard1 = loadWriter.checkpoint(2, row(INSERT, 1, 1, "load"));
      assertThat(shard1.insertOnlyScans()).containsOnlyKeys(1);

      oldPerShardJobWrites(row(INSERT, 1, 1, "old-job"));

      load.add(shard1);
      assertThatThrownBy(() -> load.harness.snapshot(2, 2))
          .hasRootCauseInstanceOf(IllegalStateException.class)
          .rootCause()
          .hasMessageContaining("Cannot stage checkpoint 2 of pipeline orders-pipeline")
          .hasMessageContaining("shard(s) [1] were written insert-only")
          .hasMessageContaining("to shard 1 after the writers' scan")
          .hasMessageContaining("writes these rows as upserts");
    }
    try (Writer loadWriter = new Writer(TestTables.loader(warehouse), true);
        Coordinator load = coordinator(new JobID())) {
      load.harness.open();
      // a new first attempt finds shard 1 holding data: its rows are upserts now; shard 3 is empty
      WriterResult result =
          loadWriter.checkpoint(2, row(INSERT, 1, 1, "load"), row(INSERT, 3, 1, "load"));
      assertThat(result.insertOnlyScans()).containsOnlyKeys(3);
      load.add(result);
      load.harness.snapshot(2, 2);
      oldPerShardJobWrites(row(INSERT, 3, 1, "old-job")); // after staging, before the commit
      // (a run without state numbers past the table's checkpoint 1: Flink checkpoint 2 is 3)
      assertThatThrownBy(() -> load.harness.notifyOfCompletedCheckpoint(2))
          .isInstanceOf(PipelineConflictException.class)
          .hasMessageContaining("Cannot commit checkpoint 3 of pipeline orders-pipeline")
          .hasMessageContaining("shard(s) [3] were written insert-only");
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new Row(2, 1, "load"), new Row(1, 1, "old-job"), new Row(3, 1, "old-job"));
  }

  /**
   * Issue 26, item 2: a second pipeline on the table writes other shards and expires its history by
   * age (as its maintenance does) while this pipeline's initial load runs: the snapshot the writers
   * scanned, and everything before the load's last check, is expired between the staging of a
   * checkpoint and its commit. The check starts where the last one held, so the load goes on;
   * before, it stopped for good ("the history since the scan cannot be read") and every restore
   * repeated it. A foreign write into a loaded shard is still refused, and said to be one.
   */
  @Test
  void anotherPipelinesExpiryDuringAnInsertOnlyLoadNeitherStopsItNorHidesAForeignWrite()
      throws Exception {
    try (Writer loadWriter = new Writer(TestTables.loader(warehouse), true);
        Coordinator load = coordinator(new JobID())) {
      load.harness.open();
      // the writers scanned the empty table: the check of shard 1 starts at the table's root
      commit(load, 1, loadWriter.checkpoint(1, row(INSERT, 1, 1, "load")));
      oldPerShardJobWrites(row(INSERT, 2, 1, "other"));
      load.add(loadWriter.checkpoint(2, row(INSERT, 1, 2, "load")));
      load.harness.snapshot(2, 2); // checked up to the other pipeline's commit
      long lastCheck = currentSnapshotId();
      oldPerShardJobWrites(row(INSERT, 2, 2, "other"));
      expireBefore(lastCheck); // the other pipeline's expiry: the root is gone
      load.harness.notifyOfCompletedCheckpoint(2);
      assertThat(load.pending()).isEmpty();
      long ownCommit = currentSnapshotId();

      oldPerShardJobWrites(row(INSERT, 2, 3, "other"));
      expireBefore(ownCommit);
      load.add(loadWriter.checkpoint(3, row(INSERT, 1, 3, "load")));
      load.harness.snapshot(3, 3);
      lastCheck = currentSnapshotId();
      oldPerShardJobWrites(row(INSERT, 1, 3, "foreign")); // into the loaded shard: a real conflict
      expireBefore(lastCheck);
      assertThatThrownBy(() -> load.harness.notifyOfCompletedCheckpoint(3))
          .isInstanceOf(PipelineConflictException.class)
          .hasMessageContaining("Cannot commit checkpoint 3 of pipeline orders-pipeline")
          .hasMessageContaining("to shard 1 after the writers' scan")
          .hasMessageContaining("pipeline old-per-shard-job")
          .hasMessageContaining("Committing would duplicate keys");
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new Row(1, 1, "load"),
            new Row(1, 2, "load"),
            new Row(1, 3, "foreign"),
            new Row(2, 1, "other"),
            new Row(2, 2, "other"),
            new Row(2, 3, "other"));
  }

  /**
   * Once the insert-only rows of an initial load stop, the history the insert-only checks keep
   * follows the table: snapshot expiry keeps every snapshot from the oldest point in use, and
   * before, each shard's point stayed at its last insert-only check for the rest of the run, so
   * expiry kept every snapshot and file written after the load (found by a 30-minute long run: 188
   * snapshots over 15 minutes with a 2-minute max age, 1.4 GB on disk for 8 MB of live rows). Two
   * checkpoints of a load into the empty table, then three of upserts: the history in use starts at
   * the last commit, not at the load's.
   */
  @Test
  void theHistoryInsertOnlyChecksKeepFollowsTheTableOnceTheLoadsRowsStop() throws Exception {
    try (Writer loadWriter = new Writer(TestTables.loader(warehouse), true);
        Coordinator load = coordinator(new JobID())) {
      load.harness.open();
      commit(load, 1, loadWriter.checkpoint(1, row(INSERT, 1, 1, "load")));
      commit(load, 2, loadWriter.checkpoint(2, row(INSERT, 1, 2, "load")));
      long loadCommit = currentSnapshotId();
      for (long checkpoint = 3; checkpoint <= 5; checkpoint++) {
        commit(
            load,
            checkpoint,
            loadWriter.checkpoint(checkpoint, row(UPDATE_AFTER, 1, 1, "v" + checkpoint)));
      }
      long lastButOne = table.snapshot(currentSnapshotId()).parentId();
      assertThat(load.insertOnlyHistoryInUse())
          .as("snapshots whose history insert-only checks keep (the load's commit: %d)", loadCommit)
          .doesNotContain(loadCommit, -1L)
          .allMatch(id -> id == lastButOne || id == currentSnapshotId());
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "v5"), new Row(1, 2, "load"));
  }

  /**
   * Carrying an idle shard's point on never steps over another committer's write into it: a foreign
   * row lands in shard 1 between two checkpoints that write none of its rows insert-only, and the
   * next insert-only rows of shard 1 are still refused when staged, naming the foreign write. (Were
   * the point carried past that write, the check of those rows would start after it and commit a
   * second copy of the key.) Shard 2, idle too and untouched, follows the table.
   */
  @Test
  void anIdleShardsPointIsNotCarriedPastAForeignWriteIntoIt() throws Exception {
    try (Writer loadWriter = new Writer(TestTables.loader(warehouse), true);
        Coordinator load = coordinator(new JobID())) {
      load.harness.open();
      commit(
          load, 1, loadWriter.checkpoint(1, row(INSERT, 1, 1, "load"), row(INSERT, 2, 1, "load")));
      long firstCommit = currentSnapshotId();
      commit(
          load, 2, loadWriter.checkpoint(2, row(INSERT, 1, 2, "load"), row(INSERT, 2, 2, "load")));
      long loadCommit = currentSnapshotId();
      oldPerShardJobWrites(row(INSERT, 1, 3, "old-job"));
      commit(load, 3, loadWriter.checkpoint(3, row(UPDATE_AFTER, 2, 1, "v3")));
      commit(load, 4, loadWriter.checkpoint(4, row(UPDATE_AFTER, 2, 2, "v4")));
      assertThat(load.insertOnlyHistoryInUse())
          .as("shard 1's point stays where it was checked before the foreign write")
          .containsAnyOf(firstCommit, loadCommit);

      load.add(loadWriter.checkpoint(5, row(INSERT, 1, 3, "load")));
      assertThatThrownBy(() -> load.harness.snapshot(5, 5))
          .hasRootCauseInstanceOf(IllegalStateException.class)
          .rootCause()
          .hasMessageContaining("Cannot stage checkpoint 5 of pipeline orders-pipeline")
          .hasMessageContaining("shard(s) [1] were written insert-only")
          .hasMessageContaining("to shard 1 after the writers' scan");
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new Row(1, 1, "load"),
            new Row(1, 2, "load"),
            new Row(1, 3, "old-job"),
            new Row(2, 1, "v3"),
            new Row(2, 2, "v4"));
  }

  private long currentSnapshotId() {
    table.refresh();
    return table.currentSnapshot().snapshotId();
  }

  /** Expires every snapshot older than {@code keep}, as an expiry by age up to it would. */
  private void expireBefore(long keep) {
    table.refresh();
    long keepMillis = table.snapshot(keep).timestampMillis();
    var expire = table.expireSnapshots();
    int expired = 0;
    for (Snapshot snapshot : table.snapshots()) {
      if (snapshot.snapshotId() != keep
          && snapshot.timestampMillis() <= keepMillis
          && snapshot.sequenceNumber() < table.snapshot(keep).sequenceNumber()) {
        expire.expireSnapshotId(snapshot.snapshotId());
        expired++;
      }
    }
    assertThat(expired).isPositive();
    expire.commit();
    table.refresh();
  }

  /** When the history since the last check is gone, the message says so, not "another writer". */
  @Test
  void anExpiredHistoryIsToldApartFromAForeignWrite() {
    table.newAppend().commit(); // the root
    long root = table.currentSnapshot().snapshotId();
    table.newAppend().commit();
    table.newAppend().commit();
    expireBefore(table.currentSnapshot().snapshotId());
    java.util.SortedMap<Integer, Long> scans = new java.util.TreeMap<>(java.util.Map.of(1, root));
    assertThat(
            InsertOnlyCheck.foreignWrite(table, "shard_number", OperatorHarnesses.PIPELINE, scans))
        .hasValueSatisfying(
            finding -> {
              assertThat(finding.historyGone()).isTrue();
              assertThat(finding.description()).contains("has expired");
            });
  }

  private void oldPerShardJobWrites(org.apache.flink.table.data.RowData row) throws Exception {
    try (Writer writer = writer();
        Coordinator other =
            new Coordinator(
                TestTables.loader(warehouse),
                new JobID(),
                CommitGuardFactory.none(),
                10,
                3,
                "old-per-shard-job")) {
      other.harness.open();
      commit(other, 1, writer.checkpoint(1, row));
    }
  }

  /** Iceberg's Flink rewrite action (deletes applied); returns the number of files it replaced. */
  private static int compact(Table table) {
    table.refresh();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    return Actions.forTable(env, table).rewriteDataFiles().execute().deletedDataFiles().size();
  }

  private static void expireAllButCurrent(Table table) {
    table.refresh();
    table.expireSnapshots().expireOlderThan(System.currentTimeMillis() + 1).retainLast(1).commit();
    table.refresh();
    Set<Long> left = new HashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      left.add(snapshot.snapshotId());
    }
    assertThat(left).containsExactly(table.currentSnapshot().snapshotId());
    assertThat(table.properties())
        .containsKey(PipelineProgress.propertyKey(OperatorHarnesses.PIPELINE));
  }
}
