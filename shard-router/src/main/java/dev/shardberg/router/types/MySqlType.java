package dev.shardberg.router.types;

import dev.shardberg.router.ShardRouterException;
import io.debezium.data.Bits;
import io.debezium.data.geometry.Geometry;
import io.debezium.time.MicroTime;
import io.debezium.time.MicroTimestamp;
import io.debezium.time.NanoTime;
import io.debezium.time.NanoTimestamp;
import io.debezium.time.Time;
import io.debezium.time.Timestamp;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

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
 */
public enum MySqlType {
  /** TINYINT, SMALLINT, MEDIUMINT (signed or not) and INT: every value fits a 32-bit int. */
  INT32 {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new IntType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.IntegerType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).intValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return Long.toString(((Number) v).longValue());
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Long.toString(rs.getLong(i));
    }
  },
  /** INT UNSIGNED (to 4294967295) and BIGINT: a 64-bit long. */
  INT64 {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new BigIntType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.LongType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).longValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return Long.toString(((Number) v).longValue());
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Long.toString(rs.getLong(i));
    }
  },
  /** BIGINT UNSIGNED: decimal(20, 0) holds 18446744073709551615. */
  BIGINT_UNSIGNED {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new DecimalType(c.nullable(), 20, 0);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.DecimalType.of(20, 0);
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return decimalData(v, 20, 0);
    }

    @Override
    public String renderIceberg(Object v) {
      return ((BigDecimal) v).setScale(0).toPlainString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getBigDecimal(i).setScale(0).toPlainString();
    }
  },
  /** DECIMAL(p, s) / NUMERIC(p, s), p ≤ 38: an Iceberg decimal(p, s). */
  DECIMAL {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new DecimalType(c.nullable(), precision(c), scale(c));
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.DecimalType.of(precision(c), scale(c));
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return decimalData(v, precision(c), scale(c));
    }

    @Override
    public String renderIceberg(Object v) {
      return ((BigDecimal) v).toPlainString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getBigDecimal(i).setScale(scale(c)).toPlainString();
    }
  },
  /**
   * DECIMAL(p, s) / NUMERIC(p, s), p > 38 (MySQL allows 65): the exact digits as text, at scale s,
   * as a MySQL client prints them ({@code -12.50}, {@code 0.00}; never an exponent). Iceberg
   * decimals hold at most 38 digits; a string holds every value, and every engine reads it. A
   * column cannot change between this and {@link #DECIMAL} (Iceberg cannot turn a decimal column
   * into a string), nor change its scale: {@link dev.shardberg.router.schema.SchemaEvolution}
   * refuses both, naming shard and column.
   */
  DECIMAL_STRING {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new VarCharType(c.nullable(), VarCharType.MAX_LENGTH);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.StringType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return StringData.fromString(plainDecimal(v, scale(c)));
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getBigDecimal(i).setScale(scale(c)).toPlainString();
    }
  },
  /**
   * FLOAT: the 4-byte IEEE value, bit for bit. The binlog delivers a Float; the snapshot, read
   * through {@link ExactSnapshotDriver}, a Double that equals the stored float (the text protocol's
   * own FLOAT has only 6 digits), so {@code floatValue()} of either is exact. {@code verify} reads
   * MySQL through the binary protocol ({@link
   * dev.shardberg.router.discovery.MySqlHost#VERIFY_JDBC_PROPERTIES}), so it compares the stored
   * bits.
   */
  FLOAT {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new FloatType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.FloatType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).floatValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return floatBits(((Number) v).floatValue());
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return floatBits(rs.getFloat(i));
    }
  },
  /** DOUBLE / REAL: the stored 8-byte IEEE value. */
  DOUBLE {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new DoubleType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.DoubleType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).doubleValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return Double.toString(((Number) v).doubleValue());
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Double.toString(rs.getDouble(i));
    }
  },
  /** BIT(1): a boolean. */
  BIT1 {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new BooleanType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.BooleanType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return toBoolean(v);
    }

    @Override
    public String renderIceberg(Object v) {
      return Boolean.toString((Boolean) v);
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Boolean.toString(rs.getBoolean(i));
    }
  },
  /** BIT(n), n > 1: ceil(n/8) bytes, big-endian, as a MySQL client reads them. */
  BITS {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new VarBinaryType(c.nullable(), VarBinaryType.MAX_LENGTH);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.BinaryType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return bitsBigEndian(v, s, c);
    }

    @Override
    public String renderIceberg(Object v) {
      return hex(v);
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return HEX.formatHex(rs.getBytes(i));
    }
  },
  /** CHAR, VARCHAR, the TEXTs, ENUM (the label) and SET (comma-separated labels): the text. */
  STRING {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new VarCharType(c.nullable(), VarCharType.MAX_LENGTH);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.StringType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return StringData.fromString(v.toString());
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getString(i);
    }
  },
  /**
   * JSON: the document text. On MySQL (binary JSON) the text is MySQL's own rendering in the
   * snapshot and, with Flink CDC's non-legacy JSON format (set on every source), the same rendering
   * from the binlog.
   */
  JSON {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new VarCharType(c.nullable(), VarCharType.MAX_LENGTH);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.StringType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return StringData.fromString(v.toString());
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getString(i);
    }
  },
  /** BINARY (zero-padded as stored), VARBINARY and the BLOBs: the bytes. */
  BYTES {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new VarBinaryType(c.nullable(), VarBinaryType.MAX_LENGTH);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.BinaryType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return rawBytes(v);
    }

    @Override
    public String renderIceberg(Object v) {
      return hex(v);
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return HEX.formatHex(rs.getBytes(i));
    }
  },
  /** The spatial types: WKB without MySQL's 4-byte SRID prefix, = {@code ST_AsBinary(col)}. */
  GEOMETRY {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new VarBinaryType(c.nullable(), VarBinaryType.MAX_LENGTH);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.BinaryType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return geometryWkb(v, s);
    }

    @Override
    public String renderIceberg(Object v) {
      return hex(v);
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      byte[] internal =
          rs.getBytes(i); // MySQL's internal format: SRID (4 bytes, little-endian) + WKB
      return HEX.formatHex(Arrays.copyOfRange(internal, 4, internal.length));
    }
  },
  /**
   * DATE: epoch days. A zero date ({@code 0000-00-00}, or a zero month/day) is NULL, as Debezium
   * emits it.
   */
  DATE {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new DateType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.DateType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).intValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      String text = rs.getString(i);
      return hasZeroDatePart(text) ? NULL : LocalDate.parse(text).toString();
    }
  },
  /**
   * TIME(p), every p: signed microseconds in a {@code long}, the whole MySQL range
   * ±838:59:59.999999. Never an Iceberg {@code time} (a time of day, and Spark 3.5 refuses a table
   * that has one). Debezium's value is already exact: {@link TimeConverter} (on every source)
   * delivers microseconds, read exactly in the snapshot through {@link ExactSnapshotDriver} and
   * from the binlog through {@link BinlogTime2}.
   */
  TIME {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new BigIntType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.LongType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return timeMicros(v, s);
    }

    @Override
    public String renderIceberg(Object v) {
      return formatTime(((Number) v).longValue());
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return formatTime(parseTime(rs.getString(i)));
    }

    // Connector/J decodes a binary-protocol TIME as a time of day (wrong beyond ±24 h): read
    // MySQL's text
    @Override
    public String selectExpression(String quotedColumn) {
      return "CAST(" + quotedColumn + " AS CHAR)";
    }
  },
  /**
   * DATETIME(p): the wall-clock value in microseconds (Iceberg timestamp without zone). Zero →
   * NULL.
   */
  DATETIME {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new TimestampType(c.nullable(), TypeMapping.ICEBERG_TIMESTAMP_PRECISION);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.TimestampType.withoutZone();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return localTimestamp(v, s);
    }

    @Override
    public String renderIceberg(Object v) {
      return DATETIME_TEXT.format((LocalDateTime) v);
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      String text = rs.getString(i);
      return hasZeroDatePart(text)
          ? NULL
          : DATETIME_TEXT.format(LocalDateTime.parse(text, MYSQL_DATETIME));
    }
  },
  /** TIMESTAMP(p): the instant in microseconds (Iceberg timestamptz, UTC). */
  TIMESTAMP {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new LocalZonedTimestampType(c.nullable(), TypeMapping.ICEBERG_TIMESTAMP_PRECISION);
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.TimestampType.withZone();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return instantTimestamp(v);
    }

    @Override
    public String renderIceberg(Object v) {
      return ((OffsetDateTime) v).toInstant().toString();
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      String text = rs.getString(i);
      return hasZeroDatePart(text) ? NULL : rs.getTimestamp(i).toInstant().toString();
    }
  },
  /**
   * YEAR: 0 (YEAR 0000) or 1901 … 2155 as an int. Debezium alone turns 0000 into 2000 (snapshot) or
   * 1900 (binlog); {@link YearConverter} (set on every source) delivers the stored year.
   */
  YEAR {
    @Override
    LogicalType flinkType(MySqlColumn c) {
      return new IntType(c.nullable());
    }

    @Override
    Type icebergType(MySqlColumn c) {
      return Types.IntegerType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return YearConverter.storedYear(v);
    }

    @Override
    public String renderIceberg(Object v) {
      return Long.toString(((Number) v).longValue());
    }

    @Override
    String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Integer.toString(
          YearConverter.storedYear(rs.getObject(i))); // yearIsDateType=false: a Short
    }
  };

  /** The canonical rendering of SQL NULL on both sides. */
  public static final String NULL = "\u2205";

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
        return precision(c) > TypeMapping.MAX_DECIMAL_PRECISION ? DECIMAL_STRING : DECIMAL;
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
  abstract LogicalType flinkType(MySqlColumn c);

  /** The Iceberg type of the table column. */
  abstract Type icebergType(MySqlColumn c);

  /**
   * Converts a non-null Debezium value of column {@code c} (its Kafka Connect schema {@code s}) to
   * Flink's internal representation of {@link #flinkType}.
   */
  public abstract Object toFlink(Object value, Schema s, MySqlColumn c);

  /** The canonical text of a non-null value as Iceberg's generic reader returns it. */
  public abstract String renderIceberg(Object value);

  abstract String jdbc(ResultSet rs, int index, MySqlColumn c) throws SQLException;

  /**
   * What {@code verify}'s SELECT reads for a column of this type ({@link #renderJdbc} reads that).
   */
  public String selectExpression(String quotedColumn) {
    return quotedColumn;
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
    return jdbc(rs, index, c);
  }

  /** The canonical text of an Iceberg value, {@link #NULL} for null. */
  public String renderIcebergOrNull(Object value) {
    return value == null ? NULL : renderIceberg(value);
  }

  // ------------------------------------------------------------------ shared helpers

  private static final HexFormat HEX = HexFormat.of();

  /** yyyy-MM-ddTHH:mm:ss.ffffff: always six fraction digits, so equal values have equal texts. */
  private static final DateTimeFormatter DATETIME_TEXT =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS", Locale.ROOT);

  /** What a MySQL client prints: yyyy-MM-dd HH:mm:ss with 0 to 6 fraction digits. */
  private static final DateTimeFormatter MYSQL_DATETIME =
      new DateTimeFormatterBuilder()
          .appendPattern("uuuu-MM-dd HH:mm:ss")
          .optionalStart()
          .appendFraction(ChronoField.MICRO_OF_SECOND, 0, 6, true)
          .optionalEnd()
          .toFormatter(Locale.ROOT);

  private static int precision(MySqlColumn c) {
    return c.precision() == null ? 10 : c.precision();
  }

  private static int scale(MySqlColumn c) {
    return c.scale() == null ? 0 : c.scale();
  }

  private static ShardRouterException unsupported(MySqlColumn c, String fix) {
    return new ShardRouterException(
        String.format(
            "Cannot map column '%s' of MySQL type '%s': unsupported; %s",
            c.name(), c.columnType(), fix));
  }

  /**
   * A float's canonical text: its shortest decimal (unique per value) and its bits, so one flipped
   * bit shows.
   */
  static String floatBits(float f) {
    return Float.toString(f) + " (0x" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
  }

  /**
   * A Debezium decimal value (a BigDecimal; a long for BIGINT UNSIGNED in "long" mode; a number or
   * text) as a BigDecimal.
   */
  private static BigDecimal bigDecimal(Object v) {
    if (v instanceof BigDecimal b) {
      return b;
    }
    if (v instanceof Long l) {
      return new BigDecimal(
          new BigInteger(Long.toUnsignedString(l))); // BIGINT UNSIGNED in "long" mode
    }
    return new BigDecimal(v.toString());
  }

  private static DecimalData decimalData(Object v, int precision, int scale) {
    BigDecimal bd = bigDecimal(v);
    DecimalData d = DecimalData.fromBigDecimal(bd, precision, scale);
    if (d == null) {
      throw new IllegalArgumentException(
          "value " + bd.toPlainString() + " does not fit decimal(" + precision + "," + scale + ")");
    }
    return d;
  }

  /**
   * The exact digits of a decimal value at {@code scale}; a value with more fraction digits fails
   * (no rounding).
   */
  static String plainDecimal(Object v, int scale) {
    BigDecimal bd = bigDecimal(v);
    try {
      return bd.setScale(scale).toPlainString();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          "value " + bd.toPlainString() + " has more than " + scale + " fraction digits", e);
    }
  }

  private static Boolean toBoolean(Object v) {
    if (v instanceof Boolean b) {
      return b;
    }
    if (v instanceof Number n) {
      return n.longValue() != 0;
    }
    for (byte b : rawBytes(v)) {
      if (b != 0) {
        return true;
      }
    }
    return false;
  }

  /** Debezium gives BIT(n) little-endian; MySQL (and JDBC) show it big-endian, ceil(n/8) bytes. */
  private static byte[] bitsBigEndian(Object v, Schema s, MySqlColumn c) {
    byte[] bytes = rawBytes(v);
    int length = c.precision() == null ? bytes.length : (c.precision() + 7) / 8;
    String param = s.parameters() == null ? null : s.parameters().get(Bits.LENGTH_FIELD);
    if (param != null) {
      length = (Integer.parseInt(param) + 7) / 8;
    }
    byte[] bigEndian = new byte[length];
    for (int i = 0; i < length && i < bytes.length; i++) {
      bigEndian[length - 1 - i] = bytes[i];
    }
    return bigEndian;
  }

  private static byte[] geometryWkb(Object v, Schema s) {
    if (v instanceof Struct struct) {
      if (Geometry.LOGICAL_NAME.equals(s.name())
          || struct.schema().field(Geometry.WKB_FIELD) != null) {
        return rawBytes(struct.get(Geometry.WKB_FIELD));
      }
      throw new IllegalArgumentException(
          "unexpected struct " + s.name() + " for a geometry column");
    }
    return rawBytes(v);
  }

  static byte[] rawBytes(Object v) {
    if (v instanceof byte[] b) {
      return b;
    }
    if (v instanceof ByteBuffer buffer) {
      ByteBuffer dup = buffer.duplicate();
      byte[] b = new byte[dup.remaining()];
      dup.get(b);
      return b;
    }
    throw new IllegalArgumentException(
        "unexpected value of " + v.getClass().getName() + " for a bytes column");
  }

  private static String hex(Object v) {
    return HEX.formatHex(rawBytes(v));
  }

  /** TIME as signed microseconds, from any of Debezium's TIME representations. */
  private static long timeMicros(Object v, Schema s) {
    if (v instanceof java.time.Duration d) {
      return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1000);
    }
    long n = ((Number) v).longValue();
    String name = s.name();
    if (MicroTime.SCHEMA_NAME.equals(name)) {
      return n;
    }
    if (NanoTime.SCHEMA_NAME.equals(name)) {
      return Math.floorDiv(n, 1000L);
    }
    if (Time.SCHEMA_NAME.equals(name) || v instanceof Integer) {
      return n * 1000L; // io.debezium.time.Time: milliseconds
    }
    return n;
  }

  /** ±H:MM:SS.ffffff (hours unbounded: MySQL TIME reaches 838). */
  static String formatTime(long micros) {
    String sign = micros < 0 ? "-" : "";
    long abs = Math.abs(micros);
    long seconds = abs / 1_000_000L;
    return String.format(
        Locale.ROOT,
        "%s%d:%02d:%02d.%06d",
        sign,
        seconds / 3600,
        (seconds / 60) % 60,
        seconds % 60,
        abs % 1_000_000L);
  }

  /** MySQL's TIME text ([-]H:MM:SS[.f…]) to signed microseconds. */
  static long parseTime(String text) {
    boolean negative = text.startsWith("-");
    String t = negative ? text.substring(1) : text;
    int dot = t.indexOf('.');
    String hms = dot < 0 ? t : t.substring(0, dot);
    String[] parts = hms.split(":");
    long seconds =
        Long.parseLong(parts[0]) * 3600 + Long.parseLong(parts[1]) * 60 + Long.parseLong(parts[2]);
    long fraction = 0;
    if (dot >= 0) {
      String f = (t.substring(dot + 1) + "000000").substring(0, 6);
      fraction = Long.parseLong(f);
    }
    long micros = seconds * 1_000_000L + fraction;
    return negative ? -micros : micros;
  }

  /**
   * A MySQL date/datetime text with a zero year, month or day ({@code 0000-00-00}, {@code
   * 2024-00-10}).
   */
  static boolean hasZeroDatePart(String text) {
    if (text.length() < 10) {
      return false;
    }
    return text.startsWith("0000") || text.startsWith("00", 5) || text.startsWith("00", 8);
  }

  private static TimestampData localTimestamp(Object v, Schema s) {
    if (v instanceof java.util.Date d) {
      return TimestampData.fromEpochMillis(d.getTime());
    }
    long n = ((Number) v).longValue();
    String name = s.name();
    if (MicroTimestamp.SCHEMA_NAME.equals(name)) {
      return TimestampData.fromEpochMillis(
          Math.floorDiv(n, 1000L), (int) Math.floorMod(n, 1000L) * 1000);
    }
    if (NanoTimestamp.SCHEMA_NAME.equals(name)) {
      return TimestampData.fromEpochMillis(
          Math.floorDiv(n, 1_000_000L), (int) Math.floorMod(n, 1_000_000L));
    }
    if (Timestamp.SCHEMA_NAME.equals(name) || name == null || name.endsWith("Timestamp")) {
      return TimestampData.fromEpochMillis(n);
    }
    throw new IllegalArgumentException("unexpected timestamp representation " + name);
  }

  private static TimestampData instantTimestamp(Object v) {
    if (v instanceof String str) {
      return TimestampData.fromInstant(OffsetDateTime.parse(str).toInstant());
    }
    if (v instanceof java.util.Date d) {
      return TimestampData.fromEpochMillis(d.getTime());
    }
    if (v instanceof Instant i) {
      return TimestampData.fromInstant(i);
    }
    return TimestampData.fromEpochMillis(((Number) v).longValue());
  }
}
