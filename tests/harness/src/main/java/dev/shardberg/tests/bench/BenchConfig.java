package dev.shardberg.tests.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything one {@code bench} run needs, validated on construction.
 *
 * @param shards N, shard tables {@code shop.orders_0..N-1}, spread round-robin over the hosts
 * @param rowsPerShard R, rows loaded into every shard before the job starts
 * @param hosts K, embedded MariaDB servers
 * @param duration how long the change stream runs
 * @param modes the modes to run, in order
 * @param output the report directory
 * @param changeRate changes per second over all shards
 * @param mix update/insert/delete percentages (sum 100)
 * @param skew share of the changes sent to shard 0 (the hot shard); 0 = uniform
 * @param checkpointInterval Flink checkpoint interval (one commit per checkpoint per committer)
 * @param sourceParallelism parallelism of each host's source in {@code consolidated} and {@code
 *     source-only} modes
 * @param sweep shard counts of the scale sweep; empty = no sweep
 * @param sweepTotalRows total rows of every sweep run (rows per shard = this / N)
 * @param sweepDuration change-stream duration of every sweep run
 * @param phaseTimeout a phase (snapshot, catch-up) that takes longer fails the mode
 * @param querySide whether to run the query-side comparison
 * @param sweepOnly run only the scale sweep, not the modes at {@code shards}
 * @param command the exact command line, recorded in the report
 * @param warehouseFs the file system of the warehouse: a local directory, HDFS ({@code MiniHdfs})
 *     or an S3-compatible object store behind a REST catalog ({@link BenchWarehouse})
 * @param storeLatency with {@code s3}: how late the store answers each request (zero: at once)
 * @param closeConcurrency the job's {@code target.close-concurrency}; null: its default
 * @param checkpointMinPause Flink's minimum pause between the end of one checkpoint and the start
 *     of the next (zero: Flink's default, back to back when a checkpoint outlasts the interval)
 */
public record BenchConfig(
    int shards,
    int rowsPerShard,
    int hosts,
    Duration duration,
    List<Mode> modes,
    Path output,
    int changeRate,
    Mix mix,
    double skew,
    Duration checkpointInterval,
    int sourceParallelism,
    int buckets,
    List<Integer> sweep,
    long sweepTotalRows,
    Duration sweepDuration,
    Duration phaseTimeout,
    boolean querySide,
    boolean sweepOnly,
    String command,
    WarehouseFs warehouseFs,
    Duration storeLatency,
    Integer closeConcurrency,
    Duration checkpointMinPause) {

  public BenchConfig {
    check(shards > 0, "Cannot run the bench: --shards must be > 0, got %s", shards);
    check(
        rowsPerShard >= 0,
        "Cannot run the bench: --rows-per-shard must be >= 0, got %s",
        rowsPerShard);
    check(
        hosts > 0 && hosts <= shards,
        "Cannot run the bench: --hosts must be in 1..--shards (%s), got %s",
        shards,
        hosts);
    check(
        !duration.isNegative(), "Cannot run the bench: --duration must be >= 0, got %s", duration);
    check(
        !modes.isEmpty(),
        "Cannot run the bench: --modes is empty; give at least one of %s",
        List.of(Mode.values()));
    check(changeRate >= 0, "Cannot run the bench: --change-rate must be >= 0, got %s", changeRate);
    check(skew >= 0 && skew < 1, "Cannot run the bench: --skew must be in [0, 1), got %s", skew);
    check(
        checkpointInterval.toMillis() >= 100,
        "Cannot run the bench: --checkpoint-interval must be >= 100ms, got %s",
        checkpointInterval);
    check(
        sourceParallelism > 0,
        "Cannot run the bench: --source-parallelism must be > 0, got %s",
        sourceParallelism);
    check(buckets > 0, "Cannot run the bench: --buckets must be > 0, got %s", buckets);
    for (int n : sweep) {
      check(n > 0, "Cannot run the bench: --sweep shard counts must be > 0, got %s", sweep);
      check(
          sweepTotalRows / n > 0,
          "Cannot run the bench: --sweep-total-rows %s leaves no row per shard at N = %s; raise it",
          sweepTotalRows,
          n);
    }
    check(
        !sweepOnly || !sweep.isEmpty(),
        "Cannot run the bench: --sweep-only needs --sweep, e.g. --sweep 8,32,128");
    check(
        !storeLatency.isNegative(),
        "Cannot run the bench: --store-latency must be >= 0, got %s",
        storeLatency);
    check(
        storeLatency.isZero() || warehouseFs == WarehouseFs.S3,
        "Cannot run the bench: --store-latency needs --warehouse s3 (the bench injects latency"
            + " only at its S3-compatible store), got --warehouse %s",
        warehouseFs);
    check(
        closeConcurrency == null || closeConcurrency >= 1,
        "Cannot run the bench: --close-concurrency (target.close-concurrency) must be >= 1, got %s",
        closeConcurrency);
    check(
        !checkpointMinPause.isNegative(),
        "Cannot run the bench: --checkpoint-min-pause must be >= 0, got %s",
        checkpointMinPause);
    modes = List.copyOf(modes);
    sweep = List.copyOf(sweep);
  }

  public long totalRows() {
    return (long) shards * rowsPerShard;
  }

  /** The same run with another shard count and size (the scale sweep). */
  BenchConfig resized(
      int newShards, int newRowsPerShard, Duration newDuration, List<Mode> newModes) {
    return new BenchConfig(
        newShards,
        newRowsPerShard,
        Math.min(hosts, newShards),
        newDuration,
        newModes,
        output,
        changeRate,
        mix,
        skew,
        checkpointInterval,
        sourceParallelism,
        buckets,
        List.of(),
        sweepTotalRows,
        sweepDuration,
        phaseTimeout,
        false,
        false,
        command,
        warehouseFs,
        storeLatency,
        closeConcurrency,
        checkpointMinPause);
  }

  private static void check(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalArgumentException(String.format(template, args));
    }
  }

  /**
   * Where the tables live: {@code local} (a directory under --output), {@code hdfs} (a
   * MiniDFSCluster in its own JVM) or {@code s3} (S3Proxy and a REST catalog in this JVM).
   */
  public enum WarehouseFs {
    LOCAL("local"),
    HDFS("hdfs"),
    S3("s3");

    private final String label;

    WarehouseFs(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }

    public static WarehouseFs parse(String label) {
      for (WarehouseFs w : values()) {
        if (w.label.equals(label.trim())) {
          return w;
        }
      }
      throw new IllegalArgumentException(
          String.format("Cannot use --warehouse '%s': use local, hdfs or s3", label));
    }

    @Override
    public String toString() {
      return label;
    }
  }

  /** The ways of moving the same shards into one Iceberg table that the bench compares. */
  public enum Mode {
    /** This project: one source per host, one writer stage, one coordinator. */
    CONSOLIDATED("consolidated"),
    /** The baseline: one CDC source + one stock Iceberg upsert sink (own committer) per shard. */
    PER_SHARD("per-shard"),
    /**
     * {@link #CONSOLIDATED} with the ZooKeeper commit lock and a concurrent maintenance committer.
     */
    CONSOLIDATED_ZK("consolidated+zk"),
    /**
     * {@link #CONSOLIDATED} with a schema rollout during the change phase: {@code ADD COLUMN} on
     * every shard, one after the other, spread over the change stream (issue 15).
     */
    CONSOLIDATED_DDL("consolidated+ddl"),
    /**
     * The sources of {@link #CONSOLIDATED}, built by the same job code, feeding a sink that only
     * counts rows: the CDC source's own snapshot rate, the ceiling of the other modes in this run.
     */
    SOURCE_ONLY("source-only");

    private final String label;

    Mode(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }

    public static Mode parse(String label) {
      for (Mode m : values()) {
        if (m.label.equals(label.trim())) {
          return m;
        }
      }
      throw new IllegalArgumentException(
          String.format(
              "Cannot run mode '%s': unknown; use a comma-separated list of consolidated, per-shard, consolidated+zk, consolidated+ddl, source-only",
              label));
    }

    @Override
    public String toString() {
      return label;
    }
  }

  /**
   * Update/insert/delete percentages of the change stream, written {@code 96/2/2} (updates first,
   * as in the update-heavy table the seeds describe).
   */
  public record Mix(int updatePercent, int insertPercent, int deletePercent) {
    public Mix {
      check(
          insertPercent >= 0
              && updatePercent >= 0
              && deletePercent >= 0
              && insertPercent + updatePercent + deletePercent == 100,
          "Cannot use change mix %s/%s/%s: give update/insert/delete percentages >= 0 that sum to 100 (e.g. 96/2/2)",
          updatePercent,
          insertPercent,
          deletePercent);
    }

    /** Parses {@code update/insert/delete}. */
    public static Mix parse(String text) {
      String[] parts = text.trim().split("/");
      check(
          parts.length == 3,
          "Cannot parse change mix '%s': write update/insert/delete percentages, e.g. 96/2/2",
          text);
      try {
        return new Mix(
            Integer.parseInt(parts[0].trim()),
            Integer.parseInt(parts[1].trim()),
            Integer.parseInt(parts[2].trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            String.format(
                "Cannot parse change mix '%s': write update/insert/delete percentages, e.g. 96/2/2",
                text),
            e);
      }
    }

    @Override
    public String toString() {
      return updatePercent + "/" + insertPercent + "/" + deletePercent;
    }
  }
}
