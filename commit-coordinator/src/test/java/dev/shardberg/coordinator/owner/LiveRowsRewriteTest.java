package dev.shardberg.coordinator.owner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The owners' rewrite copies the kept rows of a partition's files into one new file, value for
 * value, whichever row model it copies them with: Flink rows (strings and timestamps never decoded)
 * for the types Flink holds exactly, Iceberg's generic records otherwise (a TIME column: Flink
 * keeps milliseconds, a file may hold microseconds). Real Parquet files of a real table, read back
 * by Iceberg's generic reader.
 */
class LiveRowsRewriteTest {
  private static final Schema WIDE =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.optional(3, "name", Types.StringType.get()),
          Types.NestedField.optional(4, "amount", Types.DecimalType.of(12, 2)),
          Types.NestedField.optional(5, "big_amount", Types.DecimalType.of(30, 6)),
          Types.NestedField.optional(6, "quantity", Types.IntegerType.get()),
          Types.NestedField.optional(7, "ratio", Types.DoubleType.get()),
          Types.NestedField.optional(8, "flag", Types.BooleanType.get()),
          Types.NestedField.optional(9, "day", Types.DateType.get()),
          Types.NestedField.optional(10, "updated_at", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(11, "created_at", Types.TimestampType.withZone()),
          Types.NestedField.optional(12, "payload", Types.BinaryType.get()),
          Types.NestedField.optional(13, "ratio32", Types.FloatType.get()));

  private static final Schema WITH_TIME =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.optional(3, "opens_at", Types.TimeType.get()));

  @TempDir Path warehouse;

  @Test
  void copiesTheKeptRowsOfEachFileValueForValueAsFlinkRows() throws Exception {
    Table table = create(WIDE, "wide");
    assertThat(LiveRowsRewrite.flinkRowsFit(WIDE)).isTrue();
    List<Record> first = List.of(wide(0), wide(1), wide(2), wide(3));
    List<Record> second = List.of(wide(4), wide(5));
    DataFile a = append(table, first);
    DataFile b = append(table, second);
    SortedMap<String, long[]> keep = new TreeMap<>();
    keep.put(a.location(), new long[] {0, 2, 3});
    keep.put(b.location(), new long[] {1});
    boolean aFirst = a.location().compareTo(b.location()) < 0;

    for (boolean flinkRows : new boolean[] {true, false}) {
      LiveRowsRewrite.Result result =
          LiveRowsRewrite.rewrite(
              table, table.spec(), partition(table, WIDE), keep, files(table), flinkRows);

      List<Record> kept =
          aFirst
              ? List.of(first.get(0), first.get(2), first.get(3), second.get(1))
              : List.of(second.get(1), first.get(0), first.get(2), first.get(3));
      assertThat(read(table, result.written())).as("flinkRows=%s", flinkRows).isEqualTo(kept);
      assertThat(result.written().recordCount()).isEqualTo(4);
      assertThat(result.rows()).isEqualTo(4);
      assertThat(result.removed())
          .as("in the order they were read: the order of their paths")
          .extracting(DataFile::location, DataFile::recordCount)
          .containsExactlyElementsOf(
              aFirst
                  ? List.of(
                      org.assertj.core.groups.Tuple.tuple(a.location(), 4L),
                      org.assertj.core.groups.Tuple.tuple(b.location(), 2L))
                  : List.of(
                      org.assertj.core.groups.Tuple.tuple(b.location(), 2L),
                      org.assertj.core.groups.Tuple.tuple(a.location(), 4L)));
    }
  }

  /**
   * A source file gone by the time the rewrite reaches it (another tool compacted the partition and
   * expired the file) fails the rewrite, and the new file it had begun with the rows of the files
   * before is deleted, not left to orphan-file removal. Before, it stayed on disk.
   */
  @Test
  void aSourceFileGoneFailsTheRewriteAndLeavesNoNewFile() throws Exception {
    Table table = create(WIDE, "gone");
    DataFile a = append(table, List.of(wide(0), wide(1)));
    DataFile b = append(table, List.of(wide(2), wide(3)));
    DataFile first = a.location().compareTo(b.location()) < 0 ? a : b;
    DataFile second = first == a ? b : a;
    SortedMap<String, long[]> keep = new TreeMap<>();
    keep.put(first.location(), new long[] {0, 1});
    keep.put(second.location(), new long[] {0, 1});
    table.io().deleteFile(second.location());
    java.util.Set<Path> before = parquetFiles();

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                LiveRowsRewrite.rewrite(
                    table, table.spec(), partition(table, WIDE), keep, files(table)))
        .hasMessageContaining(second.location().replaceFirst("^file:", ""));
    assertThat(parquetFiles()).as("the data files on disk").isEqualTo(before);
  }

  private java.util.Set<Path> parquetFiles() throws IOException {
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(warehouse)) {
      return files
          .filter(f -> f.toString().endsWith(".parquet"))
          .collect(java.util.stream.Collectors.toSet());
    }
  }

  /** An index that names a position its file does not have stops the rewrite, naming both. */
  @Test
  void aPositionTheFileDoesNotHaveStopsTheRewrite() throws Exception {
    Table table = create(WIDE, "short");
    DataFile file = append(table, List.of(wide(0), wide(1)));
    SortedMap<String, long[]> keep = new TreeMap<>();
    keep.put(file.location(), new long[] {1, 2});

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                LiveRowsRewrite.rewrite(
                    table, table.spec(), partition(table, WIDE), keep, files(table)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(file.location())
        .hasMessageContaining(
            "1 of its 2 live positions are not among its 2 rows (from position 2");
  }

  @Test
  void aTimeColumnIsCopiedAsGenericRecordsKeepingItsMicroseconds() throws Exception {
    Table table = create(WITH_TIME, "timed");
    assertThat(LiveRowsRewrite.flinkRowsFit(WITH_TIME)).isFalse();
    Record row = GenericRecord.create(WITH_TIME);
    row.setField("shard_number", 0);
    row.setField("id", 7L);
    row.setField("opens_at", LocalTime.of(8, 59, 59, 123_456_000));
    DataFile file = append(table, List.of(row));
    SortedMap<String, long[]> keep = new TreeMap<>();
    keep.put(file.location(), new long[] {0});

    LiveRowsRewrite.Result result =
        LiveRowsRewrite.rewrite(
            table, table.spec(), partition(table, WITH_TIME), keep, files(table));

    assertThat(read(table, result.written())).containsExactly(row);
  }

  /**
   * The rewrite's cost by row model: one partition of {@code benchmark.rewrite-rows} rows (default
   * 50,000, a partition of the issue 28 long run) shaped like the bench's orders, rewritten whole
   * with each model in turn; prints the medians and their ratio. Not a timed test: it runs only
   * with {@code -Dbenchmark=true}.
   */
  @Test
  void rewriteCostByRowModel() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    int rows = Integer.getInteger("benchmark.rewrite-rows", 50_000);
    int rounds = Integer.getInteger("benchmark.rounds", 7);
    Table table = create(WIDE, "bench");
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      records.add(wide(i));
    }
    DataFile file = append(table, records);
    long[] all = new long[rows];
    for (int p = 0; p < rows; p++) {
      all[p] = p;
    }
    SortedMap<String, long[]> keep = new TreeMap<>(Map.of(file.location(), all));
    long[][] nanos = new long[2][rounds];
    for (int round = -2; round < rounds; round++) { // two rounds each to warm up
      for (int model = 0; model < 2; model++) {
        long start = System.nanoTime();
        LiveRowsRewrite.Result result =
            LiveRowsRewrite.rewrite(
                table, table.spec(), partition(table, WIDE), keep, files(table), model == 0);
        long took = System.nanoTime() - start;
        assertThat(result.written().recordCount()).isEqualTo(rows);
        table.io().deleteFile(result.written().location());
        if (round >= 0) {
          nanos[model][round] = took;
        }
      }
    }
    Arrays.sort(nanos[0]);
    Arrays.sort(nanos[1]);
    double flink = nanos[0][rounds / 2] / 1e6;
    double generic = nanos[1][rounds / 2] / 1e6;
    System.out.printf(
        "%n| rewrite of %,d rows (%d columns), median of %d | ms | rows/s |%n|---|---|---|%n"
            + "| Flink rows | %.0f | %,.0f |%n| generic records | %.0f | %,.0f |%n"
            + "| generic / Flink | %.2f | |%n",
        rows,
        WIDE.columns().size(),
        rounds,
        flink,
        rows / flink * 1000,
        generic,
        rows / generic * 1000,
        generic / flink);
  }

  /**
   * The rewrite's cost for the small files an owner rewrites at many partitions (256 shards × 5
   * buckets at 500 changes/s: ~200 rows in ~9 files of one checkpoint each): {@code
   * benchmark.small-files} files (default 9) of {@code benchmark.rows-per-file} rows (default 25)
   * rewritten whole {@code benchmark.rewrites} times (default 200); prints the median per rewrite
   * and per source file. What bounds how many partitions an owner keeps compacted per checkpoint.
   * Runs only with {@code -Dbenchmark=true}.
   */
  @Test
  void smallFilesRewriteCost() throws Exception {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    int fileCount = Integer.getInteger("benchmark.small-files", 9);
    int perFile = Integer.getInteger("benchmark.rows-per-file", 25);
    int rewrites = Integer.getInteger("benchmark.rewrites", 200);
    Table table = create(WIDE, "small");
    // loaded, as a job's is once anything has read it (a copy of an unread one copies nothing)
    ((org.apache.iceberg.hadoop.HadoopFileIO) table.io()).conf().get("fs.defaultFS");
    SortedMap<String, long[]> keep = new TreeMap<>();
    for (int f = 0; f < fileCount; f++) {
      List<Record> records = new ArrayList<>();
      long[] all = new long[perFile];
      for (int i = 0; i < perFile; i++) {
        records.add(wide(f * perFile + i));
        all[i] = i;
      }
      keep.put(append(table, records).location(), all);
    }
    long[] nanos = new long[rewrites];
    for (int round = -20; round < rewrites; round++) { // 20 rounds to warm up
      long start = System.nanoTime();
      LiveRowsRewrite.Result result =
          LiveRowsRewrite.rewrite(table, table.spec(), partition(table, WIDE), keep, files(table));
      long took = System.nanoTime() - start;
      assertThat(result.written().recordCount()).isEqualTo((long) fileCount * perFile);
      table.io().deleteFile(result.written().location());
      if (round >= 0) {
        nanos[round] = took;
      }
    }
    Arrays.sort(nanos);
    double median = nanos[rewrites / 2] / 1e6;
    System.out.printf(
        "%n| rewrite of %d files × %d rows, median of %d | ms |%n|---|---|%n"
            + "| per rewrite | %.1f |%n| per source file | %.1f |%n",
        fileCount, perFile, rewrites, median, median / fileCount);
  }

  private static Record wide(int i) {
    Record r = GenericRecord.create(WIDE);
    r.setField("shard_number", 0);
    r.setField("id", 1_000_000_000_000L + i);
    r.setField("name", i % 5 == 0 ? null : "naïve-客户-" + i);
    r.setField("amount", i % 7 == 0 ? null : new BigDecimal(i % 2 == 0 ? "-1234.56" : "99.01"));
    r.setField(
        "big_amount", new BigDecimal("123456789012345678.123456").add(BigDecimal.valueOf(i)));
    r.setField("quantity", i % 3 == 0 ? null : -i);
    r.setField("ratio", i * 0.25);
    r.setField("flag", i % 2 == 0);
    r.setField("day", LocalDate.of(1969, 12, 31).plusDays(i % 400));
    r.setField(
        "updated_at", LocalDateTime.of(1999, 12, 31, 23, 59, 59, 999_999_000).plusSeconds(i));
    r.setField(
        "created_at",
        OffsetDateTime.of(2026, 12, 4, 10, 0, 0, 123_456_000, ZoneOffset.UTC).minusDays(i % 90));
    r.setField(
        "payload", i % 4 == 0 ? null : ByteBuffer.wrap(("p" + i).getBytes(StandardCharsets.UTF_8)));
    r.setField("ratio32", i % 11 == 0 ? null : i / 3f);
    return r;
  }

  private Table create(Schema schema, String name) {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
    return catalog.createTable(
        TableIdentifier.of("shop", name),
        schema,
        PartitionSpec.builderFor(schema).identity("shard_number").bucket("id", 1).build(),
        Map.of(TableProperties.FORMAT_VERSION, "3"));
  }

  private static PartitionKey partition(Table table, Schema schema) {
    Record zero = GenericRecord.create(schema);
    zero.setField("shard_number", 0);
    zero.setField("id", 0L);
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    key.partition(new InternalRecordWrapper(schema.asStruct()).wrap(zero));
    return key;
  }

  private static DataFile append(Table table, List<Record> rows) throws IOException {
    PartitionKey partition = partition(table, table.schema());
    DataWriter<Record> writer =
        new GenericAppenderFactory(table.schema(), table.spec())
            .newDataWriter(
                files(table).newOutputFile(table.spec(), partition), FileFormat.PARQUET, partition);
    try (writer) {
      for (Record row : rows) {
        writer.write(row);
      }
    }
    DataFile file = writer.toDataFile();
    table.newAppend().appendFile(file).commit();
    return file;
  }

  private static OutputFileFactory files(Table table) {
    return OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PARQUET).build();
  }

  private static List<Record> read(Table table, DataFile file) {
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records =
        FormatModelRegistry.<Record, Object>readBuilder(
                FileFormat.PARQUET, Record.class, table.io().newInputFile(file.location()))
            .project(table.schema())
            .build()) {
      for (Record r : records) {
        rows.add(r.copy());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }
}
