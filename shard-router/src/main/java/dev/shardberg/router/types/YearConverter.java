package dev.shardberg.router.types;

import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import java.util.Locale;
import java.util.Properties;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.SchemaBuilder;

/**
 * A Debezium custom converter for {@code YEAR} columns that delivers the year MySQL stores: 0 for
 * {@code 0000}, else 1901 … 2155. Without it Debezium reports {@code 0000} as 2000 in the snapshot
 * (it reads YEAR as a two-digit year when the value is below 100) and as 1900 from the binlog (the
 * binlog client adds 1900 to the stored byte, 0). Neither 1900 nor a YEAR value below 100 exists in
 * MySQL, so both map back to 0 without ambiguity once the JDBC driver delivers the number ({@code
 * yearIsDateType=false}, see {@link
 * dev.shardberg.router.discovery.MySqlHost#REQUIRED_JDBC_PROPERTIES}).
 *
 * <p>Registered on every source through the Debezium properties of {@link #DEBEZIUM_PROPERTIES}.
 */
public final class YearConverter implements CustomConverter<SchemaBuilder, RelationalColumn> {

  /** Debezium properties that install this converter. */
  public static final java.util.Map<String, String> DEBEZIUM_PROPERTIES =
      java.util.Map.of(
          "converters", "shardberg_year", "shardberg_year.type", YearConverter.class.getName());

  @Override
  public void configure(Properties props) {}

  @Override
  public void converterFor(
      RelationalColumn column, ConverterRegistration<SchemaBuilder> registration) {
    if (!"YEAR".equals(column.typeName().toUpperCase(Locale.ROOT))) {
      return;
    }
    SchemaBuilder schema = SchemaBuilder.int32();
    if (column.isOptional()) {
      schema.optional();
    }
    registration.register(schema, v -> v == null ? null : storedYear(v));
  }

  /**
   * The stored year of a YEAR value as Debezium's sources hand it over: a {@link java.time.Year}
   * from the binlog client (1900 + the stored byte), a number from JDBC, or an already converted
   * int.
   */
  static int storedYear(Object v) {
    int year;
    if (v instanceof java.time.Year y) {
      year = y.getValue();
    } else if (v instanceof java.sql.Date d) {
      year = d.toLocalDate().getYear();
    } else if (v instanceof Number n) {
      year = n.intValue();
    } else {
      year = Integer.parseInt(v.toString().trim());
    }
    // 1900 (binlog) and 2000 reached through a two-digit adjustment cannot come from 1901..2155;
    // numbers below 100 are the stored 0000 read as a number (MySQL stores no other year < 1901)
    return year == 1900 || year < 100 ? 0 : year;
  }
}
