package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.coordinator.TestTables.Row;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.coordinator.owner.CommittedRowDeletes;
import dev.shardberg.coordinator.owner.CommittedRows;
import dev.shardberg.coordinator.owner.FilePosition;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.ContentFileUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The exactly-once rules of {@link CheckpointCommitter}, without Flink: a real table on disk, real
 * data files and temporary manifests, committers standing for runs, restores as the state one run
 * hands to the next (its offset, lineage and pending entries). Every outcome is asserted by the
 * table's rows (read failing on a key read twice) and by the pipeline's progress record.
 */
class CheckpointCommitterTest {
  private static final String PIPELINE = "orders-pipeline";
  @TempDir Path warehouse;
  private Table table;

  @BeforeEach
  void createTable() {
    table = TestTables.create(warehouse, 4);
  }

  /** One run: a committer with its own run id; {@code epoch} ≥ 0: fencing on with that epoch. */
  private final class Run {
    final String id = PipelineProgress.newRunId();
    final String flinkJobId;
    final ScriptedGuard guard;
    final CheckpointCommitter committer;

    Run(long epoch, String flinkJobId, int maxEmptyCommits) {
      this(epoch, flinkJobId, maxEmptyCommits, TestTables.load(warehouse));
    }

    /**
     * A run committing to {@code committed} (e.g. the table through fault-injecting operations).
     */
    Run(long epoch, String flinkJobId, int maxEmptyCommits, Table committed) {
      this.flinkJobId = flinkJobId;
      this.guard = new ScriptedGuard(epoch);
      CoordinatorOptions options =
          new CoordinatorOptions(
              TestTables.TABLE_NAME,
              PIPELINE,
              maxEmptyCommits,
              Duration.ofSeconds(5),
              3,
              Duration.ofMillis(10),
              MaintenanceSettings.disabled(),
              null,
              null);
      this.committer =
          new CheckpointCommitter(
              committed,
              epoch < 0 ? NoopCommitGuard.INSTANCE : guard,
              options,
              "shard_number",
              schema ->
                  WriterTableCheck.validateSchema(
                      schema, TestTables.TABLE_NAME, TestTables.ROW_TYPE),
              id,
              flinkJobId,
              CheckpointCommitter.Metrics.NONE);
    }

    Run(long epoch) {
      this(epoch, "flink-job-" + PipelineProgress.newRunId(), 10);
    }

    /** A fresh start on the table (no state): numbered past what the table holds. */
    Run fresh() {
      committer.numberPastTheTable(0);
      return this;
    }

    /** Restored from {@code state}, as the operator restores it. */
    Run restoredFrom(State state) throws Exception {
      committer.restore(state.offset(), state.lineage(), state.pending());
      committer.commitUpTo(Long.MAX_VALUE);
      committer.numberPastTheTable(state.flinkCheckpoint());
      return this;
    }

    /**
     * Stages Flink checkpoint {@code c} with one row per id of {@code shard} (value {@code name}).
     */
    PendingCheckpoint stage(long c, int shard, String name, long... ids) throws IOException {
      return stage(c, ids.length == 0 ? empty(c) : inserts(c, shard, name, ids));
    }

    /** Stages Flink checkpoint {@code c} with one writer's {@code result}. */
    PendingCheckpoint stage(long c, WriterResult result) throws IOException {
      return committer.stage(
          TempManifests.write(
              table, "shardberg-test-" + id, c + committer.offset(), c, id, List.of(result)));
    }

    /** The state a checkpoint at Flink checkpoint {@code c} would keep. */
    State state(long c) {
      return new State(committer.offset(), c, committer.lineageAt(c), committer.pending());
    }

    void commitUpTo(long flinkCheckpoint) throws Exception {
      committer.commitUpTo(flinkCheckpoint + committer.offset());
    }

    List<Long> pending() {
      return committer.pending().stream().map(PendingCheckpoint::checkpointId).toList();
    }
  }

  /** What a retained checkpoint of a run holds. */
  private record State(
      long offset,
      long flinkCheckpoint,
      Map<String, Long> lineage,
      List<PendingCheckpoint> pending) {}

  private WriterResult empty(long c) {
    return new WriterResult(c, 0, WriteResult.builder().build(), Map.of());
  }

  /** A real Parquet data file of {@code shard} per bucket, written without Flink. */
  private WriterResult inserts(long c, int shard, String name, long... ids) throws IOException {
    table.refresh();
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), table.spec());
    Map<PartitionKey, List<Record>> byPartition = new java.util.LinkedHashMap<>();
    for (long id : ids) {
      Record record = GenericRecord.create(table.schema());
      record.setField("shard_number", shard);
      record.setField("id", id);
      record.setField("name", name);
      PartitionKey key = new PartitionKey(table.spec(), table.schema());
      key.partition(
          new org.apache.iceberg.data.InternalRecordWrapper(table.schema().asStruct())
              .wrap(record));
      byPartition.computeIfAbsent(key, k -> new ArrayList<>()).add(record);
    }
    WriteResult.Builder files = WriteResult.builder();
    for (Map.Entry<PartitionKey, List<Record>> partition : byPartition.entrySet()) {
      String location =
          table
              .locationProvider()
              .newDataLocation(
                  table.spec(),
                  partition.getKey(),
                  "test-" + java.util.UUID.randomUUID() + ".parquet");
      DataWriter<Record> writer =
          factory.newDataWriter(
              EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
              FileFormat.PARQUET,
              partition.getKey());
      try (writer) {
        partition.getValue().forEach(writer::write);
      }
      DataFile file = writer.toDataFile();
      files.addDataFiles(file);
    }
    return new WriterResult(c, 0, files.build(), Map.of(shard, new ShardCounts(ids.length, 0)));
  }

  private Set<Row> rows() {
    return TestTables.read(table);
  }

  private static Set<Row> rows(int shard, String name, long... ids) {
    return java.util.Arrays.stream(ids)
        .mapToObj(id -> new Row(shard, id, name))
        .collect(Collectors.toSet());
  }

  private PipelineProgress progress() {
    table.refresh();
    return PipelineProgress.read(table, PIPELINE).orElseThrow();
  }

  private List<Long> committedCheckpoints() {
    table.refresh();
    return TestTables.committedCheckpoints(table);
  }

  @Test
  void eachStagedCheckpointIsCommittedOnceInOrderAndAgainFindsItInTheTable() throws Exception {
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2);
    State afterStaging1 = a.state(1);
    a.stage(2, 1, "b", 3);
    a.commitUpTo(2);
    a.commitUpTo(2); // a late or duplicate notice
    assertThat(committedCheckpoints()).containsExactly(1L, 2L);
    assertThat(a.pending()).isEmpty();

    // A restart from the checkpoint that staged entry 1 finds it in the table: not committed again.
    Run b = new Run(-1).restoredFrom(afterStaging1);
    assertThat(b.pending()).isEmpty();
    assertThat(committedCheckpoints()).containsExactly(1L, 2L);
    assertThat(rows()).isEqualTo(union(rows(1, "a", 1, 2), rows(1, "b", 3)));
    assertThat(progress().covers(a.id, 2)).isTrue();
  }

  /**
   * Issue 26 item 1, without Flink: run A commits 1..3; run B restored from A's chk-1 commits; run
   * C restored from A's chk-2 finds A's entry 2 committed and goes on. With fencing the newest run
   * must not renumber A's committed entry and commit it again.
   */
  @ParameterizedTest(name = "fencing {0}")
  @ValueSource(booleans = {false, true})
  void aRestoreOfAnOlderCheckpointOfARunAfterAnotherRunCommittedSkipsWhatIsInTheTable(
      boolean fencing) throws Exception {
    Run a = new Run(fencing ? 1 : -1).fresh();
    a.stage(1, 1, "a1", 1);
    State aChk1 = a.state(1);
    a.commitUpTo(1);
    a.stage(2, 1, "a2", 2);
    State aChk2 = a.state(2);
    a.commitUpTo(2);
    a.stage(3, 1, "a3", 3);
    a.commitUpTo(3);

    Run b = new Run(fencing ? 2 : -1).restoredFrom(aChk1);
    b.stage(2, 2, "b2", 1);
    b.commitUpTo(2);

    Run c = new Run(fencing ? 3 : -1).restoredFrom(aChk2);
    assertThat(c.pending()).isEmpty(); // A's entry 2 is in the table: skipped
    c.stage(3, 3, "c3", 1);
    c.commitUpTo(3);
    assertThat(rows())
        .isEqualTo(
            union(
                rows(1, "a1", 1),
                rows(1, "a2", 2),
                rows(1, "a3", 3),
                rows(2, "b2", 1),
                rows(3, "c3", 1)));
    PipelineProgress progress = progress();
    assertThat(progress.committedBy()).isEqualTo(c.id);
    assertThat(progress.covers(a.id, 3)).isTrue();
    assertThat(progress.covers(b.id, 2)).isTrue();
  }

  /**
   * A restored entry never committed while another run went on: the superseded branch is refused by
   * name.
   */
  @ParameterizedTest(name = "fencing {0}")
  @ValueSource(booleans = {false, true})
  void restoredStateOfASupersededRunIsRefusedNamingTheRun(boolean fencing) throws Exception {
    Run a = new Run(fencing ? 1 : -1).fresh();
    a.stage(1, 1, "a1", 1);
    State aChk1 = a.state(1);
    a.commitUpTo(1);
    a.stage(2, 1, "a2", 2);
    State aChk2WithEntry2Pending = a.state(2); // chk-2 taken, its completion never came

    Run b = new Run(fencing ? 2 : -1).restoredFrom(aChk1);
    b.stage(2, 2, "b2", 1);
    b.commitUpTo(2);

    Run c = new Run(fencing ? 3 : -1);
    assertThatThrownBy(() -> c.restoredFrom(aChk2WithEntry2Pending))
        .isInstanceOf(PipelineConflictException.class)
        .hasMessageContaining("Cannot commit checkpoint 2 of pipeline " + PIPELINE)
        .hasMessageContaining("it is restored state of superseded run " + a.id)
        .hasMessageContaining("(its Flink checkpoint 2 was never committed)")
        .hasMessageContaining("the table already holds checkpoint 2, committed by run " + b.id)
        .hasMessageContaining("of Flink job " + b.flinkJobId)
        .hasMessageContaining("Restore the job from the newest retained checkpoint or savepoint");
    assertThat(rows()).isEqualTo(union(rows(1, "a1", 1), rows(2, "b2", 1)));
  }

  /**
   * Issue 26 item 3: two deployments with one Flink job id. The run that is behind must not skip
   * its own entries as "already committed"; without fencing it is refused as a second job, with
   * fencing the newest instance numbers its entries past and the older one is fenced.
   */
  @ParameterizedTest(name = "fencing {0}")
  @ValueSource(booleans = {false, true})
  void twoRunsOfOneFlinkJobIdNeverSkipEachOthersCheckpoints(boolean fencing) throws Exception {
    Run older = new Run(fencing ? 1 : -1, "shared-job-id", 10).fresh();
    Run newer = new Run(fencing ? 2 : -1, "shared-job-id", 10).fresh();
    older.stage(1, 1, "older", 1);
    older.stage(2, 1, "older", 2);
    older.commitUpTo(2);
    newer.stage(1, 2, "newer", 1);
    if (!fencing) {
      assertThatThrownBy(() -> newer.commitUpTo(1))
          .isInstanceOf(PipelineConflictException.class)
          .hasMessageContaining("two jobs share pipeline.id");
      assertThat(rows()).isEqualTo(rows(1, "older", 1, 2));
      return;
    }
    newer.commitUpTo(1); // renumbered past the older instance's 2, then committed
    assertThat(committedCheckpoints()).containsExactly(1L, 2L, 3L);
    assertThat(rows()).isEqualTo(union(rows(1, "older", 1, 2), rows(2, "newer", 1)));
    older.stage(3, 1, "older", 3);
    assertThatThrownBy(() -> older.commitUpTo(3))
        .isInstanceOf(CommitFencedException.class)
        .hasMessageContaining("newer epoch 2");
    assertThat(rows()).isEqualTo(union(rows(1, "older", 1, 2), rows(2, "newer", 1)));
  }

  @Test
  void emptyCheckpointsMakeNoSnapshotUntilAHeartbeatIsDue() throws Exception {
    Run a = new Run(-1, "job", 3).fresh();
    a.stage(1, 1, "a", 1);
    a.commitUpTo(1);
    a.stage(2, 1, "unused");
    a.stage(3, 1, "unused");
    a.commitUpTo(3);
    assertThat(committedCheckpoints()).containsExactly(1L);
    a.stage(4, 1, "unused");
    a.commitUpTo(4);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.HEARTBEAT, "true");
    assertThat(progress().checkpointId()).isEqualTo(4L);

    // a data commit restarts the count: the next heartbeat comes 3 empty checkpoints after it
    a.stage(5, 1, "b", 2);
    a.commitUpTo(5);
    for (long c = 6; c <= 8; c++) {
      a.stage(c, 1, "unused");
      a.commitUpTo(c);
    }
    assertThat(committedCheckpoints()).containsExactly(1L, 4L, 5L, 8L);
    assertThat(TestTables.summaries(table).get(2)).doesNotContainKey(SnapshotSummaryKeys.HEARTBEAT);
    assertThat(rows()).isEqualTo(union(rows(1, "a", 1), rows(1, "b", 2)));
  }

  @Test
  void aCheckpointThatCannotTakeTheLockOrIsDisconnectedStaysPendingAndCommitsInOrderLater()
      throws Exception {
    Run a = new Run(1).fresh();
    a.stage(1, 1, "first", 1);
    a.stage(2, 1, "second", 2);
    a.guard.lockTimesOut.set(true);
    a.commitUpTo(2);
    assertThat(a.pending()).containsExactly(1L, 2L);
    assertThat(table.currentSnapshot()).isNull();
    a.guard.lockTimesOut.set(false);
    a.guard.connected.set(false); // ZooKeeper SUSPENDED or LOST: not even tried
    a.commitUpTo(2);
    assertThat(a.pending()).containsExactly(1L, 2L);
    assertThat(table.currentSnapshot()).isNull();
    a.guard.connected.set(true);
    a.commitUpTo(2);
    assertThat(a.pending()).isEmpty();
    assertThat(committedCheckpoints()).containsExactly(1L, 2L);
    assertThat(rows()).isEqualTo(union(rows(1, "first", 1), rows(1, "second", 2)));
  }

  @Test
  void eachCommitRecordsPipelineCheckpointEpochAndPerShardCountsInItsSummary() throws Exception {
    Run a = new Run(7).fresh();
    a.stage(1, 5, "a", 1, 2);
    a.commitUpTo(1);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.PIPELINE_ID, PIPELINE)
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "1")
        .containsEntry(SnapshotSummaryKeys.FLINK_CHECKPOINT_ID, "1")
        .containsEntry(SnapshotSummaryKeys.EPOCH, "7")
        .containsEntry("shardberg.shard.5.added-records", "2")
        .containsEntry("shardberg.shard.5.deleted-records", "0");
    List<CommitRecord> history = CommittedCheckpoints.history(table, PIPELINE, 10);
    assertThat(history).hasSize(1);
    assertThat(history.get(0).checkpointId()).isEqualTo(1);
    assertThat(history.get(0).epoch()).isEqualTo(7);
    assertThat(history.get(0).shardCounts())
        .containsExactlyEntriesOf(Map.of(5, new ShardCounts(2, 0)));
    assertThat(CommittedCheckpoints.maxCommittedCheckpoint(table, PIPELINE)).hasValue(1);
    assertThat(CommittedCheckpoints.maxCommittedCheckpoint(table, "another-pipeline")).isEmpty();
    assertThat(rows()).isEqualTo(rows(5, "a", 1, 2));
  }

  @Test
  void aRunStartedWithoutStateNumbersItsCheckpointsPastTheTablesCommits() throws Exception {
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "v1", 1);
    a.stage(2, 1, "v2", 2);
    a.commitUpTo(2);
    Run b = new Run(-1).fresh();
    b.stage(1, 1, "again", 3);
    b.commitUpTo(1);
    assertThat(committedCheckpoints()).containsExactly(1L, 2L, 3L);
    assertThat(TestTables.summaries(table).get(2))
        .containsEntry(SnapshotSummaryKeys.FLINK_CHECKPOINT_ID, "1");
    assertThat(rows()).isEqualTo(union(rows(1, "v1", 1), rows(1, "v2", 2), rows(1, "again", 3)));
  }

  @Test
  void aTableLayoutThatNoLongerMatchesTheWritersFailsTheCommitClearly() throws Exception {
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1);
    table
        .updateSchema()
        .allowIncompatibleChanges()
        .addRequiredColumn("region", Types.StringType.get())
        .commit();
    assertThatThrownBy(() -> a.commitUpTo(1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Cannot write to table " + TestTables.TABLE_NAME)
        .hasMessageContaining("layout no longer matches")
        .hasMessageContaining("region");
    assertThat(committedCheckpoints()).isEmpty();
  }

  @Test
  void aConflictThatOutlastsIcebergsRetriesIsRetriedAndCommittedOnce() throws Exception {
    table.updateProperties().set(TableProperties.COMMIT_NUM_RETRIES, "0").commit();
    FaultInjection.arm(
        List.of(
            new FaultInjection.Fault(FaultInjection.Point.COMMIT_CONFLICT, 1),
            new FaultInjection.Fault(FaultInjection.Point.COMMIT_CONFLICT, 2)));
    Run a = new Run(-1, "job", 10, faultyTable()).fresh();
    a.stage(1, 1, "a", 1);
    a.commitUpTo(1);
    assertThat(FaultInjection.fired()).hasSize(2);
    assertThat(committedCheckpoints()).containsExactly(1L);
    assertThat(rows()).isEqualTo(rows(1, "a", 1));
  }

  /**
   * The catalog swaps, then reports a conflict (a REST catalog's retried request meeting its own
   * first one). Not committed again, and readable: before, Iceberg took the conflict at its word
   * and deleted the manifest list of the snapshot the table pointed to.
   */
  @Test
  void aCommitThatLandedWhileTheCatalogReportedAConflictIsNotRepeatedByTheRetry() throws Exception {
    table.updateProperties().set(TableProperties.COMMIT_NUM_RETRIES, "0").commit();
    FaultInjection.arm(
        List.of(new FaultInjection.Fault(FaultInjection.Point.LANDED_BUT_REPORTED_CONFLICT, 1)));
    Run a = new Run(-1, "job", 10, faultyTable()).fresh();
    a.stage(1, 1, "a", 1);
    a.commitUpTo(1);
    assertThat(a.pending()).isEmpty();
    assertThat(FaultInjection.fired()).hasSize(1);
    assertThat(committedCheckpoints()).containsExactly(1L);
    assertThat(rows()).isEqualTo(rows(1, "a", 1));
  }

  /** The table through operations that inject the armed faults. */
  private Table faultyTable() {
    TableLoader loader = new FaultInjection.FaultyTableLoader(TestTables.loader(warehouse));
    loader.open();
    return loader.loadTable();
  }

  /**
   * Issue 28: deletes by position of committed rows, as a partition owner writes them. Two pending
   * checkpoints delete rows of one data file: the second's deletion vector is merged with the
   * first's and replaces it in its commit, so the file keeps one vector; a run restored from the
   * state that holds both commits them the same way.
   */
  @Test
  void aDeletionVectorReplacesItsDataFilesPreviousOneInTheCommitThatAddsIt() throws Exception {
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2, 3, 4, 5, 6, 7, 8);
    a.commitUpTo(1);
    table.refresh();
    Map<Long, FilePosition> where = livePositions();
    Map.Entry<String, List<Long>> file =
        where.entrySet().stream()
            .collect(
                Collectors.groupingBy(
                    e -> e.getValue().file(),
                    java.util.TreeMap::new,
                    Collectors.mapping(Map.Entry::getKey, Collectors.toList())))
            .entrySet()
            .stream()
            .filter(e -> e.getValue().size() >= 2)
            .findFirst()
            .orElseThrow();
    long x = file.getValue().get(0);
    long y = file.getValue().get(1);

    WriteResult second = deletes(where.get(x), Map.of());
    DeleteFile firstVector = second.deleteFiles()[0];
    a.stage(2, new WriterResult(2, 0, second, Map.of(1, new ShardCounts(0, 1))));
    WriteResult third = deletes(where.get(y), Map.of(file.getKey(), List.of(firstVector)));
    assertThat(third.rewrittenDeleteFiles()).containsExactly(firstVector);
    a.stage(3, new WriterResult(3, 0, third, Map.of(1, new ShardCounts(0, 1))));
    State both = a.state(3);

    Run b = new Run(-1).restoredFrom(both);
    assertThat(b.pending()).isEmpty();
    assertThat(committedCheckpoints()).containsExactly(1L, 2L, 3L);
    java.util.Set<Long> left = new java.util.TreeSet<>(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L));
    left.removeAll(List.of(x, y));
    assertThat(rows()).isEqualTo(rows(1, "a", left.stream().mapToLong(Long::longValue).toArray()));
    List<DeleteFile> applied = deletesOf(file.getKey());
    assertThat(applied).hasSize(1);
    assertThat(ContentFileUtil.isDV(applied.get(0))).isTrue();
    assertThat(applied.get(0).recordCount()).isEqualTo(2);
  }

  /**
   * Deletes by position whose writers checked their shard up to snapshot S: a commit by someone
   * else to another shard after S, or a manifest rewrite, does not stop them; one to their own
   * shard (an external compaction that moved the rows) refuses the checkpoint — nothing committed,
   * the message names the snapshot and the way on — since the deletes name places the rows left.
   */
  @Test
  void
      deletesByPositionAreCarriedOverByKeyAfterAnotherCommitterChangedTheirShardSinceTheWritersCheck()
          throws Exception {
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2, 3, 4, 10); // 2 and 10 share a bucket (a data file)
    a.stage(2, 2, "a", 11, 12);
    a.commitUpTo(2);
    table.refresh();
    long checkedAt = table.currentSnapshot().snapshotId();
    table.newAppend().appendFile(inserts(9, 2, "foreign", 50).files().dataFiles()[0]).commit();
    table.rewriteManifests().rewriteIf(manifest -> true).commit(); // moves no row
    WriteResult first = deletes(livePositions().get(1L), Map.of());
    a.stage(3, owned(3, first, checkedAt));
    a.commitUpTo(3);
    assertThat(committedCheckpoints()).containsExactly(1L, 2L, 3L);

    // The owners deleted row 2 by its position in the old file; another tool then compacted the
    // shard (row 2 moved) before their checkpoint committed.
    table.refresh();
    long checkedAgain = table.currentSnapshot().snapshotId();
    FilePosition two = livePositions().get(2L);
    List<DeleteFile> previous = deletesOf(two.file());
    WriteResult second = deletes(two, Map.of(two.file(), previous));
    assertThat(ForeignCommits.compactShard(table, 1)).isEqualTo(4);
    a.stage(4, owned(4, second, checkedAgain));
    a.commitUpTo(4);
    assertThat(committedCheckpoints()).containsExactly(1L, 2L, 3L, 4L);
    assertThat(rows())
        .containsExactlyInAnyOrder(
            new Row(1, 3, "a"),
            new Row(1, 4, "a"),
            new Row(1, 10, "a"),
            new Row(2, 11, "a"),
            new Row(2, 12, "a"),
            new Row(2, 50, "foreign"));
    // Row 2's place stays deleted in the compacted file: re-inserted since, key 2 is not looked
    // for again when that file's next deletes are carried over.
    a.stage(5, 1, "b", 2);
    a.commitUpTo(5);
    table.refresh();
    long checkedLast = table.currentSnapshot().snapshotId();
    FilePosition ten = livePositions().get(10L);
    WriteResult third = deletes(ten, Map.of(ten.file(), deletesOf(ten.file())));
    assertThat(ForeignCommits.compactShard(table, 1)).isEqualTo(4);
    a.stage(6, owned(6, third, checkedLast));
    a.commitUpTo(6);
    assertThat(rows())
        .containsExactlyInAnyOrder(
            new Row(1, 2, "b"),
            new Row(1, 3, "a"),
            new Row(1, 4, "a"),
            new Row(2, 11, "a"),
            new Row(2, 12, "a"),
            new Row(2, 50, "foreign"));
    assertAtMostOneDeletionVectorPerLiveDataFile();
  }

  /**
   * The history after the writers' check expired (another pipeline's expiry, an aggressive
   * retention), the check's own snapshot kept: nothing can be told of what happened between, so the
   * checkpoint is carried over by key; its delete lands where the row is. Before, refused.
   */
  @Test
  void deletesByPositionAreCarriedOverByKeyWhenOnlyTheHistoryAfterTheWritersCheckIsGone()
      throws Exception {
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2, 3, 4);
    a.commitUpTo(1);
    table.refresh();
    long checkedAt = table.currentSnapshot().snapshotId();
    WriteResult second = deletes(livePositions().get(2L), Map.of());
    table.newAppend().appendFile(inserts(9, 2, "foreign", 50).files().dataFiles()[0]).commit();
    table.refresh();
    long between = table.currentSnapshot().snapshotId();
    table.rewriteManifests().rewriteIf(manifest -> true).commit();
    table.expireSnapshots().expireSnapshotId(between).commit();
    table.refresh();
    assertThat(table.snapshot(checkedAt)).isNotNull();
    assertThat(table.snapshot(between)).isNull();
    a.stage(2, owned(2, second, checkedAt));
    a.commitUpTo(2);
    assertThat(rows())
        .containsExactlyInAnyOrder(
            new Row(1, 1, "a"), new Row(1, 3, "a"), new Row(1, 4, "a"), new Row(2, 50, "foreign"));
  }

  /**
   * The snapshot a pending checkpoint's owners checked from is in the history the maintenance's
   * expiry keeps until that checkpoint is committed (before, only insert-only checks were kept: an
   * aggressive retention could expire it, and the commit then had to be carried over by key, or was
   * refused when the check's own snapshot was gone).
   */
  @Test
  void thePendingOwnersChecksAreInTheHistoryExpiryKeeps() throws Exception {
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2, 3, 4);
    a.commitUpTo(1);
    table.refresh();
    long checkedAt = table.currentSnapshot().snapshotId();
    a.stage(2, owned(2, deletes(livePositions().get(2L), Map.of()), checkedAt));
    assertThat(a.committer.insertOnlyScansInUse()).contains(checkedAt);
    a.commitUpTo(2);
    assertThat(a.committer.insertOnlyScansInUse()).doesNotContain(checkedAt);
  }

  @Test
  void deletesByPositionAreRefusedWhenTheHistorySinceTheWritersCheckIsGone() throws Exception {
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2, 3, 4);
    a.commitUpTo(1);
    table.refresh();
    long checkedAt = table.currentSnapshot().snapshotId();
    WriteResult second = deletes(livePositions().get(2L), Map.of());
    assertThat(ForeignCommits.compactShard(table, 1)).isEqualTo(4);
    table.refresh();
    long compaction = table.currentSnapshot().snapshotId();
    table.expireSnapshots().expireSnapshotId(checkedAt).commit();
    Set<Row> before = rows();
    a.stage(2, owned(2, second, checkedAt));
    assertThatThrownBy(() -> a.commitUpTo(2))
        .isInstanceOf(PipelineConflictException.class)
        .hasMessageContaining("Cannot commit checkpoint 2 of pipeline " + PIPELINE)
        .hasMessageContaining("shard 1")
        .hasMessageContaining(
            "resume the pipeline from the checkpoint or savepoint of its last commit that landed"
                + " (pipeline checkpoint 1");
    assertThat(committedCheckpoints()).doesNotContain(2L); // checkpoint 1's snapshot expired
    assertThat(rows()).isEqualTo(before).contains(new Row(1, 2, "a"));
    assertThat(compaction).isNotEqualTo(checkedAt);
  }

  /**
   * A checkpoint that removes a shard's files (a shard read again, or truncated) after another
   * committer changed that shard since its writers listed them — a row-level delete (a new delete
   * file on one of the listed files) or a compaction (the listed files replaced by another) —
   * removes the files the shard has now, with the delete files that apply to them, as a delete by
   * shard removes every committed row: the shard's rows are gone and no file of it stays. Before,
   * the checkpoint was refused ("which files the shard has now is not the checkpoint's to say") and
   * the job stopped for the operator (found by the randomized test on RocksDB, seed 20261309, and
   * on the heap too: a foreign delete between the owners' check of a shard and its truncate in the
   * same checkpoint).
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "another committer: {0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"row-level delete", "compaction"})
  void aShardsRemovalAfterAnotherCommittersChangeToItRemovesTheFilesTheShardHasNow(String change)
      throws Exception {
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    Run a = new Run(-1).fresh();
    a.stage(1, 1, "a", 1, 2, 3);
    a.commitUpTo(1);
    table.refresh();
    long listed = table.currentSnapshot().snapshotId();
    List<DataFile> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(task -> files.add(task.file()));
    }
    WriterResult removal =
        new WriterResult(
            2,
            -1,
            WriteResult.builder().build(),
            Map.of(1, new ShardCounts(0, 0)),
            Map.of(),
            Set.of(),
            Map.of(1, listed),
            files);
    if (change.equals("compaction")) {
      assertThat(ForeignCommits.compactShard(table, 1)).isEqualTo(3);
    } else {
      assertThat(ForeignCommits.deleteRows(table, List.of(List.of(1L, 2L)))).isEqualTo(1);
    }
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).isNotEqualTo(listed);
    a.stage(2, removal);
    a.commitUpTo(2);
    assertThat(committedCheckpoints()).contains(2L);
    assertThat(rows()).as("the shard's rows").isEmpty();
    table.refresh();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      assertThat(tasks).as("the shard's live files").isEmpty();
    }
    assertThat(table.currentSnapshot().summary().get("total-delete-files"))
        .as("delete files left in the table")
        .isEqualTo("0");
  }

  /** No live data file of the table has two deletion vectors. */
  private void assertAtMostOneDeletionVectorPerLiveDataFile() throws IOException {
    table.refresh();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        assertThat(task.deletes().stream().filter(ContentFileUtil::isDV).count())
            .as("deletion vectors of %s", task.file().location())
            .isLessThanOrEqualTo(1);
      }
    }
  }

  /** One writer's deletes of shard 1, checked by it up to {@code checkedAt}. */
  private static WriterResult owned(long c, WriteResult deletes, long checkedAt) {
    return new WriterResult(
        c, 0, deletes, Map.of(1, new ShardCounts(0, 1)), Map.of(), Set.of(), Map.of(1, checkedAt));
  }

  /** Where each live row of shard 1 is, by id. */
  private Map<Long, FilePosition> livePositions() throws IOException {
    Map<Long, FilePosition> where = new java.util.TreeMap<>();
    java.util.Set<String> partitions = new java.util.HashSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (partitions.add(table.spec().partitionToPath(task.file().partition()))) {
          CommittedRows.live(
                  table,
                  table.currentSnapshot().snapshotId(),
                  task.file().partition(),
                  java.util.Set.of(1, 2))
              .forEach((key, at) -> where.put(key.get(1, Long.class), at));
        }
      }
    }
    return where;
  }

  /** The deletion vector of one row, as its owner writes it. */
  private WriteResult deletes(FilePosition at, Map<String, List<DeleteFile>> previous) {
    StructLike partition = null;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.file().location().equals(at.file())) {
          partition = task.file().partition();
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    CommittedRowDeletes deletes = new CommittedRowDeletes(table);
    deletes.delete(at, table.spec(), partition);
    DeleteWriteResult written =
        deletes.write(
            format -> OutputFileFactory.builderFor(table, 0, 1).format(format).build(), previous);
    return WriteResult.builder()
        .addDeleteFiles(written.deleteFiles())
        .addRewrittenDeleteFiles(written.rewrittenDeleteFiles())
        .addReferencedDataFiles(written.referencedDataFiles())
        .build();
  }

  /** The delete files a reader applies to {@code file} now. */
  private List<DeleteFile> deletesOf(String file) throws IOException {
    table.refresh();
    List<DeleteFile> deletes = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.file().location().equals(file)) {
          deletes.addAll(task.deletes());
        }
      }
    }
    return deletes;
  }

  @SafeVarargs
  private static Set<Row> union(Set<Row>... sets) {
    Set<Row> all = new java.util.HashSet<>();
    for (Set<Row> s : sets) {
      all.addAll(s);
    }
    return all;
  }
}
