package dev.shardberg.router;

/**
 * What happens to the rows of a shard whose MySQL table is gone ({@code tables.dropped-shards}): a
 * {@code DROP TABLE} read in the binlog, a shard table no longer found at a resume, or the shards
 * of a host removed from the config (docs/shard-fleet.md).
 */
public enum DroppedShards {
  /** Its rows stay in the table; the job says so (a WARN while running, an INFO at a resume). */
  KEEP("keep"),
  /** Its rows leave the table in one commit, in order with the other shards' changes. */
  DELETE("delete");

  private final String key;

  DroppedShards(String key) {
    this.key = key;
  }

  public String key() {
    return key;
  }

  /** As written in the config file (Flink's enum options parse by this). */
  @Override
  public String toString() {
    return key;
  }
}
