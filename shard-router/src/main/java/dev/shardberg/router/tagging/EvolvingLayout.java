package dev.shardberg.router.tagging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.schema.SchemaComparison;
import dev.shardberg.router.schema.SchemaEvolution;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.MySqlType;
import dev.shardberg.router.types.TypeMapping;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Field;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The evolving half of one host's shard tagger ({@code ShardTaggingDeserializer}; {@code
 * schema.change-behavior=evolve}): lays rows out by the Iceberg table's current schema ({@link
 * VersionedRows}) and turns each shard's DDL into table changes ({@link SchemaEvolution}) applied
 * before the shard's next row.
 *
 * <p>Order: the DDL record reaches this class after every row the shard wrote before it and before
 * every row after it (one binlog, read in order). The table change is committed to the catalog
 * here, synchronously, before the next row is emitted; so every row that carries the new column
 * leaves the source after its column exists in the table, and every file the writers write uses a
 * schema the table already has. The coordinator commits those files later, in checkpoint order. A
 * restore from a checkpoint before the DDL replays it: the plan against the current table is then
 * empty, and the replayed rows are laid out by the current schema (NULL where the shard had no
 * column yet).
 *
 * <p>A change the binlog reader could not see — the shard's table altered after discovery but
 * before the CDC source read its definition for the snapshot — shows as rows with a column the
 * table lacks and no DDL record before them: the shard's columns are then read from MySQL and
 * planned the same way, in flight ({@link ShardSchemaChanges#adoptColumnsFromMySql}). The RENAME of
 * an online schema-change tool's cut-over arrives as a change of the shard's table whose columns
 * are the shadow table's: it is planned like any DDL (see ShardTaggingDeserializer#captureListOf).
 *
 * <p>State: none in Flink state. The table's schema is read from the catalog on first use (after a
 * failover: the newest); the shards' MySQL column definitions start from discovery and follow the
 * DDL records seen; a column added before a failover is converted by the MySQL type kept in the
 * Iceberg column's doc.
 *
 * <p>Works with what it is given ({@link HostShards}, the table's {@link TableSchemaEvolver}, a
 * {@link ColumnReader} for the shards' columns on MySQL), not with the tagger that creates it. Lays
 * the rows out itself; {@link ShardSchemaChanges} follows the shards' columns into the table, and
 * {@link ShardTruncation} handles a shard's TRUNCATE.
 */
final class EvolvingLayout {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HostShards shards;

  /** The shards' MySQL columns and the table's schema, and how a shard's change evolves them. */
  private final ShardSchemaChanges schemaChanges;

  private final ShardTruncation truncation;

  private final Map<LayoutKey, Layout> layouts = new HashMap<>();

  private record LayoutKey(
      int shard,
      org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema connect) {}

  /**
   * Per table position: the change record's field (null: the shard has no such column), its type.
   */
  private record Layout(Field[] fields, MySqlColumn[] columns, MySqlType[] types, Type[] targets) {}

  /** Reads the columns, primary key and indexes one shard's table has on MySQL now. */
  @FunctionalInterface
  interface ColumnReader {
    /**
     * @throws ShardRouterException when the host cannot be asked
     */
    SchemaComparison.ShardColumns read(int shard);
  }

  /**
   * @param mySql reads a shard's columns from MySQL when its rows carry a column no DDL record
   *     announced; null when the host cannot be asked (unit tests): such rows then stop the job
   */
  EvolvingLayout(HostShards shards, TableSchemaEvolver evolver, ColumnReader mySql) {
    this.shards = shards;
    this.schemaChanges = new ShardSchemaChanges(shards, evolver, mySql);
    this.truncation = new ShardTruncation(shards, evolver);
  }

  RowData toRow(RowKind kind, int shard, String qualifiedName, Struct row) {
    if (kind == RowKind.INSERT) {
      truncation.snapshotRowEmitted(shard); // only snapshot reads are +I
    }
    LayoutKey key = new LayoutKey(shard, row.schema());
    Layout layout = layouts.get(key);
    if (layout == null) {
      // (not computeIfAbsent: reading the shard's columns in flight clears the layouts)
      layout = layout(shard, qualifiedName, kind == RowKind.INSERT, key.connect());
      layouts.put(key, layout);
    }
    int columns = layout.fields().length;
    GenericRowData result = new GenericRowData(kind, columns + 1);
    result.setField(0, shard);
    for (int i = 1; i < columns; i++) {
      Field field = layout.fields()[i];
      if (field == null) {
        continue;
      }
      Object v = row.get(field);
      if (v == null) {
        continue;
      }
      try {
        Object converted = layout.types()[i].toFlink(v, field.schema(), layout.columns()[i]);
        result.setField(i, widen(converted, layout.targets()[i]));
      } catch (RuntimeException e) {
        throw new ShardRouterException(
            String.format(
                "Cannot convert column '%s' of shard %d ('%s' on host '%s') to %s: %s",
                field.name(),
                shard,
                qualifiedName,
                shards.hostName(),
                layout.targets()[i],
                e.getMessage()),
            e);
      }
    }
    result.setField(columns, schemaChanges.schema().schemaId());
    return result;
  }

  /**
   * True when both rows (of the current schema) hold the same key values. The key columns'
   * positions are the table's: they never move, as columns are only appended.
   */
  boolean sameKey(RowData a, RowData b) {
    Schema schema = schemaChanges.schema();
    for (String column : shards.keyColumns()) {
      int position = schema.columns().indexOf(schema.findField(column));
      Object x = ((GenericRowData) a).getField(position);
      Object y = ((GenericRowData) b).getField(position);
      if (!java.util.Objects.deepEquals(x, y)) {
        return false;
      }
    }
    return true;
  }

  /**
   * A value of the shard's (narrower) type in the table's type, as Iceberg reads a promoted column.
   */
  static Object widen(Object value, Type target) {
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

  private Layout layout(
      int shard,
      String qualifiedName,
      boolean snapshotRead,
      org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema connect) {
    List<String> unannounced = unannounced(connect);
    if (!unannounced.isEmpty()) {
      schemaChanges.adoptColumnsFromMySql(shard, qualifiedName, snapshotRead, connect, unannounced);
      layouts.clear();
    }
    List<Types.NestedField> tableColumns = schemaChanges.schema().columns();
    int n = tableColumns.size();
    Field[] fields = new Field[n];
    MySqlColumn[] defs = new MySqlColumn[n];
    MySqlType[] types = new MySqlType[n];
    Type[] targets = new Type[n];
    Map<String, MySqlColumn> known = schemaChanges.columnsOf(shard);
    for (int i = 1; i < n; i++) {
      Types.NestedField column = tableColumns.get(i);
      Field field = connect.field(column.name());
      if (field == null) {
        continue;
      }
      MySqlColumn def = known.get(column.name());
      if (def != null
          && column.doc() != null
          && !TypeMapping.toIcebergType(def).equals(column.type())) {
        // the table was widened past what this shard is known to hold (by another shard, or before
        // a
        // failover): convert by the widest definition, so a value of the wider type is never cut
        def = MySqlColumn.of(column.name(), column.doc(), true);
      }
      if (def == null) {
        if (column.doc() == null) {
          throw new ShardRouterException(
              String.format(
                  "Cannot convert column '%s' of shard %d ('%s' on host '%s'): its MySQL type is unknown (the table column"
                      + " has no doc with it). Restart the job so discovery reads it",
                  column.name(), shard, qualifiedName, shards.hostName()));
        }
        def =
            MySqlColumn.of(
                column.name(), column.doc(), true); // a column added by an earlier run of the job
      }
      fields[i] = field;
      defs[i] = def;
      types[i] = MySqlType.of(def);
      targets[i] = column.type();
    }
    return new Layout(fields, defs, types, targets);
  }

  /**
   * What the change record's columns say that no DDL record did: a column the table lacks, or a
   * required table column the row does not have (dropped or renamed on the shard). Empty in the
   * usual case, and for rows of an older version of the shard (a replay after a restore), whose
   * columns the table already holds.
   */
  private List<String> unannounced(
      org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema connect) {
    Schema schema = schemaChanges.schema();
    List<String> found = new ArrayList<>();
    for (Field f : connect.fields()) {
      if (schema.findField(f.name()) == null) {
        found.add(f.name());
      }
    }
    for (Types.NestedField column : schema.columns().subList(1, schema.columns().size())) {
      if (column.isRequired() && connect.field(column.name()) == null) {
        found.add(column.name());
      }
    }
    return found;
  }

  /**
   * @param eventMillis when the DDL was written to the binlog (whole seconds; -1: unknown)
   */
  void onSchemaChange(Struct value, Collector<RowData> out, long eventMillis) {
    JsonNode history;
    try {
      history = JSON.readTree(value.getString("historyRecord"));
    } catch (IOException | RuntimeException e) {
      throw new ShardRouterException(
          String.format(
              "Cannot read a schema change record of host '%s': %s",
              shards.hostName(), e.getMessage()),
          e);
    }
    String ddl = history.path("ddl").asText("(statement not in the record)");
    String database = history.path("databaseName").asText("");
    JsonNode changes = history.path("tableChanges");
    if (ShardTruncation.isTruncate(ddl)) {
      truncation.truncate(value, ddl, database, out, eventMillis);
      return;
    }
    if (schemaChanges.apply(ddl, changes)) {
      layouts.clear();
    }
  }
}
