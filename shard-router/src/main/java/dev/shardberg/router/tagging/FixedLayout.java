package dev.shardberg.router.tagging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.MySqlType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Field;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * The fixed half of one host's shard tagger ({@code ShardTaggingDeserializer}; {@code
 * schema.change-behavior=fail}): lays rows out by the {@link TableLayout#rowType()} the job started
 * with, and stops the job at any sign of a schema change (a DDL record, or rows whose columns
 * differ from the layout).
 */
final class FixedLayout {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String hostName;
  private final RowType rowType;

  /** This host's shard tables, "db.table" → shard number. */
  private final Map<String, Integer> shardByTable;

  /** The source columns in row order (row position i + 1). */
  private final List<MySqlColumn> columns;

  /** Positions in {@link #rowType} of the key columns (shard_number excluded). */
  private final int[] keyPositions;

  /** Built with the first row. */
  private MySqlType[] types;

  private RowData.FieldGetter[] keyGetters;
  private Map<Schema, Boolean> verifiedSchemas;

  FixedLayout(
      String hostName,
      RowType rowType,
      Map<String, Integer> shardByTable,
      List<MySqlColumn> columns,
      int[] keyPositions) {
    this.hostName = hostName;
    this.rowType = rowType;
    this.shardByTable = shardByTable;
    this.columns = columns;
    this.keyPositions = keyPositions;
  }

  RowData toRow(RowKind kind, int shard, String qualifiedName, Struct row) {
    if (types == null) {
      types = columns.stream().map(MySqlType::of).toArray(MySqlType[]::new);
      verifiedSchemas = new HashMap<>();
    }
    verifyColumns(shard, qualifiedName, row.schema());
    GenericRowData result = new GenericRowData(kind, rowType.getFieldCount());
    result.setField(0, shard);
    List<String> names = rowType.getFieldNames();
    for (int i = 1; i < rowType.getFieldCount(); i++) {
      String name = names.get(i);
      Field field = row.schema().field(name);
      Object v = row.get(field);
      if (v == null) {
        continue;
      }
      try {
        result.setField(i, types[i - 1].toFlink(v, field.schema(), columns.get(i - 1)));
      } catch (RuntimeException e) {
        throw new ShardRouterException(
            String.format(
                "Cannot convert column '%s' of shard %d ('%s' on host '%s') to %s: %s",
                name, shard, qualifiedName, hostName, rowType.getTypeAt(i), e.getMessage()),
            e);
      }
    }
    return result;
  }

  /**
   * True when both rows hold the same key values (byte for byte: Iceberg compares keys exactly).
   */
  boolean sameKey(RowData a, RowData b) {
    if (keyGetters == null) {
      keyGetters = new RowData.FieldGetter[keyPositions.length];
      for (int i = 0; i < keyPositions.length; i++) {
        keyGetters[i] =
            RowData.createFieldGetter(rowType.getTypeAt(keyPositions[i]), keyPositions[i]);
      }
    }
    for (RowData.FieldGetter getter : keyGetters) {
      if (!Objects.deepEquals(getter.getFieldOrNull(a), getter.getFieldOrNull(b))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The error that stops the job at a DDL record: the shard (or the database's shards) and the DDL.
   */
  ShardRouterException schemaChange(Struct value) {
    String ddl = value.schema().field("ddl") == null ? null : value.getString("ddl");
    String db =
        value.schema().field("databaseName") == null ? null : value.getString("databaseName");
    if (ddl == null && value.schema().field("historyRecord") != null) {
      // Flink CDC carries Debezium's schema history record as JSON: {"databaseName":…,"ddl":…,…}
      try {
        JsonNode history = JSON.readTree(value.getString("historyRecord"));
        ddl = history.path("ddl").asText(null);
        if (db == null) {
          db = history.path("databaseName").asText(null);
        }
      } catch (java.io.IOException | RuntimeException e) {
        ddl = null;
      }
    }
    if (ddl == null) {
      ddl = "(statement not in the record)";
    }
    String table = null;
    if (value.schema().field("source") != null && value.getStruct("source") != null) {
      Struct source = value.getStruct("source");
      if (source.schema().field("table") != null) {
        table = source.getString("table");
      }
      if (db == null && source.schema().field("db") != null) {
        db = source.getString("db");
      }
    }
    String where;
    Integer shard = table == null ? null : shardByTable.get(db + "." + table);
    if (shard != null) {
      where = String.format("shard %d ('%s.%s' on host '%s')", shard, db, table, hostName);
    } else {
      List<Integer> shards = new ArrayList<>();
      final String database = db;
      shardByTable.forEach(
          (k, v) -> {
            if (k.startsWith(database + ".")) {
              shards.add(v);
            }
          });
      shards.sort(null);
      where = String.format("database '%s' on host '%s' (shards %s)", db, hostName, shards);
    }
    return new ShardRouterException(
        String.format(
            "Cannot apply a schema change on %s: DDL '%s'. schema.change-behavior is 'fail', so the job stops here for good (no restarts); nothing after the last completed checkpoint is lost. To let the table follow the shards, set schema.change-behavior to 'evolve' and restore the job from its latest checkpoint (docs/schema-evolution.md)",
            where, ddl));
  }

  /**
   * A row whose columns differ from the layout means a DDL reached the binlog reader without a
   * record.
   */
  private void verifyColumns(int shard, String qualifiedName, Schema schema) {
    if (verifiedSchemas.containsKey(schema)) {
      return;
    }
    List<String> expected = rowType.getFieldNames().subList(1, rowType.getFieldCount());
    List<String> found = schema.fields().stream().map(Field::name).toList();
    if (!expected.equals(found)) {
      throw new ShardRouterException(
          String.format(
              "Cannot apply a schema change on shard %d ('%s' on host '%s'): its change records have columns %s but the table layout has %s. schema.change-behavior is 'fail'; to let the table follow the shards, set it to 'evolve' and restore the job from its latest checkpoint (docs/schema-evolution.md)",
              shard, qualifiedName, hostName, found, expected));
    }
    verifiedSchemas.put(schema, Boolean.TRUE);
  }
}
