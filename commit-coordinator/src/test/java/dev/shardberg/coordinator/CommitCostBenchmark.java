package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.TestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.OperatorHarnesses.Coordinator;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.io.WriteResult;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commit cost as the number of files per checkpoint grows, and writer heap with 640 open
 * partitions. Not a timed test: it runs only with {@code -Dbenchmark=true} and prints its figures.
 *
 * <pre>
 * mvn -B -q -pl commit-coordinator -am test -Dtest=CommitCostBenchmark \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dbenchmark=true
 * # figures: commit-coordinator/target/surefire-reports/dev.shardberg.coordinator.CommitCostBenchmark-output.txt
 * </pre>
 */
class CommitCostBenchmark {
  private static final int SHARDS = 128;
  private static final int BUCKETS = 5;
  private static final int CHECKPOINTS = 4;

  @TempDir Path warehouse;

  @Test
  void commitCostByFilesPerCheckpoint() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    System.out.println(
        "files/checkpoint (data+delete) | snapshot ms | commit ms | state bytes | heap MiB collected | heap MiB staged");
    for (int files : List.of(64, 640, 6400)) {
      Path dir = warehouse.resolve("n" + files);
      Table table = TestTables.create(dir, BUCKETS);
      long snapshotMs = 0;
      long commitMs = 0;
      long stateBytes = 0;
      long heapCollected = 0;
      long heapStaged = 0;
      try (Coordinator coordinator =
          new Coordinator(TestTables.loader(dir), new JobID(), CommitGuardFactory.none(), 10)) {
        coordinator.harness.open();
        for (long checkpoint = 1; checkpoint <= CHECKPOINTS; checkpoint++) {
          long base = usedHeap();
          coordinator.harness.processElement(
              new StreamRecord<>(fabricated(table, checkpoint, files)));
          long collected = usedHeap() - base;
          long start = System.nanoTime();
          OperatorSubtaskState state = coordinator.harness.snapshot(checkpoint, checkpoint);
          long snapshotted = System.nanoTime();
          long staged = usedHeap() - base;
          coordinator.harness.notifyOfCompletedCheckpoint(checkpoint);
          long committed = System.nanoTime();
          if (checkpoint > 1) { // the first round warms up the JIT
            snapshotMs += (snapshotted - start) / 1_000_000;
            commitMs += (committed - snapshotted) / 1_000_000;
            stateBytes += state.getStateSize();
            heapCollected += collected;
            heapStaged += staged;
          }
        }
      }
      int rounds = CHECKPOINTS - 1;
      assertThat(TestTables.committedCheckpoints(table)).hasSize(CHECKPOINTS);
      System.out.printf(
          Locale.ROOT,
          "%d (%d+%d) | %d | %d | %d | %.1f | %.1f%n",
          2 * files,
          files,
          files,
          snapshotMs / rounds,
          commitMs / rounds,
          stateBytes / rounds,
          heapCollected / rounds / 1048576.0,
          heapStaged / rounds / 1048576.0);
    }
  }

  @Test
  void writerHeapWith640OpenPartitions() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    Table table = TestTables.create(warehouse, BUCKETS);
    TestTables.applyBenchmarkParquetOverrides(table);
    int shards = Integer.getInteger("benchmark.partitions", SHARDS * BUCKETS) / BUCKETS;
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    RowDataWrapper wrapper = new RowDataWrapper(TestTables.ROW_TYPE, table.schema().asStruct());
    List<RowData> rows = new ArrayList<>();
    Map<String, Integer> perPartition = new HashMap<>();
    for (int shard = 0; shard < shards; shard++) {
      for (long id = 0; perPartitionCount(perPartition, shard) < BUCKETS * 4; id++) {
        RowData row = row(RowKind.INSERT, shard, id, "name-" + id);
        key.partition(wrapper.wrap(row));
        String path = table.spec().partitionToPath(key);
        if (perPartition.merge(path, 1, Integer::sum) <= 4) {
          rows.add(row);
        }
        if (id > 10_000) {
          break;
        }
      }
    }
    OneInputStreamOperatorTestHarness<RowData, WriterResult> harness =
        new OneInputStreamOperatorTestHarness<>(
            new ShardbergWriter(
                TestTables.loader(warehouse),
                TestTables.TABLE_NAME,
                TestTables.ROW_TYPE,
                TestTables.EQUALITY_COLUMNS,
                false));
    harness.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
    harness.open();
    long base = usedHeap();
    for (RowData row : rows) {
      harness.processElement(new StreamRecord<>(row));
    }
    long open = usedHeap() - base;
    long start = System.nanoTime();
    harness.prepareSnapshotPreBarrier(1);
    long flushMs = (System.nanoTime() - start) / 1_000_000;
    WriterResult result = harness.extractOutputValues().get(0);
    harness.close();
    System.out.printf(
        Locale.ROOT,
        "writer (codec %s, page size %s): %d partitions open, %d rows, heap %.1f MiB while open (%.0f KiB per partition), flush %d ms, %d data + %d delete files%n",
        table.properties().getOrDefault(TableProperties.PARQUET_COMPRESSION, "default"),
        table.properties().getOrDefault(TableProperties.PARQUET_PAGE_SIZE_BYTES, "default"),
        perPartition.size(),
        rows.size(),
        open / 1048576.0,
        open / 1024.0 / perPartition.size(),
        flushMs,
        result.files().dataFiles().length,
        result.files().deleteFiles().length);
  }

  private static int perPartitionCount(Map<String, Integer> perPartition, int shard) {
    int sum = 0;
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
      sum +=
          Math.min(
              4, perPartition.getOrDefault("shard_number=" + shard + "/id_bucket=" + bucket, 0));
    }
    return sum;
  }

  /** {@code files} data files and as many equality-delete files, spread over 128 x 5 partitions. */
  private static WriterResult fabricated(Table table, long checkpoint, int files) {
    PartitionSpec spec = table.spec();
    WriteResult.Builder builder = WriteResult.builder();
    Map<Integer, ShardCounts> counts = new HashMap<>();
    for (int i = 0; i < files; i++) {
      int shard = i % SHARDS;
      int bucket = (i / SHARDS) % BUCKETS;
      String partition = "shard_number=" + shard + "/id_bucket=" + bucket;
      String prefix = table.location() + "/data/" + partition + "/c" + checkpoint + "-" + i;
      DataFile data =
          DataFiles.builder(spec)
              .withPath(prefix + "-data.parquet")
              .withFormat(FileFormat.PARQUET)
              .withPartitionPath(partition)
              .withFileSizeInBytes(64 * 1024)
              .withRecordCount(100)
              .build();
      DeleteFile deletes =
          FileMetadata.deleteFileBuilder(spec)
              .ofEqualityDeletes(1, 2)
              .withPath(prefix + "-eq-deletes.parquet")
              .withFormat(FileFormat.PARQUET)
              .withPartitionPath(partition)
              .withFileSizeInBytes(4 * 1024)
              .withRecordCount(100)
              .build();
      builder.addDataFiles(data).addDeleteFiles(deletes);
      counts.merge(shard, new ShardCounts(100, 0), ShardCounts::plus);
    }
    return new WriterResult(checkpoint, 0, builder.build(), counts);
  }

  private static long usedHeap() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }
}
