package dev.shardberg.tests.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;

/**
 * The query side: the same rows, read with the same reader (Iceberg's generic reader, every
 * column), once as ONE table partitioned by shard and once as N per-shard tables one after the
 * other, the way a UNION over N tables is read. Both copies are written from the consolidated
 * result with one Parquet file per shard, so they hold the same files and bytes and differ only in
 * being one table or N. The live consolidated table (with its delete files) is scanned too, for
 * reference.
 */
final class QuerySide {
  /** Times in ms and the ratio N-tables / one-table (> 1 means one table is faster). */
  record Result(
      int shards,
      long rows,
      long liveTableMillis,
      long oneTableMillis,
      long perShardTablesMillis,
      double ratio) {}

  private QuerySide() {}

  static Result run(Catalog catalog, Table live, Progress progress) {
    Schema schema = live.schema();
    Map<Integer, List<Record>> byShard = new TreeMap<>();
    long liveStart = System.nanoTime();
    long rows = 0;
    try (CloseableIterable<Record> all = IcebergGenerics.read(live).build()) {
      for (Record r : all) {
        byShard
            .computeIfAbsent((Integer) r.getField("shard_number"), s -> new ArrayList<>())
            .add(r.copy());
        rows++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    long liveMillis = (System.nanoTime() - liveStart) / 1_000_000;

    PartitionSpec byShardSpec = PartitionSpec.builderFor(schema).identity("shard_number").build();
    Table one =
        catalog.createTable(
            TableIdentifier.of("query", "orders_one"),
            schema,
            byShardSpec,
            Map.of("format-version", "2"));
    AppendFiles append = one.newAppend();
    for (Map.Entry<Integer, List<Record>> e : byShard.entrySet()) {
      GenericRecord partition = GenericRecord.create(byShardSpec.partitionType());
      partition.set(0, e.getKey());
      append.appendFile(write(one, partition, e.getValue()));
    }
    append.commit();
    List<Table> perShard = new ArrayList<>();
    for (Map.Entry<Integer, List<Record>> e : byShard.entrySet()) {
      Table t =
          catalog.createTable(
              TableIdentifier.of("query", "orders_shard_" + e.getKey()),
              schema,
              PartitionSpec.unpartitioned(),
              Map.of("format-version", "2"));
      t.newAppend().appendFile(write(t, null, e.getValue())).commit();
      perShard.add(t);
    }
    progress.line(
        "query",
        "wrote the same %,d rows as 1 table and as %d tables; scanning both",
        rows,
        perShard.size());

    // warm both once (class loading, page cache), then time; catalog loads are part of each scan
    scan(catalog, List.of(one.name()));
    scan(catalog, perShard.stream().map(Table::name).toList());
    long oneMillis = scan(catalog, List.of(one.name()));
    long nMillis = scan(catalog, perShard.stream().map(Table::name).toList());
    double ratio = oneMillis == 0 ? 0 : nMillis / (double) oneMillis;
    progress.line(
        "query",
        "one table %,d ms, %d tables one after the other %,d ms: ratio %.2f",
        oneMillis,
        perShard.size(),
        nMillis,
        ratio);
    return new Result(byShard.size(), rows, liveMillis, oneMillis, nMillis, ratio);
  }

  private static long scan(Catalog catalog, List<String> names) {
    long start = System.nanoTime();
    long sink = 0;
    for (String name : names) {
      String[] parts = name.split("\\.");
      Table t =
          catalog.loadTable(TableIdentifier.of(parts[parts.length - 2], parts[parts.length - 1]));
      try (CloseableIterable<Record> rows = IcebergGenerics.read(t).build()) {
        for (Record r : rows) {
          sink += r.get(1, Long.class); // touch the row
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (sink == 42) {
      System.out.print(""); // keep the JIT from dropping the loop
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static DataFile write(Table table, StructLike partition, List<Record> rows) {
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), table.spec());
    String location =
        table
            .locationProvider()
            .newDataLocation(table.spec(), partition, UUID.randomUUID() + ".parquet");
    DataWriter<Record> writer =
        factory.newDataWriter(
            EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
            FileFormat.PARQUET,
            partition);
    try (writer) {
      for (Record r : rows) {
        writer.write(r);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + location, e);
    }
    return writer.toDataFile();
  }
}
