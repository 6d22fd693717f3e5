package dev.shardberg.router.types;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The numeric families of {@link MySqlType} (integers, BIGINT UNSIGNED, the DECIMALs, FLOAT and
 * DOUBLE): their Flink and Iceberg types, conversions and renderings. Each constant implements the
 * {@link MySqlType} constant of the same name, which documents it.
 */
enum NumericFamilies implements TypeFamily {
  INT32 {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new IntType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.IntegerType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).intValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return Long.toString(((Number) v).longValue());
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Long.toString(rs.getLong(i));
    }
  },
  INT64 {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new BigIntType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.LongType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).longValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return Long.toString(((Number) v).longValue());
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Long.toString(rs.getLong(i));
    }
  },
  BIGINT_UNSIGNED {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new DecimalType(c.nullable(), 20, 0);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.DecimalType.of(20, 0);
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return decimalData(v, 20, 0);
    }

    @Override
    public String renderIceberg(Object v) {
      return ((BigDecimal) v).setScale(0).toPlainString();
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getBigDecimal(i).setScale(0).toPlainString();
    }
  },
  DECIMAL {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new DecimalType(c.nullable(), precision(c), scale(c));
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.DecimalType.of(precision(c), scale(c));
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return decimalData(v, precision(c), scale(c));
    }

    @Override
    public String renderIceberg(Object v) {
      return ((BigDecimal) v).toPlainString();
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getBigDecimal(i).setScale(scale(c)).toPlainString();
    }
  },
  DECIMAL_STRING {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new VarCharType(c.nullable(), VarCharType.MAX_LENGTH);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.StringType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return StringData.fromString(plainDecimal(v, scale(c)));
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getBigDecimal(i).setScale(scale(c)).toPlainString();
    }
  },
  FLOAT {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new FloatType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.FloatType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).floatValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return floatBits(((Number) v).floatValue());
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return floatBits(rs.getFloat(i));
    }
  },
  DOUBLE {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new DoubleType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.DoubleType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return ((Number) v).doubleValue();
    }

    @Override
    public String renderIceberg(Object v) {
      return Double.toString(((Number) v).doubleValue());
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Double.toString(rs.getDouble(i));
    }
  };

  static int precision(MySqlColumn c) {
    return c.precision() == null ? 10 : c.precision();
  }

  private static int scale(MySqlColumn c) {
    return c.scale() == null ? 0 : c.scale();
  }

  /**
   * A float's canonical text: its shortest decimal (unique per value) and its bits, so one flipped
   * bit shows.
   */
  static String floatBits(float f) {
    return Float.toString(f) + " (0x" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
  }

  /**
   * A Debezium decimal value (a BigDecimal; a long for BIGINT UNSIGNED in "long" mode; a number or
   * text) as a BigDecimal.
   */
  private static BigDecimal bigDecimal(Object v) {
    if (v instanceof BigDecimal b) {
      return b;
    }
    if (v instanceof Long l) {
      return new BigDecimal(
          new BigInteger(Long.toUnsignedString(l))); // BIGINT UNSIGNED in "long" mode
    }
    return new BigDecimal(v.toString());
  }

  private static DecimalData decimalData(Object v, int precision, int scale) {
    BigDecimal bd = bigDecimal(v);
    DecimalData d = DecimalData.fromBigDecimal(bd, precision, scale);
    if (d == null) {
      throw new IllegalArgumentException(
          "value " + bd.toPlainString() + " does not fit decimal(" + precision + "," + scale + ")");
    }
    return d;
  }

  /**
   * The exact digits of a decimal value at {@code scale}; a value with more fraction digits fails
   * (no rounding).
   */
  static String plainDecimal(Object v, int scale) {
    BigDecimal bd = bigDecimal(v);
    try {
      return bd.setScale(scale).toPlainString();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          "value " + bd.toPlainString() + " has more than " + scale + " fraction digits", e);
    }
  }
}
