package dev.shardberg.router;

/**
 * What a local {@code run} does with a shard table that appears while it runs ({@code
 * tables.new-shards}): a {@code CREATE TABLE} matching the patterns, a table renamed into them, a
 * {@code CREATE TABLE … SELECT} (docs/shard-fleet.md).
 */
public enum NewShards {
  /**
   * The run reads it: it takes a savepoint of the job and resumes from it with the new shard in the
   * plan, which reads that shard alone from a fresh snapshot while every other shard goes on from
   * its binlog position.
   */
  ADOPT("adopt"),
  /** The run only warns (the host watch's WARN and gauge); the next resume reads it. */
  WARN("warn");

  private final String key;

  NewShards(String key) {
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
