package dev.shardberg.job.verify;

import static dev.shardberg.router.MySqlIdentifiers.quote;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One shard table as the verifier reads it: its shard number, where it lives and how to connect.
 *
 * @param label human-readable location for reports, e.g. {@code mysql-a:shop.orders_3}
 */
public record ShardSource(
    int shard, String label, String database, String table, ConnectionFactory connections) {

  /** Opens a JDBC connection to the shard's host; the caller closes it. */
  @FunctionalInterface
  public interface ConnectionFactory {
    Connection open() throws SQLException;
  }

  /**
   * {@code SELECT <expressions> FROM `db`.`table`}; the expressions are SQL, column names quoted by
   * {@link dev.shardberg.router.MySqlIdentifiers#quote}.
   */
  String selectFrom(java.util.List<String> expressions) {
    return "SELECT "
        + String.join(", ", expressions)
        + " FROM "
        + quote(database)
        + '.'
        + quote(table);
  }
}
