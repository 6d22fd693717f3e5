package dev.shardberg.router;

/**
 * What happens to the rows of a shard whose MySQL table is gone ({@code tables.dropped-shards}), at
 * the resume that no longer finds it: a shard table dropped (while the job was stopped, or while it
 * ran: the running job keeps the rows either way), or the shards of a host removed from the config
 * (docs/shard-fleet.md).
 */
public enum DroppedShards {
  /** Its rows stay in the table; the job says so (the host watch's WARN, an INFO at a resume). */
  KEEP("keep"),
  /** Its rows leave the table in one commit, with the resumed run's first checkpoint. */
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
