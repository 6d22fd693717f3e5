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
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * planned the same way, in flight ({@link #adoptColumnsFromMySql}). The RENAME of an online
 * schema-change tool's cut-over arrives as a change of the shard's table whose columns are the
 * shadow table's: it is planned like any DDL (see ShardTaggingDeserializer#captureListOf).
 *
 * <p>State: none in Flink state. The table's schema is read from the catalog on first use (after a
 * failover: the newest); the shards' MySQL column definitions start from discovery and follow the
 * DDL records seen; a column added before a failover is converted by the MySQL type kept in the
 * Iceberg column's doc.
 *
 * <p>Works with what it is given ({@link HostShards}, the table's {@link TableSchemaEvolver}, a
 * {@link ColumnReader} for the shards' columns on MySQL), not with the tagger that creates it.
 */
final class EvolvingLayout {
  private static final Logger LOG = LoggerFactory.getLogger(EvolvingLayout.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern TRUNCATE =
      Pattern.compile(
          "^\\s*(/\\*.*?\\*/\\s*)*truncate\\b", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  private final HostShards shards;
  private final TableSchemaEvolver evolver;

  /**
   * Reads a shard's columns from MySQL in flight; null when the host cannot be asked (unit tests).
   */
  private final ColumnReader mySql;

  /** Per shard, its MySQL columns by name as last known. */
  private final Map<Integer, Map<String, MySqlColumn>> shardColumns = new HashMap<>();

  private final Map<Integer, List<String>> shardKeys = new HashMap<>();
  private final Set<Integer> loggedIgnored = new HashSet<>();

  /**
   * Per shard, when this instance emitted its last snapshot row (wall clock): a TRUNCATE whose
   * binlog event time is not clearly after it happened during the shard's snapshot, and stops the
   * job.
   */
  private final Map<Integer, Long> lastSnapshotRowMillis = new HashMap<>();

  /**
   * How far the TRUNCATE's binlog event time must lie past the shard's last snapshot row: binlog
   * times are whole seconds (up to 1 s early), plus 1 s for the clocks of the MySQL host and the
   * task manager.
   */
  static final long SNAPSHOT_TRUNCATE_MARGIN_MS = 2_000;

  /** "shard.column" of the added columns with a DEFAULT already warned about. */
  private final Set<String> warnedDefaults = new HashSet<>();

  private final Map<LayoutKey, Layout> layouts = new HashMap<>();
  private Schema schema;

  private record LayoutKey(
      int shard,
      org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema connect) {}

  /**
   * Per table position: the change record's field (null: the shard has no such column), its type.
   */
  private record Layout(Field[] fields, MySqlColumn[] columns, MySqlType[] types, Type[] targets) {}

  /**
   * What the layout knows of one host's shards, fixed when the tagger is built from the plan and
   * the table layout.
   *
   * @param hostName the host, for messages
   * @param shardByTable this host's shard tables, "db.table" → shard number
   * @param columns the plan's columns: every shard's at start-up, but for {@code ownColumns}
   * @param ownColumns shards whose columns at start-up differ from {@code columns} (the start-up
   *     union; see ShardPlan)
   * @param tablePrimaryKey the shards' primary key at start-up (Debezium reports the table's
   *     PRIMARY KEY with a DDL)
   * @param keyColumns the table's key columns, shard column excluded
   * @param buckets the table's bucket count B: a TRUNCATE of a shard sends one marker per bucket
   */
  record HostShards(
      String hostName,
      Map<String, Integer> shardByTable,
      List<MySqlColumn> columns,
      Map<Integer, List<MySqlColumn>> ownColumns,
      List<String> tablePrimaryKey,
      Set<String> keyColumns,
      int buckets) {

    /** The columns {@code shard} had at start-up. */
    List<MySqlColumn> startColumns(int shard) {
      return ownColumns.getOrDefault(shard, columns);
    }
  }

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
    this.evolver = evolver;
    this.mySql = mySql;
    this.schema = evolver.current();
  }

  RowData toRow(RowKind kind, int shard, String qualifiedName, Struct row) {
    if (kind == RowKind.INSERT) {
      lastSnapshotRowMillis.put(shard, System.currentTimeMillis()); // only snapshot reads are +I
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
    result.setField(columns, schema.schemaId());
    return result;
  }

  /**
   * True when both rows (of the current schema) hold the same key values. The key columns'
   * positions are the table's: they never move, as columns are only appended.
   */
  boolean sameKey(RowData a, RowData b) {
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
      adoptColumnsFromMySql(shard, qualifiedName, snapshotRead, connect, unannounced);
    }
    List<Types.NestedField> tableColumns = schema.columns();
    int n = tableColumns.size();
    Field[] fields = new Field[n];
    MySqlColumn[] defs = new MySqlColumn[n];
    MySqlType[] types = new MySqlType[n];
    Type[] targets = new Type[n];
    Map<String, MySqlColumn> known = columnsOf(shard);
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
   * A shard's rows carry columns no DDL record announced: the shard's table was changed where the
   * binlog reader could not see it — between discovery and the moment the CDC source read the
   * table's definition for its snapshot (the source then reads rows of the new definition, and its
   * binlog starts after the DDL or replays it later), e.g. while the snapshot of other shards was
   * being read. Reads the shard's current columns from MySQL and plans them like a DDL, against the
   * table's current schema and through the same single schema update; the DDL record, should it
   * arrive later, then plans nothing. The row's columns are taken with MySQL's definitions (types,
   * nullability); a column of the row that MySQL no longer has, and the table never had, cannot be
   * typed: the job stops.
   */
  private void adoptColumnsFromMySql(
      int shard,
      String qualifiedName,
      boolean snapshotRead,
      org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema connect,
      List<String> unannounced) {
    String where =
        String.format("shard %d ('%s' on host '%s')", shard, qualifiedName, shards.hostName());
    String what =
        String.format(
            "its %s rows have columns %s but table %s %s and no DDL record announced %s",
            snapshotRead ? "snapshot" : "binlog",
            connect.fields().stream().map(Field::name).toList(),
            evolver.tableName(),
            describeDifference(connect, unannounced),
            unannounced.size() == 1 ? "it" : "them");
    if (mySql == null) {
      throw new ShardRouterException(
          String.format(
              "Cannot route a change of %s: %s, and the host's columns cannot be read here. Restart the job:"
                  + " start-up discovery reads the shard's columns",
              where, what));
    }
    SchemaComparison.ShardColumns current = mySql.read(shard);
    Map<String, MySqlColumn> onMySql = new LinkedHashMap<>();
    current.columns().forEach(c -> onMySql.put(c.name(), c));
    Map<String, MySqlColumn> known = columnsOf(shard);
    List<MySqlColumn> after = new ArrayList<>();
    for (Field f : connect.fields()) {
      MySqlColumn column = onMySql.get(f.name());
      if (column == null) {
        column = known.get(f.name());
      }
      if (column == null
          && schema.findField(f.name()) != null
          && schema.findField(f.name()).doc() != null) {
        column = MySqlColumn.of(f.name(), schema.findField(f.name()).doc(), true);
      }
      if (column == null) {
        throw new ShardRouterException(
            String.format(
                "Cannot route a change of %s: %s; MySQL no longer has column '%s' either (its columns now: %s), so its"
                    + " type is unknown. Restart the job: start-up discovery reads the shard's columns",
                where, what, f.name(), List.copyOf(onMySql.keySet())));
      }
      after.add(column);
    }
    List<MySqlColumn> before = List.copyOf(known.values());
    List<String> keyBefore = shardKeys.getOrDefault(shard, shards.tablePrimaryKey());
    List<String> keyAfter = current.primaryKey();
    String why = "its columns read from MySQL (" + what + ")";
    Schema evolved =
        evolver.evolve(
            where + " by " + why,
            table ->
                SchemaEvolution.plan(
                    where,
                    "(none: " + why + ")",
                    before,
                    after,
                    keyBefore.isEmpty() ? null : keyBefore,
                    keyAfter,
                    shards.keyColumns(),
                    table));
    schema = evolved;
    known.clear();
    after.forEach(c -> known.put(c.name(), c));
    shardKeys.put(shard, keyAfter);
    layouts.clear();
    LOG.info(
        "Read the columns of {} from MySQL in flight: {}; the shard's rows now follow table {} schema {}",
        where,
        what,
        evolver.tableName(),
        schema.schemaId());
  }

  private String describeDifference(
      org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema connect,
      List<String> unannounced) {
    List<String> lacks = unannounced.stream().filter(c -> connect.field(c) != null).toList();
    List<String> missing = unannounced.stream().filter(c -> connect.field(c) == null).toList();
    List<String> parts = new ArrayList<>();
    if (!lacks.isEmpty()) {
      parts.add("lacks " + lacks);
    }
    if (!missing.isEmpty()) {
      parts.add("requires " + missing);
    }
    return String.join(" and ", parts);
  }

  private Map<String, MySqlColumn> columnsOf(int shard) {
    return shardColumns.computeIfAbsent(
        shard,
        s -> {
          Map<String, MySqlColumn> byName = new LinkedHashMap<>();
          shards.startColumns(s).forEach(c -> byName.put(c.name(), c));
          return byName;
        });
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
    if (TRUNCATE.matcher(ddl).find()) {
      truncate(value, ddl, database, out, eventMillis);
      return;
    }
    boolean any = false;
    for (JsonNode change : changes) {
      String qualified = qualifiedName(change.path("id").asText(""));
      Integer shard = shards.shardByTable().get(qualified);
      if (shard == null) {
        continue; // another table of the database
      }
      any = true;
      String where =
          String.format("shard %d ('%s' on host '%s')", shard, qualified, shards.hostName());
      String type = change.path("type").asText("");
      if (type.equals("DROP")) {
        LOG.warn(
            "Shard {} was dropped by '{}': its rows stay in table {} (Shardberg never deletes data because of a DDL)."
                + " Delete them from the table yourself if they must go",
            where,
            ddl,
            evolver.tableName());
        continue;
      }
      List<MySqlColumn> after = columns(change.path("table").path("columns"));
      List<String> keyAfter = new ArrayList<>();
      change.path("table").path("primaryKeyColumnNames").forEach(k -> keyAfter.add(k.asText()));
      Map<String, MySqlColumn> known = columnsOf(shard);
      List<MySqlColumn> before = List.copyOf(known.values());
      List<String> keyBefore = shardKeys.getOrDefault(shard, shards.tablePrimaryKey());
      Set<String> dropped = new HashSet<>();
      before.forEach(c -> dropped.add(c.name()));
      after.forEach(c -> dropped.remove(c.name()));
      Schema evolved =
          evolver.evolve(
              where + " by '" + ddl + "'",
              current ->
                  SchemaEvolution.plan(
                      where,
                      ddl,
                      before,
                      after,
                      keyBefore.isEmpty() ? null : keyBefore,
                      keyAfter,
                      shards.keyColumns(),
                      current),
              shard,
              dropped);
      boolean changed = evolved.schemaId() != schema.schemaId();
      for (MySqlColumn added : addedWithDefault(before, after)) {
        if (warnedDefaults.add(shard + "." + added.name())) {
          LOG.warn(
              "Column '{}' came to {} by '{}' with DEFAULT {}: MySQL gave the shard's existing rows that value without a"
                  + " change event for any of them (an ALTER fills it in place, an online schema-change tool's copy writes"
                  + " it into the shadow table), so in table {} those rows hold NULL there until they change, and verify"
                  + " reports them. Give them their value with an UPDATE that changes them on the shard (docs/schema-evolution.md, 'Defaults')",
              added.name(),
              where,
              ddl,
              added.defaultValue(),
              evolver.tableName());
        }
      }
      schema = evolved;
      known.clear();
      after.forEach(c -> known.put(c.name(), c));
      shardKeys.put(shard, keyAfter);
      layouts.clear();
      if (!changed && SchemaEvolution.sameColumns(before, after)) {
        if (loggedIgnored.add(shard)) {
          LOG.info(
              "Ignoring DDL on {} that changes nothing the table holds (no column change, or a replay): '{}' (logged"
                  + " once per shard; later ones are ignored silently)",
              where,
              ddl);
        }
      } else {
        LOG.info(
            "Applied DDL on {} to table {}: '{}'; rows now follow schema {}",
            where,
            evolver.tableName(),
            ddl,
            schema.schemaId());
      }
    }
    if (!any) {
      LOG.debug("DDL on host '{}' touches no shard of the plan: '{}'", shards.hostName(), ddl);
    }
  }

  /**
   * {@code TRUNCATE TABLE} of a shard: its rows leave the table at this point of the stream. One
   * marker per bucket ({@link VersionedRows#truncateMarker}) reaches the writer of each of the
   * shard's partitions in order with that partition's rows; the writer drops what it wrote of the
   * partition in this checkpoint and deletes the rest with the checkpoint's commit, so rows written
   * after the TRUNCATE stay. A TRUNCATE replayed after a restore deletes the same rows again, and
   * the rows written after it are replayed too.
   *
   * <p>Not during the shard's snapshot: Flink CDC emits a DDL read in the binlog while the shard's
   * chunks were being read whatever chunk it came before or after (it filters only row events by
   * the chunks' high watermarks), so some snapshot rows may predate the TRUNCATE and others already
   * reflect it. Deleting them all would lose rows, keeping them all could keep removed ones: the
   * job stops. A chunk's high watermark is read before its rows are emitted, so a TRUNCATE whose
   * binlog event time lies after the shard's last snapshot row came after every chunk of it. (Seen
   * only by the instance that read the snapshot: a failover between the end of the snapshot and the
   * TRUNCATE's record loses that knowledge; docs/schema-evolution.md says so.)
   */
  private void truncate(
      Struct value, String ddl, String database, Collector<RowData> out, long eventMillis) {
    Struct source = value.schema().field("source") == null ? null : value.getStruct("source");
    String table =
        source == null || source.schema().field("table") == null ? null : source.getString("table");
    String db =
        source == null || source.schema().field("db") == null ? database : source.getString("db");
    if (table == null) {
      throw new ShardRouterException(
          String.format(
              "Cannot replicate '%s' on host '%s' (database '%s'): the record does not say which table was truncated,"
                  + " so the rows of that shard cannot be removed. The job stops here; re-read the shard"
                  + " (docs/schema-evolution.md, 'When the job stops')",
              ddl, shards.hostName(), database));
    }
    String qualified = db + "." + table;
    Integer shard = shards.shardByTable().get(qualified);
    if (shard == null) {
      LOG.debug("TRUNCATE on host '{}' of a table outside the plan: '{}'", shards.hostName(), ddl);
      return;
    }
    String where =
        String.format("shard %d ('%s' on host '%s')", shard, qualified, shards.hostName());
    Long lastSnapshotRow = lastSnapshotRowMillis.get(shard);
    // binlog event times are whole seconds: "after the last snapshot row" needs a margin past it
    if (lastSnapshotRow != null
        && (eventMillis < 0 || eventMillis <= lastSnapshotRow + SNAPSHOT_TRUNCATE_MARGIN_MS)) {
      throw new ShardRouterException(
          String.format(
              "Cannot replicate '%s' on %s: the TRUNCATE happened while this job was reading the shard's snapshot, so"
                  + " some of the rows read may predate it and others not; the job stops rather than lose or keep"
                  + " rows wrongly. Re-read this shard alone (docs/schema-evolution.md, 'Re-reading one shard')",
              ddl, where));
    }
    for (int bucket = 0; bucket < shards.buckets(); bucket++) {
      out.collect(VersionedRows.truncateMarker(shard, bucket));
    }
    LOG.info(
        "TRUNCATE on {}: its rows leave table {} with the checkpoint that holds this point of the binlog ('{}')",
        where,
        evolver.tableName(),
        ddl);
  }

  /**
   * The columns of {@code after} that {@code before} lacks and that have a DEFAULT other than NULL:
   * their value on the shard's existing rows never reaches the binlog.
   */
  static List<MySqlColumn> addedWithDefault(List<MySqlColumn> before, List<MySqlColumn> after) {
    Set<String> had = new HashSet<>();
    before.forEach(c -> had.add(c.name()));
    return after.stream()
        .filter(c -> !had.contains(c.name()))
        .filter(c -> c.defaultValue() != null && !c.defaultValue().equalsIgnoreCase("NULL"))
        .toList();
  }

  /** {@code "db"."table"} (Debezium's double-quoted id) as {@code db.table}. */
  static String qualifiedName(String id) {
    List<String> parts = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c == '"') {
        if (quoted && i + 1 < id.length() && id.charAt(i + 1) == '"') {
          current.append('"');
          i++;
        } else {
          quoted = !quoted;
        }
      } else if (c == '.' && !quoted) {
        parts.add(current.toString());
        current.setLength(0);
      } else {
        current.append(c);
      }
    }
    parts.add(current.toString());
    return String.join(".", parts);
  }

  /**
   * Debezium's column documents as MySQL columns (the fields information_schema would give; the
   * default is Debezium's {@code defaultValueExpression}).
   */
  static List<MySqlColumn> columns(JsonNode columns) {
    List<MySqlColumn> result = new ArrayList<>();
    for (JsonNode c : columns) {
      String typeName = c.path("typeName").asText().toLowerCase(Locale.ROOT).trim();
      boolean unsigned = typeName.contains("unsigned");
      String dataType = typeName.replace("unsigned", "").replace("zerofill", "").trim();
      Integer length = c.hasNonNull("length") ? c.get("length").asInt() : null;
      Integer scale = c.hasNonNull("scale") ? c.get("scale").asInt() : null;
      Integer len = null;
      Integer precision = null;
      Integer sc = null;
      switch (dataType) {
        case "char", "varchar", "binary", "varbinary" -> len = length;
        case "decimal", "numeric" -> {
          precision = length == null ? 10 : length;
          sc = scale == null ? 0 : scale;
        }
        case "bit" -> precision = length == null ? 1 : length;
        case "time", "datetime", "timestamp" ->
            precision = length == null || length < 0 ? 0 : length;
        default -> precision = length;
      }
      String columnType;
      if (dataType.equals("enum") || dataType.equals("set")) {
        List<String> labels = new ArrayList<>();
        c.path("enumValues").forEach(v -> labels.add("'" + v.asText().replace("'", "''") + "'"));
        columnType = dataType + "(" + String.join(",", labels) + ")";
      } else if (dataType.equals("decimal") || dataType.equals("numeric")) {
        columnType = dataType + "(" + precision + "," + sc + ")";
      } else if (len != null) {
        columnType = dataType + "(" + len + ")";
      } else if (precision != null
          && (dataType.equals("bit")
              || (precision > 0 && (dataType.startsWith("time") || dataType.equals("datetime"))))) {
        columnType = dataType + "(" + precision + ")";
      } else {
        columnType = dataType;
      }
      if (unsigned) {
        columnType += " unsigned";
      }
      String defaultValue =
          c.path("hasDefaultValue").asBoolean(false)
              ? c.path("defaultValueExpression").asText(null)
              : null;
      result.add(
          new MySqlColumn(
              c.path("name").asText(),
              dataType,
              columnType,
              c.path("optional").asBoolean(true),
              defaultValue,
              len,
              precision,
              sc,
              unsigned));
    }
    return result;
  }
}
