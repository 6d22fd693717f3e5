package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.TestTables.row;
import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.TestTables.Row;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.util.BucketUtil;
import org.apache.iceberg.util.PropertyUtil;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cost per checkpoint of one writer subtask: Iceberg's stock upsert writer ({@link
 * RowDataTaskWriterFactory}, which opens a data file and an equality-delete file for every
 * partition it touches and deletes the empty one at close) against our {@link DeltaTaskWriter}
 * (files opened on first use, insert-only writes without key deletes). Not a timed test: it runs
 * only with {@code -Dbenchmark=true}, prints markdown tables and asserts only that what each writer
 * wrote, committed, reads back as the expected rows.
 *
 * <p>Three patterns, each on its own fresh Hadoop table on local disk (5 id buckets, Parquet, table
 * defaults unless {@code -Dbenchmark.codec} / {@code -Dbenchmark.page-size} set the Parquet codec
 * and page size), {@code partitions} partitions (shard x bucket) open at once, rows arriving
 * round-robin:
 *
 * <ul>
 *   <li><b>change</b>: per partition {@code upserts} UPDATE_AFTER rows of keys committed earlier
 *       (not written in the same checkpoint) and {@code deletes} DELETE rows;
 *   <li><b>snapshot</b>: per partition {@code rows} INSERT rows of new keys; stock and ours as
 *       upserts (key delete + write, as the stock sink does), ours also insert-only;
 *   <li><b>delete-only</b>: per partition {@code deletes} DELETE rows of committed keys and nothing
 *       else.
 * </ul>
 *
 * <p>Per checkpoint (rows written, then {@code complete()}), medians over {@code checkpoints}
 * rounds after 2 warm-up rounds. Files opened and discarded are counted at the table's {@link
 * FileIO} ({@code newOutputFile} / {@code deleteFile}); files on disk are the new non-checksum
 * files under the table's data directory after {@code complete()}. The last round of each run is
 * committed with a {@link RowDelta} and read back. Heap: live heap after {@code System.gc()}, with
 * every partition open (rows written, before {@code complete()}), less the heap before the writer
 * was opened; median of 3 untimed rounds. At a few partitions the heap figures are mostly noise.
 *
 * <pre>
 * mvn -B -q -o -pl commit-coordinator -am test -Dtest=WriterCostBenchmark \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dbenchmark=true \
 *     [-Dbenchmark.partitions=80] [-Dbenchmark.upserts=30] [-Dbenchmark.deletes=3] \
 *     [-Dbenchmark.rows=1000] [-Dbenchmark.checkpoints=5] [-Dbenchmark.codec=zstd] [-Dbenchmark.page-size=65536]
 * # figures: commit-coordinator/target/surefire-reports/dev.shardberg.coordinator.WriterCostBenchmark-output.txt
 * </pre>
 */
class WriterCostBenchmark {
  private static final int BUCKETS = 5;
  private static final int WARM_UPS = 2;
  private static final int HEAP_ROUNDS = 3;

  @TempDir Path warehouse;

  private int partitions;
  private int upserts;
  private int deletes;
  private int snapshotRows;
  private int checkpoints;

  /** Per bucket, ids in that bucket in ascending order; every shard uses the same ids. */
  private long[][] idsByBucket;

  private final List<String> costLines = new ArrayList<>();
  private final List<String> heapLines = new ArrayList<>();

  @Test
  void writerCostPerCheckpoint() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    partitions = Integer.getInteger("benchmark.partitions", 16 * BUCKETS);
    upserts = Integer.getInteger("benchmark.upserts", 30);
    deletes = Integer.getInteger("benchmark.deletes", 3);
    snapshotRows = Integer.getInteger("benchmark.rows", 1_000);
    checkpoints = Integer.getInteger("benchmark.checkpoints", 5);
    int rounds = WARM_UPS + checkpoints + 1; // + 1: the heap round
    idsByBucket = idsByBucket(Math.max(upserts + deletes, rounds * snapshotRows));

    Pattern change = new Change();
    Pattern snapshot = new Snapshot();
    Pattern deleteOnly = new DeleteOnly();
    run(change, Variant.STOCK_UPSERT);
    run(change, Variant.OURS);
    run(snapshot, Variant.STOCK_UPSERT);
    run(snapshot, Variant.OURS_UPSERT);
    run(snapshot, Variant.OURS_INSERT_ONLY);
    run(deleteOnly, Variant.STOCK_UPSERT);
    run(deleteOnly, Variant.OURS);

    System.out.printf(
        Locale.ROOT,
        "%nWriter cost per checkpoint: %d partitions (partition p: shard p / 5, id bucket p %% 5), change %d upserts + %d deletes,"
            + " snapshot %d inserts, delete-only %d deletes per partition; median of %d checkpoints after %d warm-ups;"
            + " Parquet codec %s, page size %s, local file system %s, max heap %d MiB%n%n",
        partitions,
        upserts,
        deletes,
        snapshotRows,
        deletes,
        checkpoints,
        WARM_UPS,
        System.getProperty("benchmark.codec", "table default"),
        System.getProperty("benchmark.page-size", "table default"),
        System.getProperty("benchmark.local-fs", "Hadoop default (chmod fork per file)"),
        Runtime.getRuntime().maxMemory() / 1048576);
    System.out.println(
        "| pattern | writer | rows/ckpt | ms/ckpt | files opened | discarded | new on disk | data files | eq-delete files"
            + " | pos-delete files | bytes | ms per file opened |");
    System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    costLines.forEach(System.out::println);
    System.out.println();
    System.out.println(
        "| pattern | writer | partitions open | rows written | heap MiB while open | KiB per partition |");
    System.out.println("|---|---|---:|---:|---:|---:|");
    heapLines.forEach(System.out::println);
    System.out.println();
  }

  private void run(Pattern pattern, Variant variant) throws IOException {
    Path dir = warehouse.resolve(pattern.name() + "-" + variant.name());
    Table table = TestTables.create(dir, BUCKETS);
    TestTables.applyBenchmarkParquetOverrides(table);
    pattern.seed(table);
    CountingFileIO io = new CountingFileIO(table.io());
    Table counted =
        new BaseTable(
            new ForwardingTableOperations(((HasTableOperations) table).operations(), io),
            table.name());
    WriterOpener opener = variant.opener(counted);
    Path dataDir = Path.of(table.location().replaceFirst("^file:", ""), "data");

    int measured = checkpoints;
    double[] ms = new double[measured];
    double[] opened = new double[measured];
    double[] discarded = new double[measured];
    double[] onDisk = new double[measured];
    double[] dataFiles = new double[measured];
    double[] eqDeletes = new double[measured];
    double[] posDeletes = new double[measured];
    double[] bytes = new double[measured];
    double[] msPerFile = new double[measured];
    int rowsPerCheckpoint = 0;
    int last = WARM_UPS + checkpoints - 1;
    for (int round = 0; round <= last; round++) {
      List<RowData> rows = pattern.rows(round);
      rowsPerCheckpoint = rows.size();
      long filesBefore = filesUnder(dataDir);
      long createdBefore = io.created;
      long deletedBefore = io.deleted;
      long start = System.nanoTime();
      CheckpointWriter writer = opener.open();
      for (RowData row : rows) {
        writer.write(row);
      }
      WriteResult result = writer.complete();
      long elapsed = System.nanoTime() - start;
      if (round >= WARM_UPS) {
        int i = round - WARM_UPS;
        ms[i] = elapsed / 1e6;
        opened[i] = io.created - createdBefore;
        discarded[i] = io.deleted - deletedBefore;
        onDisk[i] = filesUnder(dataDir) - filesBefore;
        dataFiles[i] = result.dataFiles().length;
        eqDeletes[i] = count(result.deleteFiles(), FileContent.EQUALITY_DELETES);
        posDeletes[i] = count(result.deleteFiles(), FileContent.POSITION_DELETES);
        bytes[i] =
            Arrays.stream(result.dataFiles()).mapToLong(DataFile::fileSizeInBytes).sum()
                + Arrays.stream(result.deleteFiles()).mapToLong(DeleteFile::fileSizeInBytes).sum();
        msPerFile[i] = opened[i] == 0 ? 0 : ms[i] / opened[i];
        assertThat(onDisk[i])
            .as("%s %s: files on disk = files in the write result", pattern.name(), variant.label)
            .isEqualTo(dataFiles[i] + eqDeletes[i] + posDeletes[i]);
      }
      if (round == last) {
        RowDelta delta = table.newRowDelta();
        Arrays.stream(result.dataFiles()).forEach(delta::addRows);
        Arrays.stream(result.deleteFiles()).forEach(delta::addDeletes);
        delta.commit();
        assertThat(TestTables.read(table))
            .as("%s %s: table after committing round %d", pattern.name(), variant.label, round)
            .isEqualTo(pattern.expected(round));
      }
    }
    costLines.add(
        String.format(
            Locale.ROOT,
            "| %s | %s | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f |",
            pattern.name(),
            variant.label,
            rowsPerCheckpoint,
            median(ms),
            median(opened),
            median(discarded),
            median(onDisk),
            median(dataFiles),
            median(eqDeletes),
            median(posDeletes),
            median(bytes),
            median(msPerFile)));

    // Heap with every partition open: separate, untimed rounds (System.gc() would skew the
    // timings).
    List<RowData> rows = pattern.rows(last + 1);
    double[] heap = new double[HEAP_ROUNDS];
    for (int i = 0; i < HEAP_ROUNDS; i++) {
      long base = usedHeap();
      CheckpointWriter writer = opener.open();
      for (RowData row : rows) {
        writer.write(row);
      }
      heap[i] = usedHeap() - base;
      writer.complete();
    }
    double open = median(heap);
    heapLines.add(
        String.format(
            Locale.ROOT,
            "| %s | %s | %d | %d | %.1f | %.1f |",
            pattern.name(),
            variant.label,
            partitions,
            rows.size(),
            open / 1048576.0,
            open / 1024.0 / partitions));
  }

  // --- patterns
  // -----------------------------------------------------------------------------------

  /**
   * The rows of one checkpoint (round), the table's seed, and the table after committing a round.
   */
  private interface Pattern {
    String name();

    void seed(Table table) throws IOException;

    List<RowData> rows(int round);

    Set<Row> expected(int round);
  }

  /** Updates of keys committed earlier plus a few deletes, in every partition. */
  private final class Change implements Pattern {
    @Override
    public String name() {
      return "change";
    }

    @Override
    public void seed(Table table) throws IOException {
      commitInserts(table, perPartition(0, upserts + deletes, RowKind.INSERT, "seed"));
    }

    @Override
    public List<RowData> rows(int round) {
      List<RowData> rows = perPartition(0, upserts, RowKind.UPDATE_AFTER, "c" + round);
      rows.addAll(perPartition(upserts, deletes, RowKind.DELETE, null));
      return rows;
    }

    @Override
    public Set<Row> expected(int round) {
      return asRows(perPartition(0, upserts, RowKind.UPDATE_AFTER, "c" + round));
    }
  }

  /** New keys only (a snapshot read), in every partition; nothing committed before. */
  private final class Snapshot implements Pattern {
    @Override
    public String name() {
      return "snapshot";
    }

    @Override
    public void seed(Table table) {}

    @Override
    public List<RowData> rows(int round) {
      return perPartition(round * snapshotRows, snapshotRows, RowKind.INSERT, "s");
    }

    @Override
    public Set<Row> expected(int round) {
      return asRows(rows(round)); // only the last round is committed
    }
  }

  /** Deletes of committed keys and nothing else, in every partition. */
  private final class DeleteOnly implements Pattern {
    @Override
    public String name() {
      return "delete-only";
    }

    @Override
    public void seed(Table table) throws IOException {
      commitInserts(table, perPartition(0, deletes, RowKind.INSERT, "seed"));
    }

    @Override
    public List<RowData> rows(int round) {
      return perPartition(0, deletes, RowKind.DELETE, null);
    }

    @Override
    public Set<Row> expected(int round) {
      return Set.of();
    }
  }

  /**
   * {@code count} rows per partition, the {@code from}-th to the ({@code from + count - 1})-th id
   * of its bucket, round-robin over the partitions; partition p is shard p / 5, bucket p % 5.
   */
  private List<RowData> perPartition(int from, int count, RowKind kind, String namePrefix) {
    List<RowData> rows = new ArrayList<>(count * partitions);
    for (int j = from; j < from + count; j++) {
      for (int p = 0; p < partitions; p++) {
        long id = idsByBucket[p % BUCKETS][j];
        rows.add(row(kind, p / BUCKETS, id, namePrefix == null ? null : namePrefix + "-" + id));
      }
    }
    return rows;
  }

  private static Set<Row> asRows(List<RowData> rows) {
    Set<Row> set = new HashSet<>();
    for (RowData row : rows) {
      set.add(new Row(row.getInt(0), row.getLong(1), row.getString(2).toString()));
    }
    return set;
  }

  private static long[][] idsByBucket(int perBucket) {
    long[][] ids = new long[BUCKETS][perBucket];
    int[] filled = new int[BUCKETS];
    int full = 0;
    for (long id = 0; full < BUCKETS; id++) {
      int bucket = (BucketUtil.hash(id) & Integer.MAX_VALUE) % BUCKETS;
      if (filled[bucket] < perBucket) {
        ids[bucket][filled[bucket]++] = id;
        if (filled[bucket] == perBucket) {
          full++;
        }
      }
    }
    return ids;
  }

  private static void commitInserts(Table table, List<RowData> rows) throws IOException {
    CheckpointWriter writer = Variant.OURS_INSERT_ONLY.opener(table).open();
    for (RowData row : rows) {
      writer.write(row);
    }
    WriteResult result = writer.complete();
    RowDelta delta = table.newRowDelta();
    Arrays.stream(result.dataFiles()).forEach(delta::addRows);
    delta.commit();
  }

  // --- writers
  // ------------------------------------------------------------------------------------

  /** One checkpoint's writer: rows in, then the checkpoint's files. */
  private interface CheckpointWriter {
    void write(RowData row) throws IOException;

    WriteResult complete() throws IOException;
  }

  /** Opens one checkpoint's writer; set up once per writer subtask, like the operators' open(). */
  private interface WriterOpener {
    CheckpointWriter open();
  }

  private enum Variant {
    STOCK_UPSERT("stock upsert"),
    OURS("ours"),
    OURS_UPSERT("ours upsert"),
    OURS_INSERT_ONLY("ours insert-only");

    final String label;

    Variant(String label) {
      this.label = label;
    }

    WriterOpener opener(Table table) {
      long targetFileSize =
          PropertyUtil.propertyAsLong(
              table.properties(),
              TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
              TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
      FileFormat dataFormat =
          FileFormat.fromString(
              table
                  .properties()
                  .getOrDefault(
                      TableProperties.DEFAULT_FILE_FORMAT,
                      TableProperties.DEFAULT_FILE_FORMAT_DEFAULT));
      Set<Integer> equalityFieldIds =
          WriterTableCheck.validate(
              table, TestTables.TABLE_NAME, TestTables.ROW_TYPE, TestTables.EQUALITY_COLUMNS);
      if (this == STOCK_UPSERT) {
        // As the stock Iceberg sink's writer: upsert mode, every INSERT / UPDATE_AFTER deletes its
        // key.
        RowDataTaskWriterFactory factory =
            new RowDataTaskWriterFactory(
                table,
                TestTables.ROW_TYPE,
                targetFileSize,
                dataFormat,
                table.properties(),
                equalityFieldIds,
                true);
        factory.initialize(0, 0);
        return () -> {
          TaskWriter<RowData> writer = factory.create();
          return new CheckpointWriter() {
            @Override
            public void write(RowData row) throws IOException {
              writer.write(row);
            }

            @Override
            public WriteResult complete() throws IOException {
              return writer.complete();
            }
          };
        };
      }
      // The factory ShardbergWriter.open() uses; rows routed as its processElement() does.
      DeltaTaskWriter.Factory writers =
          DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, equalityFieldIds, 0, 0);
      boolean insertOnly = this == OURS_INSERT_ONLY;
      return () -> {
        DeltaTaskWriter writer = writers.create();
        return new CheckpointWriter() {
          @Override
          public void write(RowData row) {
            switch (row.getRowKind()) {
              case UPDATE_BEFORE -> {}
              case DELETE -> writer.deleteKey(row);
              case INSERT -> {
                if (insertOnly) {
                  writer.insert(row);
                } else {
                  writer.upsert(row);
                }
              }
              default -> writer.upsert(row);
            }
          }

          @Override
          public WriteResult complete() throws IOException {
            return writer.complete();
          }
        };
      };
    }
  }

  // --- measuring
  // ----------------------------------------------------------------------------------

  /** The table's FileIO, counting the files opened for writing and the files deleted. */
  private static final class CountingFileIO implements FileIO {
    private static final long serialVersionUID = 1L;
    private final FileIO delegate;
    long created;
    long deleted;

    CountingFileIO(FileIO delegate) {
      this.delegate = delegate;
    }

    @Override
    public InputFile newInputFile(String path) {
      return delegate.newInputFile(path);
    }

    @Override
    public InputFile newInputFile(String path, long length) {
      return delegate.newInputFile(path, length);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      created++;
      return delegate.newOutputFile(path);
    }

    @Override
    public void deleteFile(String path) {
      deleted++;
      delegate.deleteFile(path);
    }

    @Override
    public Map<String, String> properties() {
      return delegate.properties();
    }
  }

  /** Files under {@code dir}, without Hadoop's checksum files. */
  private static long filesUnder(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(Files::isRegularFile)
          .filter(f -> !f.getFileName().toString().endsWith(".crc"))
          .count();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + dir, e);
    }
  }

  private static long count(DeleteFile[] files, FileContent content) {
    return Arrays.stream(files).filter(f -> f.content() == content).count();
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /**
   * Live heap: the heap pools' usage right after a full collection. Read from the pools' collection
   * usage rather than the current usage, which counts eden regions other threads allocate into
   * meanwhile (noise of several MiB).
   */
  private static long usedHeap() {
    System.gc();
    long used = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        MemoryUsage afterGc = pool.getCollectionUsage();
        used += afterGc != null ? afterGc.getUsed() : pool.getUsage().getUsed();
      }
    }
    return used;
  }
}
