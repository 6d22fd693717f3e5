package dev.shardberg.job.verify;

import dev.shardberg.router.MySqlIdentifiers;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.MySqlType;
import dev.shardberg.router.types.TypeMapping;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;

/**
 * The canonical rendering of one row, computed the same way from a MySQL JDBC row and from an
 * Iceberg generic-reader {@link Record}: every source column (the table's columns but the shard
 * column), each rendered by its column's {@link MySqlType} — the same type table the write path
 * converts with — in schema order. Two rows are equal iff their renderings are, and the first
 * differing column is named.
 */
final class CanonicalRow {
  static final String NULL = MySqlType.NULL;

  private final List<MySqlColumn> columns;
  private final List<MySqlType> types;
  private final List<Integer> keyPositions;

  /**
   * @param schema the Iceberg table's schema (its identifier fields are the key)
   * @param mysqlColumns the shards' columns as discovery found them, in table order
   */
  CanonicalRow(Schema schema, List<MySqlColumn> mysqlColumns, String shardColumn) {
    List<String> icebergNames =
        schema.columns().stream()
            .map(Types.NestedField::name)
            .filter(n -> !n.equals(shardColumn))
            .toList();
    List<String> mysqlNames = mysqlColumns.stream().map(MySqlColumn::name).toList();
    if (!icebergNames.containsAll(mysqlNames)) {
      throw new IllegalArgumentException(
          String.format(
              "Cannot verify table: its columns %s are not the shards' columns %s; the table and the shards differ in schema (run validate)",
              icebergNames, mysqlNames));
    }
    // The table's columns, in its order; with schema evolution it may hold more than the shards (a
    // column dropped on every shard, a renamed one): those are rendered by the MySQL type kept in
    // the
    // column's doc, and compare as NULL on every shard that lacks them.
    List<MySqlColumn> byTable = new ArrayList<>();
    for (Types.NestedField f : schema.columns()) {
      if (f.name().equals(shardColumn)) {
        continue;
      }
      MySqlColumn c =
          mysqlColumns.stream().filter(m -> m.name().equals(f.name())).findFirst().orElse(null);
      if ((c == null || !TypeMapping.toIcebergType(c).equals(f.type())) && f.doc() != null) {
        c = MySqlColumn.of(f.name(), f.doc(), true); // the widest MySQL type the table took
      }
      if (c == null) { // not a column schema evolution added: the table and the shards disagree
        throw new IllegalArgumentException(
            String.format(
                "Cannot verify table: its columns %s are not the shards' columns %s; the table and the shards differ in schema (run validate)",
                icebergNames, mysqlNames));
      }
      byTable.add(c);
    }
    this.columns = List.copyOf(byTable);
    this.types = columns.stream().map(MySqlType::of).toList();
    Map<String, Integer> position = new java.util.HashMap<>();
    for (int i = 0; i < columns.size(); i++) {
      position.put(columns.get(i).name(), i);
    }
    this.keyPositions =
        schema.identifierFieldNames().stream()
            .filter(n -> !n.equals(shardColumn))
            .map(position::get)
            .sorted()
            .toList();
  }

  List<String> columnNames() {
    return columns.stream().map(MySqlColumn::name).toList();
  }

  /**
   * The SELECT list that {@link #values(ResultSet)} reads: per column, its type's select
   * expression.
   */
  List<String> selectList() {
    return selectList(null);
  }

  /**
   * The SELECT list for a shard with only {@code present} columns (null: all): a column the shard
   * lacks is read as NULL.
   */
  List<String> selectList(java.util.Set<String> present) {
    List<String> select = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      String name = columns.get(i).name();
      select.add(
          present == null || present.contains(name)
              ? types.get(i).selectExpression(MySqlIdentifiers.quote(name))
              : "NULL");
    }
    return select;
  }

  /** The canonical values of an Iceberg row, in {@link #columnNames()} order. */
  List<String> values(Record record) {
    List<String> values = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      values.add(types.get(i).renderIcebergOrNull(record.getField(columns.get(i).name())));
    }
    return values;
  }

  /** The canonical values of a MySQL row; the result set must select {@link #selectList()}. */
  List<String> values(ResultSet rs) throws SQLException {
    List<String> values = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      values.add(types.get(i).renderJdbc(rs, i + 1, columns.get(i)));
    }
    return values;
  }

  /**
   * Shown for a column that is not compared for a shard (it dropped it; its older values stay in
   * the table).
   */
  static final String NOT_COMPARED = "(dropped on the shard: not compared)";

  /**
   * {@code values} with the columns named in {@code notCompared} replaced by {@link #NOT_COMPARED}.
   */
  List<String> mask(List<String> values, java.util.Set<String> notCompared) {
    if (notCompared.isEmpty()) {
      return values;
    }
    List<String> masked = new ArrayList<>(values);
    for (int i = 0; i < columns.size(); i++) {
      if (notCompared.contains(columns.get(i).name())) {
        masked.set(i, NOT_COMPARED);
      }
    }
    return masked;
  }

  /** "k1=v1, k2=v2" of the key columns. */
  String key(List<String> values) {
    return keyPositions.stream()
        .map(i -> columns.get(i).name() + "=" + values.get(i))
        .collect(Collectors.joining(", "));
  }

  /** "c1=v1, c2=v2, …" of every column. */
  String render(List<String> values) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      sb.append(i == 0 ? "" : ", ").append(columns.get(i).name()).append('=').append(values.get(i));
    }
    return sb.toString();
  }

  /** The index of the first column whose values differ, or -1. */
  int firstDifference(List<String> a, List<String> b) {
    for (int i = 0; i < columns.size(); i++) {
      if (!a.get(i).equals(b.get(i))) {
        return i;
      }
    }
    return -1;
  }

  String columnName(int index) {
    return columns.get(index).name();
  }

  /**
   * A 64-bit hash of a rendering; shard checksums add these up (order-independent, multiset-safe).
   */
  static long hash(String rendering) {
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256").digest(rendering.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(d).getLong();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
