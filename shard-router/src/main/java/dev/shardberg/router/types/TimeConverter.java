package dev.shardberg.router.types;

import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import io.debezium.time.MicroTime;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.SchemaBuilder;

/**
 * A Debezium custom converter for {@code TIME} columns that delivers every TIME value as its signed
 * microseconds (Debezium's {@code io.debezium.time.MicroTime}), exactly, in the snapshot and from
 * the binlog.
 *
 * <p>Why: Flink CDC reads a snapshot TIME as MySQL's text and Debezium parses it with {@code
 * MySqlValueConverters.stringToDuration}, which takes the sign from the hours field only: {@code
 * -00:00:00.001} has hours {@code 0} and arrives as +00:00:00.001. No text in the format that
 * parser accepts ({@code [-]H:M:S[.f]}) reads as a value between -01:00:00 and 0. So {@link
 * ExactSnapshotDriver} selects each TIME column of a chunk scan as {@link #snapshotSelect}: MySQL's
 * fields of the absolute value, with {@value #NEGATIVE_HOURS} hours added when the value is
 * negative. Legal TIME values lie within ±839 hours, so a duration of {@value #NEGATIVE_HOURS}
 * hours or more can only be such an encoded negative value, and {@link #micros} turns it back. The
 * binlog delivers the duration itself (decoded exactly by {@link BinlogTime2}), which is never that
 * large, so one converter serves both phases.
 *
 * <p>The conversion is done here, before Debezium builds the record, and not in the tagger: the
 * record's key carries the true value too, which Flink CDC relies on when it merges the binlog
 * changes read while a chunk was scanned into the chunk's rows (by key).
 *
 * <p>Registered on every source through the Debezium properties of {@link #DEBEZIUM_PROPERTIES}.
 */
public final class TimeConverter implements CustomConverter<SchemaBuilder, RelationalColumn> {

  /**
   * Debezium properties that install this converter (its name, to be added to {@code converters},
   * and its class).
   */
  public static final Map<String, String> DEBEZIUM_PROPERTIES =
      Map.of("converters", "shardberg_time", "shardberg_time.type", TimeConverter.class.getName());

  /**
   * Hours added to the absolute value of a negative TIME in the snapshot's text; beyond any legal
   * TIME (838:59:59.999999).
   */
  static final long NEGATIVE_HOURS = 1000;

  private static final long NEGATIVE_OFFSET_MICROS = NEGATIVE_HOURS * 3600 * 1_000_000L;

  @Override
  public void configure(Properties props) {}

  @Override
  public void converterFor(
      RelationalColumn column, ConverterRegistration<SchemaBuilder> registration) {
    if (!"TIME".equals(column.typeName().toUpperCase(Locale.ROOT))) {
      return;
    }
    SchemaBuilder schema = MicroTime.builder();
    if (column.isOptional()) {
      schema.optional();
    }
    registration.register(schema, v -> v == null ? null : micros(v));
  }

  /**
   * The SQL a chunk scan selects for TIME column {@code quotedColumn} (NULL stays NULL): the text
   * {@code H:M:S.ffffff} of the absolute value, H + {@value #NEGATIVE_HOURS} for a negative value,
   * which Debezium's parser reads as a non-negative duration. HOUR, MINUTE, SECOND and MICROSECOND
   * of a negative TIME are the fields of its absolute value (MariaDB documents it for HOUR; MySQL
   * documents HOUR's range as 0 … 838).
   */
  static String snapshotSelect(String quotedColumn) {
    String c = quotedColumn;
    return "CONCAT(IF("
        + c
        + " < 0, "
        + NEGATIVE_HOURS
        + ", 0) + HOUR("
        + c
        + "), ':', MINUTE("
        + c
        + "), ':', SECOND("
        + c
        + "), '.', LPAD(MICROSECOND("
        + c
        + "), 6, '0'))";
  }

  /**
   * The signed microseconds of a TIME value as Debezium hands it over: a {@link Duration} from the
   * binlog or from the snapshot's text (an encoded negative value when {@value #NEGATIVE_HOURS}
   * hours or more).
   */
  static long micros(Object value) {
    if (value instanceof Duration d) {
      long micros =
          Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1000);
      return micros >= NEGATIVE_OFFSET_MICROS ? NEGATIVE_OFFSET_MICROS - micros : micros;
    }
    if (value instanceof Number n) {
      return n.longValue(); // already microseconds
    }
    throw new IllegalArgumentException(
        "unexpected TIME value of " + value.getClass().getName() + ": " + value);
  }
}
