package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.DataWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer that owns its partitions ({@code target.delete-mode: position}), as one keyed subtask on
 * a real table: what it does when someone else commits to a shard it writes.
 */
class PartitionOwnerTest {
  private static final String PIPELINE = "owner-pipeline";

  @TempDir Path warehouse;

  /**
   * Another committer adds a row to shard 1 while this writer's own changes to the shard are not
   * committed yet: the writer can neither trust its index (it does not know the new row) nor read
   * the partition again (the table lacks its own changes). The next change to the shard stops the
   * job, naming the partition, the foreign snapshot and the way on — rather than writing the key a
   * second time.
   */
  /**
   * A data file's position deletes in the writer's state: now a list (its deletion vector, or the
   * position-delete files that apply to it); versions before kept one deletion vector, serialized
   * alone, which a restore still reads.
   */
  @Test
  void aDataFilesPositionDeletesAreReadFromTheStateOfThisVersionAndOfTheOneBefore()
      throws Exception {
    org.apache.iceberg.PartitionSpec spec = org.apache.iceberg.PartitionSpec.unpartitioned();
    org.apache.iceberg.DeleteFile vector =
        org.apache.iceberg.FileMetadata.deleteFileBuilder(spec)
            .ofPositionDeletes()
            .withFormat(org.apache.iceberg.FileFormat.PUFFIN)
            .withPath("/t/data/dv-1.puffin")
            .withFileSizeInBytes(100)
            .withRecordCount(2)
            .withReferencedDataFile("/t/data/a.parquet")
            .withContentOffset(4)
            .withContentSizeInBytes(40)
            .build();
    org.apache.iceberg.DeleteFile positions =
        org.apache.iceberg.FileMetadata.deleteFileBuilder(spec)
            .ofPositionDeletes()
            .withFormat(org.apache.iceberg.FileFormat.PARQUET)
            .withPath("/t/data/pos-1.parquet")
            .withFileSizeInBytes(200)
            .withRecordCount(3)
            .build();

    byte[] before = org.apache.flink.util.InstantiationUtil.serializeObject(vector);
    assertThat(PartitionOwner.deserialize(before))
        .extracting(org.apache.iceberg.DeleteFile::location)
        .containsExactly(vector.location());
    assertThat(PartitionOwner.deserialize(PartitionOwner.serialize(List.of(vector, positions))))
        .extracting(org.apache.iceberg.DeleteFile::location)
        .containsExactly(vector.location(), positions.location());
  }

  /**
   * Another committer writes into a shard while its owner's changes are not committed yet: the
   * owner holds the partition's next changes (no stop), the coordinator carries the owner's
   * checkpoint over by key, and once it has landed the owner reads the partition again and writes
   * what it held, in order — deleting the foreign copy of a key it upserts by position; the held
   * changes are part of the writer's checkpoint (restored here). Before, the job stopped with
   * "changes to it of Flink checkpoint 1 are not committed yet".
   */
  @Test
  void aForeignCommitToAShardWithUncommittedChangesOfItsOwnerIsWaitedForAndFollowed()
      throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    CheckpointCommitter coordinator = coordinator();
    List<WriterResult> first;
    List<WriterResult> second;
    org.apache.flink.runtime.checkpoint.OperatorSubtaskState state;
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer = owner()) {
      writer.processElement(row(RowKind.INSERT, 1, 1, "a"));
      writer.processElement(row(RowKind.INSERT, 2, 5, "other shard"));
      writer.prepareSnapshotPreBarrier(1);
      first = writer.extractOutputValues();
      assertThat(first).hasSize(1);
      assertThat(first.get(0).ownerChecks())
          .as("the shards changed, each checked as of the empty table")
          .containsOnlyKeys(1, 2)
          .containsValues(PendingCheckpoint.NO_SNAPSHOT);

      // someone else writes key 2 of shard 1; checkpoint 1 of the writer is not committed
      table.newAppend().appendFile(dataFile(table, 1, 2, "foreign")).commit();

      // shard 2 was not touched by it: its change goes on; shard 1's changes are held
      writer.processElement(row(RowKind.UPDATE_AFTER, 2, 5, "b"));
      writer.processElement(row(RowKind.UPDATE_AFTER, 1, 2, "mine"));
      writer.processElement(row(RowKind.UPDATE_AFTER, 1, 1, "a2"));
      writer.prepareSnapshotPreBarrier(2); // checkpoint 1 has not landed: still held
      second = writer.extractOutputValues().subList(1, 2);
      assertThat(second.get(0).shardCounts()).containsOnlyKeys(2);
      state = writer.snapshot(2, 2); // the held changes are in the checkpoint
    }

    commit(coordinator, table, 1, first);
    commit(coordinator, table, 2, second);
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(1, 1, "a"),
            new TestTables.Row(1, 2, "foreign"),
            new TestTables.Row(2, 5, "b"));

    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(warehouse, state, 1, 0, null, 2L)) {
      writer.prepareSnapshotPreBarrier(3); // landed: read again, the held changes written
      List<WriterResult> third = writer.extractOutputValues();
      assertThat(third).hasSize(1);
      assertThat(third.get(0).shardCounts()).containsOnlyKeys(1);
      commit(coordinator, table, 3, third);
    }
    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(1, 1, "a2"),
            new TestTables.Row(1, 2, "mine"),
            new TestTables.Row(2, 5, "b"));
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0")).isEqualTo("0");
    }
  }

  /**
   * An owner's rewrite begins at one barrier and is handed over at the next; another tool deletes a
   * row of that partition in between, and the partition gets no change meanwhile. The rewrite kept
   * that row, so it must not be committed: its owner drops it at the hand-over when the table it
   * reads then shows the delete ({@code seenByTheWriter}); when the writer read the table for this
   * checkpoint before the delete (a change to another shard came first), the hand-over carries the
   * check of the shard and the coordinator drops the rewrite, carrying the checkpoint over by key.
   * Either way the deleted row stays deleted. Before, the hand-over carried no check of a partition
   * not changed in its checkpoint and the rewrite brought the row back (found by the randomized
   * test, seed 20261507 with the compaction in flight).
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "delete seen by the writer: {0}")
  @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
  void anOwnersRewriteHandedOverAfterAnotherToolDeletedOneOfItsRowsLeavesTheRowDeleted(
      boolean seenByTheWriter) throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    CheckpointCommitter coordinator = coordinator();
    KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new ShardbergWriter(
                TestTables.loader(warehouse),
                TestTables.TABLE_NAME,
                TestTables.ROW_TYPE,
                TestTables.EQUALITY_COLUMNS,
                false,
                false,
                PIPELINE,
                new PartitionOwner.OwnerCompaction(2, 8, Long.MAX_VALUE),
                1),
            new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
            Types.STRING,
            MAX_PARALLELISM,
            1,
            0);
    try (writer) {
      writer.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      writer.open();
      long[][] steps = {{1, 2}, {3}, {4}};
      for (int c = 1; c <= 3; c++) {
        for (long id : steps[c - 1]) {
          writer.processElement(row(RowKind.INSERT, 1, id, "v" + id));
        }
        writer.processElement(row(RowKind.INSERT, 2, c, "other"));
        writer.prepareSnapshotPreBarrier(c); // the third barrier begins the rewrite of two files
        List<WriterResult> out = writer.extractOutputValues();
        commit(coordinator, table, c, out.subList(c - 1, c));
      }
      if (!seenByTheWriter) {
        // the writer reads the table for checkpoint 4 at this change, before the delete
        writer.processElement(row(RowKind.UPDATE_AFTER, 2, 1, "other again"));
      }
      assertThat(ForeignCommits.deleteRows(table, List.of(List.of(1L, 1L)))).isEqualTo(1);

      writer.prepareSnapshotPreBarrier(4); // hands the rewrite over; no change to the partition
      WriterResult handedOver = writer.extractOutputValues().get(3);
      List<DataFile> shardOneSources =
          handedOver.removedDataFiles().stream()
              .filter(f -> Integer.valueOf(1).equals(f.partition().get(0, Integer.class)))
              .toList();
      if (seenByTheWriter) {
        assertThat(shardOneSources).as("dropped by its owner").isEmpty();
      } else {
        assertThat(shardOneSources).as("the rewrite's sources").isNotEmpty();
        assertThat(handedOver.ownerChecks()).as("the rewrite's check").containsKey(1);
      }
      commit(coordinator, table, 4, List.of(handedOver));
    }
    table.refresh();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(1, 2, "v2"),
            new TestTables.Row(1, 3, "v3"),
            new TestTables.Row(1, 4, "v4"),
            new TestTables.Row(2, 1, seenByTheWriter ? "other" : "other again"),
            new TestTables.Row(2, 2, "other"),
            new TestTables.Row(2, 3, "other"));
  }

  /**
   * A rewrite still running at a barrier does not hold the checkpoint: the barrier commits the
   * partition's changes without it, and so do the next ones, until the owner has fallen behind —
   * the rewrite has passed its bound of barriers ({@code byAge}: three), or the partition has
   * gathered {@code min-small-files} + 4 files since its last compaction (seven, at the seventh
   * barrier) — and the barrier waits for it (the test lets it go on a second later: a barrier that
   * did not wait would find it unfinished). Its hand-over carries the deletes of every checkpoint
   * since it began — an update, a delete, a row updated twice — to the new file, and removes the
   * files it read with the vectors those checkpoints gave them. The table equals the changes after
   * every commit. Before, every barrier waited for the rewrites of the one before, and on two cores
   * that added seconds to every checkpoint of the long run.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "bound by barriers: {0}")
  @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
  void aRewriteStillRunningAtABarrierIsHandedOverAtALaterOneWithTheDeletesOfEveryCheckpointSince(
      boolean byAge) throws Exception {
    int handOverAt = byAge ? 6 : 7;
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    CheckpointCommitter coordinator = coordinator();
    KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        gatedOwner(
            table,
            new PartitionOwner.OwnerCompaction(
                3, 8, Long.MAX_VALUE, Long.MAX_VALUE, byAge ? 3 : 100));
    java.util.Map<Long, String> model = new java.util.TreeMap<>();
    List<DataFile> firstTwo = new java.util.ArrayList<>();
    RewriteGateFileIO.shut();
    try (writer) {
      writer.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      writer.open();
      // c1, c2: two files; c3: a third, and row 1 updated into it; its barrier begins the rewrite
      // of the first two (rows 2..6), held at its first file
      Object[][][] steps = {
        {{RowKind.INSERT, 1L, "v1"}, {RowKind.INSERT, 2L, "v2"}, {RowKind.INSERT, 3L, "v3"}},
        {{RowKind.INSERT, 4L, "v4"}, {RowKind.INSERT, 5L, "v5"}, {RowKind.INSERT, 6L, "v6"}},
        {{RowKind.UPDATE_AFTER, 1L, "v1b"}, {RowKind.INSERT, 7L, "v7"}},
        // while it runs: an update and a delete of rows it read, a delete of a row it did not read
        {{RowKind.UPDATE_AFTER, 2L, "v2b"}, {RowKind.DELETE, 5L, null}, {RowKind.DELETE, 7L, null}},
        // a row updated again, one updated for the first time, one deleted
        {
          {RowKind.UPDATE_AFTER, 2L, "v2c"},
          {RowKind.UPDATE_AFTER, 6L, "v6b"},
          {RowKind.DELETE, 4L, null}
        },
        {{RowKind.INSERT, 8L, "v8"}},
        {{RowKind.INSERT, 9L, "v9"}},
      };
      for (int c = 1; c <= steps.length; c++) {
        for (Object[] change : steps[c - 1]) {
          RowKind kind = (RowKind) change[0];
          long id = (Long) change[1];
          writer.processElement(row(kind, 1, id, (String) change[2]));
          if (kind == RowKind.DELETE) {
            model.remove(id);
          } else {
            model.put(id, (String) change[2]);
          }
        }
        if (c == handOverAt) {
          openInASecond(); // a barrier that does not wait for the rewrite finds it unfinished
        }
        writer.prepareSnapshotPreBarrier(c);
        WriterResult result = writer.extractOutputValues().get(c - 1);
        if (c <= 2) {
          firstTwo.addAll(List.of(result.files().dataFiles()));
        }
        if (c >= 4 && c < handOverAt) {
          assertThat(result.removedDataFiles())
              .as("checkpoint %d: the rewrite still runs, the barrier goes on without it", c)
              .isEmpty();
        }
        commit(coordinator, table, c, List.of(result));
        java.util.Set<TestTables.Row> expected = new java.util.HashSet<>();
        model.forEach((id, name) -> expected.add(new TestTables.Row(1, id, name)));
        assertThat(TestTables.read(table)).as("after checkpoint %d", c).isEqualTo(expected);
        if (c == handOverAt) {
          assertThat(result.removedDataFiles())
              .extracting(DataFile::location)
              .as("handed over at barrier %d: the files of checkpoints 1 and 2", c)
              .containsExactlyInAnyOrderElementsOf(
                  firstTwo.stream().map(DataFile::location).toList());
        }
      }
    } finally {
      RewriteGateFileIO.open();
    }
    java.util.Set<String> live = new java.util.HashSet<>();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        live.add(task.file().location());
        assertThat(task.deletes()).as("deletes of %s", task.file().location()).hasSizeLessThan(2);
      }
    }
    assertThat(live)
        .as("the rewritten files are gone")
        .doesNotContainAnyElementsOf(firstTwo.stream().map(DataFile::location).toList());
    assertThat(live).anyMatch(l -> l.contains(PartitionOwner.COMPACTED_SUFFIX));
  }

  /**
   * Another tool compacts the shard and expires the files it replaced while the owner's rewrite of
   * the partition still waits to read them (an external compaction, another pipeline's expiry with
   * {@code retain-last 1}). The rewrite fails on the missing file; its barrier drops it — the table
   * moved under it, so it would have been dropped anyway — and the partition is read again at its
   * next change: the job goes on and the table equals the changes after every commit, the update
   * made after the foreign commit included. Before, the failed rewrite failed the checkpoint (and
   * the job, into a failover).
   */
  @Test
  void aRewriteWhoseFilesAnotherToolCompactedAndExpiredIsDroppedAndTheJobGoesOn() throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    CheckpointCommitter coordinator = coordinator();
    // each rewrite handed over at the next barrier, waiting for it
    KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        gatedOwner(
            table, new PartitionOwner.OwnerCompaction(3, 8, Long.MAX_VALUE, Long.MAX_VALUE, 1));
    java.util.Map<TestTables.Row, String> model = new java.util.HashMap<>();
    List<DataFile> firstTwo = new java.util.ArrayList<>();
    RewriteGateFileIO.shut();
    try (writer) {
      writer.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      writer.open();
      // {shard, kind, id, name}
      Object[][][] steps = {
        {{1, RowKind.INSERT, 1L, "v1"}, {1, RowKind.INSERT, 2L, "v2"}},
        {{1, RowKind.INSERT, 3L, "v3"}, {1, RowKind.INSERT, 4L, "v4"}},
        // its barrier begins the rewrite of the first two files, held at its first file
        {{1, RowKind.UPDATE_AFTER, 1L, "v1b"}, {1, RowKind.INSERT, 5L, "v5"}},
        // after the foreign compaction and expiry; the rewrite fails, and its barrier (no change
        // to the partition: nothing reads it again first) finds it failed
        {{2, RowKind.INSERT, 1L, "other"}},
        // a change to a row the foreign commit moved, a delete, an insert
        {
          {1, RowKind.UPDATE_AFTER, 3L, "v3b"},
          {1, RowKind.DELETE, 2L, null},
          {1, RowKind.INSERT, 6L, "v6"}
        },
        {{1, RowKind.UPDATE_AFTER, 4L, "v4b"}},
      };
      for (int c = 1; c <= steps.length; c++) {
        if (c == 4) {
          assertThat(ForeignCommits.compactShard(table, 1)).as("rows compacted").isEqualTo(5);
          // the files a snapshot removed are deleted once that snapshot expires: one more commit
          table.newAppend().commit();
          table
              .expireSnapshots()
              .expireOlderThan(System.currentTimeMillis() + 1)
              .retainLast(1)
              .commit();
          for (DataFile file : firstTwo) {
            assertThat(table.io().newInputFile(file.location()).exists())
                .as("expired: %s", file.location())
                .isFalse();
          }
          RewriteGateFileIO.open(); // the rewrite goes on, to a file that is gone
        }
        for (Object[] change : steps[c - 1]) {
          int shard = (Integer) change[0];
          RowKind kind = (RowKind) change[1];
          long id = (Long) change[2];
          writer.processElement(row(kind, shard, id, (String) change[3]));
          if (kind == RowKind.DELETE) {
            model.remove(new TestTables.Row(shard, id, null));
          } else {
            model.put(new TestTables.Row(shard, id, null), (String) change[3]);
          }
        }
        writer.prepareSnapshotPreBarrier(c);
        WriterResult result = writer.extractOutputValues().get(c - 1);
        if (c <= 2) {
          firstTwo.addAll(List.of(result.files().dataFiles()));
        }
        if (c == 4) {
          assertThat(result.removedDataFiles()).as("the failed rewrite is dropped").isEmpty();
        }
        commit(coordinator, table, c, List.of(result));
        java.util.Set<TestTables.Row> expected = new java.util.HashSet<>();
        model.forEach((key, name) -> expected.add(new TestTables.Row(key.shard(), key.id(), name)));
        assertThat(TestTables.read(table)).as("after checkpoint %d", c).isEqualTo(expected);
      }
    } finally {
      RewriteGateFileIO.open();
    }
  }

  /**
   * One owner on the test table whose rewrites read through {@link RewriteGateFileIO} (the table's
   * {@code io-impl}), so a test can hold a rewrite at its first file.
   */
  private KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> gatedOwner(
      Table table, PartitionOwner.OwnerCompaction compaction) throws Exception {
    org.apache.iceberg.flink.TableLoader gated =
        org.apache.iceberg.flink.TableLoader.fromCatalog(
            org.apache.iceberg.flink.CatalogLoader.hadoop(
                "hadoop",
                TestTables.hadoopConf(),
                java.util.Map.of(
                    "warehouse",
                    warehouse.toString(),
                    org.apache.iceberg.CatalogProperties.FILE_IO_IMPL,
                    RewriteGateFileIO.class.getName())),
            TestTables.IDENTIFIER);
    return new KeyedOneInputStreamOperatorTestHarness<>(
        new ShardbergWriter(
            gated,
            TestTables.TABLE_NAME,
            TestTables.ROW_TYPE,
            TestTables.EQUALITY_COLUMNS,
            false,
            false,
            PIPELINE,
            compaction,
            1),
        new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
        Types.STRING,
        MAX_PARALLELISM,
        1,
        0);
  }

  private static void openInASecond() {
    Thread opener =
        new Thread(
            () -> {
              try {
                Thread.sleep(1_000);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              RewriteGateFileIO.open();
            },
            "rewrite-gate-opener");
    opener.setDaemon(true);
    opener.start();
  }

  /** The pipeline's coordinator on the test table, as a fresh start numbers it. */
  private CheckpointCommitter coordinator() {
    CoordinatorOptions options =
        new CoordinatorOptions(
            TestTables.TABLE_NAME,
            PIPELINE,
            10,
            java.time.Duration.ofSeconds(5),
            3,
            java.time.Duration.ofMillis(10),
            dev.shardberg.coordinator.maintenance.MaintenanceSettings.disabled(),
            null,
            null);
    CheckpointCommitter committer =
        new CheckpointCommitter(
            TestTables.load(warehouse),
            NoopCommitGuard.INSTANCE,
            options,
            "shard_number",
            schema ->
                WriterTableCheck.validateSchema(schema, TestTables.TABLE_NAME, TestTables.ROW_TYPE),
            "owner-test-run",
            "owner-test-job",
            CheckpointCommitter.Metrics.NONE);
    committer.numberPastTheTable(0);
    return committer;
  }

  /** Flink checkpoint {@code c}'s results, staged and committed by the coordinator. */
  private static void commit(
      CheckpointCommitter coordinator, Table table, long c, List<WriterResult> results)
      throws Exception {
    coordinator.stage(
        TempManifests.write(
            table, "owner-test", c + coordinator.offset(), c, "owner-test-run", results));
    coordinator.commitUpTo(c + coordinator.offset());
    table.refresh();
  }

  /**
   * A format-v2 table written by position by a version that kept one position-delete file per data
   * file in its state (the last), then upgraded to v3 with that state kept: a v3 reader ignores a
   * data file's position-delete files once it has a deletion vector, so the owner's first vector
   * must hold every one of them. The restored writer reads the partition again at its first change
   * (its state is of an older version) and merges both files' positions. Before, the vector held
   * the state's file only and row 1, deleted by the other file, came back.
   */
  @Test
  void aV2TableUpgradedToV3WithAnOlderWritersStateKeepsTheRowsAllItsPositionDeletesRemoved()
      throws Exception {
    Table table = TestTables.create(warehouse, 1);
    DataFile committed =
        dataFile(
            table,
            List.of(
                new TestTables.Row(1, 1, "a"),
                new TestTables.Row(1, 2, "b"),
                new TestTables.Row(1, 3, "c"),
                new TestTables.Row(1, 4, "d")));
    table.newAppend().appendFile(committed).commit();
    // two checkpoints of the older owner: rows 1 and 2 deleted by a position-delete file each
    org.apache.iceberg.DeleteFile last = null;
    for (long deleted = 0; deleted < 2; deleted++) {
      long position = deleted;
      dev.shardberg.coordinator.owner.CommittedRowDeletes deletes =
          new dev.shardberg.coordinator.owner.CommittedRowDeletes(table);
      deletes.delete(
          new dev.shardberg.coordinator.owner.FilePosition(committed.location(), position),
          table.spec(),
          committed.partition());
      org.apache.iceberg.io.DeleteWriteResult written =
          deletes.write(
              format ->
                  org.apache.iceberg.io.OutputFileFactory.builderFor(table, 0, position)
                      .format(format)
                      .build(),
              java.util.Map.of());
      last = written.deleteFiles().get(0);
      table.newRowDelta().addDeletes(last).commit();
    }
    long snapshot = table.currentSnapshot().snapshotId();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new TestTables.Row(1, 3, "c"), new TestTables.Row(1, 4, "d"));

    org.apache.flink.runtime.checkpoint.OperatorSubtaskState older;
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, Void> writer =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new org.apache.flink.streaming.api.operators.KeyedProcessOperator<>(
                new LegacyIndex(
                    committed.location(),
                    snapshot,
                    org.apache.flink.util.InstantiationUtil.serializeObject(last))),
            new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
            Types.STRING,
            MAX_PARALLELISM,
            1,
            0)) {
      writer.open();
      writer.processElement(row(RowKind.INSERT, 1, 3, null));
      writer.processElement(row(RowKind.INSERT, 1, 4, null));
      older = writer.snapshot(1, 1);
    }
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();

    WriterResult result;
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(older)) {
      writer.processElement(row(RowKind.UPDATE_AFTER, 1, 3, "new"));
      writer.prepareSnapshotPreBarrier(2);
      result = writer.extractOutputValues().get(0);
    }
    commit(table, List.of(result));
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(new TestTables.Row(1, 3, "new"), new TestTables.Row(1, 4, "d"));
  }

  /**
   * A writer restored from the state of a version before the file dictionary (its index kept each
   * row's data file path: {@code shardberg-owner-rows}) restores it, and at the partition's first
   * change reads the partition again from the table (a state of an older version, see the v2 → v3
   * test above): an update of a committed row leaves the key once in the table, with the new value.
   * (The state is restored here: before, this test's older harness had another maximum parallelism,
   * its state never reached the writer, and the test passed on a writer that learned the table.)
   */
  @Test
  void anIndexKeptByAnOlderVersionIsRestoredAndReadAgainAtTheFirstChange() throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    DataFile committed =
        dataFile(
            table,
            List.of(
                new TestTables.Row(1, 1, "a"),
                new TestTables.Row(1, 2, "b"),
                new TestTables.Row(1, 3, "c")));
    table.newAppend().appendFile(committed).commit();
    long snapshot = table.currentSnapshot().snapshotId();

    // the older version's state: one index entry per row, with the file path
    org.apache.flink.runtime.checkpoint.OperatorSubtaskState legacy;
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, Void> older =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new org.apache.flink.streaming.api.operators.KeyedProcessOperator<>(
                new LegacyIndex(committed.location(), snapshot)),
            new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
            Types.STRING,
            MAX_PARALLELISM,
            1,
            0)) {
      older.open();
      for (long id = 1; id <= 3; id++) {
        older.processElement(row(RowKind.INSERT, 1, id, null));
      }
      legacy = older.snapshot(1, 1);
    }

    WriterResult result;
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(legacy)) {
      writer.processElement(row(RowKind.UPDATE_AFTER, 1, 2, "new"));
      writer.prepareSnapshotPreBarrier(2);
      result = writer.extractOutputValues().get(0);
    }
    org.apache.iceberg.RowDelta delta = table.newRowDelta();
    for (DataFile file : result.files().dataFiles()) {
      delta.addRows(file);
    }
    for (org.apache.iceberg.DeleteFile file : result.files().deleteFiles()) {
      delta.addDeletes(file);
    }
    delta.commit();
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(1, 1, "a"),
            new TestTables.Row(1, 2, "new"),
            new TestTables.Row(1, 3, "c"));
  }

  /**
   * A rescale of the writers (2 subtasks restored as 3, and as 1): each partition's index and file
   * dictionary move with its key group to its new owner, which deletes the committed rows by their
   * positions. After updates and deletes of every committed key, the table holds each key once with
   * its new value. (An owner that met a partition without its index would leave every old row
   * beside the new one.)
   */
  @Test
  void aRescaleMovesEachPartitionsIndexWithItsKeyGroup() throws Exception {
    for (int restoredAs : new int[] {3, 1}) {
      java.nio.file.Path dir = warehouse.resolve("rescale-" + restoredAs);
      java.nio.file.Files.createDirectories(dir);
      Table table = TestTables.create(dir, 2);
      table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
      PartitionKeySelector keys =
          new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false);
      List<RowData> inserts = new java.util.ArrayList<>();
      List<RowData> changes = new java.util.ArrayList<>();
      java.util.Set<TestTables.Row> expected = new java.util.HashSet<>();
      for (int shard = 0; shard < 4; shard++) {
        for (long id = 0; id < 10; id++) {
          inserts.add(TestTables.row(RowKind.INSERT, shard, id, "old"));
          if (id % 3 == 0) {
            changes.add(TestTables.row(RowKind.DELETE, shard, id, "old"));
          } else {
            changes.add(TestTables.row(RowKind.UPDATE_AFTER, shard, id, "new"));
            expected.add(new TestTables.Row(shard, id, "new"));
          }
        }
      }
      List<org.apache.flink.runtime.checkpoint.OperatorSubtaskState> states =
          new java.util.ArrayList<>();
      List<WriterResult> first = new java.util.ArrayList<>();
      for (int subtask = 0; subtask < 2; subtask++) {
        try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
            owner(dir, null, 2, subtask)) {
          for (RowData row : routed(inserts, keys, 2, subtask)) {
            writer.processElement(new StreamRecord<>(row));
          }
          writer.prepareSnapshotPreBarrier(1);
          first.addAll(writer.extractOutputValues());
          states.add(writer.snapshot(1, 1));
        }
      }
      // checkpoint 1 is committed only after the rescaled writers' changes, as the coordinator
      // commits a restored pending checkpoint while the writers run: only the moved index knows
      // where its rows are
      org.apache.flink.runtime.checkpoint.OperatorSubtaskState packaged =
          org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness.repackageState(
              states.toArray(new org.apache.flink.runtime.checkpoint.OperatorSubtaskState[0]));
      List<WriterResult> second = new java.util.ArrayList<>();
      for (int subtask = 0; subtask < restoredAs; subtask++) {
        try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
            owner(
                dir,
                org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness
                    .repartitionOperatorState(packaged, MAX_PARALLELISM, 2, restoredAs, subtask),
                restoredAs,
                subtask)) {
          for (RowData row : routed(changes, keys, restoredAs, subtask)) {
            writer.processElement(new StreamRecord<>(row));
          }
          writer.prepareSnapshotPreBarrier(2);
          second.addAll(writer.extractOutputValues());
        }
      }
      commit(table, first);
      commit(table, second);
      assertThat(TestTables.read(table))
          .as("restored as %d writers", restoredAs)
          .containsExactlyInAnyOrderElementsOf(expected);
    }
  }

  /**
   * A shard read again from a fresh snapshot (left out for a run, then planned again): the
   * coordinator removes its old files with the checkpoint of its first snapshot rows, so its owners
   * start its partitions empty — in that run, and in a later run restored from a checkpoint after
   * it for a partition that no row touched since. Shard 1 has rows in two partitions; after its
   * re-read only bucket 0 gets a snapshot row, and bucket 1's first change comes in the next run.
   * Each time the writer deletes no row by position (a deletion vector on a removed file, and an
   * index pointing at files that are gone, is what an owner that kept its old knowledge writes),
   * and the table ends with exactly the rows written since the re-read.
   */
  @Test
  void aShardReadAgainStartsItsPartitionsEmptyAlsoAfterALaterRestore() throws Exception {
    Table table = TestTables.create(warehouse, 2);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    PartitionKeySelector keys =
        new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false);
    long inBucket0 = -1;
    long inBucket1 = -1;
    for (long id = 1; inBucket0 < 0 || inBucket1 < 0; id++) {
      String partition = keys.getKey(TestTables.row(RowKind.INSERT, 1, id, "x"));
      if (partition.endsWith("id_bucket=0") && inBucket0 < 0) {
        inBucket0 = id;
      } else if (partition.endsWith("id_bucket=1") && inBucket1 < 0) {
        inBucket1 = id;
      }
    }
    java.util.SortedSet<Integer> both = new java.util.TreeSet<>(List.of(0, 1));

    // run 1: both shards, one row each in both of shard 1's partitions
    org.apache.flink.runtime.checkpoint.OperatorSubtaskState state;
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(warehouse, null, both, 0)) {
      writer.processElement(row(RowKind.INSERT, 0, 1, "zero"));
      writer.processElement(row(RowKind.INSERT, 1, inBucket0, "old"));
      writer.processElement(row(RowKind.INSERT, 1, inBucket1, "old"));
      writer.prepareSnapshotPreBarrier(1);
      commit(table, writer.extractOutputValues());
      state = writer.snapshot(1, 1);
    }
    // run 2: shard 1 left out; its owner's knowledge of it stays in the keyed state
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(warehouse, state, new java.util.TreeSet<>(List.of(0)), 1)) {
      writer.processElement(row(RowKind.UPDATE_AFTER, 0, 1, "zero2"));
      writer.prepareSnapshotPreBarrier(2);
      commit(table, writer.extractOutputValues());
      state = writer.snapshot(2, 2);
    }
    // run 3: shard 1 planned again, new to the state: read again; a snapshot row in bucket 0 only
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(warehouse, state, both, 2)) {
      writer.processElement(row(RowKind.INSERT, 1, inBucket0, "fresh"));
      writer.prepareSnapshotPreBarrier(3);
      List<WriterResult> results = writer.extractOutputValues();
      assertThat(results)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.freshShards()).containsExactly(1);
                assertThat(r.files().deleteFiles()).as("nothing deleted by position").isEmpty();
              });
      // the coordinator's commit: shard 1's old files leave beside the fresh rows
      commitRemovingShard(table, results, 1);
      state = writer.snapshot(3, 3);
    }
    // run 4, restored after the re-read: shard 1 is known; its bucket 1 was not touched since
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        owner(warehouse, state, both, 3)) {
      writer.processElement(row(RowKind.UPDATE_AFTER, 1, inBucket1, "new"));
      writer.processElement(row(RowKind.UPDATE_AFTER, 1, inBucket0, "fresh2"));
      writer.prepareSnapshotPreBarrier(4);
      List<WriterResult> results = writer.extractOutputValues();
      assertThat(results)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.freshShards()).isEmpty();
                assertThat(r.files().deleteFiles())
                    .as("one deletion vector: the fresh row of bucket 0, on its new file")
                    .hasSize(1)
                    .allSatisfy(
                        dv ->
                            assertThat(dv.referencedDataFile())
                                .contains("shard_number=1/id_bucket=0"));
              });
      commit(table, results);
    }
    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(0, 1, "zero2"),
            new TestTables.Row(1, inBucket0, "fresh2"),
            new TestTables.Row(1, inBucket1, "new"));
  }

  /** As the coordinator commits a checkpoint that reads {@code shard} again. */
  private static void commitRemovingShard(Table table, List<WriterResult> results, int shard)
      throws java.io.IOException {
    table.refresh();
    org.apache.iceberg.RowDelta delta =
        table.newRowDelta().set(SnapshotSummaryKeys.PIPELINE_ID, PIPELINE);
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table
            .newScan()
            .filter(org.apache.iceberg.expressions.Expressions.equal("shard_number", shard))
            .planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        delta.removeRows(task.file());
        task.deletes().forEach(delta::removeDeletes);
      }
    }
    for (WriterResult result : results) {
      for (DataFile file : result.files().dataFiles()) {
        delta.addRows(file);
      }
      for (org.apache.iceberg.DeleteFile file : result.files().deleteFiles()) {
        delta.addDeletes(file);
      }
    }
    delta.commit();
  }

  private static final int MAX_PARALLELISM = 128;

  /** The rows whose partition's key group {@code subtask} of {@code parallelism} owns. */
  private static List<RowData> routed(
      List<RowData> rows, PartitionKeySelector keys, int parallelism, int subtask)
      throws Exception {
    List<RowData> mine = new java.util.ArrayList<>();
    for (RowData row : rows) {
      if (org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
              keys.getKey(row), MAX_PARALLELISM, parallelism)
          == subtask) {
        mine.add(row);
      }
    }
    return mine;
  }

  /**
   * What the coordinator commits of the writers' results, as one row delta marked as this
   * pipeline's (the owners skip their own pipeline's commits when they follow the table).
   */
  private static void commit(Table table, List<WriterResult> results) {
    org.apache.iceberg.RowDelta delta =
        table.newRowDelta().set(SnapshotSummaryKeys.PIPELINE_ID, PIPELINE);
    for (WriterResult result : results) {
      for (DataFile file : result.files().dataFiles()) {
        delta.addRows(file);
      }
      for (org.apache.iceberg.DeleteFile file : result.files().deleteFiles()) {
        delta.addDeletes(file);
      }
      for (org.apache.iceberg.DeleteFile file : result.files().rewrittenDeleteFiles()) {
        delta.removeDeletes(file);
      }
    }
    delta.commit();
  }

  /** The index packs a row's file id and position into one long, both whole, or refuses. */
  @Test
  void theIndexPacksAFileIdAndAPositionIntoOneLong() {
    long packed = PartitionOwner.pack(Integer.MAX_VALUE, (1L << 32) - 1);
    assertThat(PartitionOwner.fileIdOf(packed)).isEqualTo(Integer.MAX_VALUE);
    assertThat(PartitionOwner.positionOf(packed)).isEqualTo((1L << 32) - 1);
    assertThat(PartitionOwner.positionOf(PartitionOwner.pack(7, 0))).isZero();
    assertThat(PartitionOwner.fileIdOf(PartitionOwner.pack(7, 0))).isEqualTo(7);
    assertThatThrownBy(() -> PartitionOwner.pack(0, 1L << 32))
        .hasMessageContaining("Cannot index row position 4294967296 of data file 0");
  }

  /** Writes the index as versions before the file dictionary did, for every row it gets. */
  private static final class LegacyIndex
      extends org.apache.flink.streaming.api.functions.KeyedProcessFunction<String, RowData, Void> {
    private final String file;
    private final long snapshot;
    private transient org.apache.flink.api.common.state.MapState<
            String, org.apache.flink.api.java.tuple.Tuple2<String, Long>>
        rows;
    private transient org.apache.flink.api.common.state.ValueState<Long> indexedAt;
    private final byte[] vector;
    private transient org.apache.flink.api.common.state.MapState<String, byte[]> vectors;

    LegacyIndex(String file, long snapshot) {
      this(file, snapshot, null);
    }

    /** With {@code vector}: the file's one delete file as versions before kept it (serialized). */
    LegacyIndex(String file, long snapshot, byte[] vector) {
      this.file = file;
      this.snapshot = snapshot;
      this.vector = vector;
    }

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext context) {
      rows =
          getRuntimeContext()
              .getMapState(
                  new org.apache.flink.api.common.state.MapStateDescriptor<>(
                      "shardberg-owner-rows", Types.STRING, Types.TUPLE(Types.STRING, Types.LONG)));
      indexedAt =
          getRuntimeContext()
              .getState(
                  new org.apache.flink.api.common.state.ValueStateDescriptor<>(
                      "shardberg-owner-indexed-at", Types.LONG));
      vectors =
          getRuntimeContext()
              .getMapState(
                  new org.apache.flink.api.common.state.MapStateDescriptor<>(
                      "shardberg-owner-vectors",
                      Types.STRING,
                      org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo
                          .BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
    }

    @Override
    public void processElement(
        RowData row, Context context, org.apache.flink.util.Collector<Void> out) throws Exception {
      org.apache.iceberg.Schema keys =
          org.apache.iceberg.types.TypeUtil.select(
              TestTables.SCHEMA, java.util.Set.copyOf(TestTables.SCHEMA.identifierFieldIds()));
      Record key = GenericRecord.create(keys);
      key.setField("shard_number", row.getInt(0));
      key.setField("id", row.getLong(1));
      String encoded =
          new dev.shardberg.coordinator.owner.KeyCodec(keys.asStruct())
              .encode(new InternalRecordWrapper(keys.asStruct()).wrap(key));
      if (row.getRowKind() == RowKind.INSERT) {
        rows.put(encoded, org.apache.flink.api.java.tuple.Tuple2.of(file, row.getLong(1) - 1));
      }
      indexedAt.update(snapshot);
      if (vector != null) {
        vectors.put(file, vector);
      }
    }
  }

  private KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner()
      throws Exception {
    return owner(null);
  }

  private KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner(
      org.apache.flink.runtime.checkpoint.OperatorSubtaskState restored) throws Exception {
    return owner(warehouse, restored, 1, 0);
  }

  /**
   * The one writer subtask on the table under {@code dir}, writing the shards {@code planned},
   * restored from {@code restored} of Flink checkpoint {@code restoredCheckpoint} (0: none).
   */
  private static KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner(
      java.nio.file.Path dir,
      org.apache.flink.runtime.checkpoint.OperatorSubtaskState restored,
      java.util.SortedSet<Integer> planned,
      long restoredCheckpoint)
      throws Exception {
    return owner(dir, restored, 1, 0, planned, restoredCheckpoint);
  }

  /** Writer subtask {@code subtask} of {@code parallelism}, on the table under {@code dir}. */
  private static KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner(
      java.nio.file.Path dir,
      org.apache.flink.runtime.checkpoint.OperatorSubtaskState restored,
      int parallelism,
      int subtask)
      throws Exception {
    return owner(dir, restored, parallelism, subtask, null);
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner(
      java.nio.file.Path dir,
      org.apache.flink.runtime.checkpoint.OperatorSubtaskState restored,
      int parallelism,
      int subtask,
      java.util.SortedSet<Integer> planned)
      throws Exception {
    return owner(dir, restored, parallelism, subtask, planned, null);
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner(
      java.nio.file.Path dir,
      org.apache.flink.runtime.checkpoint.OperatorSubtaskState restored,
      int parallelism,
      int subtask,
      java.util.SortedSet<Integer> planned,
      Long restoredCheckpoint)
      throws Exception {
    Table table = TestTables.load(dir);
    KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new ShardbergWriter(
                    TestTables.loader(dir),
                    TestTables.TABLE_NAME,
                    TestTables.ROW_TYPE,
                    TestTables.EQUALITY_COLUMNS,
                    false,
                    false,
                    PIPELINE)
                .plannedShards(planned),
            new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
            Types.STRING,
            MAX_PARALLELISM,
            parallelism,
            subtask);
    harness.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
    if (restored != null) {
      if (restoredCheckpoint != null) {
        harness.setRestoredCheckpointId(restoredCheckpoint);
      }
      harness.initializeState(restored);
    }
    harness.open();
    return harness;
  }

  private static StreamRecord<RowData> row(RowKind kind, int shard, long id, String name) {
    return new StreamRecord<>(TestTables.row(kind, shard, id, name));
  }

  /** A data file of one row, as another tool would write it. */
  private static DataFile dataFile(Table table, int shard, long id, String name)
      throws java.io.IOException {
    return dataFile(table, List.of(new TestTables.Row(shard, id, name)));
  }

  /** A data file of {@code rows} (one partition), in that order, as another tool would write it. */
  private static DataFile dataFile(Table table, List<TestTables.Row> rows)
      throws java.io.IOException {
    List<Record> records = new java.util.ArrayList<>();
    for (TestTables.Row row : rows) {
      Record record = GenericRecord.create(table.schema());
      record.setField("shard_number", row.shard());
      record.setField("id", row.id());
      record.setField("name", row.name());
      records.add(record);
    }
    PartitionKey partition = new PartitionKey(table.spec(), table.schema());
    partition.partition(new InternalRecordWrapper(table.schema().asStruct()).wrap(records.get(0)));
    String location =
        table.locationProvider().newDataLocation(table.spec(), partition, "foreign.parquet");
    DataWriter<Record> writer =
        new GenericAppenderFactory(table.schema(), table.spec())
            .newDataWriter(
                EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
                FileFormat.PARQUET,
                partition);
    try (writer) {
      records.forEach(writer::write);
    }
    return writer.toDataFile();
  }
}
