package dev.shardberg.job.verify;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The canonical rendering of one row, computed the same way from a MySQL JDBC row and from an
 * Iceberg generic-reader {@link Record}: every column of the Iceberg schema except the shard column,
 * rendered by its Iceberg type (decimals at the column's scale, timestamps as ISO local date-times or
 * instants, bytes as hex), joined in schema order. Two rows are equal iff their renderings are.
 */
final class CanonicalRow {
  static final String NULL = "\u2205";
  private static final HexFormat HEX = HexFormat.of();

  private final List<Types.NestedField> columns;
  private final List<Types.NestedField> keyColumns;

  CanonicalRow(Schema schema, String shardColumn) {
    this.columns = schema.columns().stream().filter(f -> !f.name().equals(shardColumn)).toList();
    this.keyColumns = schema.identifierFieldNames().stream()
        .filter(n -> !n.equals(shardColumn))
        .map(schema::findField)
        .sorted((a, b) -> Integer.compare(columns.indexOf(a), columns.indexOf(b)))
        .toList();
  }

  List<String> columnNames() {
    return columns.stream().map(Types.NestedField::name).toList();
  }

  String key(Record record) {
    StringBuilder sb = new StringBuilder();
    for (Types.NestedField f : keyColumns) {
      append(sb, f, renderIceberg(f.type(), record.getField(f.name())));
    }
    return sb.toString();
  }

  String render(Record record) {
    StringBuilder sb = new StringBuilder();
    for (Types.NestedField f : columns) {
      append(sb, f, renderIceberg(f.type(), record.getField(f.name())));
    }
    return sb.toString();
  }

  /** The result set must select {@link #columnNames()} in that order. */
  String key(ResultSet rs) throws SQLException {
    StringBuilder sb = new StringBuilder();
    for (Types.NestedField f : keyColumns) {
      append(sb, f, renderJdbc(f.type(), rs, columns.indexOf(f) + 1));
    }
    return sb.toString();
  }

  String render(ResultSet rs) throws SQLException {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField f = columns.get(i);
      append(sb, f, renderJdbc(f.type(), rs, i + 1));
    }
    return sb.toString();
  }

  private static void append(StringBuilder sb, Types.NestedField f, String value) {
    if (sb.length() > 0) {
      sb.append(", ");
    }
    sb.append(f.name()).append('=').append(value);
  }

  static String renderIceberg(Type type, Object v) {
    if (v == null) {
      return NULL;
    }
    return switch (type.typeId()) {
      case BOOLEAN -> Boolean.toString((Boolean) v);
      case INTEGER, LONG -> Long.toString(((Number) v).longValue());
      case FLOAT -> Float.toString(((Number) v).floatValue());
      case DOUBLE -> Double.toString(((Number) v).doubleValue());
      case DECIMAL -> ((BigDecimal) v).setScale(((Types.DecimalType) type).scale()).toPlainString();
      case STRING -> v.toString();
      case DATE -> v.toString();
      case TIME -> v.toString();
      case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC()
          ? ((OffsetDateTime) v).toInstant().toString()
          : v.toString();
      case BINARY, FIXED -> HEX.formatHex(bytes(v));
      default -> v.toString();
    };
  }

  static String renderJdbc(Type type, ResultSet rs, int index) throws SQLException {
    Object raw = rs.getObject(index);
    if (raw == null) {
      return NULL;
    }
    return switch (type.typeId()) {
      case BOOLEAN -> Boolean.toString(rs.getBoolean(index));
      case INTEGER, LONG -> Long.toString(rs.getLong(index));
      case FLOAT -> Float.toString(rs.getFloat(index));
      case DOUBLE -> Double.toString(rs.getDouble(index));
      case DECIMAL -> rs.getBigDecimal(index).setScale(((Types.DecimalType) type).scale()).toPlainString();
      case STRING -> rs.getString(index);
      case DATE -> rs.getObject(index, LocalDate.class).toString();
      case TIME -> LocalTime.parse(rs.getString(index)).toString();
      case TIMESTAMP -> {
        if (((Types.TimestampType) type).shouldAdjustToUTC()) {
          Timestamp ts = rs.getTimestamp(index);
          yield ts.toInstant().toString();
        }
        yield rs.getObject(index, LocalDateTime.class).toString();
      }
      case BINARY, FIXED -> HEX.formatHex(rs.getBytes(index));
      default -> rs.getString(index);
    };
  }

  private static byte[] bytes(Object v) {
    if (v instanceof byte[] b) {
      return b;
    }
    ByteBuffer buffer = ((ByteBuffer) v).duplicate();
    byte[] b = new byte[buffer.remaining()];
    buffer.get(b);
    return b;
  }

  /** A 64-bit hash of a rendering; shard checksums add these up (order-independent, multiset-safe). */
  static long hash(String rendering) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(rendering.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(d).getLong();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
