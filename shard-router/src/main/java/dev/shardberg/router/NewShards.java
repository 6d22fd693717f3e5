package dev.shardberg.router;

/**
 * What a run does with a shard table that appears while it runs ({@code tables.new-shards}): a
 * {@code CREATE TABLE} matching the patterns, a table renamed into them, a {@code CREATE TABLE …
 * SELECT} (docs/shard-fleet.md).
 */
public enum NewShards {
  /**
   * The run reads it: it takes a savepoint of the job and resumes from it with the new shard in the
   * plan, which reads that shard alone from a fresh snapshot while every other shard goes on from
   * its binlog position.
   */
  ADOPT("adopt"),
  /**
   * The default. The running job reads it by itself from the binlog, from its {@code CREATE TABLE}
   * on (rows of a {@code CREATE TABLE … SELECT} included), without a savepoint or a restart; a
   * table it cannot read that way (one renamed into the patterns already holding rows) is adopted
   * as with {@link #ADOPT} by a local run or an attached {@code flink run}.
   */
  CAPTURE("capture"),
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
