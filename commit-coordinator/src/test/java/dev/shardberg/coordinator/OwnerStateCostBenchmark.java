package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the partition owners' index costs in state ({@code target.delete-mode: position}): one
 * writer subtask writes {@code rows} live rows over {@code partitions} partitions, then its keyed
 * state is snapshotted, and the snapshot's size is reported per live row — the serialized size,
 * which is what a checkpoint stores and what RocksDB keeps on disk (before its compression). Not a
 * timed test: it runs only with {@code -Dbenchmark=true} and prints a markdown table.
 */
class OwnerStateCostBenchmark {
  @TempDir Path warehouse;

  @Test
  void stateBytesPerLiveRow() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    // the harness keeps the snapshot in memory (at most 5 MB): about 25,000 rows
    int shards = Integer.getInteger("benchmark.shards", 4);
    int rowsPerShard = Integer.getInteger("benchmark.rows-per-shard", 6_000);
    Table table = TestTables.create(warehouse, 5);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    try (KeyedOneInputStreamOperatorTestHarness<String, RowData, WriterResult> writer =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new ShardbergWriter(
                TestTables.loader(warehouse),
                TestTables.TABLE_NAME,
                TestTables.ROW_TYPE,
                TestTables.EQUALITY_COLUMNS,
                false,
                false,
                "state-cost"),
            new PartitionKeySelector(table.schema(), table.spec(), TestTables.ROW_TYPE, false),
            Types.STRING)) {
      writer.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      writer.open();
      for (int shard = 0; shard < shards; shard++) {
        for (long id = 0; id < rowsPerShard; id++) {
          writer.processElement(
              new StreamRecord<>(TestTables.row(RowKind.INSERT, shard, id, "name-" + id)));
        }
      }
      writer.prepareSnapshotPreBarrier(1);
      String dataFile = writer.extractOutputValues().get(0).files().dataFiles()[0].location();
      OperatorSubtaskState state = writer.snapshot(1, 1);
      long rows = (long) shards * rowsPerShard;
      long bytes = state.getManagedKeyedState().getStateSize();
      assertThat(bytes).as("keyed state of %d live rows", rows).isPositive();
      System.out.printf(
          "%n| live rows | partitions | keyed state | bytes per live row | data file path |%n"
              + "|---|---|---|---|---|%n| %,d | %d | %,d B | %.1f | %d chars |%n",
          rows, shards * 5, bytes, (double) bytes / rows, dataFile.length());
    }
  }
}
