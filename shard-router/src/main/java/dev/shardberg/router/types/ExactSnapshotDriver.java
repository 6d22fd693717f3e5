package dev.shardberg.router.types;

import static dev.shardberg.router.MySqlIdentifiers.quote;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC driver Shardberg gives Flink CDC (Debezium's {@code database.jdbc.driver}, see {@link
 * #DEBEZIUM_PROPERTIES}) so that the snapshot reads every MySQL FLOAT bit for bit and every TIME
 * exactly.
 *
 * <p>Why FLOAT: Flink CDC reads snapshot chunks with {@code SELECT * FROM `db`.`table` …} through
 * the JDBC text protocol, and MySQL and MariaDB print a FLOAT there with 6 significant digits:
 * 707.14288330078125 arrives as 707.143, another float. The binary protocol ({@code
 * useServerPrepStmts=true}) would carry the 4 bytes, but Debezium's MySQL connection reads DATE,
 * TIME, DATETIME and TIMESTAMP as text and fails on it. A DOUBLE is printed with round-trip digits,
 * and every float is exactly a double: so such a scan selects each FLOAT column as {@code (`f` *
 * 1E0) AS `f`}. The value read is then a Double equal to the stored float; {@link MySqlType#FLOAT}
 * takes its {@code floatValue()}, which is exact. {@code * 1E0} and not {@code + 0E0}: {@code -0 +
 * 0} is {@code +0}, {@code -0 * 1} stays {@code -0}.
 *
 * <p>Why TIME: Flink CDC parses a snapshot TIME's text with Debezium's {@code stringToDuration},
 * which loses the sign of a value between -01:00:00 and 0 ({@code -00:00:00.001} reads as
 * +00:00:00.001). Such a scan selects each TIME column as {@link TimeConverter#snapshotSelect}
 * under its own name, a text that parser reads without loss and {@link TimeConverter} (installed on
 * every source) turns back into the signed value.
 *
 * <p>What: {@link #connect} opens the connection with MySQL Connector/J ({@code
 * com.mysql.cj.jdbc.Driver}) and returns it behind a proxy that rewrites only {@code
 * prepareStatement} SQL that is exactly such a scan ({@link #scannedTable}) of a table with FLOAT
 * or TIME columns; the columns (name, type, in ordinal order) come from {@code
 * information_schema.COLUMNS} on the same connection, once per connection and table. Every other
 * statement and method goes to the real connection untouched; {@code unwrap} and {@code
 * isWrapperFor} see the real connection. The rewrite changes the selected values only: the scan's
 * WHERE (chunk bounds) still compares the table's columns, which an alias in the select list does
 * not hide in MySQL. The driver does not register itself with {@link java.sql.DriverManager}: Flink
 * CDC's connection pool (HikariCP) and Debezium both instantiate it by class name, and nothing else
 * in the JVM should pick it.
 */
public final class ExactSnapshotDriver implements Driver {

  /**
   * The Debezium property Flink CDC's connection pool (HikariCP) reads the JDBC driver class from.
   */
  public static final String DEBEZIUM_PROPERTY = "database.jdbc.driver";

  /**
   * The same property as Debezium's own MySQL connection (which reads the snapshot chunks) looks it
   * up: it strips {@code database.} from the configuration first and then asks for {@code
   * database.jdbc.driver}.
   */
  public static final String DEBEZIUM_CONNECTION_PROPERTY = "database." + DEBEZIUM_PROPERTY;

  /** The Debezium properties that make Flink CDC and Debezium connect through this driver. */
  public static final Map<String, String> DEBEZIUM_PROPERTIES =
      Map.of(
          DEBEZIUM_PROPERTY,
          ExactSnapshotDriver.class.getName(),
          DEBEZIUM_CONNECTION_PROPERTY,
          ExactSnapshotDriver.class.getName());

  private static final String URL_PREFIX = "jdbc:mysql:";
  private static final String SCAN_PREFIX = "SELECT * FROM ";
  private static final String COLUMNS_QUERY =
      "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"
          + " ORDER BY ORDINAL_POSITION";

  private static final org.slf4j.Logger LOG = LoggerFactory.getLogger(ExactSnapshotDriver.class);

  /**
   * Classes Connector/J loads only when a connection is closed. Flink CDC's pool (HikariCP) closes
   * its connections on its own thread, and at job stop that can run after Flink released the job's
   * class loader: the lazy load then failed with {@code NoClassDefFoundError:
   * com/mysql/cj/protocol/ExportControlled} in the JobManager log, which looks like a failure and
   * is none. Loaded (by the driver's own class loader, which is the one the close path resolves
   * through) when the driver is created.
   */
  static final List<String> LOADED_ONLY_AT_CLOSE =
      List.of("com.mysql.cj.protocol.ExportControlled");

  private final Driver mysql;

  public ExactSnapshotDriver() {
    try {
      this.mysql = new com.mysql.cj.jdbc.Driver();
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Cannot create MySQL Connector/J's driver (com.mysql.cj.jdbc.Driver): " + e.getMessage(),
          e);
    }
    preloadClosePath(mysql.getClass().getClassLoader());
  }

  static void preloadClosePath(ClassLoader driverLoader) {
    for (String name : LOADED_ONLY_AT_CLOSE) {
      try {
        Class.forName(name, true, driverLoader);
      } catch (ClassNotFoundException | LinkageError e) {
        LOG.debug(
            "Cannot preload {} (a later close may log a NoClassDefFoundError): {}",
            name,
            e.toString());
      }
    }
  }

  @Override
  public boolean acceptsURL(String url) {
    return url != null && url.startsWith(URL_PREFIX);
  }

  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    if (!acceptsURL(url)) {
      return null; // the JDBC contract: not ours
    }
    Connection real = mysql.connect(url, info);
    if (real == null) {
      return null;
    }
    return (Connection)
        Proxy.newProxyInstance(
            ExactSnapshotDriver.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new Handler(real));
  }

  @Override
  public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
    return mysql.getPropertyInfo(url, info);
  }

  @Override
  public int getMajorVersion() {
    return mysql.getMajorVersion();
  }

  @Override
  public int getMinorVersion() {
    return mysql.getMinorVersion();
  }

  @Override
  public boolean jdbcCompliant() {
    return mysql.jdbcCompliant();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return mysql.getParentLogger();
  }

  /** A column of a scanned table: its name and {@code information_schema.COLUMNS.DATA_TYPE}. */
  record Column(String name, String dataType) {
    boolean isFloat() {
      return "float".equalsIgnoreCase(dataType);
    }

    boolean isTime() {
      return "time".equalsIgnoreCase(dataType);
    }

    /** Read differently from {@code SELECT *} in a chunk scan. */
    boolean isRewritten() {
      return isFloat() || isTime();
    }
  }

  /**
   * The scanned table of SQL that is exactly Flink CDC's chunk scan, {@code SELECT * FROM
   * `db`.`table`} followed by nothing or by a space and the rest (WHERE, ORDER BY, LIMIT); empty
   * for anything else.
   */
  static Optional<Scan> scannedTable(String sql) {
    if (sql == null || !sql.startsWith(SCAN_PREFIX)) {
      return Optional.empty();
    }
    int[] end = new int[1];
    String db = readQuoted(sql, SCAN_PREFIX.length(), end);
    if (db == null || end[0] >= sql.length() || sql.charAt(end[0]) != '.') {
      return Optional.empty();
    }
    String table = readQuoted(sql, end[0] + 1, end);
    if (table == null || (end[0] < sql.length() && sql.charAt(end[0]) != ' ')) {
      return Optional.empty();
    }
    return Optional.of(
        new Scan(db, table, sql.substring(SCAN_PREFIX.length(), end[0]), sql.substring(end[0])));
  }

  /** A chunk scan: database and table (unquoted), the table as written, and what follows it. */
  record Scan(String database, String table, String quotedTable, String rest) {}

  /**
   * The backtick-quoted identifier at {@code from} (a doubled backtick is one), or null; its end in
   * {@code end[0]}.
   */
  private static String readQuoted(String sql, int from, int[] end) {
    if (from >= sql.length() || sql.charAt(from) != '`') {
      return null;
    }
    StringBuilder name = new StringBuilder();
    int i = from + 1;
    while (i < sql.length()) {
      char c = sql.charAt(i);
      if (c == '`') {
        if (i + 1 < sql.length() && sql.charAt(i + 1) == '`') {
          name.append('`');
          i += 2;
          continue;
        }
        end[0] = i + 1;
        return name.toString();
      }
      name.append(c);
      i++;
    }
    return null;
  }

  /**
   * The scan with {@code *} replaced by the columns in ordinal order, each FLOAT as an exact DOUBLE
   * and each TIME as {@link TimeConverter#snapshotSelect}, under its own name; the scan unchanged
   * when the table has neither (or no columns were found).
   */
  static String rewrite(Scan scan, String sql, List<Column> columns) {
    if (columns.stream().noneMatch(Column::isRewritten)) {
      return sql;
    }
    return "SELECT " + projection(columns) + " FROM " + scan.quotedTable() + scan.rest();
  }

  private static String projection(List<Column> columns) {
    StringBuilder p = new StringBuilder();
    for (Column c : columns) {
      if (p.length() > 0) {
        p.append(", ");
      }
      String q = quote(c.name());
      if (c.isFloat()) {
        p.append("(").append(q).append(" * 1E0) AS ").append(q);
      } else if (c.isTime()) {
        p.append(TimeConverter.snapshotSelect(q)).append(" AS ").append(q);
      } else {
        p.append(q);
      }
    }
    return p.toString();
  }

  /**
   * The proxy behind every connection: rewrites chunk scans in {@code prepareStatement}, passes on
   * the rest.
   */
  private static final class Handler implements InvocationHandler {
    private final Connection real;

    /** Per table ("db" NUL "table"): its columns, read once for this connection. */
    private final Map<String, List<Column>> columns = new HashMap<>();

    Handler(Connection real) {
      this.real = real;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      switch (method.getName()) {
        case "prepareStatement" -> {
          if (args != null && args.length > 0 && args[0] instanceof String sql) {
            Optional<Scan> scan = scannedTable(sql);
            if (scan.isPresent()) {
              Object[] rewritten = args.clone();
              rewritten[0] = rewrite(scan.get(), sql, columnsOf(scan.get()));
              if (rewritten[0] != sql) {
                LOG.debug("Chunk scan read with exact FLOAT and TIME columns: {}", rewritten[0]);
              }
              args = rewritten;
            }
          }
        }
        case "unwrap" -> {
          Class<?> iface = (Class<?>) args[0];
          return iface.isInstance(real) ? real : real.unwrap(iface);
        }
        case "isWrapperFor" -> {
          Class<?> iface = (Class<?>) args[0];
          return iface.isInstance(real) || real.isWrapperFor(iface);
        }
        case "equals" -> {
          return proxy == args[0];
        }
        case "hashCode" -> {
          return System.identityHashCode(proxy);
        }
        case "toString" -> {
          return "ExactSnapshotDriver connection over " + real;
        }
        default -> {}
      }
      try {
        return method.invoke(real, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    private synchronized List<Column> columnsOf(Scan scan) throws SQLException {
      String key = scan.database() + '\0' + scan.table();
      List<Column> cached = columns.get(key);
      if (cached != null) {
        return cached;
      }
      List<Column> read = new ArrayList<>();
      try (PreparedStatement ps = real.prepareStatement(COLUMNS_QUERY)) {
        ps.setString(1, scan.database());
        ps.setString(2, scan.table());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            read.add(new Column(rs.getString(1), rs.getString(2)));
          }
        }
      } catch (SQLException e) {
        throw new SQLException(
            "Cannot read the columns of "
                + quote(scan.database())
                + "."
                + quote(scan.table())
                + " from information_schema.COLUMNS (Shardberg's ExactSnapshotDriver reads FLOAT and TIME columns exactly"
                + " in the snapshot): "
                + e.getMessage()
                + ". Check that the CDC user may SELECT the table.",
            e.getSQLState(),
            e);
      }
      List<Column> result = List.copyOf(read);
      columns.put(key, result);
      return result;
    }
  }
}
