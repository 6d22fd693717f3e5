package dev.shardberg.router.watch;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Which MySQL server answers at a host's address, for telling whether a binlog position read from
 * it still means anything there: MySQL's {@code @@server_uuid} (generated once per data directory),
 * or on MariaDB, which has none, its {@code @@server_id} (distinct on every server of a replication
 * topology, so a promoted replica never shares it with its primary). {@code gtidMode}: MySQL's
 * {@code @@gtid_mode} is ON, with which Flink CDC keeps the GTID set in its binlog position and a
 * new server can serve it (MariaDB has no {@code gtid_mode}: Flink CDC 3.5 reads MariaDB by file
 * and position only).
 *
 * @param serverUuid MySQL's {@code @@server_uuid}; null on MariaDB
 * @param serverId {@code @@server_id}
 * @param gtidMode MySQL's {@code @@gtid_mode} is ON
 */
public record ServerIdentity(String serverUuid, long serverId, boolean gtidMode) {

  /** What the check finds when the server at the address is compared with the expected one. */
  public enum Change {
    /** The same server: positions from it are good. */
    SAME,
    /**
     * Another MySQL server, both with GTIDs on: Flink CDC resumes from the GTID set in its position
     * (the new server picks the place), not from a file and position.
     */
    ANOTHER_WITH_GTIDS,
    /** Another server, and no way to map a file and position to it. */
    ANOTHER
  }

  /** Reads the identity of the server {@code connection} is connected to. */
  public static ServerIdentity read(Connection connection) throws SQLException {
    String uuid = null;
    boolean gtid = false;
    long serverId;
    try (Statement st = connection.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT @@GLOBAL.server_id")) {
        rs.next();
        serverId = rs.getLong(1);
      }
      // MariaDB has neither variable: SHOW returns no row for it (a SELECT @@ would fail)
      try (ResultSet rs =
          st.executeQuery(
              "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('server_uuid', 'gtid_mode')")) {
        while (rs.next()) {
          String name = rs.getString(1);
          String value = rs.getString(2);
          if ("server_uuid".equalsIgnoreCase(name) && value != null && !value.isBlank()) {
            uuid = value.trim();
          } else if ("gtid_mode".equalsIgnoreCase(name)) {
            gtid = "ON".equalsIgnoreCase(value == null ? "" : value.trim());
          }
        }
      }
    }
    return new ServerIdentity(uuid, serverId, gtid);
  }

  /** How {@code current} (the server at the address now) relates to this one (expected). */
  public Change comparedWith(ServerIdentity current) {
    boolean same =
        serverUuid != null || current.serverUuid != null
            ? serverUuid != null && serverUuid.equals(current.serverUuid)
            : serverId == current.serverId;
    if (same) {
      return Change.SAME;
    }
    return serverUuid != null && current.serverUuid != null && gtidMode && current.gtidMode
        ? Change.ANOTHER_WITH_GTIDS
        : Change.ANOTHER;
  }

  /** "server_uuid …" (MySQL) or "server_id …" (MariaDB), for messages. */
  public String describe() {
    return serverUuid != null
        ? "server_uuid " + serverUuid + " (server_id " + serverId + ")"
        : "server_id " + serverId;
  }

  /** The form kept in the job's state; {@link #parse} reads it back. */
  public String encode() {
    return "v1;"
        + serverId
        + ";"
        + (gtidMode ? "gtid" : "-")
        + ";"
        + (serverUuid == null ? "" : serverUuid);
  }

  /** Reads {@link #encode}'s form. */
  public static ServerIdentity parse(String encoded) {
    String[] parts = encoded.split(";", 4);
    if (parts.length != 4 || !"v1".equals(parts[0])) {
      throw new IllegalArgumentException("Not a server identity of the job's state: " + encoded);
    }
    return new ServerIdentity(
        parts[3].isEmpty() ? null : parts[3], Long.parseLong(parts[1]), "gtid".equals(parts[2]));
  }
}
