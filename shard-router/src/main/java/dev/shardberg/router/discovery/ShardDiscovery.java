package dev.shardberg.router.discovery;

import static dev.shardberg.router.MySqlIdentifiers.quote;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.schema.MySqlIndex;
import dev.shardberg.router.schema.SchemaComparison;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.types.MySqlColumn;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds every shard of a logical table on every host over JDBC (information_schema), checks that
 * the binlog reader can work there (privileges, binlog format), assigns shard numbers and derives
 * the one schema all shards share.
 */
public final class ShardDiscovery {
  private static final Logger LOG = LoggerFactory.getLogger(ShardDiscovery.class);

  /** Privileges the Flink CDC MySQL source needs, granted ON *.* (SELECT may be per database). */
  public static final List<String> REQUIRED_PRIVILEGES =
      List.of("SELECT", "RELOAD", "SHOW DATABASES", "REPLICATION SLAVE", "REPLICATION CLIENT");

  private static final Set<String> SYSTEM_DATABASES =
      Set.of("mysql", "information_schema", "performance_schema", "sys");

  private static final String DEFAULT_CONNECT_TIMEOUT_MS = "10000";

  private ShardDiscovery() {}

  /** An unnumbered table found on a host. */
  record FoundTable(String hostName, String database, String table) {
    String qualifiedName() {
      return database + "." + table;
    }

    String describe() {
      return "'" + qualifiedName() + "' on host '" + hostName + "'";
    }
  }

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
    Map<FoundTable, SchemaComparison.ShardColumns> schemas = new HashMap<>();
    List<String> hostProblems = new ArrayList<>();
    Map<String, Map<FoundTable, TableColumns>> columnsByHost = new LinkedHashMap<>();
    for (MySqlHost host : spec.hosts()) {
      long hostStart = System.nanoTime();
      try (Connection c = connect(host)) {
        hostProblems.addAll(checkBinlog(c, host));
        List<String> databases = matchingDatabases(c, spec);
        hostProblems.addAll(checkPrivileges(c, host, databases));
        List<FoundTable> tables = matchingTables(c, host, spec, databases);
        found.put(host.name(), tables);
        columnsByHost.put(host.name(), readColumns(c, tables, databases));
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
    Map<String, List<ShardTable>> assigned = exclude(spec, assign(spec, found));
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
      schema = schema.withKeySample(sampleKey(spec, assigned, schema.primaryKey()));
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
   * Leaves out the shards of {@code tables.exclude-shards} (before their schema is compared with
   * the others': a shard left out for a change the table cannot follow must not stop the start).
   */
  static Map<String, List<ShardTable>> exclude(
      LogicalTableSpec spec, Map<String, List<ShardTable>> assigned) {
    if (spec.excludedShards().isEmpty()) {
      return assigned;
    }
    Set<Integer> seen = new TreeSet<>();
    Map<String, List<ShardTable>> kept = new LinkedHashMap<>();
    assigned.forEach(
        (host, tables) -> {
          List<ShardTable> left = new ArrayList<>();
          for (ShardTable t : tables) {
            if (spec.excludedShards().contains(t.shard())) {
              seen.add(t.shard());
              LOG.info(
                  "Shard {} ({}) is excluded ({}): not read; its rows in the table stay as they are until it is"
                      + " included again, then it is read from a fresh snapshot",
                  t.shard(),
                  t.describe(),
                  RouterOptions.TABLES_EXCLUDE_SHARDS.key());
            } else {
              left.add(t);
            }
          }
          if (!left.isEmpty()) {
            kept.put(host, left);
          }
        });
    Set<Integer> unknown = new TreeSet<>(spec.excludedShards());
    unknown.removeAll(seen);
    if (!unknown.isEmpty()) {
      LOG.warn(
          "{} lists shard(s) {} that no table maps to; nothing to exclude for them",
          RouterOptions.TABLES_EXCLUDE_SHARDS.key(),
          unknown);
    }
    if (kept.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot capture changes: every shard found is excluded by %s %s; include at least one",
              RouterOptions.TABLES_EXCLUDE_SHARDS.key(), new TreeSet<>(spec.excludedShards())));
    }
    return kept;
  }

  /**
   * Assigns shard numbers (pure logic). Hosts without a matching table are left out with a WARN.
   *
   * @throws ShardRouterException for a matched table without number, two tables with one number, or
   *     no table at all
   */
  static Map<String, List<ShardTable>> assign(
      LogicalTableSpec spec, Map<String, List<FoundTable>> found) {
    List<FoundTable> unnumbered = new ArrayList<>();
    Map<Integer, List<FoundTable>> byNumber = new TreeMap<>();
    Map<String, List<ShardTable>> result = new LinkedHashMap<>();
    Set<String> qualifiedNames = new HashSet<>();
    for (Map.Entry<String, List<FoundTable>> e : found.entrySet()) {
      if (e.getValue().isEmpty()) {
        LOG.warn(
            "Host '{}' has no table matching "
                + RouterOptions.TABLES_DATABASE_PATTERN.key()
                + " '{}' and "
                + RouterOptions.TABLES_TABLE_PATTERN.key()
                + " '{}'; it gets no CDC source (check the patterns if it should have shards)",
            e.getKey(),
            spec.databasePattern(),
            spec.tablePattern());
        continue;
      }
      List<ShardTable> tables = new ArrayList<>();
      for (FoundTable t : e.getValue()) {
        qualifiedNames.add(t.qualifiedName());
        Optional<Integer> shard = spec.shardNumber(t.database(), t.table());
        if (shard.isEmpty()) {
          unnumbered.add(t);
          continue;
        }
        byNumber.computeIfAbsent(shard.get(), k -> new ArrayList<>()).add(t);
        tables.add(new ShardTable(t.hostName(), t.database(), t.table(), shard.get()));
      }
      result.put(e.getKey(), tables);
    }
    if (result.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot find any table matching "
                  + RouterOptions.TABLES_DATABASE_PATTERN.key()
                  + " '%s' and "
                  + RouterOptions.TABLES_TABLE_PATTERN.key()
                  + " '%s' on host(s) %s; the patterns are anchored Java regexes matched against whole names (check them, the case of the names and the user's privileges)",
              spec.databasePattern(),
              spec.tablePattern(),
              spec.hostNames()));
    }
    if (!unnumbered.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot assign a shard number to %d matched table(s): %s; the named group (?<shard>\\d+) captured nothing and "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + " has no entry for them. Add them to "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + " (key 'database.table') or tighten "
                  + RouterOptions.TABLES_DATABASE_PATTERN.key()
                  + " / "
                  + RouterOptions.TABLES_TABLE_PATTERN.key()
                  + " to leave them out",
              unnumbered.size(),
              unnumbered.stream().map(FoundTable::describe).collect(Collectors.joining(", "))));
    }
    List<String> duplicates = new ArrayList<>();
    byNumber.forEach(
        (number, tables) -> {
          if (tables.size() > 1) {
            duplicates.add(
                String.format(
                    "shard number %d is taken by %s",
                    number,
                    tables.stream()
                        .map(FoundTable::describe)
                        .collect(Collectors.joining(" and "))));
          }
        });
    if (!duplicates.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot assign shard numbers: %s; every shard table needs its own number (fix the patterns or "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + ")",
              String.join("; ", duplicates)));
    }
    for (String unused : spec.unusedShardMapKeys(qualifiedNames)) {
      LOG.warn(
          RouterOptions.TABLES_SHARD_MAP.key()
              + " entry '{}' names no matching table on any host; remove it or fix the name",
          unused);
    }
    return result;
  }

  // ---------------------------------------------------------------- JDBC

  private record TableColumns(
      List<MySqlColumn> columns, List<String> primaryKey, List<MySqlIndex> indexes) {}

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
    FoundTable found = new FoundTable(host.name(), table.database(), table.table());
    try (Connection c = host.openWatchConnection(timeoutMillis)) {
      TableColumns tc = readColumns(c, List.of(found), List.of(table.database())).get(found);
      return new SchemaComparison.ShardColumns(table, tc.columns(), tc.primaryKey(), tc.indexes());
    } catch (SQLException e) {
      throw new ShardRouterException(
          String.format(
              "Cannot read the columns of shard %d (%s) from information_schema as user '%s': %s",
              table.shard(), table.describe(), host.user(), safeMessage(e, host)),
          e);
    }
  }

  static Connection connect(MySqlHost host) {
    Properties props = new Properties();
    props.setProperty("user", host.user());
    props.setProperty("password", host.password().reveal());
    if (!host.jdbcProperties().containsKey("connectTimeout")) {
      props.setProperty("connectTimeout", DEFAULT_CONNECT_TIMEOUT_MS);
    }
    try {
      return DriverManager.getConnection(host.jdbcUrl(), props);
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      if (state.equals("28000") || e.getErrorCode() == 1045) {
        throw new ShardRouterException(
            String.format(
                "Cannot connect to MySQL host %s as user '%s': access denied; check "
                    + RouterOptions.SOURCE_USER.key()
                    + " and the password (from %s)",
                host.describe(),
                host.user(),
                host.password().origin()));
      }
      throw new ShardRouterException(
          String.format(
              "Cannot connect to MySQL host %s as user '%s': %s; check "
                  + RouterOptions.SOURCE_HOST.key()
                  + " and "
                  + RouterOptions.SOURCE_PORT.key()
                  + " and that the server is reachable",
              host.describe(),
              host.user(),
              safeMessage(e, host)),
          e);
    }
  }

  private static ShardRouterException queryFailure(MySqlHost host, SQLException e) {
    return new ShardRouterException(
        String.format(
            "Cannot read information_schema on MySQL host %s as user '%s': %s",
            host.describe(), host.user(), safeMessage(e, host)));
  }

  /** The first line of a driver message, with the password masked should a driver ever echo it. */
  private static String safeMessage(SQLException e, MySqlHost host) {
    String msg = String.valueOf(e.getMessage());
    int nl = msg.indexOf('\n');
    if (nl >= 0) {
      msg = msg.substring(0, nl).trim();
    }
    String pw = host.password().reveal();
    return pw.isEmpty() ? msg : msg.replace(pw, "******");
  }

  private static List<String> checkBinlog(Connection c, MySqlHost host) throws SQLException {
    List<String> problems = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        problems.add(
            String.format(
                "host %s: the binary log is off; start the server with log_bin enabled (log-bin in the server config) and binlog_format=ROW, binlog_row_image=FULL",
                host.describe()));
        return problems;
      }
      String format = rs.getString(2);
      if (!"ROW".equalsIgnoreCase(format)) {
        problems.add(
            String.format(
                "host %s: binlog_format is %s; set the server variable binlog_format=ROW (SET GLOBAL binlog_format = 'ROW' and in the server config)",
                host.describe(), format));
      }
      String image = rs.getString(3);
      if (!"FULL".equalsIgnoreCase(image)) {
        problems.add(
            String.format(
                "host %s: binlog_row_image is %s; set the server variable binlog_row_image=FULL (SET GLOBAL binlog_row_image = 'FULL' and in the server config)",
                host.describe(), image));
      }
    }
    return problems;
  }

  /**
   * Checks the privileges granted directly to the connected account (roles are not followed).
   * MariaDB 10.5+ reports REPLICATION CLIENT as BINLOG MONITOR.
   */
  private static List<String> checkPrivileges(Connection c, MySqlHost host, List<String> databases)
      throws SQLException {
    String grantee;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT CURRENT_USER()")) {
      rs.next();
      String current = rs.getString(1);
      int at = current.lastIndexOf('@');
      grantee = "'" + current.substring(0, at) + "'@'" + current.substring(at + 1) + "'";
    }
    Set<String> global = new HashSet<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?")) {
      ps.setString(1, grantee);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          global.add(rs.getString(1).toUpperCase(Locale.ROOT));
        }
      }
    }
    if (global.contains("BINLOG MONITOR")) {
      global.add("REPLICATION CLIENT");
    }
    List<String> missing = new ArrayList<>();
    for (String p : REQUIRED_PRIVILEGES) {
      if (!global.contains(p)) {
        missing.add(p);
      }
    }
    if (missing.contains("SELECT") && !databases.isEmpty()) {
      Set<String> selectable = new HashSet<>();
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT TABLE_SCHEMA FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND PRIVILEGE_TYPE = 'SELECT'")) {
        ps.setString(1, grantee);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            selectable.add(rs.getString(1));
          }
        }
      }
      if (selectable.containsAll(databases)) {
        missing.remove("SELECT");
      }
    }
    if (missing.isEmpty()) {
      return List.of();
    }
    String account = grantee;
    return List.of(
        String.format(
            "host %s: user %s lacks privilege(s) %s needed by the binlog reader; run GRANT %s ON *.* TO %s",
            host.describe(),
            account,
            String.join(", ", missing),
            String.join(", ", missing),
            account));
  }

  private static List<String> matchingDatabases(Connection c, LogicalTableSpec spec)
      throws SQLException {
    List<String> result = new ArrayList<>();
    java.util.regex.Pattern p = java.util.regex.Pattern.compile(spec.databasePattern());
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")) {
      while (rs.next()) {
        String db = rs.getString(1);
        if (!SYSTEM_DATABASES.contains(db.toLowerCase(Locale.ROOT)) && p.matcher(db).matches()) {
          result.add(db);
        }
      }
    }
    return result;
  }

  private static List<FoundTable> matchingTables(
      Connection c, MySqlHost host, LogicalTableSpec spec, List<String> databases)
      throws SQLException {
    List<FoundTable> result = new ArrayList<>();
    if (databases.isEmpty()) {
      return result;
    }
    String sql =
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN ("
            + placeholders(databases.size())
            + ") ORDER BY TABLE_SCHEMA, TABLE_NAME";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, databases);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String db = rs.getString(1);
          String table = rs.getString(2);
          if (spec.matches(db, table)) {
            result.add(new FoundTable(host.name(), db, table));
          }
        }
      }
    }
    result.sort(Comparator.comparing(FoundTable::qualifiedName));
    return result;
  }

  private static Map<FoundTable, TableColumns> readColumns(
      Connection c, List<FoundTable> tables, List<String> databases) throws SQLException {
    Map<FoundTable, TableColumns> result = new HashMap<>();
    if (tables.isEmpty()) {
      return result;
    }
    Set<String> wanted =
        tables.stream()
            .map(FoundTable::qualifiedName)
            .collect(Collectors.toCollection(LinkedHashSet::new));
    String hostName = tables.get(0).hostName();
    Map<String, List<MySqlColumn>> columns = new HashMap<>();
    String sql =
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT,"
            + " CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION"
            + " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN ("
            + placeholders(databases.size())
            + ") ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, databases);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String qn = rs.getString(1) + "." + rs.getString(2);
          if (!wanted.contains(qn)) {
            continue;
          }
          String dataType = rs.getString(4).toLowerCase(Locale.ROOT);
          String columnType = rs.getString(5);
          boolean temporal =
              dataType.equals("time")
                  || dataType.equals("datetime")
                  || dataType.equals("timestamp");
          boolean sized =
              dataType.equals("char")
                  || dataType.equals("varchar")
                  || dataType.equals("binary")
                  || dataType.equals("varbinary");
          long maxLength = rs.getLong(8);
          Integer length =
              sized && !rs.wasNull() && maxLength <= Integer.MAX_VALUE ? (int) maxLength : null;
          Integer numericPrecision = intOrNull(rs, 9);
          Integer scale = intOrNull(rs, 10);
          Integer datetimePrecision = intOrNull(rs, 11);
          boolean decimal = dataType.equals("decimal") || dataType.equals("numeric");
          columns
              .computeIfAbsent(qn, k -> new ArrayList<>())
              .add(
                  new MySqlColumn(
                      rs.getString(3),
                      dataType,
                      columnType,
                      "YES".equalsIgnoreCase(rs.getString(6)),
                      rs.getString(7),
                      length,
                      temporal ? datetimePrecision : numericPrecision,
                      decimal ? scale : null,
                      columnType.toLowerCase(Locale.ROOT).contains("unsigned")));
        }
      }
    }
    // Every index, for the key check: (table, index) → columns in index order. An index with a NULL
    // COLUMN_NAME (a MySQL 8 functional key part) cannot be a key and is left out.
    Map<String, Map<String, MySqlIndex>> indexes = new HashMap<>();
    Set<String> functional = new HashSet<>();
    String indexSql =
        "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA IN ("
            + placeholders(databases.size())
            + ") ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX";
    try (PreparedStatement ps = c.prepareStatement(indexSql)) {
      bind(ps, databases);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String qn = rs.getString(1) + "." + rs.getString(2);
          if (!wanted.contains(qn)) {
            continue;
          }
          String name = rs.getString(3);
          boolean unique = rs.getInt(4) == 0;
          String column = rs.getString(5);
          if (column == null) {
            functional.add(qn + "." + name);
            continue;
          }
          indexes
              .computeIfAbsent(qn, k -> new LinkedHashMap<>())
              .merge(
                  name,
                  new MySqlIndex(name, unique, List.of(column)),
                  (a, b) -> new MySqlIndex(a.name(), a.unique(), concat(a.columns(), b.columns())));
        }
      }
    }
    for (FoundTable t : tables) {
      List<MySqlColumn> cols = columns.get(t.qualifiedName());
      Preconditions.checkState(
          cols != null && !cols.isEmpty(),
          "Cannot read the columns of table %s: information_schema shows none (does user lack SELECT on it?)",
          t.describe());
      List<MySqlIndex> tableIndexes = new ArrayList<>();
      for (MySqlIndex index : indexes.getOrDefault(t.qualifiedName(), Map.of()).values()) {
        if (!functional.contains(t.qualifiedName() + "." + index.name())) {
          tableIndexes.add(index);
        }
      }
      tableIndexes.sort(
          Comparator.comparing((MySqlIndex i) -> !i.isPrimary()).thenComparing(MySqlIndex::name));
      List<String> primaryKey =
          tableIndexes.stream()
              .filter(MySqlIndex::isPrimary)
              .findFirst()
              .map(MySqlIndex::columns)
              .orElse(List.of());
      result.put(t, new TableColumns(cols, primaryKey, tableIndexes));
    }
    LOG.debug("Read columns of {} table(s) on host {}", tables.size(), hostName);
    return result;
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /**
   * Shards whose rows are sampled for the default bucket column: the first, a middle and the last.
   */
  static final int SAMPLED_SHARDS = 3;

  /** Rows read per sampled shard. */
  static final int SAMPLE_ROWS = 10_000;

  /**
   * Distinct values per key column in the first {@value #SAMPLE_ROWS} rows of up to {@value
   * #SAMPLED_SHARDS} shards (summed over the shards): one cheap query per sampled shard that lets
   * the bucket column default to the key column that spreads rows best.
   */
  private static Map<String, Long> sampleKey(
      LogicalTableSpec spec, Map<String, List<ShardTable>> assigned, List<String> key) {
    List<ShardTable> all =
        assigned.values().stream()
            .flatMap(List::stream)
            .sorted(Comparator.comparingInt(ShardTable::shard))
            .toList();
    Set<ShardTable> sampled = new LinkedHashSet<>();
    sampled.add(all.get(0));
    sampled.add(all.get(all.size() / 2));
    sampled.add(all.get(all.size() - 1));
    Map<String, Long> distinct = new LinkedHashMap<>();
    key.forEach(k -> distinct.put(k, 0L));
    for (ShardTable t : sampled) {
      MySqlHost host = spec.host(t.hostName());
      String counts =
          key.stream()
              .map(k -> "COUNT(DISTINCT " + quote(k) + ")")
              .collect(Collectors.joining(", "));
      String sql =
          "SELECT "
              + counts
              + " FROM (SELECT "
              + key.stream().map(k -> quote(k)).collect(Collectors.joining(", "))
              + " FROM "
              + quote(t.database())
              + "."
              + quote(t.table())
              + " LIMIT "
              + SAMPLE_ROWS
              + ") s";
      try (Connection c = connect(host);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery(sql)) {
        rs.next();
        for (int i = 0; i < key.size(); i++) {
          distinct.merge(key.get(i), rs.getLong(i + 1), Long::sum);
        }
      } catch (SQLException e) {
        throw new ShardRouterException(
            String.format(
                "Cannot sample the key columns %s of shard %d (%s) as user '%s' to choose the bucket column: %s; grant SELECT on the table, or name the bucket column in "
                    + RouterOptions.TARGET_KEY_COLUMN.key(),
                key,
                t.shard(),
                t.describe(),
                host.user(),
                safeMessage(e, host)));
      }
    }
    LOG.info(
        "Sampled the key columns of {} shard(s): distinct values {}", sampled.size(), distinct);
    return distinct;
  }

  private static Integer intOrNull(ResultSet rs, int column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : (int) Math.min(v, Integer.MAX_VALUE);
  }

  private static String placeholders(int n) {
    return String.join(",", java.util.Collections.nCopies(n, "?"));
  }

  private static void bind(PreparedStatement ps, Collection<String> values) throws SQLException {
    int i = 1;
    for (String v : values) {
      ps.setString(i++, v);
    }
  }
}
