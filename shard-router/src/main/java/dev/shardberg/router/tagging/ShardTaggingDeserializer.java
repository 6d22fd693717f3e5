package dev.shardberg.router.tagging;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.MySqlType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.source.SourceRecord;
import org.apache.flink.cdc.debezium.DebeziumDeserializationSchema;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * Turns the Debezium change records of ONE host's {@code MySqlSource} into Flink {@link RowData} of
 * {@link TableLayout#rowType()}: {@code shard_number} at position 0 (from the record's database and
 * table, looked up in the {@link ShardPlan}), then the source columns converted by their {@link
 * MySqlType}. Row kinds: a snapshot read ({@code op = r}) is +I, a live insert ({@code op = c}) is
 * +U (an upsert: after a restore the key may already be in the table), an update is -U then +U, a
 * delete -D. Only snapshot reads are +I, which lets the sink write a first load insert-only (see
 * ShardbergSink).
 *
 * <p>An update that changes the key ({@link TableLayout#equalityColumns()}: the before image's key
 * differs from the after image's) is -D of the before image, then +U: the writers drop -U (an
 * upsert +U deletes its own key), so only a -D removes the old key's row. This is the one place
 * that sees both images together; downstream, the -D and the +U may go to different writers (they
 * are keyed by the bucket of their own key), and each is in order with the other changes of its
 * key. Debezium already splits a change of the MySQL primary key into a delete and a create; this
 * covers a key that is a UNIQUE index (tables without a primary key, or {@code tables.key-columns}
 * other than it).
 *
 * <p>Fails, never drops: a record from a table outside the plan, a schema-change (DDL) record, a
 * row whose columns differ from the layout (a DDL that was not delivered as a record) and a value
 * that cannot be represented all throw {@link ShardRouterException}, which fails the job before the
 * next checkpoint, so nothing after the last completed checkpoint is lost. The one exception, with
 * {@code schema.change-behavior=evolve}: the rows of a shard's online-schema-change shadow table
 * ({@link #captureListOf}) are read only so that the binlog reader knows the shadow's definition
 * when the tool's {@code RENAME} swaps it in; they are dropped here (the shard's own rows carry
 * every change).
 *
 * <p>Value conversion is {@link MySqlType#toFlink}, chosen per column from the plan's MySQL columns
 * (the one type table; docs/type-mapping.md).
 */
public final class ShardTaggingDeserializer implements DebeziumDeserializationSchema<RowData> {
  private static final long serialVersionUID = 1L;

  private static final String SCHEMA_CHANGE_VALUE = "io.debezium.connector.mysql.SchemaChangeValue";

  /**
   * Suffixes of the shadow tables that online schema-change tools build beside a table {@code T}
   * and swap in with an atomic {@code RENAME TABLE T TO …, <shadow> TO T}: gh-ost's {@code _T_gho}
   * and pt-online-schema-change's {@code _T_new} (pt-osc adds more leading underscores while the
   * name is taken).
   */
  static final List<String> SHADOW_SUFFIXES = List.of("_gho", "_new");

  /** {@code _…_T_gho} / {@code _…_T_new} → T. */
  private static final Pattern SHADOW_NAME = Pattern.compile("_+(.+)(_gho|_new)");

  /** Connect and socket timeout of the in-flight read of a shard's columns (see EvolvingLayout). */
  static final long COLUMN_READ_TIMEOUT_MS = 30_000;

  private final String hostName;

  /**
   * The host, to read a shard's columns when its rows carry one no DDL announced; null in unit
   * tests.
   */
  private final MySqlHost host;

  /** This host's shard tables by shard number. */
  private final Map<Integer, ShardTable> tables;

  private final RowType rowType;
  private final Map<String, Integer> shardByTable;

  /**
   * The source columns in row order (row position i + 1): their {@link MySqlType} converts the
   * values.
   */
  private final List<MySqlColumn> columns;

  /**
   * Positions in {@link #rowType} of the key columns (shard_number excluded: one record, one
   * shard).
   */
  private final int[] keyPositions;

  /**
   * Null: the fixed layout of {@link #rowType} (schema.change-behavior=fail; {@link FixedLayout}).
   * Else versioned rows ({@link EvolvingLayout}).
   */
  private final TableSchemaEvolver evolver;

  /**
   * Shards of this host whose columns differ from {@link #columns} (start-up union; see ShardPlan).
   */
  private final Map<Integer, List<MySqlColumn>> ownColumns = new HashMap<>();

  /** The shards' primary key at start-up (Debezium reports the table's PRIMARY KEY with a DDL). */
  private final List<String> tablePrimaryKey;

  private final Set<String> keyColumns;

  /**
   * The table's bucket count B: a TRUNCATE of a shard sends one marker per bucket (see
   * ShardTruncation).
   */
  private final int buckets;

  /**
   * Null unless {@code tables.new-shards: capture}: shard tables created while the job runs are
   * read from the binlog ({@link NewShardCapture}).
   */
  private NewShardCapture capture;

  /** Built on first use: the fixed layout without {@link #evolver}, else the evolving one. */
  private transient FixedLayout fixed;

  private transient EvolvingLayout evolving;

  private ShardTaggingDeserializer(
      String hostName,
      MySqlHost host,
      Map<Integer, ShardTable> tables,
      RowType rowType,
      Map<String, Integer> shardByTable,
      List<MySqlColumn> columns,
      int[] keyPositions,
      TableSchemaEvolver evolver,
      List<String> tablePrimaryKey,
      Set<String> keyColumns,
      int buckets) {
    this.host = host;
    this.tables = Map.copyOf(tables);
    this.evolver = evolver;
    this.buckets = buckets;
    this.tablePrimaryKey = List.copyOf(tablePrimaryKey);
    this.keyColumns = Set.copyOf(keyColumns);
    this.hostName = hostName;
    this.rowType = rowType;
    this.shardByTable = shardByTable;
    this.columns = List.copyOf(columns);
    this.keyPositions = keyPositions;
  }

  /**
   * The deserializer for the {@code MySqlSource} of {@code hostName} with the fixed layout: any DDL
   * stops the job ({@code schema.change-behavior=fail}).
   */
  public static ShardTaggingDeserializer forHost(
      ShardPlan plan, String hostName, TableLayout layout) {
    return forHost(plan, hostName, layout, null);
  }

  /**
   * The deserializer for the {@code MySqlSource} of {@code hostName}; with an {@code evolver}
   * ({@code schema.change-behavior=evolve}) it emits {@link VersionedRows} that follow the table's
   * schema, and evolves the table on DDL ({@link dev.shardberg.router.schema.SchemaEvolution});
   * without, the fixed layout.
   */
  public static ShardTaggingDeserializer forHost(
      ShardPlan plan, String hostName, TableLayout layout, TableSchemaEvolver evolver) {
    return forHost(plan, hostName, null, layout, evolver);
  }

  /**
   * As {@link #forHost(ShardPlan, String, TableLayout, TableSchemaEvolver)}, for the job: with the
   * host itself, so that a shard whose rows carry a column no DDL record announced (one added while
   * the snapshot was being read) has its columns read from MySQL and the table evolved in flight.
   */
  public static ShardTaggingDeserializer forHost(
      ShardPlan plan, MySqlHost host, TableLayout layout, TableSchemaEvolver evolver) {
    Objects.requireNonNull(host, "host");
    return forHost(plan, host.name(), host, layout, evolver);
  }

  private static ShardTaggingDeserializer forHost(
      ShardPlan plan,
      String hostName,
      MySqlHost host,
      TableLayout layout,
      TableSchemaEvolver evolver) {
    Objects.requireNonNull(plan, "plan");
    Objects.requireNonNull(layout, "layout");
    List<ShardTable> tables = plan.tablesOf(hostName);
    Preconditions.checkArgument(
        !tables.isEmpty(),
        "Cannot read host '%s': it has no shard in the plan (hosts with shards: %s)",
        hostName,
        plan.hostNames());
    Preconditions.checkArgument(
        layout.rowType().getFieldNames().get(0).equals(TableLayout.SHARD_COLUMN),
        "Cannot tag rows: the layout's first column is '%s', not '%s'",
        layout.rowType().getFieldNames().get(0),
        TableLayout.SHARD_COLUMN);
    Map<String, Integer> shardByTable = new HashMap<>();
    Map<Integer, ShardTable> byShard = new HashMap<>();
    for (ShardTable t : tables) {
      shardByTable.put(t.qualifiedName(), t.shard());
      byShard.put(t.shard(), t);
    }
    int[] keyPositions =
        layout.equalityColumns().stream()
            .filter(c -> !c.equals(TableLayout.SHARD_COLUMN))
            .mapToInt(c -> layout.rowType().getFieldIndex(c))
            .toArray();
    List<MySqlColumn> columns = plan.schema().columns();
    Preconditions.checkArgument(
        layout
            .rowType()
            .getFieldNames()
            .subList(1, layout.rowType().getFieldCount())
            .equals(plan.schema().columnNames()),
        "Cannot tag rows: the layout's columns %s are not the plan's columns %s",
        layout.rowType().getFieldNames(),
        plan.schema().columnNames());
    Set<String> keyColumns = new java.util.HashSet<>(layout.equalityColumns());
    keyColumns.remove(TableLayout.SHARD_COLUMN);
    ShardTaggingDeserializer deserializer =
        new ShardTaggingDeserializer(
            hostName,
            host,
            byShard,
            layout.rowType(),
            shardByTable,
            columns,
            keyPositions,
            evolver,
            plan.schema().tablePrimaryKey(),
            keyColumns,
            layout.buckets());
    for (ShardTable t : tables) {
      if (plan.shardColumns().containsKey(t.shard())) {
        deserializer.ownColumns.put(t.shard(), List.copyOf(plan.columnsOf(t.shard())));
      }
    }
    return deserializer;
  }

  /**
   * Reads shard tables created while the job runs from the binlog ({@code tables.new-shards:
   * capture}): the host's source must capture the shard patterns ({@link #capturePatternOf}) with
   * Flink CDC's switch for newly added tables off. Returns this.
   */
  public ShardTaggingDeserializer capturing(NewShardCapture capture) {
    if (evolver == null) {
      capture.expectColumns(columns, tablePrimaryKey);
    }
    this.capture = capture;
    return this;
  }

  /** The capture of new shard tables, or null. */
  public NewShardCapture capture() {
    return capture;
  }

  /**
   * For the source's reader ({@code tables.new-shards: capture}): binlog rows of the planned tables
   * {@code held} accepts are dropped until it no longer does (their snapshot is pending), and the
   * tables of {@code restoredCaptured} (defined in the restored binlog split, not planned) are read
   * on as captured before. {@code listener} hears of every table captured.
   */
  public void onRestoredBinlogSplit(
      java.util.function.Predicate<String> held,
      java.util.Collection<String> restoredCaptured,
      java.util.function.BiConsumer<String, Integer> listener) {
    if (capture == null) {
      return;
    }
    capture.holdBinlogRows(held);
    capture.onCapture(listener);
    capture.restoreCaptured(restoredCaptured, shardByTable);
  }

  /**
   * The {@code tableList} entries that capture every table of the host's shard databases matching
   * the patterns ({@code tables.new-shards: capture}): one anchored regex, database and table
   * pattern joined by an escaped dot. Named groups become plain groups: both patterns may name
   * their group {@code shard} (the router takes the table's, else the database's), and one regex
   * cannot name two groups alike. A leading {@code ^} and a trailing {@code $} go (discovery
   * matches the whole name either way; inside the joined regex they would match nothing).
   */
  public static String capturePatternOf(String databasePattern, String tablePattern) {
    return "(?:"
        + withoutGroupNames(unanchored(databasePattern))
        + ")\\.(?:"
        + withoutGroupNames(unanchored(tablePattern))
        + ")";
  }

  /** {@code regex} without a leading {@code ^} and a trailing unescaped {@code $}. */
  static String unanchored(String regex) {
    String r = regex.startsWith("^") ? regex.substring(1) : regex;
    if (r.endsWith("$")) {
      int backslashes = 0;
      for (int i = r.length() - 2; i >= 0 && r.charAt(i) == '\\'; i--) {
        backslashes++;
      }
      if (backslashes % 2 == 0) {
        r = r.substring(0, r.length() - 1);
      }
    }
    return r;
  }

  /** {@code regex} with each named group {@code (?<name>…)} as a non-capturing one. */
  static String withoutGroupNames(String regex) {
    StringBuilder out = new StringBuilder(regex.length());
    boolean inClass = false;
    for (int i = 0; i < regex.length(); i++) {
      char c = regex.charAt(i);
      if (c == '\\' && i + 1 < regex.length()) {
        out.append(c).append(regex.charAt(++i));
        continue;
      }
      if (c == '[') {
        inClass = true;
      } else if (c == ']') {
        inClass = false;
      } else if (!inClass
          && c == '('
          && regex.startsWith("?<", i + 1)
          && i + 3 < regex.length()
          && Character.isLetter(regex.charAt(i + 3))) {
        int end = regex.indexOf('>', i + 3);
        if (end > 0) {
          out.append("(?:");
          i = end;
          continue;
        }
      }
      out.append(c);
    }
    return out.toString();
  }

  /**
   * The {@code tableList} for the host's {@code MySqlSource}: "db.table" per shard, regex
   * metacharacters in the names escaped (Flink CDC treats the entries as anchored regexes).
   */
  public static String[] tableListOf(ShardPlan plan, String hostName) {
    return plan.tablesOf(hostName).stream()
        .map(t -> escapeRegex(t.database()) + "." + escapeRegex(t.table()))
        .toArray(String[]::new);
  }

  /**
   * The {@code tableList} for the host's {@code MySqlSource} with {@code
   * schema.change-behavior=evolve}: {@link #tableListOf} plus, per shard table {@code T}, the
   * shadow tables of gh-ost ({@code _T_gho}) and pt-online-schema-change ({@code _T_new}, {@code
   * __T_new} …). Why: the binlog reader only follows the definition of the tables it captures, and
   * keeps only theirs in its checkpointed state. Without the shadow in the list, the cut-over
   * {@code RENAME TABLE T TO _T_del, _T_gho TO T} still reaches the tagger while the job runs
   * through the whole migration (the reader parsed the shadow's CREATE and ALTER), but after a
   * restore or a start in the middle of the migration the reader does not know the shadow: the swap
   * then reaches nobody and the binlog reader silently skips every later change of T as a table it
   * does not know (seen with Flink CDC 3.5.0, see docs/schema-evolution.md). The shadow's rows are
   * dropped by the tagger.
   */
  public static String[] captureListOf(ShardPlan plan, String hostName) {
    List<String> list = new ArrayList<>(List.of(tableListOf(plan, hostName)));
    for (ShardTable t : plan.tablesOf(hostName)) {
      for (String pattern : shadowTablePatterns(t)) {
        list.add(escapeRegex(t.database()) + "." + pattern);
      }
    }
    return list.toArray(String[]::new);
  }

  /** The table-name regexes of the shadow tables of {@code t} (see {@link #captureListOf}). */
  public static List<String> shadowTablePatterns(ShardTable t) {
    return SHADOW_SUFFIXES.stream()
        .map(suffix -> "_+" + escapeRegex(t.table()) + escapeRegex(suffix))
        .toList();
  }

  /** The {@code databaseList} for the host's {@code MySqlSource} (regex-escaped, distinct). */
  public static String[] databaseListOf(ShardPlan plan, String hostName) {
    Set<String> dbs = new LinkedHashSet<>();
    plan.tablesOf(hostName).forEach(t -> dbs.add(escapeRegex(t.database())));
    return dbs.toArray(String[]::new);
  }

  private static final Pattern REGEX_META = Pattern.compile("([\\\\.\\[\\]{}()<>*+\\-=!?^$|])");

  /** A MySQL name as a Flink CDC table-filter regex that matches exactly it. */
  public static String escapeRegex(String name) {
    return REGEX_META.matcher(name).replaceAll("\\\\$1");
  }

  @Override
  public TypeInformation<RowData> getProducedType() {
    if (evolver != null) {
      return VersionedRows.TYPE_INFO;
    }
    return InternalTypeInfo.of(rowType);
  }

  @Override
  public void deserialize(SourceRecord record, Collector<RowData> out) {
    Schema valueSchema = record.valueSchema();
    if (record.value() == null || valueSchema == null) {
      return; // tombstone
    }
    Struct value = (Struct) record.value();
    if (SCHEMA_CHANGE_VALUE.equals(valueSchema.name())) {
      if (capture != null && capture.onDdl(value, shardByTable, host)) {
        return; // a new shard table captured, or a DDL of a table this job does not read
      }
      if (evolver == null) {
        throw fixed().schemaChange(value);
      }
      evolving().onSchemaChange(value, out, binlogEventMillis(record));
      return;
    }
    if (valueSchema.field("op") == null || valueSchema.field("source") == null) {
      return; // heartbeat or transaction metadata: no row
    }
    Struct source = value.getStruct("source");
    String qualifiedName = source.getString("db") + "." + source.getString("table");
    Integer shard = shardByTable.get(qualifiedName);
    if (shard == null
        && evolver != null
        && isShadowTable(source.getString("db"), source.getString("table"))) {
      return; // read for its definition only (captureListOf)
    }
    if (capture != null) {
      if (shard == null) {
        // a table matching the patterns this job does not read: excluded, renamed into them, or
        // created before the reader's position (the host watch counts it; a run adopts it)
        return;
      }
      if (!"r".equals(value.getString("op")) && capture.isHeld(qualifiedName)) {
        return; // its snapshot is pending: it and the binlog after it carry this change
      }
    }
    if (shard == null) {
      throw new ShardRouterException(
          String.format(
              "Cannot route a change of table '%s' on host '%s': it is not in the shard plan (this host's shards: %s). The source's table list and the plan disagree; restart the job so discovery runs again",
              qualifiedName, hostName, shardByTable.keySet().stream().sorted().toList()));
    }
    String op = value.getString("op");
    switch (op) {
      case "r":
        out.collect(toRow(RowKind.INSERT, shard, qualifiedName, value.getStruct("after")));
        break;
      case "c":
        out.collect(toRow(RowKind.UPDATE_AFTER, shard, qualifiedName, value.getStruct("after")));
        break;
      case "u":
        RowData before =
            toRow(RowKind.UPDATE_BEFORE, shard, qualifiedName, value.getStruct("before"));
        RowData after = toRow(RowKind.UPDATE_AFTER, shard, qualifiedName, value.getStruct("after"));
        if (!sameKey(before, after)) {
          before.setRowKind(
              RowKind.DELETE); // the key changed: the old key's row goes (see class doc)
        }
        out.collect(before);
        out.collect(after);
        break;
      case "d":
        out.collect(toRow(RowKind.DELETE, shard, qualifiedName, value.getStruct("before")));
        break;
      default:
        throw new ShardRouterException(
            String.format(
                "Cannot apply operation '%s' on shard %d ('%s' on host '%s'): only inserts, updates and deletes can be replicated (a TRUNCATE is not); re-snapshot the shard",
                op, shard, qualifiedName, hostName));
    }
  }

  /**
   * When the record's binlog event was written on the server (its offset's {@code ts_sec}, whole
   * seconds), or -1 when the offset does not say. Not the record's {@code source.ts_ms}: for a DDL
   * Debezium stamps that when it processes the event, late when the reader catches up.
   */
  static long binlogEventMillis(SourceRecord record) {
    Map<String, ?> offset = record.sourceOffset();
    Object seconds = offset == null ? null : offset.get("ts_sec");
    if (seconds instanceof Number n) {
      return n.longValue() * 1000;
    }
    if (seconds instanceof String text && !text.isBlank()) {
      try {
        return Long.parseLong(text.trim()) * 1000;
      } catch (NumberFormatException e) {
        return -1;
      }
    }
    return -1;
  }

  /**
   * True when {@code db.table} is the gh-ost / pt-osc shadow table of one of this host's shards.
   */
  boolean isShadowTable(String db, String table) {
    java.util.regex.Matcher m = SHADOW_NAME.matcher(table);
    return m.matches() && shardByTable.containsKey(db + "." + m.group(1));
  }

  /**
   * True when both rows hold the same key values (byte for byte: Iceberg compares keys exactly).
   */
  private boolean sameKey(RowData a, RowData b) {
    return evolver != null ? evolving().sameKey(a, b) : fixed().sameKey(a, b);
  }

  private RowData toRow(RowKind kind, int shard, String qualifiedName, Struct row) {
    return evolver != null
        ? evolving().toRow(kind, shard, qualifiedName, row)
        : fixed().toRow(kind, shard, qualifiedName, row);
  }

  /** The shard table of {@code shard} on this host: planned, or captured while the job runs. */
  private ShardTable tableOf(int shard) {
    ShardTable planned = tables.get(shard);
    if (planned != null) {
      return planned;
    }
    for (Map.Entry<String, Integer> e : shardByTable.entrySet()) {
      if (e.getValue() == shard) {
        int dot = e.getKey().indexOf('.');
        return new ShardTable(
            hostName, e.getKey().substring(0, dot), e.getKey().substring(dot + 1), shard);
      }
    }
    throw new ShardRouterException(
        String.format("Cannot find shard %d on host '%s' among %s", shard, hostName, shardByTable));
  }

  private FixedLayout fixed() {
    if (fixed == null) {
      fixed = new FixedLayout(hostName, rowType, shardByTable, columns, keyPositions);
    }
    return fixed;
  }

  private EvolvingLayout evolving() {
    if (evolving == null) {
      HostShards shards =
          new HostShards(
              hostName, shardByTable, columns, ownColumns, tablePrimaryKey, keyColumns, buckets);
      EvolvingLayout.ColumnReader mySql =
          host == null
              ? null
              : shard ->
                  ShardDiscovery.currentColumns(host, tableOf(shard), COLUMN_READ_TIMEOUT_MS);
      evolving = new EvolvingLayout(shards, evolver, mySql);
    }
    return evolving;
  }
}
