package dev.shardberg.job.config;

import java.util.Locale;

/** {@code target.catalog.type}: the kind of Iceberg catalog the table is in. */
public enum CatalogType {
  HADOOP,
  HIVE,
  REST,
  JDBC;

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
