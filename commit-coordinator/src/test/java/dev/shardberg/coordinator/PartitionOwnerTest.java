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
  @Test
  void aForeignCommitToAShardWithUncommittedChangesOfItsOwnerStopsTheWriterClearly()
      throws Exception {
    Table table = TestTables.create(warehouse, 1);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer = owner()) {
      writer.processElement(row(RowKind.INSERT, 1, 1, "a"));
      writer.processElement(row(RowKind.INSERT, 2, 5, "other shard"));
      writer.prepareSnapshotPreBarrier(1);
      List<WriterResult> first = writer.extractOutputValues();
      assertThat(first).hasSize(1);
      assertThat(first.get(0).ownerChecks())
          .as("the shards changed, each checked as of the empty table")
          .containsOnlyKeys(1, 2)
          .containsValues(PendingCheckpoint.NO_SNAPSHOT);

      // someone else writes key 2 of shard 1; checkpoint 1 of the writer is not committed
      table.newAppend().appendFile(dataFile(table, 1, 2, "foreign")).commit();
      table.refresh();
      long foreign = table.currentSnapshot().snapshotId();

      // shard 2 was not touched by it: its change goes on
      writer.processElement(row(RowKind.UPDATE_AFTER, 2, 5, "b"));
      assertThatThrownBy(() -> writer.processElement(row(RowKind.UPDATE_AFTER, 1, 2, "mine")))
          .isInstanceOf(PipelineConflictException.class)
          .hasMessageContaining("Cannot write partition shard_number=1/id_bucket=0 of table")
          .hasMessageContaining(
              "snapshot " + foreign + " (operation append, not a Shardberg commit) added")
          .hasMessageContaining("changes to it of Flink checkpoint 1 are not committed yet")
          .hasMessageContaining("Stop the other writer of shard 1");
    }
  }

  private KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> owner()
      throws Exception {
    Table table = TestTables.load(warehouse);
    KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new ShardbergWriter(
                TestTables.loader(warehouse),
                TestTables.TABLE_NAME,
                TestTables.ROW_TYPE,
                TestTables.EQUALITY_COLUMNS,
                false,
                false,
                PIPELINE),
            new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
            Types.STRING);
    harness.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
    harness.open();
    return harness;
  }

  private static StreamRecord<RowData> row(RowKind kind, int shard, long id, String name) {
    return new StreamRecord<>(TestTables.row(kind, shard, id, name));
  }

  /** A data file of one row, as another tool would write it. */
  private static DataFile dataFile(Table table, int shard, long id, String name)
      throws java.io.IOException {
    Record record = GenericRecord.create(table.schema());
    record.setField("shard_number", shard);
    record.setField("id", id);
    record.setField("name", name);
    PartitionKey partition = new PartitionKey(table.spec(), table.schema());
    partition.partition(new InternalRecordWrapper(table.schema().asStruct()).wrap(record));
    String location =
        table.locationProvider().newDataLocation(table.spec(), partition, "foreign.parquet");
    DataWriter<Record> writer =
        new GenericAppenderFactory(table.schema(), table.spec())
            .newDataWriter(
                EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
                FileFormat.PARQUET,
                partition);
    try (writer) {
      writer.write(record);
    }
    return writer.toDataFile();
  }
}
