package dev.shardberg.router;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The one place that maps a MySQL column to a Flink {@link LogicalType} and an Iceberg {@link Type}.
 * Faithful by default: every value of the MySQL type fits the target type without loss (docs/type-mapping.md
 * is the same table in prose; keep them in sync).
 *
 * <p>Invariant relied on by {@link ShardTaggingDeserializer}: the Flink type chosen here determines how a
 * Debezium value is converted, and {@code FlinkSchemaUtil.convert(icebergType)} is this Flink type up to
 * timestamp precision.
 */
public final class TypeMapping {
  private TypeMapping() {}

  /** Flink keeps TIME as int milliseconds: TIME(p) with p above this becomes a BIGINT of microseconds. */
  public static final int MAX_FLINK_TIME_PRECISION = 3;

  /**
   * Every DATETIME(p)/TIMESTAMP(p) becomes a Flink timestamp of precision 6, whatever p: Iceberg
   * timestamps are microseconds and its Flink writers read TIMESTAMP(6); Flink's binary rows store
   * precision <= 3 in a different (compact) layout, so a narrower type here would corrupt values.
   */
  public static final int ICEBERG_TIMESTAMP_PRECISION = 6;

  /** Iceberg decimals hold at most 38 digits; MySQL DECIMAL allows 65. */
  public static final int MAX_DECIMAL_PRECISION = 38;

  /** The mapping of one column: the Flink type (nullability from MySQL) and the Iceberg type. */
  public record Mapped(LogicalType flinkType, Type icebergType) {}

  public static Mapped map(MySqlColumn c) {
    boolean n = c.nullable();
    switch (c.dataType()) {
      case "tinyint":
      case "smallint":
      case "mediumint":
        // every signed and unsigned value of these fits an int
        return new Mapped(new IntType(n), Types.IntegerType.get());
      case "int":
      case "integer":
        return c.unsigned()
            ? new Mapped(new BigIntType(n), Types.LongType.get())
            : new Mapped(new IntType(n), Types.IntegerType.get());
      case "bigint":
        return c.unsigned()
            ? new Mapped(new DecimalType(n, 20, 0), Types.DecimalType.of(20, 0))
            : new Mapped(new BigIntType(n), Types.LongType.get());
      case "decimal":
      case "numeric":
        {
          int p = c.precision() == null ? 10 : c.precision();
          int s = c.scale() == null ? 0 : c.scale();
          if (p > MAX_DECIMAL_PRECISION) {
            throw unsupported(c, "Iceberg decimals hold at most 38 digits; narrow the column to decimal(38," + Math.min(s, 38) + ") or less");
          }
          return new Mapped(new DecimalType(n, p, s), Types.DecimalType.of(p, s));
        }
      case "float":
        return new Mapped(new FloatType(n), Types.FloatType.get());
      case "double":
      case "real":
        return new Mapped(new DoubleType(n), Types.DoubleType.get());
      case "bit":
        {
          int bits = c.precision() == null ? 1 : c.precision();
          return bits == 1
              ? new Mapped(new BooleanType(n), Types.BooleanType.get())
              : new Mapped(new VarBinaryType(n, VarBinaryType.MAX_LENGTH), Types.BinaryType.get());
        }
      case "char":
      case "varchar":
      case "tinytext":
      case "text":
      case "mediumtext":
      case "longtext":
      case "enum":
      case "set":
      case "json":
        return new Mapped(new VarCharType(n, VarCharType.MAX_LENGTH), Types.StringType.get());
      case "binary":
      case "varbinary":
      case "tinyblob":
      case "blob":
      case "mediumblob":
      case "longblob":
      case "geometry":
      case "point":
      case "linestring":
      case "polygon":
      case "multipoint":
      case "multilinestring":
      case "multipolygon":
      case "geometrycollection":
      case "geomcollection":
        return new Mapped(new VarBinaryType(n, VarBinaryType.MAX_LENGTH), Types.BinaryType.get());
      case "date":
        return new Mapped(new DateType(n), Types.DateType.get());
      case "time":
        {
          int p = fractionalPrecision(c);
          return p <= MAX_FLINK_TIME_PRECISION
              ? new Mapped(new TimeType(n, p), Types.TimeType.get())
              : new Mapped(new BigIntType(n), Types.LongType.get());
        }
      case "datetime":
        return new Mapped(new TimestampType(n, ICEBERG_TIMESTAMP_PRECISION), Types.TimestampType.withoutZone());
      case "timestamp":
        return new Mapped(new LocalZonedTimestampType(n, ICEBERG_TIMESTAMP_PRECISION), Types.TimestampType.withZone());
      case "year":
        return new Mapped(new IntType(n), Types.IntegerType.get());
      default:
        throw unsupported(c, "see docs/type-mapping.md for the supported types; change the column type or leave the table out");
    }
  }

  public static LogicalType toFlinkType(MySqlColumn c) {
    return map(c).flinkType();
  }

  public static Type toIcebergType(MySqlColumn c) {
    return map(c).icebergType();
  }

  private static int fractionalPrecision(MySqlColumn c) {
    return c.precision() == null ? 0 : c.precision();
  }

  private static ShardRouterException unsupported(MySqlColumn c, String fix) {
    return new ShardRouterException(
        String.format("Cannot map column '%s' of MySQL type '%s': unsupported; %s", c.name(), c.columnType(), fix));
  }
}
