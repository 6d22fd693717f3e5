package dev.shardberg.router.types;

import io.debezium.time.MicroTime;
import io.debezium.time.MicroTimestamp;
import io.debezium.time.NanoTime;
import io.debezium.time.NanoTimestamp;
import io.debezium.time.Time;
import io.debezium.time.Timestamp;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Locale;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The date and time families of {@link MySqlType} (DATE, TIME, DATETIME, TIMESTAMP and YEAR): their
 * Flink and Iceberg types, conversions and renderings, zero dates included. Each constant
 * implements the {@link MySqlType} constant of the same name, which documents it.
 */
enum TemporalFamilies implements TypeFamily {
  DATE {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new DateType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
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
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      String text = rs.getString(i);
      return hasZeroDatePart(text) ? MySqlType.NULL : LocalDate.parse(text).toString();
    }
  },
  TIME {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new BigIntType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
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
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return formatTime(parseTime(rs.getString(i)));
    }

    // Connector/J decodes a binary-protocol TIME as a time of day (wrong beyond ±24 h): read
    // MySQL's text
    @Override
    public String selectExpression(String quotedColumn) {
      return "CAST(" + quotedColumn + " AS CHAR)";
    }
  },
  DATETIME {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new TimestampType(c.nullable(), TypeMapping.ICEBERG_TIMESTAMP_PRECISION);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
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
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      String text = rs.getString(i);
      return hasZeroDatePart(text)
          ? MySqlType.NULL
          : DATETIME_TEXT.format(LocalDateTime.parse(text, MYSQL_DATETIME));
    }
  },
  TIMESTAMP {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new LocalZonedTimestampType(c.nullable(), TypeMapping.ICEBERG_TIMESTAMP_PRECISION);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
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
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      String text = rs.getString(i);
      return hasZeroDatePart(text) ? MySqlType.NULL : rs.getTimestamp(i).toInstant().toString();
    }
  },
  YEAR {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new IntType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
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
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Integer.toString(
          YearConverter.storedYear(rs.getObject(i))); // yearIsDateType=false: a Short
    }
  };

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
