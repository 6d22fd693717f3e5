package dev.shardberg.job.verify;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One shard table as the verifier reads it: its shard number, where it lives and how to connect.
 *
 * @param label human-readable location for reports, e.g. {@code mysql-a:shop.orders_3}
 */
public record ShardSource(int shard, String label, String database, String table, ConnectionFactory connections) {

  /** Opens a JDBC connection to the shard's host; the caller closes it. */
  @FunctionalInterface
  public interface ConnectionFactory {
    Connection open() throws SQLException;
  }

  String selectFrom(java.util.List<String> columns) {
    StringBuilder sql = new StringBuilder("SELECT ");
    for (int i = 0; i < columns.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append(quote(columns.get(i)));
    }
    return sql.append(" FROM ").append(quote(database)).append('.').append(quote(table)).toString();
  }

  private static String quote(String identifier) {
    return '`' + identifier.replace("`", "``") + '`';
  }
}
