package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.TestTables.row;
import static org.apache.flink.types.RowKind.INSERT;
import static org.apache.flink.types.RowKind.UPDATE_AFTER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.OperatorHarnesses.Coordinator;
import dev.shardberg.coordinator.OperatorHarnesses.Writer;
import dev.shardberg.coordinator.TestTables.Row;
import java.nio.file.Path;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What operators do on a bad day, against the coordinator's exactly-once bookkeeping: restoring an
 * older checkpoint of a run after another run committed, restoring a superseded branch, and two
 * deployments that share a Flink job id. Real tables on disk, the real writer and coordinator in
 * operator harnesses; every outcome is asserted by the table's rows.
 */
class RunsAndRewindsTest {
  @TempDir Path warehouse;
  private Table table;

  @BeforeEach
  void createTable() {
    table = TestTables.create(warehouse, 4);
  }

  private Writer writer() throws Exception {
    return new Writer(TestTables.loader(warehouse));
  }

  /** A coordinator of a Flink job; {@code epoch} ≥ 0: fencing on (ZooKeeper), with that epoch. */
  private Coordinator coordinator(JobID job, long epoch) throws Exception {
    return new Coordinator(
        TestTables.loader(warehouse),
        job,
        epoch < 0 ? CommitGuardFactory.none() : new ScriptedGuard(epoch).factory(),
        10);
  }

  /** Stages Flink checkpoint c, keeps its state (a retained checkpoint), then completes it. */
  private static OperatorSubtaskState checkpoint(
      Coordinator coordinator, long c, WriterResult result) throws Exception {
    coordinator.add(result);
    OperatorSubtaskState state = coordinator.harness.snapshot(c, c);
    coordinator.harness.notifyOfCompletedCheckpoint(c);
    return state;
  }

  /**
   * Issue 26, item 1: J1 commits checkpoints 1..3; the operator restores J2 from J1's chk-1 and J2
   * commits; then the operator restores J3 from J1's later chk-2. Entry 2 of J1 is in the table: J3
   * skips it and goes on. Before runs were kept in the progress record, J3 was refused for good
   * ("two jobs share pipeline.id") without fencing, and with fencing renumbered J1's committed
   * entry and committed it again (failing for good on its deleted temporary manifest).
   */
  @ParameterizedTest(name = "fencing {0}")
  @ValueSource(booleans = {false, true})
  void aRestoreOfAnOlderCheckpointOfARunAfterAnotherRunCommittedGoesOn(boolean fencing)
      throws Exception {
    OperatorSubtaskState j1chk1;
    OperatorSubtaskState j1chk2;
    try (Writer writer = writer();
        Coordinator j1 = coordinator(new JobID(), fencing ? 1 : -1)) {
      j1.harness.open();
      j1chk1 = checkpoint(j1, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      j1chk2 =
          checkpoint(
              j1, 2, writer.checkpoint(2, row(UPDATE_AFTER, 1, 1, "b"), row(INSERT, 1, 2, "b")));
      checkpoint(j1, 3, writer.checkpoint(3, row(INSERT, 1, 3, "c")));
    }
    try (Writer writer = writer();
        Coordinator j2 = coordinator(new JobID(), fencing ? 2 : -1)) {
      j2.harness.initializeState(j1chk1);
      j2.harness.open(); // J1's entry 1 is in the table: skipped
      assertThat(j2.pending()).isEmpty();
      // the binlog again from J1's chk-1, and one change more
      checkpoint(
          j2,
          2,
          writer.checkpoint(
              2,
              row(UPDATE_AFTER, 1, 1, "b"),
              row(INSERT, 1, 2, "b"),
              row(INSERT, 1, 3, "c"),
              row(INSERT, 2, 1, "j2")));
    }
    try (Writer writer = writer();
        Coordinator j3 = coordinator(new JobID(), fencing ? 3 : -1)) {
      j3.harness.initializeState(j1chk2);
      j3.harness.open(); // J1's entry 2 is in the table: skipped, not committed again
      assertThat(j3.pending()).isEmpty();
      // the binlog again from J1's chk-2, and one change more
      checkpoint(
          j3,
          3,
          writer.checkpoint(
              3, row(INSERT, 1, 3, "c"), row(INSERT, 2, 1, "j2"), row(UPDATE_AFTER, 1, 2, "j3")));
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new Row(1, 1, "b"), new Row(1, 2, "j3"), new Row(1, 3, "c"), new Row(2, 1, "j2"));
    table.refresh();
    PipelineProgress progress =
        PipelineProgress.read(table, OperatorHarnesses.PIPELINE).orElseThrow();
    assertThat(progress.runs()).hasSize(3); // J1's, J2's and J3's runs, each with its mark
  }

  /**
   * Issue 26, item 4: a second pipeline whose shard numbers overlap the first's is refused at start
   * (and the first pipeline's shards are in the table from its first commit on), naming both
   * pipelines and the shards; one with other shards starts.
   */
  @Test
  void aSecondPipelineWithOverlappingShardNumbersIsRefusedAtStart() throws Exception {
    try (Writer writer = writer();
        Coordinator first = pipeline("orders-eu", 0, 15)) {
      first.harness.open();
      checkpoint(first, 1, writer.checkpoint(1, row(INSERT, 1, 1, "eu")));
    }
    table.refresh();
    assertThat(table.properties()).containsEntry("shardberg.shards.orders-eu", "0-15");
    try (Coordinator second = pipeline("orders-us", 12, 20)) {
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(() -> second.harness.open());
      assertThat(causeOfType(thrown, PipelineConflictException.class))
          .hasMessage(
              "Cannot start pipeline orders-us on table hadoop.shop.orders: pipeline orders-eu writes"
                  + " shard(s) 12-15 too (table property shardberg.shards.orders-eu). Two pipelines"
                  + " that write one shard number mix two sources into one key space, and their rows"
                  + " overwrite each other. Give each pipeline its own shard numbers"
                  + " (tables.shard-map, the patterns or tables.exclude-shards), or, if the other"
                  + " pipeline is retired for good, remove its table property.");
    }
    try (Writer writer = writer();
        Coordinator other = pipeline("orders-us", 16, 20)) {
      other.harness.open();
      checkpoint(other, 1, writer.checkpoint(1, row(INSERT, 16, 1, "us")));
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "eu"), new Row(16, 1, "us"));
  }

  /**
   * Issue 30: a shard the running job captured (written, not in the plan) is recorded with the
   * plan's in the table property from the commit that writes it, so a second pipeline writing its
   * number is refused; and a commit that writes a captured shard another pipeline records is
   * refused as a commit (not as a start), naming both and the way on.
   */
  @Test
  void aShardCapturedWhileTheJobRunsIsRecordedWithThePlansShards() throws Exception {
    try (Writer writer = writer();
        Coordinator first = pipeline("orders-eu", 0, 3)) {
      first.harness.open();
      checkpoint(
          first, 1, writer.checkpoint(1, row(INSERT, 1, 1, "eu"), row(INSERT, 9, 1, "captured")));
    }
    table.refresh();
    assertThat(table.properties()).containsEntry("shardberg.shards.orders-eu", "0-3,9");
    try (Coordinator second = pipeline("orders-us", 8, 10)) {
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(() -> second.harness.open());
      assertThat(causeOfType(thrown, PipelineConflictException.class))
          .hasMessageContaining("pipeline orders-eu writes shard(s) 9 too");
    }
    try (Writer writer = writer();
        Coordinator us = pipeline("orders-us", 16, 20)) {
      us.harness.open();
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> checkpoint(us, 1, writer.checkpoint(1, row(INSERT, 2, 1, "us"))));
      assertThat(causeOfType(thrown, PipelineConflictException.class))
          .hasMessage(
              "Cannot commit checkpoint 1 of pipeline orders-us on table hadoop.shop.orders:"
                  + " pipeline orders-eu writes shard(s) 2 too (table property"
                  + " shardberg.shards.orders-eu). Two pipelines that write one shard number mix"
                  + " two sources into one key space, and their rows overwrite each other. Shard(s)"
                  + " 2 are not in this run's plan: a table created on MySQL while a job of this"
                  + " pipeline ran. This checkpoint holds rows of them and is not committed: leave"
                  + " the number out (tables.exclude-shards) or map it to another"
                  + " (tables.shard-map), and resume from a checkpoint or savepoint taken before"
                  + " that table was created. Give each pipeline its own shard numbers"
                  + " (tables.shard-map, the patterns or tables.exclude-shards), or, if the other"
                  + " pipeline is retired for good, remove its table property.");
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "eu"), new Row(9, 1, "captured"));
  }

  /**
   * A restored entry holding rows of a shard the new plan does not have (captured by the run the
   * state was taken in, not committed before it stopped) is checked against the other pipelines at
   * its commit: one that writes that number meanwhile refuses the commit, instead of the entry's
   * rows overwriting its rows (the check knew only the plan's shards before).
   */
  @Test
  void aRestoredEntryWithRowsOfAShardOutsideThePlanIsCheckedAgainstTheOtherPipelines()
      throws Exception {
    OperatorSubtaskState staged;
    try (Writer writer = writer();
        Coordinator eu = pipeline("orders-eu", 0, 3)) {
      eu.harness.open();
      checkpoint(eu, 1, writer.checkpoint(1, row(INSERT, 1, 1, "eu")));
      eu.add(writer.checkpoint(2, row(INSERT, 9, 1, "captured by eu")));
      staged = eu.harness.snapshot(2, 2); // the job stopped before the checkpoint completed
    }
    try (Writer writer = writer();
        Coordinator us = pipeline("orders-us", 8, 10)) {
      us.harness.open();
      checkpoint(us, 1, writer.checkpoint(1, row(INSERT, 9, 1, "us")));
    }
    try (Coordinator eu = pipeline("orders-eu", 0, 3)) {
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> {
                eu.harness.initializeState(staged); // commits the restored entry
                eu.harness.open();
              });
      assertThat(causeOfType(thrown, PipelineConflictException.class))
          .hasMessageStartingWith(
              "Cannot commit checkpoint 2 of pipeline orders-eu on table hadoop.shop.orders:"
                  + " pipeline orders-us writes shard(s) 9 too")
          .hasMessageContaining("Shard(s) 9 are not in this run's plan");
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "eu"), new Row(9, 1, "us"));
  }

  private Coordinator pipeline(String id, int fromShard, int toShard) throws Exception {
    java.util.SortedSet<Integer> shards = new java.util.TreeSet<>();
    for (int shard = fromShard; shard <= toShard; shard++) {
      shards.add(shard);
    }
    return new Coordinator(
        TestTables.loader(warehouse),
        new JobID(),
        CommitGuardFactory.none(),
        new CoordinatorOptions(
            TestTables.TABLE_NAME,
            id,
            10,
            java.time.Duration.ofSeconds(5),
            3,
            java.time.Duration.ofMillis(10),
            dev.shardberg.coordinator.maintenance.MaintenanceSettings.disabled(),
            shards,
            null));
  }

  /**
   * Issue 28: with deletes by position a rewind is refused at the restore, naming what the table
   * holds; a restore of the newest checkpoint goes on.
   */
  @Test
  void withDeletesByPositionARestoreOfAnOlderCheckpointIsRefused() throws Exception {
    OperatorSubtaskState chk1;
    OperatorSubtaskState chk2;
    try (Writer writer = writer();
        Coordinator j1 = byPosition()) {
      j1.harness.open();
      chk1 = checkpoint(j1, 1, writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      chk2 = checkpoint(j1, 2, writer.checkpoint(2, row(INSERT, 1, 2, "b")));
    }
    try (Coordinator rewound = byPosition()) {
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> {
                rewound.harness.initializeState(chk1);
                rewound.harness.open();
              });
      assertThat(causeOfType(thrown, PipelineConflictException.class))
          .hasMessageContaining(
              "Cannot restore pipeline orders-pipeline from Flink checkpoint 1 with"
                  + " target.delete-mode: position")
          .hasMessageContaining("already holds the pipeline's checkpoint 2")
          .hasMessageContaining("Restore from the newest retained checkpoint");
    }
    try (Writer writer = writer();
        Coordinator newest = byPosition()) {
      newest.harness.initializeState(chk2);
      newest.harness.open();
      checkpoint(newest, 3, writer.checkpoint(3, row(INSERT, 1, 3, "c")));
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "a"), new Row(1, 2, "b"), new Row(1, 3, "c"));
  }

  private Coordinator byPosition() throws Exception {
    return new Coordinator(
        TestTables.loader(warehouse),
        new JobID(),
        CommitGuardFactory.none(),
        new CoordinatorOptions(
            TestTables.TABLE_NAME,
            OperatorHarnesses.PIPELINE,
            10,
            java.time.Duration.ofSeconds(5),
            3,
            java.time.Duration.ofMillis(10),
            dev.shardberg.coordinator.maintenance.MaintenanceSettings.disabled(),
            null,
            null,
            DeleteMode.POSITION));
  }

  @Test
  void shardSetsAreWrittenAsRanges() {
    java.util.SortedSet<Integer> shards =
        new java.util.TreeSet<>(java.util.List.of(0, 1, 2, 3, 7, 9, 10));
    assertThat(PipelineShards.encode(shards)).isEqualTo("0-3,7,9-10");
    assertThat(PipelineShards.decode("0-3,7,9-10")).isEqualTo(shards);
  }

  private static Throwable causeOfType(Throwable thrown, Class<? extends Throwable> type) {
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return t;
      }
    }
    throw new AssertionError(
        "Expected a " + type.getSimpleName() + " in the causes of " + thrown, thrown);
  }

  /** A table written by the release before runs (version 1 record) is read, and carried forward. */
  @Test
  void aVersion1RecordIsReadAsRunsAndItsEntriesStayRecognised() {
    String v1 =
        "version=1;checkpoint=7;flink-checkpoint=5;staged-by=jobB;committed-by=jobC;epoch=-1;"
            + "restored-from=jobA@3,jobB@4";
    PipelineProgress progress = PipelineProgress.decode(v1, "p", "t");
    assertThat(progress.covers("jobA", 3)).isTrue();
    assertThat(progress.covers("jobA", 4)).isFalse();
    assertThat(progress.covers("jobB", 5)).isTrue();
    assertThat(progress.covers("jobB", 6)).isFalse();
    assertThat(progress.covers("jobC", 1)).isFalse();

    PipelineProgress next =
        PipelineProgress.next(
            java.util.Optional.of(progress), 8, 6, "run1", "run1", "job", -1, java.util.Map.of());
    PipelineProgress read = PipelineProgress.decode(next.encode(), "p", "t");
    assertThat(read).isEqualTo(next);
    assertThat(read.covers("jobA", 3)).isTrue();
    assertThat(read.covers("jobB", 5)).isTrue();
    assertThat(read.covers("run1", 6)).isTrue();
    assertThat(read.runs().keySet()).containsExactly("jobA", "jobB", "run1");
  }

  /** The record keeps the runs that committed last, and never more than its bound. */
  @Test
  void theRecordKeepsTheRunsThatCommittedLast() {
    java.util.Optional<PipelineProgress> progress = java.util.Optional.empty();
    for (int run = 0; run < PipelineProgress.MAX_RUNS + 5; run++) {
      progress =
          java.util.Optional.of(
              PipelineProgress.next(
                  progress, run + 1, 1, "run" + run, "run" + run, "job", -1, java.util.Map.of()));
    }
    PipelineProgress last = progress.orElseThrow();
    assertThat(last.runs()).hasSize(PipelineProgress.MAX_RUNS);
    assertThat(last.knows("run4")).isFalse();
    assertThat(last.knows("run5")).isTrue();
    assertThat(last.encode().length()).isLessThan(1_500); // a table property a metastore keeps
  }
}
