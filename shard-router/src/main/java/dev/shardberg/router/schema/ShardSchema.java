package dev.shardberg.router.schema;

import dev.shardberg.router.types.MySqlColumn;
import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The schema every shard shares: columns in table order and the key columns. {@code primaryKey} is
 * the effective key: the MySQL primary key, or the configured {@code tables.key-columns} when given
 * (always the columns of the primary key or of a UNIQUE index with NOT NULL columns on every
 * shard).
 *
 * @param keyIndex how {@code validate} names the index the key is, e.g. "PRIMARY KEY (id)" or
 *     "UNIQUE INDEX uq_entry (tenant_id, entry_id)"
 * @param tablePrimaryKey the MySQL primary key every shard has (empty: the tables have none, and
 *     Flink CDC needs a chunk key column for their snapshot)
 * @param keySample distinct values per key column in a sample of rows (key order; empty: not
 *     sampled); the default bucket column is the one with the most ({@link #defaultBucketColumn()})
 */
public record ShardSchema(
    List<MySqlColumn> columns,
    List<String> primaryKey,
    String keyIndex,
    List<String> tablePrimaryKey,
    Map<String, Long> keySample)
    implements Serializable {

  public ShardSchema {
    columns = List.copyOf(columns);
    primaryKey = List.copyOf(primaryKey);
    tablePrimaryKey = List.copyOf(tablePrimaryKey);
    keySample = Collections.unmodifiableMap(new LinkedHashMap<>(keySample));
  }

  /** A schema whose key is the tables' primary key, not sampled. */
  public ShardSchema(List<MySqlColumn> columns, List<String> primaryKey) {
    this(columns, primaryKey, MySqlIndex.primary(primaryKey).describeAsKey(), primaryKey, Map.of());
  }

  public Optional<MySqlColumn> column(String name) {
    return columns.stream().filter(c -> c.name().equals(name)).findFirst();
  }

  public List<String> columnNames() {
    return columns.stream().map(MySqlColumn::name).toList();
  }

  /** This schema with the sampled distinct values per key column. */
  public ShardSchema withKeySample(Map<String, Long> sample) {
    return new ShardSchema(columns, primaryKey, keyIndex, tablePrimaryKey, sample);
  }

  /**
   * The key column with the most distinct values in {@link #keySample()}; on a tie (or without a
   * sample) the earlier key column. A single-column key is its own bucket column.
   */
  public String defaultBucketColumn() {
    String best = primaryKey.get(0);
    long bestCount = keySample.getOrDefault(best, -1L);
    for (String k : primaryKey) {
      long count = keySample.getOrDefault(k, -1L);
      if (count > bestCount) {
        best = k;
        bestCount = count;
      }
    }
    return best;
  }
}
