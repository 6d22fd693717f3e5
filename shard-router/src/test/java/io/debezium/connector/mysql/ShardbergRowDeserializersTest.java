package io.debezium.connector.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import dev.shardberg.router.types.BinlogTime2;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * shard-router's stand-ins for Debezium's three binlog row deserializers (in Debezium's package, to
 * reach their protected decoding methods): they are the classes the names resolve to, they read
 * TIME2 exactly, and everything else as Debezium's {@link RowDeserializers} does.
 */
class ShardbergRowDeserializersTest {

  /** -00:00:01.000 as TIME(3) (MySQL's bytes: the integer part -1, the fraction 0). */
  private static final byte[] MINUS_ONE_SECOND_FSP3 = HexFormat.of().parseHex("7fffff0000");

  @Test
  void theNamesDebeziumsBinlogReaderUsesResolveToTheStandIns() throws Exception {
    for (String name :
        List.of(
            "io.debezium.connector.mysql.RowDeserializers$WriteRowsDeserializer",
            "io.debezium.connector.mysql.RowDeserializers$UpdateRowsDeserializer",
            "io.debezium.connector.mysql.RowDeserializers$DeleteRowsDeserializer")) {
      Class<?> c =
          Class.forName(name, false, MySqlStreamingChangeEventSource.class.getClassLoader());
      assertThat(BinlogTime2.Installed.class.isAssignableFrom(c)).as(name).isTrue();
    }
  }

  @Test
  void negativeTimeWithAZeroFractionIsReadExactly() throws IOException {
    Duration minusOneSecond = Duration.ofSeconds(-1);
    assertThat(
            new RowDeserializers.WriteRowsDeserializer(new HashMap<>())
                .deserializeTimeV2(3, in(MINUS_ONE_SECOND_FSP3)))
        .isEqualTo(minusOneSecond);
    assertThat(
            new RowDeserializers.UpdateRowsDeserializer(new HashMap<>())
                .deserializeTimeV2(3, in(MINUS_ONE_SECOND_FSP3)))
        .isEqualTo(minusOneSecond);
    assertThat(
            new RowDeserializers.DeleteRowsDeserializer(new HashMap<>())
                .deserializeTimeV2(3, in(MINUS_ONE_SECOND_FSP3)))
        .isEqualTo(minusOneSecond);
  }

  /**
   * Why the stand-ins exist. When this fails, Debezium decodes TIME2 right: the stand-ins (and
   * BinlogTime2) can go.
   */
  @Test
  void debeziumsOwnDecodingStillReadsANegativeTimeWithAZeroFractionAsAnotherValue()
      throws IOException {
    assertThat(RowDeserializers.deserializeTimeV2(3, in(MINUS_ONE_SECOND_FSP3)))
        .isEqualTo(Duration.ofNanos(-2_147_483_647L));
  }

  @Test
  void everyOtherTypeIsReadAsDebeziumReadsIt() throws IOException {
    RowDeserializers.WriteRowsDeserializer w =
        new RowDeserializers.WriteRowsDeserializer(new HashMap<>());
    byte[] datetime6 = HexFormat.of().parseHex("99b2fd2c0f01e240"); // a DATETIME(6)
    assertThat(w.deserializeDatetimeV2(6, in(datetime6)))
        .isEqualTo(RowDeserializers.deserializeDatetimeV2(6, in(datetime6)));
    byte[] year = {0};
    assertThat(w.deserializeYear(in(year))).isEqualTo(RowDeserializers.deserializeYear(in(year)));
    byte[] date = HexFormat.of().parseHex("21b40f");
    assertThat(w.deserializeDate(in(date))).isEqualTo(RowDeserializers.deserializeDate(in(date)));
    byte[] timestamp3 = HexFormat.of().parseHex("5f5e100003e7");
    assertThat(w.deserializeTimestampV2(3, in(timestamp3)))
        .isEqualTo(RowDeserializers.deserializeTimestampV2(3, in(timestamp3)));
    byte[] string = {3, 'a', 'b', 'c'};
    assertThat(w.deserializeString(3, in(string)))
        .isEqualTo(RowDeserializers.deserializeString(3, in(string)));
  }

  private static ByteArrayInputStream in(byte[] bytes) {
    return new ByteArrayInputStream(bytes);
  }
}
