package dev.shardberg.coordinator.owner;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Real tables on disk for the owner's building blocks: Shardberg's layout ({@code
 * identity(shard_number), bucket(1, id)}, so that every id of a shard lands in one partition), in
 * format version 2 or 3, with data and delete files written by Iceberg's generic writers.
 */
final class OwnerTables {
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.optional(3, "name", Types.StringType.get()));
  static final Set<Integer> KEY = Set.of(1, 2);
  static final PartitionSpec SPEC =
      PartitionSpec.builderFor(SCHEMA).identity("shard_number").bucket("id", 1).build();

  private OwnerTables() {}

  static Table create(Path warehouse, int formatVersion) {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
    return catalog.createTable(
        TableIdentifier.of("shop", "orders"),
        SCHEMA,
        SPEC,
        Map.of(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion)));
  }

  static Record row(int shard, long id, String name) {
    Record record = GenericRecord.create(SCHEMA);
    record.setField("shard_number", shard);
    record.setField("id", id);
    record.setField("name", name);
    return record;
  }

  static Record key(int shard, long id) {
    Record key = GenericRecord.create(TypeUtil.select(SCHEMA, KEY));
    key.setField("shard_number", shard);
    key.setField("id", id);
    return key;
  }

  static PartitionKey partition(Table table, int shard) {
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    key.partition(new InternalRecordWrapper(SCHEMA.asStruct()).wrap(row(shard, 0, null)));
    return key;
  }

  /** Appends one data file of {@code shard} holding {@code rows} in this order. */
  static DataFile append(Table table, int shard, Record... rows) {
    PartitionKey partition = partition(table, shard);
    DataWriter<Record> writer =
        new GenericAppenderFactory(table.schema(), table.spec())
            .newDataWriter(output(table, partition, "data"), FileFormat.PARQUET, partition);
    try (writer) {
      for (Record row : rows) {
        writer.write(row);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    DataFile file = writer.toDataFile();
    table.newAppend().appendFile(file).commit();
    return file;
  }

  /**
   * Commits an equality delete of {@code ids} of {@code shard} (the older write mode's deletes).
   */
  static DeleteFile deleteByKey(Table table, int shard, long... ids) {
    PartitionKey partition = partition(table, shard);
    Schema keys = TypeUtil.select(SCHEMA, KEY);
    EqualityDeleteWriter<Record> writer =
        new GenericAppenderFactory(table.schema(), table.spec(), new int[] {1, 2}, keys, null)
            .newEqDeleteWriter(output(table, partition, "eq"), FileFormat.PARQUET, partition);
    try (writer) {
      for (long id : ids) {
        writer.write(key(shard, id));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    DeleteFile file = writer.toDeleteFile();
    table.newRowDelta().addDeletes(file).commit();
    return file;
  }

  /**
   * Commits one position-delete file of {@code shard}'s partition deleting {@code positions} (data
   * file → positions), as a writer with partition granularity writes it: one file that may name
   * several data files (an older version's owners, the equality mode's deletes of its own
   * checkpoint's rows, another tool's {@code DELETE}).
   */
  static DeleteFile deleteByPosition(
      Table table, int shard, java.util.SortedMap<String, long[]> positions) {
    PartitionKey partition = partition(table, shard);
    org.apache.iceberg.deletes.PositionDeleteWriter<Record> writer =
        new GenericAppenderFactory(table.schema(), table.spec())
            .newPosDeleteWriter(output(table, partition, "pos"), FileFormat.PARQUET, partition);
    try (writer) {
      org.apache.iceberg.deletes.PositionDelete<Record> delete =
          org.apache.iceberg.deletes.PositionDelete.create();
      for (Map.Entry<String, long[]> file : positions.entrySet()) {
        for (long position : file.getValue()) {
          writer.write(delete.set(file.getKey(), position, null));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    DeleteFile file = writer.toDeleteFile();
    table.newRowDelta().addDeletes(file).commit();
    return file;
  }

  /** The factories of a writer subtask, by file format. */
  static Function<FileFormat, OutputFileFactory> files(Table table) {
    return format -> OutputFileFactory.builderFor(table, 1, 1).format(format).build();
  }

  private static EncryptedOutputFile output(Table table, PartitionKey partition, String kind) {
    String location =
        table
            .locationProvider()
            .newDataLocation(table.spec(), partition, kind + "-" + UUID.randomUUID() + ".parquet");
    return EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location));
  }

  /** The table's rows as a reader sees them, as (shard, id, name) strings. */
  static Set<String> read(Table table) {
    table.refresh();
    Set<String> rows = new HashSet<>();
    List<String> all = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        String row = r.getField("shard_number") + "/" + r.getField("id") + "/" + r.getField("name");
        all.add(row);
        rows.add(row);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (all.size() != rows.size()) {
      throw new AssertionError("The table holds a row twice: " + all);
    }
    return rows;
  }
}
