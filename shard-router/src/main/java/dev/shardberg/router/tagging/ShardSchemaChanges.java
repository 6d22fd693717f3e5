package dev.shardberg.router.tagging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.schema.SchemaComparison;
import dev.shardberg.router.schema.SchemaEvolution;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.types.MySqlColumn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Field;
import org.apache.iceberg.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The evolving layout's knowledge of each shard's MySQL columns and primary key, and of the table's
 * schema: turns a shard's schema change, announced by a DDL record or read from MySQL in flight,
 * into a table change through the table's {@link TableSchemaEvolver}.
 */
final class ShardSchemaChanges {
  /** Logs as the evolving layout did before this class was split out of it: the lines stay. */
  private static final Logger LOG = LoggerFactory.getLogger(EvolvingLayout.class);

  private final HostShards shards;
  private final TableSchemaEvolver evolver;

  /**
   * Reads a shard's columns from MySQL in flight; null when the host cannot be asked (unit tests).
   */
  private final EvolvingLayout.ColumnReader mySql;

  /** Per shard, its MySQL columns by name as last known. */
  private final Map<Integer, Map<String, MySqlColumn>> shardColumns = new HashMap<>();

  private final Map<Integer, List<String>> shardKeys = new HashMap<>();
  private final Set<Integer> loggedIgnored = new HashSet<>();

  /** "shard.column" of the added columns with a DEFAULT already warned about. */
  private final Set<String> warnedDefaults = new HashSet<>();

  private Schema schema;

  ShardSchemaChanges(
      HostShards shards, TableSchemaEvolver evolver, EvolvingLayout.ColumnReader mySql) {
    this.shards = shards;
    this.evolver = evolver;
    this.mySql = mySql;
    this.schema = evolver.current();
  }

  /** The table's schema: the catalog's when this instance was created, then as it evolved it. */
  Schema schema() {
    return schema;
  }

  /**
   * Plans and applies the table changes of one DDL record ({@code tableChanges}) to the table, one
   * shard table at a time; other tables of the database are skipped, a DROP of a shard only warned
   * about.
   *
   * @return whether a shard's known columns were replaced (layouts built before are stale)
   */
  boolean apply(String ddl, JsonNode changes) {
    boolean any = false;
    boolean replaced = false;
    for (JsonNode change : changes) {
      String qualified = DebeziumTableChanges.qualifiedName(change.path("id").asText(""));
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
            "Shard {} was dropped by '{}': its rows stay in table {} while this run goes on (a DDL never deletes"
                + " rows); at the next resume they stay or leave the table as tables.dropped-shards says"
                + " (docs/shard-fleet.md)",
            where,
            ddl,
            evolver.tableName());
        continue;
      }
      List<MySqlColumn> after = DebeziumTableChanges.columns(change.path("table").path("columns"));
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
      replaced = true;
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
    return replaced;
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
  void adoptColumnsFromMySql(
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

  /** {@code shard}'s MySQL columns by name as last known (at first: its start-up columns). */
  Map<String, MySqlColumn> columnsOf(int shard) {
    return shardColumns.computeIfAbsent(
        shard,
        s -> {
          Map<String, MySqlColumn> byName = new LinkedHashMap<>();
          shards.startColumns(s).forEach(c -> byName.put(c.name(), c));
          return byName;
        });
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
}
