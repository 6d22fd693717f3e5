package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.flink.TableLoader;

/** Operator test harnesses around the writer and the coordinator, on a real table. */
final class OperatorHarnesses {
  static final String PIPELINE = "orders-pipeline";

  private OperatorHarnesses() {}

  /** A writer subtask: rows in, one result per checkpoint out. */
  static final class Writer implements AutoCloseable {
    private final OneInputStreamOperatorTestHarness<RowData, WriterResult> harness;

    Writer(TableLoader loader) throws Exception {
      this(loader, false);
    }

    /**
     * A first-attempt writer; with {@code insertOnly}, INSERT rows of empty shards skip key
     * deletes.
     */
    Writer(TableLoader loader, boolean insertOnly) throws Exception {
      this.harness =
          new OneInputStreamOperatorTestHarness<>(
              new ShardbergWriter(
                  loader,
                  TestTables.TABLE_NAME,
                  TestTables.ROW_TYPE,
                  TestTables.EQUALITY_COLUMNS,
                  insertOnly));
      harness.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      harness.open();
    }

    WriterResult checkpoint(long checkpointId, RowData... rows) throws Exception {
      for (RowData row : rows) {
        harness.processElement(new StreamRecord<>(row));
      }
      harness.prepareSnapshotPreBarrier(checkpointId);
      List<WriterResult> out = harness.extractOutputValues();
      harness.getOutput().clear();
      if (out.size() != 1) {
        throw new AssertionError("Expected one writer result, got " + out);
      }
      return out.get(0);
    }

    @Override
    public void close() throws Exception {
      harness.close();
    }
  }

  /** The coordinator, with a chosen Flink job id so tests can restore "into another job". */
  static final class Coordinator implements AutoCloseable {
    final OneInputStreamOperatorTestHarness<WriterResult, Void> harness;
    private final MockEnvironment environment;
    private final CommitCoordinator operator;

    Coordinator(TableLoader loader, JobID jobId, CommitGuardFactory guard, int maxEmptyCommits)
        throws Exception {
      this(loader, jobId, guard, maxEmptyCommits, 3);
    }

    Coordinator(
        TableLoader loader,
        JobID jobId,
        CommitGuardFactory guard,
        int maxEmptyCommits,
        int commitAttempts)
        throws Exception {
      this(loader, jobId, guard, maxEmptyCommits, commitAttempts, PIPELINE);
    }

    Coordinator(
        TableLoader loader,
        JobID jobId,
        CommitGuardFactory guard,
        int maxEmptyCommits,
        int commitAttempts,
        String pipelineId)
        throws Exception {
      this(
          loader,
          jobId,
          guard,
          maxEmptyCommits,
          commitAttempts,
          pipelineId,
          MaintenanceSettings.disabled());
    }

    Coordinator(
        TableLoader loader,
        JobID jobId,
        CommitGuardFactory guard,
        int maxEmptyCommits,
        int commitAttempts,
        String pipelineId,
        MaintenanceSettings maintenance)
        throws Exception {
      this(
          loader,
          jobId,
          guard,
          new CoordinatorOptions(
              TestTables.TABLE_NAME,
              pipelineId,
              maxEmptyCommits,
              Duration.ofSeconds(5),
              commitAttempts,
              Duration.ofMillis(10),
              maintenance,
              null,
              null));
    }

    Coordinator(
        TableLoader loader, JobID jobId, CommitGuardFactory guard, CoordinatorOptions options)
        throws Exception {
      this.environment =
          new MockEnvironmentBuilder()
              .setJobID(jobId)
              .setParallelism(1)
              .setMaxParallelism(1)
              .build();
      this.operator = new CommitCoordinator(loader, TestTables.ROW_TYPE, options, guard);
      this.harness =
          new OneInputStreamOperatorTestHarness<>(
              operator, WriterResultTypeInfo.WireSerializer.INSTANCE, environment);
    }

    void add(WriterResult result) throws Exception {
      harness.processElement(new StreamRecord<>(result));
    }

    List<Long> pending() {
      return operator.pendingCheckpointIds();
    }

    java.util.Set<Long> insertOnlyHistoryInUse() {
      return operator.insertOnlyHistoryInUse();
    }

    @Override
    public void close() throws Exception {
      try {
        harness.close();
      } finally {
        environment.close();
      }
    }
  }
}
