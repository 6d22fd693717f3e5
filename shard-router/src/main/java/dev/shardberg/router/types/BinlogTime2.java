package dev.shardberg.router.types;

import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import dev.shardberg.router.Preconditions;
import dev.shardberg.router.ShardRouterException;
import java.io.IOException;
import java.security.CodeSource;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes a MySQL {@code TIME(p)} value from its binlog row image (the {@code TIME2} format of
 * MySQL 5.6.4+ and MariaDB 10.1+), exactly, for every legal value and every p.
 *
 * <p>Why not Debezium's decoding: {@code RowDeserializers.deserializeTimeV2} (Debezium 1.9.8, in
 * Flink CDC 3.5.0) complements the integer part and the fraction of a negative value separately.
 * MySQL stores a negative TIME as the two's complement of the whole packed value (integer part and
 * fraction together), so that is right only when the fraction is non-zero. A negative value with a
 * zero fraction comes out as another value — {@code -00:00:01.000} as {@code -00:00:02.147483647},
 * {@code -00:01:00} (p = 0) as {@code -00:01:03} — and two legal values can come out equal ({@code
 * -00:00:01.000000} and {@code -00:00:01.048576}; {@code -00:01:00.00} and {@code -00:01:04.00}),
 * so the decoded duration cannot be corrected afterwards: only the bytes tell. The binlog client
 * offers no way to plug in a decoder for one type, so shard-router carries its own {@code
 * io.debezium.connector.mysql.RowDeserializers$WriteRowsDeserializer}, {@code
 * $UpdateRowsDeserializer} and {@code $DeleteRowsDeserializer}: the same three classes Debezium's
 * binlog reader instantiates by name, doing what Debezium's do (each method hands over to
 * Debezium's {@code RowDeserializers}) except TIME2, which they decode with {@link #read}. They
 * take the place of Debezium's because shard-router comes before {@code
 * flink-sql-connector-mysql-cdc} on the class path (as Flink CDC's own copies of Debezium classes
 * take the place of Debezium's); {@link #requireInstalled} checks that they did, and the job calls
 * it before it builds a source.
 *
 * <p>The format (MySQL's {@code my_time_packed_to_binary}): 3 bytes of integer part, big-endian,
 * then (p + 1) / 2 bytes of fraction (hundredths, ten-thousandths or microseconds). Read as one
 * unsigned big-endian number N of 3 + n bytes, the value is {@code N - 0x800000 << 8n}: sign, then
 * the fields of the absolute value — 1 unused bit, 10 bits hour, 6 bits minute, 6 bits second —
 * then n bytes of fraction.
 */
public final class BinlogTime2 {
  private BinlogTime2() {}

  /**
   * The names of the binlog row deserializers Debezium's binlog reader creates; ours implement
   * {@link Installed}.
   */
  static final List<String> ROW_DESERIALIZERS =
      List.of(
          "io.debezium.connector.mysql.RowDeserializers$WriteRowsDeserializer",
          "io.debezium.connector.mysql.RowDeserializers$UpdateRowsDeserializer",
          "io.debezium.connector.mysql.RowDeserializers$DeleteRowsDeserializer");

  /** The class that creates them: the row deserializers are resolved by its class loader. */
  static final String BINLOG_READER = "io.debezium.connector.mysql.MySqlStreamingChangeEventSource";

  /** Marks shard-router's row deserializers, which decode TIME2 with {@link BinlogTime2#read}. */
  public interface Installed {}

  /** Microseconds of one unit of the fraction stored in 0..3 bytes. */
  private static final long[] FRACTION_UNIT_MICROS = {0, 10_000, 100, 1};

  /**
   * Reads one TIME(p) value ({@code fsp} = p, the column's binlog metadata) and returns it as a
   * duration.
   */
  public static Duration read(int fsp, ByteArrayInputStream in) throws IOException {
    return Duration.of(micros(in.read(3 + fractionBytes(fsp)), fsp), ChronoUnit.MICROS);
  }

  /** The bytes of the fraction of a TIME(p) value. */
  static int fractionBytes(int fsp) {
    return (fsp + 1) / 2;
  }

  /**
   * The signed microseconds of a TIME(p) value stored as {@code bytes} (3 + (p + 1) / 2 of them).
   */
  static long micros(byte[] bytes, int fsp) {
    int n = fractionBytes(fsp);
    Preconditions.checkArgument(
        bytes.length == 3 + n,
        "Cannot decode a TIME(%s) value from %s bytes: it takes %s",
        fsp,
        bytes.length,
        3 + n);
    long stored = 0;
    for (byte b : bytes) {
      stored = (stored << 8) | (b & 0xFF);
    }
    long packed = stored - (0x800000L << (8 * n));
    long abs = Math.abs(packed);
    long hms = abs >>> (8 * n);
    long fraction = abs & ((1L << (8 * n)) - 1);
    long hours = (hms >>> 12) & 0x3FF;
    long minutes = (hms >>> 6) & 0x3F;
    long seconds = hms & 0x3F;
    long micros =
        ((hours * 60 + minutes) * 60 + seconds) * 1_000_000L + fraction * FRACTION_UNIT_MICROS[n];
    return packed < 0 ? -micros : micros;
  }

  /**
   * Throws naming the class and where it was loaded from when the binlog reader would use
   * Debezium's own row deserializers instead of shard-router's: negative TIME values with a zero
   * fraction would then be read wrongly from the binlog. Resolved by the binlog reader's own class
   * loader, as it resolves them.
   */
  public static void requireInstalled() {
    ClassLoader loader;
    try {
      loader =
          Class.forName(BINLOG_READER, false, BinlogTime2.class.getClassLoader()).getClassLoader();
    } catch (ClassNotFoundException e) {
      throw new ShardRouterException(
          "Cannot find Flink CDC's binlog reader "
              + BINLOG_READER
              + ": is flink-sql-connector-mysql-cdc on the class path?",
          e);
    }
    List<String> wrong = new ArrayList<>();
    for (String name : ROW_DESERIALIZERS) {
      try {
        Class<?> c = Class.forName(name, false, loader);
        if (!Installed.class.isAssignableFrom(c)) {
          CodeSource source = c.getProtectionDomain().getCodeSource();
          wrong.add(
              name + " from " + (source == null ? "an unknown location" : source.getLocation()));
        }
      } catch (ClassNotFoundException e) {
        wrong.add(name + " (not found)");
      }
    }
    if (!wrong.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot read MySQL TIME values exactly from the binlog: the binlog reader would use Debezium's own row"
                  + " deserializers, which read a negative TIME with a zero fraction as another value (%s). Shardberg's"
                  + " versions of these classes are in its shard-router jar, which must come before"
                  + " flink-sql-connector-mysql-cdc on the class path (it does in the job's shaded jar; see"
                  + " docs/type-mapping.md). Fix the class path, or, if you build your own jar, keep shard-router's"
                  + " classes io/debezium/connector/mysql/RowDeserializers$*.class in it.",
              String.join("; ", wrong)));
    }
  }
}
