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
 * The rows of a table as its readers see them now (Iceberg's generic reader, deletes applied),
 * rendered {@code shard|id|c1|c2…} and sorted: a key held twice shows as two rows, a column the
 * table's schema lacks reads {@code null}. The schema tests compare these with the rows the shards
 * must have.
 */
final class TableRows {
  private TableRows() {}

  static List<String> of(Table table, String... columns) {
    table.refresh();
    List<String> rows = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return rows;
    }
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
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
