package dev.shardberg.router.discovery;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.schema.MySqlIndex;
import dev.shardberg.router.types.MySqlColumn;
import java.sql.Connection;
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
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The information_schema queries discovery runs over one connection to a host: the databases and
 * tables that match the patterns, and each table's columns, primary key and indexes.
 */
final class InformationSchemaReader {
  /** Logs as discovery did before this class was split out of it: the log lines stay the same. */
  private static final Logger LOG = LoggerFactory.getLogger(ShardDiscovery.class);

  private static final Set<String> SYSTEM_DATABASES =
      Set.of("mysql", "information_schema", "performance_schema", "sys");

  private InformationSchemaReader() {}

  /** One table's columns, primary key (empty: none) and indexes, the primary key first. */
  record TableColumns(
      List<MySqlColumn> columns, List<String> primaryKey, List<MySqlIndex> indexes) {}

  static List<String> matchingDatabases(Connection c, LogicalTableSpec spec) throws SQLException {
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

  static List<FoundTable> matchingTables(
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

  static Map<FoundTable, TableColumns> readColumns(
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
