package dev.shardberg.tests.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.MySqlType;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.TestConfig;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every mapped MySQL type, with boundary values, through our whole job: MariaDB (binlog) → {@code
 * ShardbergPipeline} (Flink CDC MySqlSource with ShardTaggingDeserializer, ShardbergSink's writers
 * and coordinator) in a local MiniCluster → a Hadoop-catalog table → read back with IcebergGenerics
 * and compared value by value; after each phase our {@code verify} must match too. Snapshot rows (1
 * min, 2 nulls, 3 max, and one row per TIME case at every precision, 100 + i) are checked first;
 * then the binlog phase inserts the same boundary rows again (11, 12, 13, 200 + i), updates row 1
 * to a third set of values and each TIME case row to the next case, and deletes rows 2 and 200;
 * then a real Spark 3.5 reads the table and every value it returns must equal MySQL's. Finally one
 * FLOAT bit and one YEAR are corrupted in the table behind the job's back, and verify must name
 * both keys and columns.
 */
class TypeRoundTripTest {

  /**
   * A column: its DDL, and SQL literal + expected Iceberg generic value for the min, max and mid
   * rows.
   */
  record Col(
      String name,
      String ddl,
      String minSql,
      Object min,
      String maxSql,
      Object max,
      String midSql,
      Object mid) {}

  /**
   * Marks a bytes column whose expected value is read back from MariaDB with the given SQL
   * expression.
   */
  record FromServer(String expression) {}

  static final List<Col> COLUMNS =
      List.of(
          new Col("c_tinyint", "TINYINT", "-128", -128, "127", 127, "0", 0),
          new Col("c_tinyint_u", "TINYINT UNSIGNED", "0", 0, "255", 255, "1", 1),
          new Col("c_tinyint1", "TINYINT(1)", "-128", -128, "127", 127, "2", 2),
          new Col("c_smallint", "SMALLINT", "-32768", -32768, "32767", 32767, "0", 0),
          new Col("c_smallint_u", "SMALLINT UNSIGNED", "0", 0, "65535", 65535, "1", 1),
          new Col("c_mediumint", "MEDIUMINT", "-8388608", -8388608, "8388607", 8388607, "0", 0),
          new Col("c_mediumint_u", "MEDIUMINT UNSIGNED", "0", 0, "16777215", 16777215, "1", 1),
          new Col(
              "c_int",
              "INT",
              "-2147483648",
              Integer.MIN_VALUE,
              "2147483647",
              Integer.MAX_VALUE,
              "0",
              0),
          new Col("c_int_u", "INT UNSIGNED", "0", 0L, "4294967295", 4294967295L, "1", 1L),
          new Col(
              "c_bigint",
              "BIGINT",
              "-9223372036854775808",
              Long.MIN_VALUE,
              "9223372036854775807",
              Long.MAX_VALUE,
              "0",
              0L),
          new Col(
              "c_bigint_u",
              "BIGINT UNSIGNED",
              "0",
              new BigDecimal("0"),
              "18446744073709551615",
              new BigDecimal("18446744073709551615"),
              "9223372036854775808",
              new BigDecimal("9223372036854775808")),
          new Col(
              "c_decimal", "DECIMAL(38,10)",
              "-9999999999999999999999999999.9999999999",
                  new BigDecimal("-9999999999999999999999999999.9999999999"),
              "9999999999999999999999999999.9999999999",
                  new BigDecimal("9999999999999999999999999999.9999999999"),
              "0.0000000001", new BigDecimal("0.0000000001")),
          new Col(
              "c_decimal0",
              "DECIMAL(18,0)",
              "-999999999999999999",
              new BigDecimal("-999999999999999999"),
              "999999999999999999",
              new BigDecimal("999999999999999999"),
              "0",
              new BigDecimal("0")),
          // more than 38 digits (MySQL allows 65; Flink CDC's own full_types fixture has
          // DECIMAL(65,1)): an Iceberg
          // string of the exact digits at the column's scale. DECIMAL(65,1) holds 64 digits before
          // the point
          new Col(
              "c_decimal65",
              "DECIMAL(65,1)",
              "-" + "9".repeat(64) + ".9",
              "-" + "9".repeat(64) + ".9",
              "1234567890123456789012345678901234567890123456789012345678901234.5",
              "1234567890123456789012345678901234567890123456789012345678901234.5",
              "0",
              "0.0"),
          new Col(
              "c_decimal65_30",
              "DECIMAL(65,30)",
              "-" + "9".repeat(35) + "." + "9".repeat(30),
              "-" + "9".repeat(35) + "." + "9".repeat(30),
              "9".repeat(35) + "." + "9".repeat(30),
              "9".repeat(35) + "." + "9".repeat(30),
              "-0." + "0".repeat(29) + "1",
              "-0." + "0".repeat(29) + "1"),
          new Col(
              "c_decimal39",
              "DECIMAL(39,0)",
              "-" + "9".repeat(39),
              "-" + "9".repeat(39),
              "9".repeat(39),
              "9".repeat(39),
              "1",
              "1"),
          new Col(
              "c_float",
              "FLOAT",
              "-3.40282e38",
              -3.40282e38f,
              "3.40282e38",
              3.40282e38f,
              "1.17549e-38",
              1.17549e-38f),
          // beyond the 6 digits the text protocol prints for FLOAT: 707.14288330078125 would read
          // back as 707.143
          // (the snapshot reads them exactly through ExactSnapshotDriver)
          new Col(
              "c_float_digits",
              "FLOAT",
              "707.14288330078125",
              707.14288330078125f,
              "-0.1",
              -0.1f,
              "16777217",
              16777216f),
          // negative zero (kept by ExactSnapshotDriver's `* 1E0`; `+ 0E0` would make it +0), the
          // largest float, the
          // smallest subnormal
          new Col(
              "c_float_edge",
              "FLOAT",
              "-0E0",
              -0.0f,
              "3.4028234663852886E38",
              Float.MAX_VALUE,
              "1.401298464324817E-45",
              Float.MIN_VALUE),
          // a subnormal with many digits, the smallest normal float, and its negative
          new Col(
              "c_float_sub",
              "FLOAT",
              "9.99994610111476E-41",
              9.99994610111476E-41f,
              "1.1754943508222875E-38",
              Float.MIN_NORMAL,
              "-1.1754943508222875E-38",
              -Float.MIN_NORMAL),
          new Col(
              "c_double",
              "DOUBLE",
              "-1.7976931348623157E308",
              -Double.MAX_VALUE,
              "1.7976931348623157E308",
              Double.MAX_VALUE,
              "2.2250738585072014E-308",
              Double.MIN_NORMAL),
          new Col("c_bit1", "BIT(1)", "b'0'", false, "b'1'", true, "b'1'", true),
          new Col(
              "c_bit10",
              "BIT(10)",
              "b'0'",
              new FromServer("c_bit10"),
              "b'1111111111'",
              new FromServer("c_bit10"),
              "b'1000000001'",
              new FromServer("c_bit10")),
          new Col(
              "c_bit64",
              "BIT(64)",
              "b'0'",
              new FromServer("c_bit64"),
              "x'FFFFFFFFFFFFFFFF'",
              new FromServer("c_bit64"),
              "b'1'",
              new FromServer("c_bit64")),
          new Col("c_char", "CHAR(10)", "''", "", "'ÿÿÿÿÿÿÿÿÿÿ'", "ÿÿÿÿÿÿÿÿÿÿ", "'abc'", "abc"),
          new Col(
              "c_varchar",
              "VARCHAR(100)",
              "''",
              "",
              "'日本語 ü 😀 Ωmega'",
              "日本語 ü 😀 Ωmega",
              "'hello'",
              "hello"),
          new Col(
              "c_text",
              "TEXT",
              "''",
              "",
              "REPEAT('ß', 3000)",
              "ß".repeat(3000),
              "'line1\\nline2'",
              "line1\nline2"),
          new Col(
              "c_longtext",
              "LONGTEXT",
              "''",
              "",
              "REPEAT('😀', 20000)",
              "😀".repeat(20000),
              "'x'",
              "x"),
          new Col(
              "c_binary",
              "BINARY(4)",
              "x''",
              new FromServer("c_binary"),
              "x'FFFFFFFF'",
              new FromServer("c_binary"),
              "x'01'",
              new FromServer("c_binary")),
          new Col(
              "c_varbinary",
              "VARBINARY(10)",
              "x''",
              new FromServer("c_varbinary"),
              "x'00FF00FF00FF00FF00FF'",
              new FromServer("c_varbinary"),
              "x'00'",
              new FromServer("c_varbinary")),
          new Col(
              "c_blob",
              "BLOB",
              "x''",
              new FromServer("c_blob"),
              "REPEAT(x'FF', 5000)",
              new FromServer("c_blob"),
              "x'DEADBEEF'",
              new FromServer("c_blob")),
          new Col(
              "c_enum",
              "ENUM('small','medium','large')",
              "'small'",
              "small",
              "'large'",
              "large",
              "'medium'",
              "medium"),
          new Col("c_set", "SET('a','b','c')", "''", "", "'a,b,c'", "a,b,c", "'a,c'", "a,c"),
          new Col(
              "c_json",
              "JSON",
              "'{}'",
              "{}",
              "'{\"k\":[1,2.5,\"ü\"],\"n\":null}'",
              "{\"k\":[1,2.5,\"ü\"],\"n\":null}",
              "'[]'",
              "[]"),
          new Col(
              "c_date",
              "DATE",
              "'1000-01-01'",
              LocalDate.of(1000, 1, 1),
              "'9999-12-31'",
              LocalDate.of(9999, 12, 31),
              "'2024-02-29'",
              LocalDate.of(2024, 2, 29)),
          new Col(
              "c_zero_date",
              "DATE",
              "'0000-00-00'",
              null,
              "'9999-12-31'",
              LocalDate.of(9999, 12, 31),
              "'0000-00-00'",
              null),
          // TIME at every precision: signed microseconds over the whole range, beyond a day and
          // negative
          new Col(
              "c_time",
              "TIME",
              "'-838:59:59'",
              -3_020_399_000_000L,
              "'838:59:59'",
              3_020_399_000_000L,
              "'24:00:01'",
              86_401_000_000L),
          new Col(
              "c_time1",
              "TIME(1)",
              "'-838:59:58.9'",
              -3_020_398_900_000L,
              "'838:59:59.9'",
              3_020_399_900_000L,
              "'-00:00:00.1'",
              -100_000L),
          new Col(
              "c_time3",
              "TIME(3)",
              "'-838:59:58.999'",
              -3_020_398_999_000L,
              "'838:59:59.999'",
              3_020_399_999_000L,
              "'-25:00:00.5'",
              -90_000_500_000L),
          new Col(
              "c_time6",
              "TIME(6)",
              "'-838:59:58.999999'",
              -3_020_398_999_999L,
              "'838:59:59.999999'",
              3_020_399_999_999L,
              "'00:00:00.000001'",
              1L),
          // a negative TIME(p > 0) with a zero fraction (Debezium's binlog decoding got it wrong,
          // docs/type-mapping.md)
          new Col(
              "c_time6_whole",
              "TIME(6)",
              "'-838:59:59.000000'",
              -3_020_399_000_000L,
              "'-01:00:00.000001'",
              -3_600_000_001L,
              "'100:00:00.5'",
              360_000_500_000L),
          // TIME(p) for every p: the TIME cases below fill these in rows of their own
          timeCol(0),
          timeCol(1),
          timeCol(2),
          timeCol(3),
          timeCol(4),
          timeCol(5),
          timeCol(6),
          new Col(
              "c_datetime",
              "DATETIME",
              "'1000-01-01 00:00:00'",
              LocalDateTime.parse("1000-01-01T00:00:00"),
              "'9999-12-31 23:59:59'",
              LocalDateTime.parse("9999-12-31T23:59:59"),
              "'2024-02-29 12:00:00'",
              LocalDateTime.parse("2024-02-29T12:00:00")),
          new Col(
              "c_datetime3",
              "DATETIME(3)",
              "'1000-01-01 00:00:00.000'",
              LocalDateTime.parse("1000-01-01T00:00:00"),
              "'9999-12-31 23:59:59.999'",
              LocalDateTime.parse("9999-12-31T23:59:59.999"),
              "'2024-02-29 12:00:00.5'",
              LocalDateTime.parse("2024-02-29T12:00:00.5")),
          new Col(
              "c_datetime6",
              "DATETIME(6)",
              "'1000-01-01 00:00:00.000000'",
              LocalDateTime.parse("1000-01-01T00:00:00"),
              "'9999-12-31 23:59:59.999999'",
              LocalDateTime.parse("9999-12-31T23:59:59.999999"),
              "'2024-02-29 12:00:00.000001'",
              LocalDateTime.parse("2024-02-29T12:00:00.000001")),
          new Col(
              "c_zero_datetime",
              "DATETIME(6)",
              "'0000-00-00 00:00:00.000000'",
              null,
              "'2024-02-29 12:00:00.000001'",
              LocalDateTime.parse("2024-02-29T12:00:00.000001"),
              "'0000-00-00 00:00:00'",
              null),
          new Col(
              "c_timestamp",
              "TIMESTAMP(6) NULL",
              "'1970-01-01 00:00:01.000000'",
              OffsetDateTime.parse("1970-01-01T00:00:01Z"),
              "'2038-01-19 03:14:07.999999'",
              OffsetDateTime.parse("2038-01-19T03:14:07.999999Z"),
              "'2000-01-01 00:00:00.123456'",
              OffsetDateTime.parse("2000-01-01T00:00:00.123456Z")),
          new Col("c_year", "YEAR", "0", 0, "2155", 2155, "1901", 1901),
          new Col(
              "c_geometry",
              "GEOMETRY",
              "ST_GeomFromText('POINT(0 0)')",
              new FromServer("ST_AsBinary(c_geometry)"),
              "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))')",
              new FromServer("ST_AsBinary(c_geometry)"),
              "ST_GeomFromText('LINESTRING(1 1,2 2)')",
              new FromServer("ST_AsBinary(c_geometry)")),
          new Col(
              "c_point",
              "POINT",
              "POINT(-180, -90)",
              new FromServer("ST_AsBinary(c_point)"),
              "POINT(180, 90)",
              new FromServer("ST_AsBinary(c_point)"),
              "POINT(1.5, 2.5)",
              new FromServer("ST_AsBinary(c_point)")));

  /**
   * TIME values that decoding got wrong, or that sit on a boundary, as a function of the column's
   * smallest step {@code unit} (10^(6 - p) microseconds for TIME(p)). Each case is one row with its
   * value in every {@code c_time_fsp<p>} column (p = 0..6), read in the snapshot phase (rows 100 +
   * i) and from the binlog (rows 200 + i inserted; rows 100 + i updated to the next case; row 200
   * deleted).
   */
  record TimeCase(String what, java.util.function.LongUnaryOperator micros) {}

  static final long S = 1_000_000L;
  static final long MAX_SECONDS = 838 * 3600 + 59 * 60 + 59;

  static final List<TimeCase> TIME_CASES =
      List.of(
          new TimeCase("MySQL's minimum, -838:59:59 (zero fraction)", u -> -MAX_SECONDS * S),
          new TimeCase("MySQL's maximum, 838:59:59 (zero fraction)", u -> MAX_SECONDS * S),
          new TimeCase("MariaDB's maximum, 838:59:59.9… at p digits", u -> MAX_SECONDS * S + S - u),
          new TimeCase("-838:59:58.9… at p digits", u -> -((MAX_SECONDS - 1) * S + S - u)),
          new TimeCase("the smallest negative value, -00:00:00.0…1 (p = 0: -00:00:01)", u -> -u),
          new TimeCase(
              "the largest sub-hour negative value, -00:59:59.9…", u -> -(3599 * S + S - u)),
          new TimeCase("-00:00:01 with a zero fraction", u -> -S),
          new TimeCase("-00:00:01.0…1", u -> -(S + u)),
          new TimeCase("-00:01:00 (seconds 0)", u -> -60 * S),
          new TimeCase("-00:01:03", u -> -63 * S),
          new TimeCase("-00:01:04", u -> -64 * S),
          new TimeCase("-01:00:00 (minutes and seconds 0)", u -> -3600 * S),
          new TimeCase("-01:04:04", u -> -3844 * S),
          new TimeCase("-00:00:01.048576 at p digits", u -> -(S + 48_576 / u * u)),
          new TimeCase("-24:00:00.0…1, beyond a day", u -> -(86_400 * S + u)),
          new TimeCase("-838:00:00", u -> -838 * 3600 * S),
          new TimeCase("zero", u -> 0),
          new TimeCase("01:00:00", u -> 3600 * S));

  /**
   * The column TIME(p) the TIME cases fill; in the rows of the other columns: min, max and the
   * smallest negative.
   */
  static Col timeCol(int p) {
    long unit = unit(p);
    return new Col(
        "c_time_fsp" + p,
        "TIME(" + p + ")",
        timeLiteral(-MAX_SECONDS * S, p),
        -MAX_SECONDS * S,
        timeLiteral(MAX_SECONDS * S + S - unit, p),
        MAX_SECONDS * S + S - unit,
        timeLiteral(-unit, p),
        -unit);
  }

  /** The smallest step of TIME(p), in microseconds. */
  static long unit(int p) {
    return (long) Math.pow(10, 6 - p);
  }

  /** A TIME(p) literal as MySQL prints it: '-H:MM:SS' and p fraction digits. */
  static String timeLiteral(long micros, int p) {
    long abs = Math.abs(micros);
    long seconds = abs / S;
    String text =
        String.format(
            "%s%02d:%02d:%02d",
            micros < 0 ? "-" : "", seconds / 3600, seconds / 60 % 60, seconds % 60);
    if (p > 0) {
      text += "." + String.format("%06d", abs % S).substring(0, p);
    }
    return "'" + text + "'";
  }

  static final String DB = "types";
  static final String TABLE = "all_types_0";

  @TempDir static Path warehouse;
  static EmbeddedMariaDb server;

  @BeforeAll
  static void startServer() {
    server = EmbeddedMariaDb.start("types", 9301);
    server.createCdcUser("cdc", "cdc-pw");
    String columns =
        COLUMNS.stream().map(c -> c.name() + " " + c.ddl()).collect(Collectors.joining(", "));
    server.execute(
        "CREATE DATABASE " + DB + " CHARACTER SET utf8mb4",
        "CREATE TABLE "
            + DB
            + "."
            + TABLE
            + " (id INT NOT NULL PRIMARY KEY, "
            + columns
            + ") CHARACTER SET utf8mb4");
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void everyTypeRoundTripsThroughSnapshotAndBinlog() throws Exception {
    insert(1, Col::minSql);
    insertNulls(2);
    insert(3, Col::maxSql);
    Map<Integer, Map<String, Object>> expected = new TreeMap<>();
    expected.put(1, expectedRow(1, Col::min));
    expected.put(2, nullRow());
    expected.put(3, expectedRow(3, Col::max));
    for (int i = 0; i < TIME_CASES.size(); i++) {
      insertTimeCase(100 + i, i);
      expected.put(100 + i, timeCaseRow(100 + i, i));
    }

    // our whole job (ShardbergPipeline: MySqlSource + ShardTaggingDeserializer → ShardbergSink →
    // DeltaTaskWriter
    // → CommitCoordinator), configured as a user would, with no restarts so a failure surfaces
    ShardbergConfig config = ShardbergConfig.load(writeConfig());
    Configuration conf = new Configuration();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
    JobClient job = ShardbergPipeline.start(env, config);
    Table table = Catalogs.loadTable(config.target());
    try {
      awaitTable(table, expected);
      // the snapshot carries every FLOAT bit for bit (ExactSnapshotDriver): verify, reading MySQL
      // in the binary
      // protocol, finds no difference
      assertVerifyMatches(config);

      // the binlog: inserts of the same boundary rows, an update to a third set of values, a delete
      insert(11, Col::minSql);
      insertNulls(12);
      insert(13, Col::maxSql);
      update(1, Col::midSql);
      server.execute("DELETE FROM " + DB + "." + TABLE + " WHERE id = 2");
      expected.put(1, expectedRow(1, Col::mid));
      expected.remove(2);
      for (int i = 0; i < TIME_CASES.size(); i++) {
        insertTimeCase(200 + i, i);
        expected.put(200 + i, timeCaseRow(200 + i, i));
        int next = (i + 1) % TIME_CASES.size();
        server.execute(
            "UPDATE "
                + DB
                + "."
                + TABLE
                + " SET "
                + timeColumns()
                    .map(c -> c + " = " + timeCaseLiteral(c, next))
                    .collect(Collectors.joining(", "))
                + " WHERE id = "
                + (100 + i));
        expected.put(100 + i, timeCaseRow(100 + i, next));
      }
      server.execute("DELETE FROM " + DB + "." + TABLE + " WHERE id = 200");
      expected.remove(200);
      expected.put(11, expectedRow(11, Col::min));
      expected.put(12, nullRow());
      expected.put(13, expectedRow(13, Col::max));
      awaitTable(table, expected);
      assertVerifyMatches(config);
      assertSparkReadsWhatMySqlHolds(config);

      // a DDL the table cannot follow stops the job at once with a message naming shard, column and
      // DDL
      // (the rows above, of every type, went through the versioned rows of
      // schema.change-behavior=evolve)
      server.execute("ALTER TABLE " + DB + "." + TABLE + " MODIFY c_date DATETIME NULL");
      Throwable failure =
          catchThrowable(() -> job.getJobExecutionResult().get(3, TimeUnit.MINUTES));
      assertThat(ExceptionUtils.findThrowable(failure, ShardRouterException.class))
          .as("failure %s", failure)
          .get()
          .extracting(Throwable::getMessage)
          .asString()
          .startsWith(
              "Cannot evolve the table for a schema change on shard 0 ('types.all_types_0' on host 'a'), column 'c_date':"
                  + " column 'c_date' changes from date NULL (Iceberg date) to datetime NULL (Iceberg timestamp): a narrowing"
                  + " or incompatible change")
          .contains("DDL: 'ALTER TABLE types.all_types_0 MODIFY c_date DATETIME NULL'");
      awaitTable(table, expected); // nothing after the last commit was lost or half-written
    } finally {
      if (!job.getJobExecutionResult().isDone()) {
        job.cancel().get();
      }
      server.execute("ALTER TABLE " + DB + "." + TABLE + " MODIFY c_date DATE NULL");
    }

    // verify would notice: one flipped FLOAT bit (row 3) and one YEAR (row 13) written behind the
    // job's back
    Record row3 = readRecord(table, 3);
    float flipped =
        Float.intBitsToFloat(Float.floatToRawIntBits((Float) row3.getField("c_float_digits")) ^ 1);
    row3.setField("c_float_digits", flipped);
    Record row13 = readRecord(table, 13);
    row13.setField("c_year", 2000);
    replaceRows(table, List.of(row3, row13));
    VerifyReport report = Reconciliation.verify(config, 10);
    assertThat(report.matches()).as(report.render()).isFalse();
    assertThat(report.shards().get(0).differences())
        .extracting(Object::toString)
        .containsExactly(
            "{id=13} column c_year differs: MySQL 2155 / Iceberg 2000",
            "{id=3} column c_float_digits differs: MySQL "
                + MySqlType.FLOAT.renderIceberg(-0.1f)
                + " / Iceberg "
                + MySqlType.FLOAT.renderIceberg(flipped));
  }

  private static Path writeConfig() throws Exception {
    Path password = Files.writeString(warehouse.resolve("cdc.password"), "cdc-pw");
    return TestConfig.pipeline("type-round-trip")
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(1)
        .restart(0, "1s")
        .source(
            new TestConfig.Source("a", server.host(), server.port())
                .user("cdc")
                .passwordFile(password)
                .serverIds("5401-5404")
                .jdbcProperty("useSSL", "false"))
        // chunks of 2 rows: the snapshot reads rows 1-3 in two chunk scans with WHERE bounds
        // (ExactSnapshotDriver
        // rewrites those too)
        .snapshotChunkSize(2)
        .tables(DB, "all_types_(?<shard>\\d+)")
        .hadoopCatalog(warehouse.resolve("warehouse").toUri())
        .table("db", "all_types")
        .write(warehouse.resolve("types.yaml"));
  }

  /**
   * A real Spark 3.5 (Iceberg's Spark runtime, local, no UI) opens the table — it refuses whole
   * tables with types it does not support — and every value it returns, rendered by the column's
   * MySqlType, equals MySQL's value read through JDBC's binary protocol.
   */
  private static void assertSparkReadsWhatMySqlHolds(ShardbergConfig config) throws Exception {
    ShardPlan plan = ShardDiscovery.discover(ShardbergPipeline.logicalTable(config));
    List<MySqlColumn> columns = plan.schema().columns();
    Map<String, List<String>> mysql = new TreeMap<>();
    try (Connection c =
            DriverManager.getConnection(
                server.jdbcUrl(DB)
                    + "&useServerPrepStmts=true&yearIsDateType=false&tinyInt1isBit=false",
                EmbeddedMariaDb.ROOT_USER,
                EmbeddedMariaDb.ROOT_PASSWORD);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT "
                    + columns.stream()
                        .map(col -> MySqlType.of(col).selectExpression(col.name()))
                        .collect(Collectors.joining(", "))
                    + " FROM "
                    + TABLE);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
          values.add(MySqlType.of(columns.get(i)).renderJdbc(rs, i + 1, columns.get(i)));
        }
        mysql.put(values.get(0), values);
      }
    }
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("type-round-trip")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.datetime.java8API.enabled", "true")
            .config("spark.sql.catalog.rt", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.rt.type", "hadoop")
            .config(
                "spark.sql.catalog.rt.warehouse", warehouse.resolve("warehouse").toUri().toString())
            .getOrCreate();
    try {
      Map<String, List<String>> read = new TreeMap<>();
      for (Row row : spark.table("rt.db.all_types").collectAsList()) {
        assertThat(row.<Integer>getAs(TableLayout.SHARD_COLUMN)).isZero();
        List<String> values = new ArrayList<>();
        for (MySqlColumn column : columns) {
          Object v = row.getAs(column.name());
          if (v instanceof Instant instant) {
            v =
                instant.atOffset(
                    ZoneOffset
                        .UTC); // Spark's timestamp is the instant; Iceberg's generic reader an
            // OffsetDateTime
          }
          values.add(MySqlType.of(column).renderIcebergOrNull(v));
        }
        read.put(values.get(0), values);
      }
      assertThat(read.keySet()).isEqualTo(mysql.keySet());
      List<String> mismatches = new ArrayList<>();
      mysql.forEach(
          (id, values) -> {
            for (int i = 0; i < columns.size(); i++) {
              if (!values.get(i).equals(read.get(id).get(i))) {
                mismatches.add(
                    String.format(
                        "id %s %s: MySQL %s, Spark %s",
                        id, columns.get(i).name(), values.get(i), read.get(id).get(i)));
              }
            }
          });
      assertThat(mismatches).as("values Spark reads that differ from MySQL").isEmpty();
    } finally {
      spark.stop();
    }
  }

  private static void assertVerifyMatches(ShardbergConfig config) {
    VerifyReport report = Reconciliation.verify(config, 10);
    assertThat(report.matches()).as("verify:%n%s", report.render()).isTrue();
  }

  private static Record readRecord(Table table, int id) throws Exception {
    table.refresh();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).where(Expressions.equal("id", id)).build()) {
      return records.iterator().next().copy();
    }
  }

  /**
   * Replaces whole rows in the table, as a writer would: an equality delete of their keys and the
   * new rows.
   */
  private static void replaceRows(Table table, List<Record> rows) throws Exception {
    Schema schema = table.schema();
    int[] keyIds = schema.identifierFieldIds().stream().mapToInt(Integer::intValue).toArray();
    Schema deleteSchema = TypeUtil.select(schema, schema.identifierFieldIds());
    GenericAppenderFactory factory =
        new GenericAppenderFactory(schema, table.spec(), keyIds, deleteSchema, null);
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PARQUET).build();
    RowDelta delta = table.newRowDelta();
    for (Record row : rows) {
      PartitionKey partition = new PartitionKey(table.spec(), schema);
      partition.partition(new InternalRecordWrapper(schema.asStruct()).wrap(row));
      EqualityDeleteWriter<Record> deletes =
          factory.newEqDeleteWriter(files.newOutputFile(partition), FileFormat.PARQUET, partition);
      try (deletes) {
        GenericRecord key = GenericRecord.create(deleteSchema);
        deleteSchema.columns().forEach(f -> key.setField(f.name(), row.getField(f.name())));
        deletes.write(key);
      }
      DataWriter<Record> data =
          factory.newDataWriter(files.newOutputFile(partition), FileFormat.PARQUET, partition);
      try (data) {
        data.write(row);
      }
      delta.addDeletes(deletes.toDeleteFile()).addRows(data.toDataFile());
    }
    delta.commit();
  }

  private static void awaitTable(Table table, Map<Integer, Map<String, Object>> expected) {
    await()
        .atMost(Duration.ofMinutes(4))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              table.refresh();
              Map<Integer, Map<String, Object>> actual = readTable(table);
              assertThat(actual.keySet()).isEqualTo(expected.keySet());
              List<String> mismatches = new ArrayList<>();
              for (Map.Entry<Integer, Map<String, Object>> row : expected.entrySet()) {
                Map<String, Object> got = actual.get(row.getKey());
                for (Map.Entry<String, Object> col : row.getValue().entrySet()) {
                  Object want = col.getValue();
                  Object have = got.get(col.getKey());
                  if (!sameValue(want, have)) {
                    mismatches.add(
                        String.format(
                            "id %d %s: expected %s, found %s",
                            row.getKey(), col.getKey(), show(want), show(have)));
                  }
                }
              }
              assertThat(mismatches).as("value mismatches").isEmpty();
            });
  }

  /** The rows by id; a key (shard_number, id) read twice fails at once, not hidden by the map. */
  private static Map<Integer, Map<String, Object>> readTable(Table table) throws Exception {
    Map<Integer, Map<String, Object>> rows = new TreeMap<>();
    Set<List<Object>> keys = new HashSet<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        // by name: a row of a data file with position deletes also carries the reader's _pos column
        Map<String, Object> values = new HashMap<>();
        for (org.apache.iceberg.types.Types.NestedField column : table.schema().columns()) {
          values.put(column.name(), r.getField(column.name()));
        }
        if (!keys.add(List.of(values.get("shard_number"), values.get("id")))) {
          throw new IllegalStateException(
              String.format(
                  "Key (shard_number %s, id %s) is in the table twice",
                  values.get("shard_number"), values.get("id")));
        }
        Map<String, Object> other = rows.put((Integer) values.get("id"), values);
        if (other != null) {
          throw new IllegalStateException(
              "id " + values.get("id") + " is in two shards: " + other + " and " + values);
        }
      }
    }
    return rows;
  }

  private static boolean sameValue(Object want, Object have) {
    if (want instanceof byte[] w) {
      return have instanceof ByteBuffer b && Arrays.equals(w, bytes(b));
    }
    if (want instanceof BigDecimal w) {
      return have instanceof BigDecimal h && w.compareTo(h) == 0;
    }
    if (want instanceof OffsetDateTime w) {
      return have instanceof OffsetDateTime h
          && w.toInstant().equals(h.toInstant())
          && h.getOffset().equals(ZoneOffset.UTC);
    }
    if (have instanceof CharSequence cs && want instanceof String) {
      return want.equals(cs.toString());
    }
    return Objects.equals(want, have);
  }

  private static String show(Object v) {
    if (v instanceof byte[] b) {
      return "0x" + hex(b);
    }
    if (v instanceof ByteBuffer b) {
      return "0x" + hex(bytes(b));
    }
    String s = String.valueOf(v);
    return (v == null ? "null" : v.getClass().getSimpleName() + " ")
        + (s.length() > 60 ? s.substring(0, 60) + "…(" + s.length() + ")" : s);
  }

  private static byte[] bytes(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    byte[] out = new byte[d.remaining()];
    d.get(out);
    return out;
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(b.length, 40); i++) {
      sb.append(String.format("%02X", b[i]));
    }
    return sb + (b.length > 40 ? "…(" + b.length + " bytes)" : "");
  }

  private static void insert(int id, java.util.function.Function<Col, String> values) {
    server.execute(
        "INSERT INTO "
            + DB
            + "."
            + TABLE
            + " (id, "
            + COLUMNS.stream().map(Col::name).collect(Collectors.joining(", "))
            + ") VALUES ("
            + id
            + ", "
            + COLUMNS.stream().map(values).collect(Collectors.joining(", "))
            + ")");
  }

  /** The names of the columns the TIME cases fill. */
  private static java.util.stream.Stream<String> timeColumns() {
    return COLUMNS.stream().map(Col::name).filter(n -> n.startsWith("c_time_fsp"));
  }

  private static int precisionOf(String timeColumn) {
    return Integer.parseInt(timeColumn.substring("c_time_fsp".length()));
  }

  private static long timeCaseMicros(String timeColumn, int timeCase) {
    return TIME_CASES.get(timeCase).micros().applyAsLong(unit(precisionOf(timeColumn)));
  }

  private static String timeCaseLiteral(String timeColumn, int timeCase) {
    return timeLiteral(timeCaseMicros(timeColumn, timeCase), precisionOf(timeColumn));
  }

  /**
   * A row holding TIME case {@code timeCase} in every c_time_fsp column, the other columns NULL.
   */
  private static void insertTimeCase(int id, int timeCase) {
    server.execute(
        "INSERT INTO "
            + DB
            + "."
            + TABLE
            + " (id, "
            + timeColumns().collect(Collectors.joining(", "))
            + ") VALUES ("
            + id
            + ", "
            + timeColumns().map(c -> timeCaseLiteral(c, timeCase)).collect(Collectors.joining(", "))
            + ")");
  }

  private static Map<String, Object> timeCaseRow(int id, int timeCase) {
    Map<String, Object> row = nullRow();
    row.put("id", id);
    timeColumns().forEach(c -> row.put(c, timeCaseMicros(c, timeCase)));
    return row;
  }

  private static void insertNulls(int id) {
    server.execute("INSERT INTO " + DB + "." + TABLE + " (id) VALUES (" + id + ")");
  }

  private static void update(int id, java.util.function.Function<Col, String> values) {
    server.execute(
        "UPDATE "
            + DB
            + "."
            + TABLE
            + " SET "
            + COLUMNS.stream()
                .map(c -> c.name() + " = " + values.apply(c))
                .collect(Collectors.joining(", "))
            + " WHERE id = "
            + id);
  }

  private static Map<String, Object> nullRow() {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put(TableLayout.SHARD_COLUMN, 0);
    COLUMNS.forEach(c -> row.put(c.name(), null));
    return row;
  }

  /** Expected values; bytes columns are read back from MariaDB (what a MySQL client sees). */
  private static Map<String, Object> expectedRow(
      int id, java.util.function.Function<Col, Object> values) throws Exception {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put(TableLayout.SHARD_COLUMN, 0);
    row.put("id", id);
    try (Connection c = server.connect(DB);
        Statement s = c.createStatement()) {
      for (Col col : COLUMNS) {
        Object v = values.apply(col);
        if (v instanceof FromServer fs) {
          try (ResultSet rs =
              s.executeQuery(
                  "SELECT " + fs.expression() + " FROM " + TABLE + " WHERE id = " + id)) {
            rs.next();
            v = rs.getBytes(1);
          }
        }
        row.put(col.name(), v);
      }
    }
    return row;
  }
}
