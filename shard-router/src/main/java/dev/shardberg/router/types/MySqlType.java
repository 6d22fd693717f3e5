package dev.shardberg.router.types;

import dev.shardberg.router.ShardRouterException;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.iceberg.types.Type;

/**
 * THE type table: one constant per family of MySQL types, holding everything the rest of Shardberg
 * needs to know about it, so the write path and {@code verify} cannot drift apart:
 *
 * <ol>
 *   <li>the Flink {@link LogicalType} of the tagged row ({@link #flinkType}),
 *   <li>the Iceberg {@link Type} of the table column ({@link #icebergType}),
 *   <li>how {@link dev.shardberg.router.tagging.ShardTaggingDeserializer} converts a Debezium value
 *       to Flink's internal value ({@link #toFlink}),
 *   <li>the canonical text of a value, computed the same way from the Iceberg value a reader
 *       returns ({@link #renderIceberg}) and from the MySQL value a JDBC client reads through the
 *       binary protocol ({@link #renderJdbc}); {@code verify} compares these texts.
 * </ol>
 *
 * docs/type-mapping.md is the same table in prose (with what Spark, Trino and Flink read); keep
 * them in sync. Every legal MySQL value must convert without an exception: a value that cannot be
 * represented is a mapping bug, and it would stop the pipeline.
 *
 * <p>Invariant relied on by the writers: {@code FlinkSchemaUtil.convert(icebergType)} is the Flink
 * type here up to timestamp precision (TypeMappingTest checks it).
 *
 * <p>Each constant's code lives in the {@link TypeFamily} of the same name, grouped by kind of
 * value: {@link NumericFamilies}, {@link StringAndBinaryFamilies} and {@link TemporalFamilies}.
 */
public enum MySqlType {
  /** TINYINT, SMALLINT, MEDIUMINT (signed or not) and INT: every value fits a 32-bit int. */
  INT32(NumericFamilies.INT32),
  /** INT UNSIGNED (to 4294967295) and BIGINT: a 64-bit long. */
  INT64(NumericFamilies.INT64),
  /** BIGINT UNSIGNED: decimal(20, 0) holds 18446744073709551615. */
  BIGINT_UNSIGNED(NumericFamilies.BIGINT_UNSIGNED),
  /** DECIMAL(p, s) / NUMERIC(p, s), p ≤ 38: an Iceberg decimal(p, s). */
  DECIMAL(NumericFamilies.DECIMAL),
  /**
   * DECIMAL(p, s) / NUMERIC(p, s), p > 38 (MySQL allows 65): the exact digits as text, at scale s,
   * as a MySQL client prints them ({@code -12.50}, {@code 0.00}; never an exponent). Iceberg
   * decimals hold at most 38 digits; a string holds every value, and every engine reads it. A
   * column cannot change between this and {@link #DECIMAL} (Iceberg cannot turn a decimal column
   * into a string), nor change its scale: {@link dev.shardberg.router.schema.SchemaEvolution}
   * refuses both, naming shard and column.
   */
  DECIMAL_STRING(NumericFamilies.DECIMAL_STRING),
  /**
   * FLOAT: the 4-byte IEEE value, bit for bit. The binlog delivers a Float; the snapshot, read
   * through {@link ExactSnapshotDriver}, a Double that equals the stored float (the text protocol's
   * own FLOAT has only 6 digits), so {@code floatValue()} of either is exact. {@code verify} reads
   * MySQL through the binary protocol ({@link
   * dev.shardberg.router.discovery.MySqlHost#VERIFY_JDBC_PROPERTIES}), so it compares the stored
   * bits.
   */
  FLOAT(NumericFamilies.FLOAT),
  /** DOUBLE / REAL: the stored 8-byte IEEE value. */
  DOUBLE(NumericFamilies.DOUBLE),
  /** BIT(1): a boolean. */
  BIT1(StringAndBinaryFamilies.BIT1),
  /** BIT(n), n > 1: ceil(n/8) bytes, big-endian, as a MySQL client reads them. */
  BITS(StringAndBinaryFamilies.BITS),
  /** CHAR, VARCHAR, the TEXTs, ENUM (the label) and SET (comma-separated labels): the text. */
  STRING(StringAndBinaryFamilies.STRING),
  /**
   * JSON: the document text. On MySQL (binary JSON) the text is MySQL's own rendering in the
   * snapshot and, with Flink CDC's non-legacy JSON format (set on every source), the same rendering
   * from the binlog.
   */
  JSON(StringAndBinaryFamilies.JSON),
  /** BINARY (zero-padded as stored), VARBINARY and the BLOBs: the bytes. */
  BYTES(StringAndBinaryFamilies.BYTES),
  /** The spatial types: WKB without MySQL's 4-byte SRID prefix, = {@code ST_AsBinary(col)}. */
  GEOMETRY(StringAndBinaryFamilies.GEOMETRY),
  /**
   * DATE: epoch days. A zero date ({@code 0000-00-00}, or a zero month/day) is NULL, as Debezium
   * emits it.
   */
  DATE(TemporalFamilies.DATE),
  /**
   * TIME(p), every p: signed microseconds in a {@code long}, the whole MySQL range
   * ±838:59:59.999999. Never an Iceberg {@code time} (a time of day, and Spark 3.5 refuses a table
   * that has one). Debezium's value is already exact: {@link TimeConverter} (on every source)
   * delivers microseconds, read exactly in the snapshot through {@link ExactSnapshotDriver} and
   * from the binlog through {@link BinlogTime2}.
   */
  TIME(TemporalFamilies.TIME),
  /**
   * DATETIME(p): the wall-clock value in microseconds (Iceberg timestamp without zone). Zero →
   * NULL.
   */
  DATETIME(TemporalFamilies.DATETIME),
  /** TIMESTAMP(p): the instant in microseconds (Iceberg timestamptz, UTC). */
  TIMESTAMP(TemporalFamilies.TIMESTAMP),
  /**
   * YEAR: 0 (YEAR 0000) or 1901 … 2155 as an int. Debezium alone turns 0000 into 2000 (snapshot) or
   * 1900 (binlog); {@link YearConverter} (set on every source) delivers the stored year.
   */
  YEAR(TemporalFamilies.YEAR);

  /** The canonical rendering of SQL NULL on both sides. */
  public static final String NULL = "\u2205";

  private final TypeFamily family;

  MySqlType(TypeFamily family) {
    this.family = family;
  }

  /** The MySQL type family of a column; unsupported types fail naming the column. */
  public static MySqlType of(MySqlColumn c) {
    switch (c.dataType()) {
      case "tinyint", "smallint", "mediumint" -> {
        return INT32; // every signed and unsigned value of these fits an int
      }
      case "int", "integer" -> {
        return c.unsigned() ? INT64 : INT32;
      }
      case "bigint" -> {
        return c.unsigned() ? BIGINT_UNSIGNED : INT64;
      }
      case "decimal", "numeric" -> {
        return NumericFamilies.precision(c) > TypeMapping.MAX_DECIMAL_PRECISION
            ? DECIMAL_STRING
            : DECIMAL;
      }
      case "float" -> {
        return FLOAT;
      }
      case "double", "real" -> {
        return DOUBLE;
      }
      case "bit" -> {
        return c.precision() == null || c.precision() == 1 ? BIT1 : BITS;
      }
      case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set" -> {
        return STRING;
      }
      case "json" -> {
        return JSON;
      }
      case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob" -> {
        return BYTES;
      }
      case "geometry",
          "point",
          "linestring",
          "polygon",
          "multipoint",
          "multilinestring",
          "multipolygon",
          "geometrycollection",
          "geomcollection" -> {
        return GEOMETRY;
      }
      case "date" -> {
        return DATE;
      }
      case "time" -> {
        return TIME;
      }
      case "datetime" -> {
        return DATETIME;
      }
      case "timestamp" -> {
        return TIMESTAMP;
      }
      case "year" -> {
        return YEAR;
      }
      default ->
          throw unsupported(
              c,
              "see docs/type-mapping.md for the supported types; change the column type or leave the table out");
    }
  }

  /** The Flink type of the tagged row's field (nullability from MySQL). */
  LogicalType flinkType(MySqlColumn c) {
    return family.flinkType(c);
  }

  /** The Iceberg type of the table column. */
  Type icebergType(MySqlColumn c) {
    return family.icebergType(c);
  }

  /**
   * Converts a non-null Debezium value of column {@code c} (its Kafka Connect schema {@code s}) to
   * Flink's internal representation of {@link #flinkType}.
   */
  public Object toFlink(Object value, Schema s, MySqlColumn c) {
    return family.toFlink(value, s, c);
  }

  /** The canonical text of a non-null value as Iceberg's generic reader returns it. */
  public String renderIceberg(Object value) {
    return family.renderIceberg(value);
  }

  /**
   * What {@code verify}'s SELECT reads for a column of this type ({@link #renderJdbc} reads that).
   */
  public String selectExpression(String quotedColumn) {
    return family.selectExpression(quotedColumn);
  }

  /**
   * The canonical text of the value at {@code index}, read through JDBC ({@link #NULL} for SQL
   * NULL).
   */
  public String renderJdbc(ResultSet rs, int index, MySqlColumn c) throws SQLException {
    // temporal values are probed as text: the driver refuses to make an object of a zero date
    Object probe =
        this == DATE || this == DATETIME || this == TIMESTAMP
            ? rs.getString(index)
            : rs.getObject(index);
    if (probe == null) {
      return NULL;
    }
    return family.jdbc(rs, index, c);
  }

  /** The canonical text of an Iceberg value, {@link #NULL} for null. */
  public String renderIcebergOrNull(Object value) {
    return value == null ? NULL : renderIceberg(value);
  }

  private static ShardRouterException unsupported(MySqlColumn c, String fix) {
    return new ShardRouterException(
        String.format(
            "Cannot map column '%s' of MySQL type '%s': unsupported; %s",
            c.name(), c.columnType(), fix));
  }
}
