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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommitCoordinatorTest {
  @TempDir Path warehouse;
  private Table table;

  @BeforeEach
  void createTable() {
    table = TestTables.create(warehouse, 4);
  }

  private Writer writer() throws Exception {
    return new Writer(TestTables.loader(warehouse));
  }

  private Coordinator coordinator(JobID jobId) throws Exception {
    return coordinator(jobId, CommitGuardFactory.none(), 10);
  }

  private Coordinator coordinator(JobID jobId, CommitGuardFactory guard, int maxEmpty)
      throws Exception {
    return new Coordinator(TestTables.loader(warehouse), jobId, guard, maxEmpty);
  }

  @Test
  void restoredCheckpointIsCommittedWhenTheJobFailedBeforeTheCompletionNotice() throws Exception {
    OperatorSubtaskState state;
    try (Writer writer = writer();
        Coordinator first = coordinator(new JobID())) {
      first.harness.open();
      first.add(writer.checkpoint(1, row(INSERT, 1, 10, "a"), row(INSERT, 2, 20, "b")));
      state = first.harness.snapshot(1, 1);
      // the job fails here: checkpoint 1 completed, the notice never arrived
    }
    assertThat(TestTables.summaries(table)).isEmpty();

    try (Coordinator restored = coordinator(new JobID())) {
      restored.harness.initializeState(state);
      restored.harness.open();
      assertThat(restored.pending()).isEmpty();
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 10, "a"), new Row(2, 20, "b"));
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L);
  }

  @Test
  void restoreAfterTheCommitLandedCommitsNothingTwice() throws Exception {
    JobID firstJob = new JobID();
    JobID secondJob = new JobID();
    OperatorSubtaskState state;
    try (Writer writer = writer();
        Coordinator first = coordinator(firstJob)) {
      first.harness.open();
      first.add(writer.checkpoint(1, row(INSERT, 1, 10, "a")));
      state = first.harness.snapshot(1, 1);
      first.harness.notifyOfCompletedCheckpoint(1);
      // the job fails after the commit; its state still holds checkpoint 1 as pending
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L);

    try (Writer writer = writer();
        Coordinator second = coordinator(secondJob)) {
      second.harness.initializeState(state);
      second.harness.open();
      assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L);

      second.add(
          writer.checkpoint(2, row(UPDATE_BEFORE, 1, 10, "a"), row(UPDATE_AFTER, 1, 10, "a2")));
      second.harness.snapshot(2, 2);
      second.harness.notifyOfCompletedCheckpoint(2);
    }
    assertThat(TestTables.read(table)).containsExactly(new Row(1, 10, "a2"));
    List<Map<String, String>> summaries = TestTables.summaries(table);
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);
    assertThat(summaries.get(0))
        .containsEntry(SnapshotSummaryKeys.FLINK_JOB_ID, firstJob.toString());
    assertThat(summaries.get(1))
        .containsEntry(SnapshotSummaryKeys.FLINK_JOB_ID, secondJob.toString());
  }

  @Test
  void restoreIntoANewFlinkJobFindsCommitsByPipelineId() throws Exception {
    JobID firstJob = new JobID();
    JobID savepointJob = new JobID();
    OperatorSubtaskState state;
    try (Writer writer = writer();
        Coordinator first = coordinator(firstJob)) {
      first.harness.open();
      first.add(writer.checkpoint(1, row(INSERT, 1, 10, "a")));
      first.harness.snapshot(1, 1);
      first.harness.notifyOfCompletedCheckpoint(1);
      first.add(writer.checkpoint(2, row(INSERT, 1, 11, "b")));
      state = first.harness.snapshot(2, 2); // a savepoint; the job stops before its notice
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L);

    try (Coordinator fromSavepoint = coordinator(savepointJob)) {
      fromSavepoint.harness.initializeState(state);
      fromSavepoint.harness.open();
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);
    assertThat(TestTables.summaries(table).get(1))
        .containsEntry(SnapshotSummaryKeys.FLINK_JOB_ID, savepointJob.toString())
        .containsEntry(SnapshotSummaryKeys.PIPELINE_ID, OperatorHarnesses.PIPELINE);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 10, "a"), new Row(1, 11, "b"));
  }

  @Test
  void lateDuplicateAndOutOfOrderNoticesChangeNothing() throws Exception {
    try (Writer writer = writer();
        Coordinator coordinator = coordinator(new JobID())) {
      coordinator.harness.open();
      coordinator.add(writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      coordinator.harness.snapshot(1, 1);
      coordinator.add(writer.checkpoint(2, row(DELETE, 1, 1, "a"), row(INSERT, 1, 2, "b")));
      coordinator.harness.snapshot(2, 2);
      coordinator.add(
          writer.checkpoint(3, row(UPDATE_BEFORE, 1, 2, "b"), row(UPDATE_AFTER, 1, 2, "c")));
      coordinator.harness.snapshot(3, 3);

      coordinator.harness.notifyOfCompletedCheckpoint(2);
      assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);
      assertThat(TestTables.read(table)).containsExactly(new Row(1, 2, "b"));
      assertThat(coordinator.pending()).containsExactly(3L);

      coordinator.harness.notifyOfCompletedCheckpoint(1); // late
      coordinator.harness.notifyOfCompletedCheckpoint(2); // twice
      assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);

      coordinator.harness.notifyOfCompletedCheckpoint(3);
      coordinator.harness.notifyOfCompletedCheckpoint(3);
      coordinator.harness.notifyOfCompletedCheckpoint(1);
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L, 3L);
    assertThat(TestTables.read(table)).containsExactly(new Row(1, 2, "c"));
  }

  @Test
  void twoPendingCheckpointsBecomeTwoSnapshotsSoADeleteAppliesToEarlierData() throws Exception {
    try (Writer writer = writer();
        Coordinator coordinator = coordinator(new JobID())) {
      coordinator.harness.open();
      coordinator.add(writer.checkpoint(1, row(INSERT, 3, 7, "x"), row(INSERT, 3, 8, "y")));
      coordinator.harness.snapshot(1, 1);
      coordinator.add(writer.checkpoint(2, row(DELETE, 3, 7, "x")));
      coordinator.harness.snapshot(2, 2);
      coordinator.harness.notifyOfCompletedCheckpoint(2);
    }
    table.refresh();
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L, 2L);
    assertThat(table.currentSnapshot().sequenceNumber())
        .isEqualTo(table.snapshot(table.currentSnapshot().parentId()).sequenceNumber() + 1);
    assertThat(TestTables.read(table)).containsExactly(new Row(3, 8, "y"));
  }

  @Test
  void commitStateUnknownFailsTheTaskAndKeepsTheCheckpointForTheRestore() throws Exception {
    FaultInjection.arm(List.of(new FaultInjection.Fault(FaultInjection.Point.AFTER_COMMIT, 1)));
    TableLoader faulty = new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse));
    OperatorSubtaskState state;
    try (Writer writer = writer();
        Coordinator coordinator =
            new Coordinator(faulty, new JobID(), CommitGuardFactory.none(), 10, 3)) {
      coordinator.harness.open();
      coordinator.add(writer.checkpoint(1, row(INSERT, 1, 1, "a")));
      state = coordinator.harness.snapshot(1, 1);
      assertThatThrownBy(() -> coordinator.harness.notifyOfCompletedCheckpoint(1))
          .isInstanceOf(CommitStateUnknownException.class);
      assertThat(coordinator.pending()).containsExactly(1L);
    }
    assertThat(tempManifests()).hasSize(2); // nothing cleaned up: the commit may have landed

    try (Coordinator restored = coordinator(new JobID())) {
      restored.harness.initializeState(state);
      restored.harness.open();
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L);
    assertThat(TestTables.read(table)).containsExactly(new Row(1, 1, "a"));
    assertThat(tempManifests()).isEmpty();
  }

  @Test
  void withoutCheckpointingTheEndOfInputCommitsWhatTheWritersFlushed() throws Exception {
    try (Writer writer = writer();
        Coordinator coordinator = coordinator(new JobID())) {
      coordinator.harness.getStreamConfig().setCheckpointingEnabled(false);
      coordinator.harness.open();
      coordinator.add(writer.checkpoint(1, row(INSERT, 1, 1, "a"), row(INSERT, 1, 2, "b")));
      coordinator.harness.endInput();
    }
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(1L);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new Row(1, 1, "a"), new Row(1, 2, "b"));
  }

  private List<Path> tempManifests() throws java.io.IOException {
    Path metadata = warehouse.resolve("shop/orders/metadata");
    try (Stream<Path> files = Files.list(metadata)) {
      return files.filter(f -> f.getFileName().toString().startsWith("shardberg-")).toList();
    }
  }

  @Test
  void theWriterRefusesATableWithoutTheShardColumnInItsEqualityColumns() throws Exception {
    assertThatThrownBy(() -> new OperatorHarnessWriterWithColumns(List.of("id")).close())
        .hasMessageContaining("equality columns [id] must include the shard column 'shard_number'");
  }

  /** Writer harness with custom equality columns, to test the layout check at open. */
  private final class OperatorHarnessWriterWithColumns implements AutoCloseable {
    private final org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness<
            org.apache.flink.table.data.RowData, WriterResult>
        harness;

    OperatorHarnessWriterWithColumns(List<String> columns) throws Exception {
      harness =
          new org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness<>(
              new ShardbergWriter(
                  TestTables.loader(warehouse),
                  TestTables.TABLE_NAME,
                  TestTables.ROW_TYPE,
                  columns,
                  false));
      harness.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      harness.open();
    }

    @Override
    public void close() throws Exception {
      harness.close();
    }
  }
}
