package dev.shardberg.tests.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class EmbeddedMariaDbTest {

  private static EmbeddedMariaDb server;

  @BeforeAll
  static void startServer() {
    server = EmbeddedMariaDb.start("support-test", 9101);
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void binlogIsRowFullWithTheGivenServerId() throws SQLException {
    try (Connection c = server.connect(null);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@server_id")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getInt(1)).isEqualTo(1);
      assertThat(rs.getString(2)).isEqualTo("ROW");
      assertThat(rs.getString(3)).isEqualTo("FULL");
      assertThat(rs.getLong(4)).isEqualTo(9101L);
    }
  }

  @Test
  void cdcUserAuthenticatesAndWrongPasswordIsRefused() throws SQLException {
    server.createCdcUser("cdc", "s3cret'x");
    server.execute(
        "CREATE DATABASE IF NOT EXISTS support_db",
        "CREATE TABLE IF NOT EXISTS support_db.t (id INT PRIMARY KEY)");
    try (Connection c =
            DriverManager.getConnection(server.jdbcUrl("support_db"), "cdc", "s3cret'x");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW GRANTS")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1))
          .contains("SELECT", "RELOAD", "SHOW DATABASES", "REPLICATION SLAVE", "LOCK TABLES");
    }
    assertThatThrownBy(
            () -> DriverManager.getConnection(server.jdbcUrl("support_db"), "cdc", "wrong"))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("Access denied");
    // the grant tables are really checked: the CDC user cannot write
    assertThatThrownBy(
            () -> {
              try (Connection c =
                      DriverManager.getConnection(server.jdbcUrl("support_db"), "cdc", "s3cret'x");
                  Statement s = c.createStatement()) {
                s.execute("INSERT INTO support_db.t VALUES (1)");
              }
            })
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("INSERT command denied");
  }
}
