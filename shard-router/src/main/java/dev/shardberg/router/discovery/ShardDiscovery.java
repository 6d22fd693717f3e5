package dev.shardberg.router.discovery;

import static dev.shardberg.router.discovery.MySqlConnections.connect;
import static dev.shardberg.router.discovery.MySqlConnections.queryFailure;
import static dev.shardberg.router.discovery.MySqlConnections.safeMessage;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.InformationSchemaReader.TableColumns;
import dev.shardberg.router.schema.SchemaComparison;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.types.MySqlColumn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds every shard of a logical table on every host over JDBC (information_schema), checks that
 * the binlog reader can work there (privileges, binlog format), assigns shard numbers and derives
 * the one schema all shards share.
 *
 * <p>The entry of the discovery package; the work is done by {@link InformationSchemaReader} (the
 * queries), {@link BinlogReaderChecks} (binlog settings and privileges), {@link ShardNumbering}
 * (numbers and exclusions) and {@link KeySampler} (the default bucket column), over connections of
 * {@link MySqlConnections}.
 */
public final class ShardDiscovery {
  private static final Logger LOG = LoggerFactory.getLogger(ShardDiscovery.class);

  /** Privileges the Flink CDC MySQL source needs, granted ON *.* (SELECT may be per database). */
  public static final List<String> REQUIRED_PRIVILEGES =
      List.of("SELECT", "RELOAD", "SHOW DATABASES", "REPLICATION SLAVE", "REPLICATION CLIENT");

  private ShardDiscovery() {}

  public static ShardPlan discover(LogicalTableSpec spec) {
    return discover(spec, false);
  }

  /**
   * As {@link #discover(LogicalTableSpec)}; with {@code unionOfEvolvable}
   * (schema.change-behavior=evolve) shards that differ only in evolvable ways are accepted, the
   * schema being their union (a rollout half done when the job starts), and the plan keeps each
   * shard's own columns.
   */
  public static ShardPlan discover(LogicalTableSpec spec, boolean unionOfEvolvable) {
    long start = System.nanoTime();
    Map<String, List<FoundTable>> found = new LinkedHashMap<>();
    List<String> hostProblems = new ArrayList<>();
    Map<String, Map<FoundTable, TableColumns>> columnsByHost = new LinkedHashMap<>();
    for (MySqlHost host : spec.hosts()) {
      long hostStart = System.nanoTime();
      try (Connection c = connect(host)) {
        hostProblems.addAll(BinlogReaderChecks.checkBinlog(c, host));
        List<String> databases = InformationSchemaReader.matchingDatabases(c, spec);
        hostProblems.addAll(BinlogReaderChecks.checkPrivileges(c, host, databases));
        List<FoundTable> tables = InformationSchemaReader.matchingTables(c, host, spec, databases);
        found.put(host.name(), tables);
        columnsByHost.put(host.name(), InformationSchemaReader.readColumns(c, tables, databases));
      } catch (SQLException e) {
        throw queryFailure(host, e);
      }
      LOG.debug(
          "Discovered host {} in {} ms", host.name(), (System.nanoTime() - hostStart) / 1_000_000);
    }
    if (!hostProblems.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot capture changes: %d problem(s) on the MySQL host(s):%n%s",
              hostProblems.size(),
              hostProblems.stream()
                  .map(p -> "  - " + p)
                  .collect(Collectors.joining(System.lineSeparator()))));
    }
    Map<String, List<ShardTable>> assigned =
        ShardNumbering.exclude(spec, ShardNumbering.assign(spec, found));
    List<SchemaComparison.ShardColumns> shardColumns = new ArrayList<>();
    for (List<ShardTable> tables : assigned.values()) {
      for (ShardTable t : tables) {
        TableColumns tc =
            columnsByHost
                .get(t.hostName())
                .get(new FoundTable(t.hostName(), t.database(), t.table()));
        shardColumns.add(
            new SchemaComparison.ShardColumns(t, tc.columns(), tc.primaryKey(), tc.indexes()));
      }
    }
    ShardSchema schema =
        SchemaComparison.sharedSchema(shardColumns, spec.keyColumns(), unionOfEvolvable);
    if (schema.primaryKey().size() > 1) {
      schema = schema.withKeySample(KeySampler.sampleKey(spec, assigned, schema.primaryKey()));
    }
    Map<Integer, List<MySqlColumn>> ownColumns = new HashMap<>();
    for (SchemaComparison.ShardColumns sc : shardColumns) {
      if (!sc.columns().equals(schema.columns())) {
        ownColumns.put(sc.table().shard(), sc.columns());
      }
    }
    ShardPlan plan = new ShardPlan(assigned, schema, ownColumns);
    LOG.info(
        "Discovered {} shard(s) on {} of {} host(s) in {} ms: {}",
        plan.shardCount(),
        plan.tablesByHost().size(),
        spec.hosts().size(),
        (System.nanoTime() - start) / 1_000_000,
        plan);
    return plan;
  }

  /**
   * MySQL's own estimate of each shard's row count ({@code information_schema.TABLES.TABLE_ROWS};
   * for InnoDB a sample, often off by tens of percent), for a snapshot's ETA on the console. A host
   * that cannot be asked is left out (logged at DEBUG): an estimate is never worth failing for.
   */
  public static Map<Integer, Long> estimatedRows(List<MySqlHost> hosts, ShardPlan plan) {
    Map<Integer, Long> rows = new TreeMap<>();
    for (MySqlHost host : hosts) {
      List<ShardTable> tables = plan.tablesOf(host.name());
      if (tables.isEmpty()) {
        continue;
      }
      Map<String, Integer> shardOf = new HashMap<>();
      tables.forEach(t -> shardOf.put(t.database() + "." + t.table(), t.shard()));
      Set<String> databases = new LinkedHashSet<>();
      tables.forEach(t -> databases.add(t.database()));
      String in = databases.stream().map(d -> "?").collect(Collectors.joining(","));
      try (Connection c = connect(host);
          PreparedStatement st =
              c.prepareStatement(
                  "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ("
                      + in
                      + ")")) {
        int i = 1;
        for (String database : databases) {
          st.setString(i++, database);
        }
        try (ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            Integer shard = shardOf.get(rs.getString(1) + "." + rs.getString(2));
            long estimate = rs.getLong(3);
            if (shard != null && !rs.wasNull()) {
              rows.merge(shard, estimate, Long::sum);
            }
          }
        }
      } catch (SQLException | RuntimeException e) {
        LOG.debug("No row estimate from MySQL host {}: {}", host.describe(), e.toString());
      }
    }
    return rows;
  }

  /**
   * The columns, primary key and indexes one shard table has on MySQL now, read as discovery reads
   * them (information_schema), over a connection of the job's own that also works from a Flink task
   * ({@link MySqlHost#openWatchConnection}). For the shard tagger, when a shard's rows carry a
   * column no DDL record announced (see EvolvingLayout).
   *
   * @throws ShardRouterException when the host cannot be asked, naming host, user and shard (never
   *     the password)
   */
  public static SchemaComparison.ShardColumns currentColumns(
      MySqlHost host, ShardTable table, long timeoutMillis) {
    return currentColumnsIfExists(host, table, timeoutMillis)
        .orElseThrow(
            () ->
                new ShardRouterException(
                    String.format(
                        "Cannot read the columns of shard %d (%s): the table no longer exists",
                        table.shard(), table.describe())));
  }

  /**
   * As {@link #currentColumns}; empty when the table no longer exists.
   *
   * @throws ShardRouterException when the host cannot be asked
   */
  public static java.util.Optional<SchemaComparison.ShardColumns> currentColumnsIfExists(
      MySqlHost host, ShardTable table, long timeoutMillis) {
    FoundTable found = new FoundTable(host.name(), table.database(), table.table());
    try (Connection c = host.openWatchConnection(timeoutMillis)) {
      TableColumns tc =
          InformationSchemaReader.readColumns(c, List.of(found), List.of(table.database()))
              .get(found);
      if (tc == null || tc.columns().isEmpty()) {
        return java.util.Optional.empty();
      }
      return java.util.Optional.of(
          new SchemaComparison.ShardColumns(table, tc.columns(), tc.primaryKey(), tc.indexes()));
    } catch (SQLException e) {
      throw new ShardRouterException(
          String.format(
              "Cannot read the columns of shard %d (%s) from information_schema as user '%s': %s",
              table.shard(), table.describe(), host.user(), safeMessage(e, host)),
          e);
    }
  }

  /**
   * The tables on {@code host} that match the patterns of {@code spec} and take shard number {@code
   * shard} (qualified names), asked with a watch connection of {@code timeoutMillis}.
   *
   * @throws ShardRouterException when the host cannot be asked, naming host and user (never the
   *     password)
   */
  public static List<String> tablesNumbered(
      MySqlHost host, LogicalTableSpec spec, int shard, long timeoutMillis) {
    try (Connection c = host.openWatchConnection(timeoutMillis)) {
      List<String> numbered = new ArrayList<>();
      for (FoundTable t :
          InformationSchemaReader.matchingTables(
              c, host, spec, InformationSchemaReader.matchingDatabases(c, spec))) {
        java.util.Optional<Integer> number;
        try {
          number = spec.shardNumber(t.database(), t.table());
        } catch (ShardRouterException e) {
          continue; // no int number: not this one's (discovery names it at the next start)
        }
        if (number.filter(n -> n == shard).isPresent()) {
          numbered.add(t.qualifiedName());
        }
      }
      return numbered;
    } catch (SQLException e) {
      throw new ShardRouterException(
          String.format(
              "Cannot list the shard tables of MySQL host '%s' as user '%s': %s",
              host.name(), host.user(), safeMessage(e, host)),
          e);
    }
  }
}
