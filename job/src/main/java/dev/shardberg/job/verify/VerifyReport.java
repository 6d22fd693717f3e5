package dev.shardberg.job.verify;

import java.util.List;
import java.util.Map;

/**
 * The outcome of reconciling an Iceberg table against its shards.
 *
 * @param shards one result per shard of the plan, by shard number
 * @param unexpectedShards rows in the table whose shard number is not in the plan (shard → rows)
 * @param excludedShards rows in the table of shards left out by {@code tables.exclude-shards}
 *     (shard → rows): not compared, they stay as they were until the shard is included again
 */
public record VerifyReport(
    List<ShardResult> shards,
    Map<Integer, Long> unexpectedShards,
    Map<Integer, Long> excludedShards) {

  public VerifyReport(List<ShardResult> shards, Map<Integer, Long> unexpectedShards) {
    this(shards, unexpectedShards, Map.of());
  }

  /** Per shard: row counts and checksums on both sides, and the first differing keys. */
  public record ShardResult(
      int shard,
      String label,
      long mysqlRows,
      long icebergRows,
      long mysqlChecksum,
      long icebergChecksum,
      List<Difference> differences) {
    public boolean matches() {
      return mysqlRows == icebergRows && mysqlChecksum == icebergChecksum;
    }
  }

  /**
   * A key whose row differs. Both sides present: {@code column} is the first differing column and
   * {@code mysql}/{@code iceberg} its canonical values. One side absent: {@code column} is null and
   * the other side holds the whole row's rendering.
   */
  public record Difference(String key, String column, String mysql, String iceberg) {
    @Override
    public String toString() {
      if (mysql == null) {
        return "{" + key + "} only in Iceberg: " + iceberg;
      }
      if (iceberg == null) {
        return "{" + key + "} missing in Iceberg: " + mysql;
      }
      return "{"
          + key
          + "} column "
          + column
          + " differs: MySQL "
          + mysql
          + " / Iceberg "
          + iceberg;
    }
  }

  public boolean matches() {
    return unexpectedShards.isEmpty() && shards.stream().allMatch(ShardResult::matches);
  }

  public long mysqlRows() {
    return shards.stream().mapToLong(ShardResult::mysqlRows).sum();
  }

  public long icebergRows() {
    return shards.stream().mapToLong(ShardResult::icebergRows).sum()
        + unexpectedShards.values().stream().mapToLong(Long::longValue).sum();
  }

  /** A table of every shard plus the differences, for the CLI. */
  public String render() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        String.format(
            "%-6s %-40s %12s %12s %-18s %-18s %s%n",
            "shard",
            "source",
            "mysql rows",
            "iceberg rows",
            "mysql checksum",
            "iceberg checksum",
            ""));
    for (ShardResult s : shards) {
      sb.append(
          String.format(
              "%-6d %-40s %12d %12d %018x %018x %s%n",
              s.shard(),
              s.label(),
              s.mysqlRows(),
              s.icebergRows(),
              s.mysqlChecksum(),
              s.icebergChecksum(),
              s.matches() ? "OK" : "MISMATCH"));
    }
    unexpectedShards.forEach(
        (shard, rows) ->
            sb.append(
                String.format(
                    "%-6d %-40s %12s %12d %s%n",
                    shard, "(no such shard in MySQL)", "-", rows, "MISMATCH")));
    excludedShards.forEach(
        (shard, rows) ->
            sb.append(
                String.format(
                    "%-6d %-40s %12s %12d %s%n",
                    shard, "(excluded: tables.exclude-shards)", "-", rows, "not compared")));
    for (ShardResult s : shards) {
      for (Difference d : s.differences()) {
        sb.append("shard ").append(s.shard()).append(": ").append(d).append(System.lineSeparator());
      }
    }
    sb.append(
        matches()
            ? String.format("MATCH: %d rows in %d shards", mysqlRows(), shards.size())
            : String.format(
                "MISMATCH: MySQL %d rows, Iceberg %d rows; %d of %d shards differ",
                mysqlRows(),
                icebergRows(),
                shards.stream().filter(s -> !s.matches()).count(),
                shards.size()));
    return sb.append(System.lineSeparator()).toString();
  }
}
