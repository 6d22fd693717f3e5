package dev.shardberg.router.discovery;

import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * Discovery's JDBC connections to a MySQL host, and its messages for a host that cannot be reached
 * or asked (never with the password).
 */
final class MySqlConnections {
  private static final String DEFAULT_CONNECT_TIMEOUT_MS = "10000";

  private MySqlConnections() {}

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
                host.password().origin()),
            e);
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

  static ShardRouterException queryFailure(MySqlHost host, SQLException e) {
    return new ShardRouterException(
        String.format(
            "Cannot read information_schema on MySQL host %s as user '%s': %s",
            host.describe(), host.user(), safeMessage(e, host)),
        e);
  }

  /** The first line of a driver message, with the password masked should a driver ever echo it. */
  static String safeMessage(SQLException e, MySqlHost host) {
    String msg = String.valueOf(e.getMessage());
    int nl = msg.indexOf('\n');
    if (nl >= 0) {
      msg = msg.substring(0, nl).trim();
    }
    String pw = host.password().reveal();
    return pw.isEmpty() ? msg : msg.replace(pw, "******");
  }
}
