package dev.shardberg.router.tagging;

import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the evolving layout knows of one host's shards, fixed when the tagger is built from the plan
 * and the table layout.
 *
 * @param hostName the host, for messages
 * @param shardByTable this host's shard tables, "db.table" → shard number
 * @param columns the plan's columns: every shard's at start-up, but for {@code ownColumns}
 * @param ownColumns shards whose columns at start-up differ from {@code columns} (the start-up
 *     union; see ShardPlan)
 * @param tablePrimaryKey the shards' primary key at start-up (Debezium reports the table's PRIMARY
 *     KEY with a DDL)
 * @param keyColumns the table's key columns, shard column excluded
 * @param buckets the table's bucket count B: a TRUNCATE of a shard sends one marker per bucket
 */
record HostShards(
    String hostName,
    Map<String, Integer> shardByTable,
    List<MySqlColumn> columns,
    Map<Integer, List<MySqlColumn>> ownColumns,
    List<String> tablePrimaryKey,
    Set<String> keyColumns,
    int buckets) {

  /** The columns {@code shard} had at start-up. */
  List<MySqlColumn> startColumns(int shard) {
    return ownColumns.getOrDefault(shard, columns);
  }
}
