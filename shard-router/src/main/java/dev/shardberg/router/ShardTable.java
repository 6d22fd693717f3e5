package dev.shardberg.router;

import java.io.Serializable;

/** One physical shard table: where it lives and its shard number. */
public record ShardTable(String hostName, String database, String table, int shard)
    implements Serializable {

  /** "db.table". */
  public String qualifiedName() {
    return database + "." + table;
  }

  /** "db.table on host 'h'" for messages. */
  public String describe() {
    return "'" + qualifiedName() + "' on host '" + hostName + "'";
  }
}
