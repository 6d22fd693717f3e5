package dev.shardberg.router.discovery;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.Secret;
import java.io.Serializable;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * One MySQL server (one binlog). {@code name} is the logical host name used in messages and config;
 * {@code jdbcProperties} are extra JDBC URL parameters (TLS and the like), never the password.
 */
public record MySqlHost(
    String name,
    String hostname,
    int port,
    String user,
    Secret password,
    Map<String, String> jdbcProperties)
    implements Serializable {

  /**
   * Driver settings the type mapping relies on, added to every host's JDBC properties (discovery,
   * the CDC snapshot reader and verify all read through them; docs/type-mapping.md):
   *
   * <ul>
   *   <li>{@code tinyInt1isBit=false}: {@code TINYINT(1)} is a number, not a boolean.
   *   <li>{@code yearIsDateType=false}: {@code YEAR} is read as its number, so {@code 0000} stays 0
   *       (as a date the driver turns it into 2000).
   * </ul>
   *
   * Not {@code useServerPrepStmts=true}: the binary protocol would carry FLOAT exactly, but Flink
   * CDC 3.5 reads DATE, TIME, DATETIME and TIMESTAMP snapshot columns with {@code getBlob} and
   * parses the bytes as text, which fails on binary-protocol rows. {@link #VERIFY_JDBC_PROPERTIES}
   * add it for verify.
   */
  public static final Map<String, String> REQUIRED_JDBC_PROPERTIES =
      Map.of("tinyInt1isBit", "false", "yearIsDateType", "false");

  /**
   * Added to {@link #jdbcProperties()} for verify's reads: server-side prepared statements, so rows
   * come in the binary protocol, which carries FLOAT's stored 4 bytes (the text protocol prints 6
   * digits).
   */
  public static final Map<String, String> VERIFY_JDBC_PROPERTIES =
      Map.of("useServerPrepStmts", "true");

  public MySqlHost {
    Preconditions.checkArgument(
        name != null && !name.isBlank(),
        "Cannot define a MySQL host: " + RouterOptions.SOURCE_NAME.key() + " is empty");
    Preconditions.checkArgument(
        hostname != null && !hostname.isBlank(),
        "Cannot define MySQL host '%s': " + RouterOptions.SOURCE_HOST.key() + " is empty",
        name);
    Preconditions.checkArgument(
        port > 0 && port < 65536,
        "Cannot define MySQL host '%s': port %s is not in 1..65535",
        name,
        port);
    Preconditions.checkArgument(
        user != null && !user.isBlank(),
        "Cannot define MySQL host '%s': " + RouterOptions.SOURCE_USER.key() + " is empty",
        name);
    Objects.requireNonNull(password, "password");
    TreeMap<String, String> effective =
        new TreeMap<>(jdbcProperties == null ? Map.of() : jdbcProperties);
    REQUIRED_JDBC_PROPERTIES.forEach(
        (key, value) -> {
          String given = effective.putIfAbsent(key, value);
          Preconditions.checkArgument(
              given == null || given.equalsIgnoreCase(value),
              "Cannot use jdbc-properties %s=%s of MySQL host '%s': Shardberg's type mapping needs %s=%s (see docs/type-mapping.md); remove the property",
              key,
              given,
              name,
              key,
              value);
        });
    jdbcProperties = Collections.unmodifiableMap(effective);
    for (String key : jdbcProperties.keySet()) {
      Preconditions.checkArgument(
          !key.equalsIgnoreCase("password") && !key.equalsIgnoreCase("user"),
          "Cannot use jdbc-properties key '%s' of MySQL host '%s': set the user with "
              + RouterOptions.SOURCE_USER.key()
              + " and the password with "
              + RouterOptions.SOURCE_PASSWORD_ENV.key()
              + " or password-file",
          key,
          name);
    }
  }

  /**
   * A connection of the job's own (not the CDC source's) for the watches that probe this host, with
   * connect and socket timeouts of {@code timeoutMillis}: a probe never blocks its caller for
   * longer. Uses the driver class directly: DriverManager does not see drivers of a Flink user-code
   * class loader.
   */
  public java.sql.Connection openWatchConnection(long timeoutMillis) throws java.sql.SQLException {
    java.util.Properties props = new java.util.Properties();
    props.setProperty("user", user());
    props.setProperty("password", password().reveal());
    props.setProperty("connectTimeout", Long.toString(timeoutMillis));
    props.setProperty("socketTimeout", Long.toString(timeoutMillis));
    java.sql.Connection c = new com.mysql.cj.jdbc.Driver().connect(jdbcUrl(), props);
    if (c == null) {
      throw new java.sql.SQLException("the MySQL driver does not accept URL " + jdbcUrl());
    }
    return c;
  }

  /** {@code jdbc:mysql://host:port/?k=v&...}; contains no credentials. */
  public String jdbcUrl() {
    String base = "jdbc:mysql://" + hostname + ":" + port + "/";
    if (jdbcProperties.isEmpty()) {
      return base;
    }
    return base
        + "?"
        + jdbcProperties.entrySet().stream()
            .map(e -> encode(e.getKey()) + "=" + encode(e.getValue()))
            .collect(Collectors.joining("&"));
  }

  /** "name (host:port)" for messages. */
  public String describe() {
    return "'" + name + "' (" + hostname + ":" + port + ")";
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
