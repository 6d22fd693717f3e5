package dev.shardberg.router;

import java.io.Serializable;
import java.util.List;
import java.util.Optional;

/**
 * The schema every shard shares: columns in table order and the key columns. {@code primaryKey} is the
 * effective key: the MySQL primary key, or the configured {@code tables.key-columns} when given.
 */
public record ShardSchema(List<MySqlColumn> columns, List<String> primaryKey) implements Serializable {

  public ShardSchema {
    columns = List.copyOf(columns);
    primaryKey = List.copyOf(primaryKey);
  }

  public Optional<MySqlColumn> column(String name) {
    return columns.stream().filter(c -> c.name().equals(name)).findFirst();
  }

  public List<String> columnNames() {
    return columns.stream().map(MySqlColumn::name).toList();
  }
}
