package dev.shardberg.router.tagging;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

class VersionedRowsTest {
  @Test
  void everyInternalValueOfTheTypeMappingRoundTripsAtAnyArity() throws Exception {
    GenericRowData row =
        GenericRowData.ofKind(
            RowKind.UPDATE_AFTER,
            7,
            1L << 40,
            Float.intBitsToFloat(0x7f7fffff),
            -0.0d,
            true,
            StringData.fromString("é✓"),
            DecimalData.fromBigDecimal(new BigDecimal("-12345678901234567890.12"), 38, 2),
            TimestampData.fromEpochMillis(-1_000_000_000_000L, 999_999),
            new byte[] {0, -1, 2},
            null,
            (short) 3,
            (byte) -4,
            5);
    TypeSerializer<RowData> serializer =
        VersionedRows.TYPE_INFO.createSerializer(
            new org.apache.flink.api.common.serialization.SerializerConfigImpl());
    DataOutputSerializer out = new DataOutputSerializer(64);
    serializer.serialize(row, out);
    RowData back = serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));

    assertThat(back.getRowKind()).isEqualTo(RowKind.UPDATE_AFTER);
    assertThat(back.getArity()).isEqualTo(row.getArity());
    for (int i = 0; i < row.getArity(); i++) {
      Object expected = row.getField(i);
      Object actual = ((GenericRowData) back).getField(i);
      if (expected instanceof byte[] bytes) {
        assertThat((byte[]) actual).isEqualTo(bytes);
      } else {
        assertThat(actual).as("field %d", i).isEqualTo(expected);
      }
    }
    assertThat(VersionedRows.schemaId(back)).isEqualTo(5);
    assertThat(Float.floatToRawIntBits(back.getFloat(2))).isEqualTo(0x7f7fffff);
    assertThat(Double.doubleToRawLongBits(back.getDouble(3)))
        .isEqualTo(Double.doubleToRawLongBits(-0.0d));
    assertThat(serializer.copy(row)).isEqualTo(row);
  }
}
