package dev.shardberg.router.types;

import io.debezium.data.Bits;
import io.debezium.data.geometry.Geometry;
import java.nio.ByteBuffer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HexFormat;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The families of {@link MySqlType} whose values arrive as text or bytes (BIT, the character and
 * binary string types, JSON and the spatial types): their Flink and Iceberg types, conversions and
 * renderings. Each constant implements the {@link MySqlType} constant of the same name, which
 * documents it.
 */
enum StringAndBinaryFamilies implements TypeFamily {
  BIT1 {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new BooleanType(c.nullable());
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.BooleanType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return toBoolean(v);
    }

    @Override
    public String renderIceberg(Object v) {
      return Boolean.toString((Boolean) v);
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return Boolean.toString(rs.getBoolean(i));
    }
  },
  BITS {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new VarBinaryType(c.nullable(), VarBinaryType.MAX_LENGTH);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.BinaryType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return bitsBigEndian(v, s, c);
    }

    @Override
    public String renderIceberg(Object v) {
      return hex(v);
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return HEX.formatHex(rs.getBytes(i));
    }
  },
  STRING {
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
      return StringData.fromString(v.toString());
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getString(i);
    }
  },
  JSON {
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
      return StringData.fromString(v.toString());
    }

    @Override
    public String renderIceberg(Object v) {
      return v.toString();
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return rs.getString(i);
    }
  },
  BYTES {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new VarBinaryType(c.nullable(), VarBinaryType.MAX_LENGTH);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.BinaryType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return rawBytes(v);
    }

    @Override
    public String renderIceberg(Object v) {
      return hex(v);
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      return HEX.formatHex(rs.getBytes(i));
    }
  },
  GEOMETRY {
    @Override
    public LogicalType flinkType(MySqlColumn c) {
      return new VarBinaryType(c.nullable(), VarBinaryType.MAX_LENGTH);
    }

    @Override
    public Type icebergType(MySqlColumn c) {
      return Types.BinaryType.get();
    }

    @Override
    public Object toFlink(Object v, Schema s, MySqlColumn c) {
      return geometryWkb(v, s);
    }

    @Override
    public String renderIceberg(Object v) {
      return hex(v);
    }

    @Override
    public String jdbc(ResultSet rs, int i, MySqlColumn c) throws SQLException {
      byte[] internal =
          rs.getBytes(i); // MySQL's internal format: SRID (4 bytes, little-endian) + WKB
      return HEX.formatHex(Arrays.copyOfRange(internal, 4, internal.length));
    }
  };

  private static final HexFormat HEX = HexFormat.of();

  private static Boolean toBoolean(Object v) {
    if (v instanceof Boolean b) {
      return b;
    }
    if (v instanceof Number n) {
      return n.longValue() != 0;
    }
    for (byte b : rawBytes(v)) {
      if (b != 0) {
        return true;
      }
    }
    return false;
  }

  /** Debezium gives BIT(n) little-endian; MySQL (and JDBC) show it big-endian, ceil(n/8) bytes. */
  private static byte[] bitsBigEndian(Object v, Schema s, MySqlColumn c) {
    byte[] bytes = rawBytes(v);
    int length = c.precision() == null ? bytes.length : (c.precision() + 7) / 8;
    String param = s.parameters() == null ? null : s.parameters().get(Bits.LENGTH_FIELD);
    if (param != null) {
      length = (Integer.parseInt(param) + 7) / 8;
    }
    byte[] bigEndian = new byte[length];
    for (int i = 0; i < length && i < bytes.length; i++) {
      bigEndian[length - 1 - i] = bytes[i];
    }
    return bigEndian;
  }

  private static byte[] geometryWkb(Object v, Schema s) {
    if (v instanceof Struct struct) {
      if (Geometry.LOGICAL_NAME.equals(s.name())
          || struct.schema().field(Geometry.WKB_FIELD) != null) {
        return rawBytes(struct.get(Geometry.WKB_FIELD));
      }
      throw new IllegalArgumentException(
          "unexpected struct " + s.name() + " for a geometry column");
    }
    return rawBytes(v);
  }

  static byte[] rawBytes(Object v) {
    if (v instanceof byte[] b) {
      return b;
    }
    if (v instanceof ByteBuffer buffer) {
      ByteBuffer dup = buffer.duplicate();
      byte[] b = new byte[dup.remaining()];
      dup.get(b);
      return b;
    }
    throw new IllegalArgumentException(
        "unexpected value of " + v.getClass().getName() + " for a bytes column");
  }

  private static String hex(Object v) {
    return HEX.formatHex(rawBytes(v));
  }
}
