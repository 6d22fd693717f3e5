package dev.shardberg.router.types;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.shyiko.mysql.binlog.event.deserialization.json.JsonBinary;
import io.debezium.data.Json;
import io.debezium.time.MicroTime;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.ResultSet;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import org.apache.flink.cdc.connectors.mysql.source.config.MySqlSourceConfigFactory;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.table.data.StringData;
import org.junit.jupiter.api.Test;

/**
 * The canonical rendering of every type family, from both sides verify compares: the value
 * Iceberg's generic reader returns and what MySQL's JDBC driver returns for the same MySQL value (a
 * fake {@link ResultSet} answering the getter the family uses, with what Connector/J returns in the
 * binary protocol).
 */
class MySqlTypeTest {

  /** A one-column result set whose getters return {@code value} (getObject: {@code object}). */
  private static ResultSet row(Object object, Object value) {
    return (ResultSet)
        Proxy.newProxyInstance(
            getClass(ResultSet.class),
            new Class<?>[] {ResultSet.class},
            (proxy, method, args) -> {
              if (method.getName().equals("getObject")) {
                return object;
              }
              return value;
            });
  }

  private static ClassLoader getClass(Class<?> c) {
    return c.getClassLoader() == null ? MySqlTypeTest.class.getClassLoader() : c.getClassLoader();
  }

  private static void renders(
      String columnType, Object icebergValue, Object jdbcValue, String canonical) throws Exception {
    MySqlColumn c = MySqlColumn.of("c", columnType, true);
    MySqlType type = MySqlType.of(c);
    assertThat(type.renderIcebergOrNull(icebergValue))
        .as("%s from Iceberg", columnType)
        .isEqualTo(canonical);
    assertThat(type.renderJdbc(row(jdbcValue, jdbcValue), 1, c))
        .as("%s from JDBC", columnType)
        .isEqualTo(canonical);
  }

  @Test
  void integers() throws Exception {
    renders("tinyint", -128, -128L, "-128");
    renders("int unsigned", 4294967295L, 4294967295L, "4294967295");
    renders("bigint", Long.MIN_VALUE, Long.MIN_VALUE, "-9223372036854775808");
  }

  @Test
  void bigintUnsignedAndDecimals() throws Exception {
    renders(
        "bigint unsigned",
        new BigDecimal("18446744073709551615"),
        new BigDecimal("18446744073709551615"),
        "18446744073709551615");
    renders(
        "decimal(38,10)",
        new BigDecimal("-9999999999999999999999999999.9999999999"),
        new BigDecimal("-9999999999999999999999999999.9999999999"),
        "-9999999999999999999999999999.9999999999");
    renders("decimal(10,2)", new BigDecimal("1.50"), new BigDecimal("1.5"), "1.50");
  }

  @Test
  void decimalsOfMoreThan38DigitsAreTheirExactDigitsAsText() throws Exception {
    String digits =
        "1234567890123456789012345678901234567890123456789012345678901234.5"; // 65 digits
    renders("decimal(65,1)", digits, new BigDecimal(digits), digits);
    renders("decimal(65,1)", "-" + digits, new BigDecimal("-" + digits), "-" + digits);
    renders("decimal(65,1)", "0.0", BigDecimal.ZERO, "0.0");
    renders(
        "decimal(65,30)",
        "-0.000000000000000000000000000001",
        new BigDecimal("-1E-30"),
        "-0.000000000000000000000000000001");
    // the tagger: Debezium's BigDecimal (or text) at the column's scale, never with an exponent
    MySqlColumn c = MySqlColumn.of("c", "decimal(65,30)", true);
    assertThat(MySqlType.of(c).toFlink(new BigDecimal("1E+3"), null, c))
        .isEqualTo(StringData.fromString("1000.000000000000000000000000000000"));
    assertThat(MySqlType.of(c).toFlink("-1E-30", null, c))
        .isEqualTo(StringData.fromString("-0.000000000000000000000000000001"));
    MySqlColumn one = MySqlColumn.of("c", "decimal(40,1)", true);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> MySqlType.of(one).toFlink(new BigDecimal("0.05"), null, one))
        .hasMessage("value 0.05 has more than 1 fraction digits");
  }

  @Test
  void floatIsExactToTheBitAndDouble() throws Exception {
    renders("float", 707.14288330078125f, 707.14288330078125f, "707.1429 (0x4430c925)");
    assertThat(MySqlType.FLOAT.renderIceberg(Math.nextUp(707.14288330078125f)))
        .isEqualTo("707.14294 (0x4430c926)");
    renders("double", -Double.MAX_VALUE, -Double.MAX_VALUE, "-1.7976931348623157E308");
  }

  @Test
  void bitsAndBytes() throws Exception {
    renders("bit(1)", true, true, "true");
    renders("bit(10)", ByteBuffer.wrap(new byte[] {3, -1}), new byte[] {3, -1}, "03ff");
    renders("varbinary(4)", ByteBuffer.wrap(new byte[] {0, 1}), new byte[] {0, 1}, "0001");
    // JDBC returns MySQL's internal geometry: a 4-byte SRID, then the WKB that Iceberg holds
    byte[] wkb = HexFormat.of().parseHex("010100000000000000000000000000000000000000");
    byte[] internal = new byte[wkb.length + 4];
    System.arraycopy(wkb, 0, internal, 4, wkb.length);
    renders("point", ByteBuffer.wrap(wkb), internal, HexFormat.of().formatHex(wkb));
  }

  @Test
  void stringsEnumSetAndJson() throws Exception {
    renders("varchar(10)", "日本語 😀", "日本語 😀", "日本語 😀");
    renders("enum('a','b')", "b", "b", "b");
    renders("set('a','b')", "", "", "");
    renders("json", "{\"k\": [1, 2.5]}", "{\"k\": [1, 2.5]}", "{\"k\": [1, 2.5]}");
  }

  @Test
  void datesAndZeroDates() throws Exception {
    renders("date", LocalDate.of(1000, 1, 1), "1000-01-01", "1000-01-01");
    renders("date", null, "0000-00-00", MySqlType.NULL);
    renders(
        "datetime(6)",
        LocalDateTime.parse("9999-12-31T23:59:59.999999"),
        "9999-12-31 23:59:59.999999",
        "9999-12-31T23:59:59.999999");
    renders(
        "datetime",
        LocalDateTime.parse("2024-02-29T12:00"),
        "2024-02-29 12:00:00",
        "2024-02-29T12:00:00.000000");
    renders("datetime(3)", null, "0000-00-00 00:00:00.000", MySqlType.NULL);
  }

  @Test
  void timeIsSignedMicrosecondsOverTheWholeRange() throws Exception {
    renders("time(6)", -3_020_399_999_999L, "-838:59:59.999999", "-838:59:59.999999");
    renders("time", 3_020_399_000_000L, "838:59:59", "838:59:59.000000");
    renders("time(1)", -100_000L, "-00:00:00.1", "-0:00:00.100000");
    renders("time(3)", 90_000_500_000L, "25:00:00.500", "25:00:00.500000");
  }

  @Test
  void yearZeroStaysZero() throws Exception {
    renders("year", 0, (short) 0, "0");
    renders("year", 2155, (short) 2155, "2155");
    renders("year", 1901, (short) 1901, "1901");
  }

  @Test
  void nullIsOneSymbolOnBothSides() throws Exception {
    renders("float", null, null, MySqlType.NULL);
    renders("timestamp(6)", null, null, MySqlType.NULL);
  }

  @Test
  void timestampIsTheInstant() {
    assertThat(
            MySqlType.TIMESTAMP.renderIceberg(OffsetDateTime.parse("2038-01-19T03:14:07.999999Z")))
        .isEqualTo("2038-01-19T03:14:07.999999Z");
  }

  @Test
  void yearConverterDeliversTheStoredYear() {
    assertThat(YearConverter.storedYear(java.time.Year.of(1900))).as("binlog 0000").isZero();
    assertThat(YearConverter.storedYear((short) 0)).as("JDBC 0000").isZero();
    assertThat(YearConverter.storedYear(java.time.Year.of(1901))).isEqualTo(1901);
    assertThat(YearConverter.storedYear(2155)).isEqualTo(2155);
    assertThat(YearConverter.storedYear(2000)).isEqualTo(2000);
  }

  @Test
  void timeConvertsFromEveryDebeziumRepresentation() {
    MySqlColumn c = MySqlColumn.of("c", "time(6)", true);
    Schema micro = MicroTime.builder().optional().build();
    assertThat(MySqlType.TIME.toFlink(-3_020_399_999_999L, micro, c))
        .isEqualTo(-3_020_399_999_999L);
    assertThat(MySqlType.TIME.toFlink(-90_000_500, io.debezium.time.Time.builder().build(), c))
        .isEqualTo(-90_000_500_000L);
  }

  /**
   * MySQL 8 stores JSON in its binary format and the binlog carries those bytes; Debezium renders
   * them with the binlog client's formatter. With Flink CDC's non-legacy JSON format (what every
   * Shardberg source sets) that text is MySQL's own rendering — the one a snapshot {@code SELECT}
   * returns — so a row's JSON does not change text on its next update. MySQL 8 cannot run here
   * (MariaDB stores JSON as text), so this builds the binary document MySQL 8 writes for {@code
   * {"a": [1, "x"]}}.
   */
  @Test
  void mysql8BinaryJsonFromTheBinlogReadsAsTheSnapshotText() throws Exception {
    new MySqlSourceConfigFactory()
        .hostname("localhost")
        .port(3306)
        .username("u")
        .password("p")
        .databaseList("db")
        .tableList("db.t")
        .serverTimeZone("UTC")
        .useLegacyJsonFormat(false)
        .createConfig(
            0); // the formatter reads this setting (a JVM-wide flag set by the source config)
    byte[] document =
        HexFormat.of()
            .parseHex(
                "00" // small object
                    + "0100"
                    + "1800" // 1 member, 24 bytes
                    + "0b00"
                    + "0100" // key at 11, length 1
                    + "020c00" // value: small array at 12
                    + "61" // "a"
                    + "0200"
                    + "0c00" // array: 2 elements, 12 bytes
                    + "050100" // int16 1, inlined
                    + "0c0a00" // string at 10
                    + "0178"); // "x"
    String text = JsonBinary.parseAsString(document);
    assertThat(text).isEqualTo("{\"a\": [1, \"x\"]}");

    // and the tagger keeps it verbatim
    MySqlColumn c = MySqlColumn.of("doc", "json", true);
    assertThat(MySqlType.of(c).toFlink(text, Json.builder().optional().build(), c))
        .isEqualTo(StringData.fromString(text));
    assertThat(MySqlType.JSON.renderJdbc(row(text, text), 1, c))
        .isEqualTo(MySqlType.JSON.renderIceberg(text));
  }
}
