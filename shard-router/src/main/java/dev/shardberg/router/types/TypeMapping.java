package dev.shardberg.router.types;

import org.apache.flink.table.types.logical.LogicalType;
import org.apache.iceberg.types.Type;

/**
 * Maps a MySQL column to a Flink {@link LogicalType} and an Iceberg {@link Type}, by its {@link
 * MySqlType} (the one type table, which also holds the tagger's conversion and verify's rendering).
 * Faithful by default: every value of the MySQL type fits the target type without loss
 * (docs/type-mapping.md is the same table in prose; keep them in sync).
 */
public final class TypeMapping {
  private TypeMapping() {}

  /**
   * Every DATETIME(p)/TIMESTAMP(p) becomes a Flink timestamp of precision 6, whatever p: Iceberg
   * timestamps are microseconds and its Flink writers read TIMESTAMP(6); Flink's binary rows store
   * precision <= 3 in a different (compact) layout, so a narrower type here would corrupt values.
   */
  public static final int ICEBERG_TIMESTAMP_PRECISION = 6;

  /**
   * Iceberg decimals hold at most 38 digits; MySQL DECIMAL allows 65. A wider DECIMAL is an Iceberg
   * string of its exact digits ({@link MySqlType#DECIMAL_STRING}).
   */
  public static final int MAX_DECIMAL_PRECISION = 38;

  /**
   * The mapping of one column: its type family, the Flink type (nullability from MySQL) and the
   * Iceberg type.
   */
  public record Mapped(MySqlType type, LogicalType flinkType, Type icebergType) {}

  /** Maps {@code c}, or fails naming the column when its type is unsupported. */
  public static Mapped map(MySqlColumn c) {
    MySqlType type = MySqlType.of(c);
    return new Mapped(type, type.flinkType(c), type.icebergType(c));
  }

  public static Type toIcebergType(MySqlColumn c) {
    return map(c).icebergType();
  }
}
