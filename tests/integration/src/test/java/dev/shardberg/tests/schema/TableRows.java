package dev.shardberg.tests.schema;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The rows of a table as its readers see them, now or at one of its snapshots (Iceberg's generic
 * reader, deletes applied), rendered {@code shard|id|c1|c2…} and sorted: a key held twice shows as
 * two rows, a column the table's schema lacks reads {@code null}. The schema tests compare these
 * with the rows the shards must have.
 */
final class TableRows {
  private TableRows() {}

  static List<String> of(Table table, String... columns) {
    table.refresh();
    if (table.currentSnapshot() == null) {
      return new ArrayList<>();
    }
    return read(table, IcebergGenerics.read(table), columns);
  }

  /** The rows as readers saw them at snapshot {@code snapshotId} (time travel). */
  static List<String> at(Table table, long snapshotId, String... columns) {
    return read(table, IcebergGenerics.read(table).useSnapshot(snapshotId), columns);
  }

  private static List<String> read(
      Table table, IcebergGenerics.ScanBuilder scan, String... columns) {
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = scan.build()) {
      for (Record r : records) {
        StringBuilder row = new StringBuilder(r.getField("shard_number") + "|" + r.getField("id"));
        for (String column : columns) {
          row.append('|')
              .append(table.schema().findField(column) == null ? null : r.getField(column));
        }
        rows.add(row.toString());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read table " + table.name(), e);
    }
    rows.sort(null);
    return rows;
  }
}
