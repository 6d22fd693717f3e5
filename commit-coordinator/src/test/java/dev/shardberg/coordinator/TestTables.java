package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

/** A Hadoop-catalog table laid out like Shardberg's: shard_number + id as identifier. */
final class TestTables {
  static final TableIdentifier IDENTIFIER = TableIdentifier.of("shop", "orders");
  static final String TABLE_NAME = "hadoop.shop.orders";

  static final Schema SCHEMA =
      new Schema(
          List.of(
              Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
              Types.NestedField.required(2, "id", Types.LongType.get()),
              Types.NestedField.optional(3, "name", Types.StringType.get())),
          Set.of(1, 2));

  static final RowType ROW_TYPE = FlinkSchemaUtil.convert(SCHEMA);
  static final List<String> EQUALITY_COLUMNS = List.of("shard_number", "id");

  private TestTables() {}

  static Table create(Path warehouse, int buckets) {
    PartitionSpec spec =
        PartitionSpec.builderFor(SCHEMA).identity("shard_number").bucket("id", buckets).build();
    try (HadoopCatalog catalog = catalog(warehouse)) {
      return catalog.createTable(
          IDENTIFIER,
          SCHEMA,
          spec,
          Map.of(
              TableProperties.FORMAT_VERSION, "2",
              TableProperties.UPSERT_ENABLED, "true",
              TableProperties.DEFAULT_FILE_FORMAT, "parquet"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code -Dbenchmark.codec=C} and {@code -Dbenchmark.page-size=B}, for the opt-in benchmarks. */
  static void applyBenchmarkParquetOverrides(Table table) {
    String codec = System.getProperty("benchmark.codec");
    if (codec != null) {
      table.updateProperties().set(TableProperties.PARQUET_COMPRESSION, codec).commit();
    }
    String pageSize = System.getProperty("benchmark.page-size");
    if (pageSize != null) {
      table.updateProperties().set(TableProperties.PARQUET_PAGE_SIZE_BYTES, pageSize).commit();
    }
  }

  static Table load(Path warehouse) {
    try (HadoopCatalog catalog = catalog(warehouse)) {
      return catalog.loadTable(IDENTIFIER);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static TableLoader loader(Path warehouse) {
    return TableLoader.fromCatalog(
        CatalogLoader.hadoop("hadoop", hadoopConf(), Map.of("warehouse", warehouse.toString())),
        IDENTIFIER);
  }

  /**
   * Hadoop's defaults; {@code -Dbenchmark.local-fs=forkless} swaps in {@link
   * ForklessLocalFileSystem} (what the job installs for local warehouses), so the benchmarks can
   * show both.
   */
  static Configuration hadoopConf() {
    Configuration conf = new Configuration();
    if ("forkless".equals(System.getProperty("benchmark.local-fs"))) {
      ForklessLocalFileSystem.install(conf);
    }
    return conf;
  }

  private static HadoopCatalog catalog(Path warehouse) {
    HadoopCatalog catalog = new HadoopCatalog();
    catalog.setConf(hadoopConf());
    catalog.initialize("hadoop", Map.of("warehouse", warehouse.toString()));
    return catalog;
  }

  static RowData row(RowKind kind, int shard, long id, String name) {
    GenericRowData row = new GenericRowData(kind, 3);
    row.setField(0, shard);
    row.setField(1, id);
    row.setField(2, name == null ? null : StringData.fromString(name));
    return row;
  }

  /** One row of the table, as read back. */
  record Row(int shard, long id, String name) {}

  /** The table's rows now; fails on a key (shard, id) read twice. */
  static Set<Row> read(Table table) {
    table.refresh();
    return table.currentSnapshot() == null
        ? new HashSet<>()
        : readAt(table, table.currentSnapshot().snapshotId());
  }

  /**
   * The rows of {@code snapshotId}; fails at once on a key (shard, id) read twice, even with equal
   * values, which a set of rows would hide (a checkpoint committed twice duplicates keys).
   */
  static Set<Row> readAt(Table table, long snapshotId) {
    Map<List<Long>, Row> byKey = new java.util.HashMap<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      for (Record record : records) {
        Row row =
            new Row(
                (Integer) record.getField("shard_number"),
                (Long) record.getField("id"),
                (String) record.getField("name"));
        Row before = byKey.put(List.of((long) row.shard(), row.id()), row);
        if (before != null) {
          throw new AssertionError(
              "Key ("
                  + row.shard()
                  + ", "
                  + row.id()
                  + ") twice in snapshot "
                  + snapshotId
                  + ": "
                  + before
                  + " and "
                  + row);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new HashSet<>(byKey.values());
  }

  /**
   * "Each checkpoint committed once" by content, not only by checkpoint id (a re-commit under a new
   * id passes an id check): the rows at each data commit of {@code pipelineId} in the current
   * ancestry, oldest first, are the rows of a longer prefix of {@code steps} than at the data
   * commit before it, and the last one holds every step. A commit that adds no step (a checkpoint
   * committed again), loses one, or applies them out of order fails. Heartbeats are left out; a
   * step that changes nothing matches the longer prefix too.
   */
  static void assertEachCommitAppliesNewSteps(
      Table table, String pipelineId, List<List<Change>> steps) {
    List<CommitRecord> commits = dataCommits(table, pipelineId);
    int applied = -1; // steps applied at the previous data commit; -1 before the first one
    for (CommitRecord commit : commits) {
      Set<Row> rows = readAt(table, commit.snapshotId());
      // a commit of no source row (an owner's rewrite handed over at a barrier with no new change)
      // holds the rows of the commit before it
      boolean rewriteOnly =
          commit.shardCounts().values().stream()
              .allMatch(c -> c.addedRecords() == 0 && c.deletedRecords() == 0);
      int prefix = rewriteOnly && applied >= 0 ? applied : applied + 1;
      while (prefix <= steps.size()
          && !rows.equals(Change.expectedRows(steps.subList(0, prefix)))) {
        prefix++;
      }
      if (prefix > steps.size() || prefix == 0) {
        throw new AssertionError(
            String.format(
                "Data commit of checkpoint %d (snapshot %d) of pipeline %s holds %s: not the rows of more than the first %d"
                    + " of %d steps (a checkpoint committed twice, or a step lost or out of order)",
                commit.checkpointId(),
                commit.snapshotId(),
                pipelineId,
                rows,
                Math.max(applied, 0),
                steps.size()));
      }
      applied = prefix;
    }
    if (applied != steps.size()) {
      throw new AssertionError(
          "The last data commit of pipeline "
              + pipelineId
              + " holds the first "
              + applied
              + " of "
              + steps.size()
              + " steps");
    }
  }

  /**
   * As {@link #assertEachCommitAppliesNewSteps}, partition by partition: each data commit holds, in
   * every partition (shard × bucket), the rows that partition has after some prefix of {@code
   * steps}, never fewer steps than at the commit before, each key once; the last holds every step.
   * For runs where a partition may wait a commit or two while the others go on (owners holding a
   * shard's changes after another tool changed it while their own were in flight).
   */
  static void assertEachCommitAppliesNewStepsPerPartition(
      Table table, String pipelineId, List<List<Change>> steps) {
    List<CommitRecord> commits = dataCommits(table, pipelineId);
    List<Map<String, Set<Row>>> model = new ArrayList<>();
    java.util.Set<String> partitions = new java.util.TreeSet<>();
    for (int prefix = 0; prefix <= steps.size(); prefix++) {
      Map<String, Set<Row>> byPartition =
          byPartition(table, Change.expectedRows(steps.subList(0, prefix)));
      partitions.addAll(byPartition.keySet());
      model.add(byPartition);
    }
    Map<String, Integer> applied = new java.util.HashMap<>();
    for (CommitRecord commit : commits) {
      Map<String, Set<Row>> rows = byPartition(table, readAt(table, commit.snapshotId()));
      java.util.Set<String> all = new java.util.TreeSet<>(partitions);
      all.addAll(rows.keySet());
      for (String partition : all) {
        Set<Row> held = rows.getOrDefault(partition, Set.of());
        int prefix = applied.getOrDefault(partition, 0);
        while (prefix <= steps.size()
            && !held.equals(model.get(prefix).getOrDefault(partition, Set.of()))) {
          prefix++;
        }
        if (prefix > steps.size()) {
          throw new AssertionError(
              String.format(
                  "Data commit of checkpoint %d (snapshot %d) of pipeline %s holds %s in partition"
                      + " %s: not its rows after the first %d or more of %d steps",
                  commit.checkpointId(),
                  commit.snapshotId(),
                  pipelineId,
                  held,
                  partition,
                  applied.getOrDefault(partition, 0),
                  steps.size()));
        }
        applied.put(partition, prefix);
      }
    }
    Set<Row> last = readAt(table, commits.get(commits.size() - 1).snapshotId());
    if (!last.equals(Change.expectedRows(steps))) {
      throw new AssertionError(
          "The last data commit of pipeline " + pipelineId + " does not hold every step: " + last);
    }
  }

  /** The pipeline's data commits (no heartbeat) in the current ancestry, oldest first; not none. */
  private static List<CommitRecord> dataCommits(Table table, String pipelineId) {
    table.refresh();
    List<CommitRecord> commits = new ArrayList<>();
    for (CommitRecord record : CommittedCheckpoints.history(table, pipelineId, Integer.MAX_VALUE)) {
      if (!record.heartbeat()) {
        commits.add(0, record);
      }
    }
    if (commits.isEmpty()) {
      throw new AssertionError("No data commit of pipeline " + pipelineId);
    }
    return commits;
  }

  /** {@code rows} by the path of their partition in {@code table}'s spec. */
  private static Map<String, Set<Row>> byPartition(Table table, Set<Row> rows) {
    Map<String, Set<Row>> byPartition = new java.util.HashMap<>();
    org.apache.iceberg.data.InternalRecordWrapper wrapper =
        new org.apache.iceberg.data.InternalRecordWrapper(table.schema().asStruct());
    for (Row row : rows) {
      Record record = org.apache.iceberg.data.GenericRecord.create(table.schema());
      record.setField("shard_number", row.shard());
      record.setField("id", row.id());
      record.setField("name", row.name());
      org.apache.iceberg.PartitionKey key =
          new org.apache.iceberg.PartitionKey(table.spec(), table.schema());
      key.partition(wrapper.wrap(record));
      byPartition.computeIfAbsent(table.spec().partitionToPath(key), p -> new HashSet<>()).add(row);
    }
    return byPartition;
  }

  /** Summaries of the current ancestry, oldest first. */
  static List<Map<String, String>> summaries(Table table) {
    table.refresh();
    List<Map<String, String>> summaries = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return summaries;
    }
    for (Snapshot snapshot :
        SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot)) {
      summaries.add(0, snapshot.summary());
    }
    return summaries;
  }

  /**
   * {@code shardberg.checkpoint-id} of each snapshot in the ancestry, oldest first; snapshots of
   * other committers (maintenance) have none and are left out.
   */
  static List<Long> committedCheckpoints(Table table) {
    return summaries(table).stream()
        .map(s -> s.get(SnapshotSummaryKeys.CHECKPOINT_ID))
        .filter(java.util.Objects::nonNull)
        .map(Long::valueOf)
        .toList();
  }
}
