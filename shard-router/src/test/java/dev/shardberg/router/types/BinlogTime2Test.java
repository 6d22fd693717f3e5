package dev.shardberg.router.types;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link BinlogTime2} against bytes MySQL writes (published examples) and against an encoder
 * written here from MySQL's format, for every precision and the values whose decoding Debezium got
 * wrong; the round trip through a real binlog is TypeRoundTripTest's.
 */
class BinlogTime2Test {

  private static final long S = 1_000_000L;
  private static final long MAX = (838 * 3600 + 59 * 60 + 59) * S;

  /**
   * MySQL's {@code my_time_packed_to_binary}: the packed value is ±((hour << 12 | minute << 6 |
   * second) << 24 + microseconds); TIME(5..6) stores it plus 0x800000000000 in 6 bytes; TIME(0..4)
   * stores its integer part (arithmetic shift) plus 0x800000 in 3 bytes, then its fraction part (C
   * remainder: negative for a negative value) in hundredths (1 byte) or ten-thousandths (2 bytes),
   * two's complement.
   */
  static byte[] encode(long micros, int fsp) {
    long abs = Math.abs(micros);
    long seconds = abs / S;
    long hms = (seconds / 3600) << 12 | (seconds / 60 % 60) << 6 | seconds % 60;
    long packed = (hms << 24) + abs % S;
    if (micros < 0) {
      packed = -packed;
    }
    int n = (fsp + 1) / 2;
    long stored =
        switch (n) {
          case 0 -> 0x800000L + (packed >> 24);
          case 1 -> (0x800000L + (packed >> 24)) << 8 | ((packed % (1L << 24)) / 10_000 & 0xFF);
          case 2 -> (0x800000L + (packed >> 24)) << 16 | ((packed % (1L << 24)) / 100 & 0xFFFF);
          default -> packed + 0x800000000000L;
        };
    byte[] bytes = new byte[3 + n];
    for (int i = bytes.length - 1; i >= 0; i--) {
      bytes[i] = (byte) stored;
      stored >>= 8;
    }
    return bytes;
  }

  private static long decode(String hex, int fsp) {
    return BinlogTime2.micros(HexFormat.of().parseHex(hex), fsp);
  }

  @Test
  void bytesMySqlWritesDecodeToTheirValues() {
    // from mysql-server's my_time.cc (TIME(1..2): the fraction of a negative value counts down from
    // 0x100)
    assertThat(decode("80000000", 2)).isZero();
    assertThat(decode("7fffffff", 2)).isEqualTo(-10_000); // -00:00:00.01
    assertThat(decode("7fffff9d", 2)).isEqualTo(-990_000); // -00:00:00.99
    assertThat(decode("7fffff00", 2)).isEqualTo(-S); // -00:00:01.00
    assertThat(decode("7ffffeff", 2)).isEqualTo(-1_010_000); // -00:00:01.01
    assertThat(decode("7ffffef6", 2)).isEqualTo(-1_100_000); // -00:00:01.10
    // written by MySQL 8.0 (osheroff/mysql-binlog-connector-java#181): -16:08:04 as TIME, TIME(3),
    // TIME(6)
    long t = (16 * 3600 + 8 * 60 + 4) * S;
    assertThat(decode("7efdfc", 0)).isEqualTo(-t);
    assertThat(decode("7efdfbf63c", 3)).isEqualTo(-t - 250_000);
    assertThat(decode("7efdfbfc2f70", 6)).isEqualTo(-t - 250_000);
    // the encoder below agrees with them
    assertThat(HexFormat.of().formatHex(encode(-t - 250_000, 3))).isEqualTo("7efdfbf63c");
    assertThat(HexFormat.of().formatHex(encode(-t - 250_000, 6))).isEqualTo("7efdfbfc2f70");
    assertThat(HexFormat.of().formatHex(encode(-1_100_000, 2))).isEqualTo("7ffffef6");
  }

  @Test
  void everyPrecisionDecodesEveryValueOfTheFirstHoursAndTheBoundariesExactly() {
    for (int fsp = 0; fsp <= 6; fsp++) {
      long unit = (long) Math.pow(10, 6 - fsp);
      List<Long> values =
          new ArrayList<>(
              List.of(
                  MAX, -MAX, MAX + S - unit, -(MAX + S - unit), 838 * 3600 * S, -838 * 3600 * S));
      for (long seconds = -2 * 3600 - 5; seconds <= 2 * 3600 + 5; seconds++) {
        for (long fraction :
            new long[] {0, unit, S - unit, 48_576 / unit * unit, 500_000 / unit * unit}) {
          values.add(seconds * S + (seconds < 0 ? -fraction : fraction));
        }
      }
      for (long v : values) {
        assertThat(BinlogTime2.micros(encode(v, fsp), fsp))
            .as("TIME(%d) %d µs", fsp, v)
            .isEqualTo(v);
      }
    }
  }

  @Test
  void readTakesExactlyTheValuesBytesFromTheRow() throws Exception {
    byte[] value = encode(-S, 3); // -00:00:01.000, which Debezium read as -00:00:02.147483647
    byte[] row = new byte[value.length + 1];
    System.arraycopy(value, 0, row, 0, value.length);
    row[value.length] = 42;
    ByteArrayInputStream in = new ByteArrayInputStream(row);
    assertThat(BinlogTime2.read(3, in)).isEqualTo(Duration.ofSeconds(-1));
    assertThat(in.read()).isEqualTo(42);
  }

  @Test
  void wrongLengthIsRefusedNamingIt() {
    assertThatThrownBy(() -> BinlogTime2.micros(new byte[4], 6))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Cannot decode a TIME(6) value from 4 bytes: it takes 6");
  }

  @Test
  void shardRoutersRowDeserializersAreTheOnesTheBinlogReaderUses() {
    BinlogTime2
        .requireInstalled(); // the test class path has shard-router's classes before the CDC jar
  }
}
