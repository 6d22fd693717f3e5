package dev.shardberg.coordinator;

import java.util.List;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Pads a row of an older schema (a prefix of the columns) and widens its values to the current
 * types.
 */
final class RowAdapter {
  private final List<Type> types;

  RowAdapter(Schema schema) {
    this.types = schema.columns().stream().map(f -> f.type()).toList();
  }

  RowData adapt(RowData row) {
    GenericRowData source = (GenericRowData) row;
    GenericRowData result = new GenericRowData(row.getRowKind(), types.size());
    int columns = Math.min(types.size(), row.getArity() - 1);
    for (int i = 0; i < columns; i++) {
      result.setField(i, widen(source.getField(i), types.get(i)));
    }
    return result;
  }

  /**
   * As Iceberg reads a promoted column: int → long, float → double, decimal to a higher precision.
   */
  static Object widen(Object value, Type target) {
    if (value == null) {
      return null;
    }
    switch (target.typeId()) {
      case LONG:
        return value instanceof Integer i ? Long.valueOf(i) : value;
      case DOUBLE:
        return value instanceof Float f ? Double.valueOf(f) : value;
      case DECIMAL:
        Types.DecimalType d = (Types.DecimalType) target;
        if (value instanceof DecimalData data && data.precision() != d.precision()) {
          return DecimalData.fromBigDecimal(data.toBigDecimal(), d.precision(), d.scale());
        }
        return value;
      default:
        return value;
    }
  }
}
