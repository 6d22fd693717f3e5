package dev.shardberg.router.discovery;

import static dev.shardberg.router.discovery.ShardDiscovery.REQUIRED_PRIVILEGES;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Checks that the binlog reader can work on a host: the binary log on, in ROW format with FULL row
 * images, and the account granted {@link ShardDiscovery#REQUIRED_PRIVILEGES}. Each problem found is
 * one line that names the host and the fix.
 */
final class BinlogReaderChecks {
  private BinlogReaderChecks() {}

  static List<String> checkBinlog(Connection c, MySqlHost host) throws SQLException {
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
  static List<String> checkPrivileges(Connection c, MySqlHost host, List<String> databases)
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
}
