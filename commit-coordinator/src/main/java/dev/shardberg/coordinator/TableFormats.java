package dev.shardberg.coordinator;

import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;

/** The file formats a table asks its writers for, as every writer of ours reads them. */
public final class TableFormats {
  private TableFormats() {}

  /** The data file format ({@code write.format.default}). */
  public static FileFormat data(Table table) {
    return FileFormat.fromString(
        table
            .properties()
            .getOrDefault(
                TableProperties.DEFAULT_FILE_FORMAT, TableProperties.DEFAULT_FILE_FORMAT_DEFAULT));
  }

  /** The delete file format ({@code write.delete.format.default}, else the data format). */
  public static FileFormat deletes(Table table) {
    return FileFormat.fromString(
        table
            .properties()
            .getOrDefault(TableProperties.DELETE_DEFAULT_FILE_FORMAT, data(table).name()));
  }
}
