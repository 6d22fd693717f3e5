package dev.shardberg.router.types;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.connector.mysql.MySqlValueConverters;
import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import io.debezium.time.MicroTime;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * {@link TimeConverter}: the text the snapshot's TIME select produces, parsed as Flink CDC parses
 * it, comes back as the signed value; binlog durations pass unchanged. TypeRoundTripTest runs it
 * against MariaDB.
 */
class TimeConverterTest {

  private static final long S = 1_000_000L;
  private static final long MAX = (838 * 3600 + 59 * 60 + 59) * S + 999_999;

  /**
   * What MySQL returns for {@link TimeConverter#snapshotSelect}: the fields of |v|, hours + 1000
   * when v < 0.
   */
  private static String snapshotText(long micros) {
    long abs = Math.abs(micros);
    long seconds = abs / S;
    return (micros < 0 ? 1000 : 0)
        + seconds / 3600
        + ":"
        + seconds / 60 % 60
        + ":"
        + seconds % 60
        + "."
        + String.format("%06d", abs % S);
  }

  @Test
  void snapshotTextsReadAsFlinkCdcReadsThemComeBackSigned() {
    for (long v :
        new long[] {
          0,
          1,
          -1,
          -1000,
          -S,
          -(3599 * S + 999_999),
          -3600 * S,
          -3600 * S - 1,
          86_400 * S,
          MAX,
          -MAX
        }) {
      Duration parsed =
          MySqlValueConverters.stringToDuration(snapshotText(v)); // Flink CDC's snapshot TIME read
      assertThat(TimeConverter.micros(parsed))
          .as("%s read as %s", snapshotText(v), parsed)
          .isEqualTo(v);
    }
    // what Debezium alone makes of MySQL's own text of a negative value above -01:00:00: the sign
    // is lost
    assertThat(MySqlValueConverters.stringToDuration("-00:00:00.001000"))
        .isEqualTo(Duration.ofMillis(1));
  }

  @Test
  void binlogDurationsPassUnchanged() {
    for (long v : new long[] {0, -1, -S, -MAX, MAX}) {
      assertThat(TimeConverter.micros(Duration.ofNanos(v * 1000))).isEqualTo(v);
    }
    assertThat(TimeConverter.micros(-5L)).isEqualTo(-5L);
  }

  @Test
  void convertsTimeColumnsOnlyToMicroTime() {
    List<SchemaBuilder> schemas = new ArrayList<>();
    List<CustomConverter.Converter> converters = new ArrayList<>();
    CustomConverter.ConverterRegistration<SchemaBuilder> registration =
        (schema, converter) -> {
          schemas.add(schema);
          converters.add(converter);
        };
    TimeConverter converter = new TimeConverter();
    converter.converterFor(column("DATETIME", true), registration);
    assertThat(schemas).isEmpty();
    converter.converterFor(column("TIME", true), registration);
    converter.converterFor(column("time", false), registration);
    assertThat(schemas)
        .extracting(b -> b.build().name())
        .containsExactly(MicroTime.SCHEMA_NAME, MicroTime.SCHEMA_NAME);
    assertThat(schemas).extracting(b -> b.build().isOptional()).containsExactly(true, false);
    assertThat(converters.get(0).convert(null)).isNull();
    assertThat(
            converters.get(0).convert(MySqlValueConverters.stringToDuration(snapshotText(-1000))))
        .isEqualTo(-1000L);
  }

  private static RelationalColumn column(String typeName, boolean optional) {
    return new RelationalColumn() {
      @Override
      public String name() {
        return "c";
      }

      @Override
      public String dataCollection() {
        return "db.t";
      }

      @Override
      public int jdbcType() {
        return Types.TIME;
      }

      @Override
      public int nativeType() {
        return -1;
      }

      @Override
      public String typeName() {
        return typeName;
      }

      @Override
      public String typeExpression() {
        return typeName;
      }

      @Override
      public OptionalInt length() {
        return OptionalInt.empty();
      }

      @Override
      public OptionalInt scale() {
        return OptionalInt.empty();
      }

      @Override
      public boolean isOptional() {
        return optional;
      }

      @Override
      public Object defaultValue() {
        return null;
      }

      @Override
      public boolean hasDefaultValue() {
        return false;
      }
    };
  }
}
