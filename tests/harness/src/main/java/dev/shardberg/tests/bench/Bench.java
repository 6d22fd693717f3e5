package dev.shardberg.tests.bench;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.catalog.Catalog;

/**
 * The load-test harness: the same MySQL workload through every mode, one report. See {@link
 * BenchCommand} for the flags and BENCHMARKS.md for a run on the reference machine.
 *
 * <p>Order of a run: start K servers; for each mode, reload the N shards (same seeded rows), run
 * the mode ({@link ModeRunner}); then the query-side comparison on the consolidated result; then
 * the scale sweep; then write the report. A mode whose correctness check fails is FAILED and is
 * reported as such, never folded into the ratios.
 */
public final class Bench {
  /**
   * Held so the level sticks: the binlog client logs every connect at INFO through
   * java.util.logging.
   */
  private static final java.util.logging.Logger BINLOG_CLIENT_LOG =
      java.util.logging.Logger.getLogger("com.github.shyiko.mysql.binlog");

  /** Rows per shard of the warm-up pass (at most: never more than the run's own). */
  static final int WARM_UP_ROWS_PER_SHARD = 2_000;

  private final BenchConfig config;
  private final Progress progress;
  private final boolean warmUp;

  public Bench(BenchConfig config, PrintStream out) {
    this(config, out, false);
  }

  /**
   * @param warmUp first runs every mode once, untimed and left out of the report, on a few rows per
   *     shard: the first mode of a JVM otherwise pays class loading and JIT compilation that the
   *     later ones do not, which decides the snapshot-phase ratios more than the modes do
   */
  public Bench(BenchConfig config, PrintStream out, boolean warmUp) {
    this.config = config;
    this.progress = new Progress(out);
    this.warmUp = warmUp;
  }

  /** Runs everything and writes the report; returns the results (also in {@code results.json}). */
  public Report.Results run() throws Exception {
    System.setProperty("java.awt.headless", "true");
    BINLOG_CLIENT_LOG.setLevel(java.util.logging.Level.WARNING);
    long start = System.currentTimeMillis();
    String startedAt = Instant.now().toString();
    Path out = config.output().toAbsolutePath();
    Files.createDirectories(out);
    Map<String, Object> machine = Report.machine();
    List<ModeResult> modes = new ArrayList<>();
    List<ModeResult> sweep = new ArrayList<>();
    QuerySide.Result query = null;
    Map<String, Object> store = new LinkedHashMap<>();
    try (Workload workload = Workload.start(config.hosts(), progress);
        BenchWarehouse warehouses =
            BenchWarehouse.start(config, out, workload.servers().get(0), progress)) {
      ModeRunner runner = new ModeRunner(workload, warehouses, progress);
      if (warmUp && !config.sweepOnly()) {
        BenchConfig small =
            config.resized(
                config.shards(),
                Math.min(config.rowsPerShard(), WARM_UP_ROWS_PER_SHARD),
                java.time.Duration.ofSeconds(Math.min(5, config.duration().toSeconds())),
                config.modes());
        for (BenchConfig.Mode mode : config.modes()) {
          progress.line(
              "warm-up",
              "%s on %,d rows per shard, untimed and not reported",
              mode.label(),
              small.rowsPerShard());
          runner.run(mode, small, warehouses.location("warm-up/", mode, config.shards()));
        }
      }
      for (BenchConfig.Mode mode :
          config.sweepOnly() ? List.<BenchConfig.Mode>of() : config.modes()) {
        String warehouse = warehouses.location("", mode, config.shards());
        ModeResult result = runner.run(mode, config, warehouse);
        modes.add(result);
        if (mode == BenchConfig.Mode.CONSOLIDATED
            && config.querySide()
            && result.status().equals(ModeResult.PASSED)) {
          progress.mode("query N=" + config.shards());
          Catalog catalog = warehouses.observerCatalog(warehouse).loadCatalog();
          query = QuerySide.run(catalog, catalog.loadTable(ModeRunner.TABLE), progress);
        }
      }
      for (int n : config.sweep()) {
        List<BenchConfig.Mode> sweepModes =
            config.modes().stream()
                .filter(m -> m == BenchConfig.Mode.CONSOLIDATED || m == BenchConfig.Mode.PER_SHARD)
                .toList();
        BenchConfig sized =
            config.resized(
                n, (int) (config.sweepTotalRows() / n), config.sweepDuration(), sweepModes);
        for (BenchConfig.Mode mode : sweepModes) {
          sweep.add(runner.run(mode, sized, warehouses.location("sweep/", mode, n)));
        }
      }
      store.put("warehouse", warehouses.describe(config));
      store.put("delayedStoreRequests", warehouses.delayedRequests());
    }
    Report.Results results =
        new Report.Results(
            config.command(),
            machine,
            Report.versions(),
            settings(store),
            modes,
            query,
            sweep,
            ratios(modes, query),
            methods(),
            startedAt,
            System.currentTimeMillis() - start);
    Report.write(out, results);
    progress.mode("report");
    progress.line(
        "done",
        "report in %s (%s, %s, %d charts)",
        out,
        Report.RESULTS_JSON,
        Report.REPORT_MD,
        Report.CHARTS.size());
    return results;
  }

  private Map<String, Object> settings(Map<String, Object> store) {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("shards", config.shards());
    s.put("rowsPerShard", config.rowsPerShard());
    s.put("hosts", config.hosts());
    s.put("durationSeconds", config.duration().toSeconds());
    s.put("modes", config.modes().stream().map(BenchConfig.Mode::label).toList());
    s.put("warmUp", warmUp);
    s.put("changeRatePerSecond", config.changeRate());
    s.put("mixUpdateInsertDelete", config.mix().toString());
    s.put("skew", config.skew());
    s.put("checkpointIntervalMillis", config.checkpointInterval().toMillis());
    s.put("sourceParallelism", config.sourceParallelism());
    s.put("buckets", config.buckets());
    s.put("sweep", config.sweep());
    s.put("sweepTotalRows", config.sweepTotalRows());
    s.put("sweepDurationSeconds", config.sweepDuration().toSeconds());
    s.put("sweepOnly", config.sweepOnly());
    s.put("storeLatencyMillis", config.storeLatency().toMillis());
    s.put("checkpointMinPauseMillis", config.checkpointMinPause().toMillis());
    s.put(
        "closeConcurrency",
        config.closeConcurrency() != null
            ? config.closeConcurrency()
            : dev.shardberg.coordinator.CoordinatorConfigOptions.CLOSE_CONCURRENCY.defaultValue());
    s.putAll(store);
    s.put("tableProperties", dev.shardberg.router.schema.TableLayout.DEFAULT_PROPERTIES);
    return s;
  }

  /** Ratios between passing modes of this run only. */
  static Map<String, Object> ratios(List<ModeResult> modes, QuerySide.Result query) {
    Map<String, Object> r = new LinkedHashMap<>();
    Optional<ModeResult> ours = passed(modes, "consolidated");
    Optional<ModeResult> base = passed(modes, "per-shard");
    if (ours.isPresent() && base.isPresent()) {
      ModeResult a = ours.get();
      ModeResult b = base.get();
      if (a.snapshot() != null && b.snapshot() != null) {
        r.put(
            "snapshot throughput consolidated / per-shard",
            round(a.snapshot().rowsPerSecond() / b.snapshot().rowsPerSecond()));
      }
      if (a.freshness() != null && b.freshness() != null && a.freshness().p99Millis() > 0) {
        r.put(
            "freshness p50 per-shard / consolidated",
            round(b.freshness().p50Millis() / (double) Math.max(1, a.freshness().p50Millis())));
        r.put(
            "freshness p99 per-shard / consolidated",
            round(b.freshness().p99Millis() / (double) Math.max(1, a.freshness().p99Millis())));
      }
      if (a.commits() != null && b.commits() != null) {
        r.put(
            "commits per-shard / consolidated",
            round(b.commits().snapshots() / (double) Math.max(1, a.commits().snapshots())));
        r.put(
            "CommitFailedException retries consolidated vs per-shard",
            a.commits().commitFailedRetries() + " vs " + b.commits().commitFailedRetries());
      }
      if (a.files() != null && b.files() != null) {
        r.put(
            "live files per-shard / consolidated",
            round(
                (b.files().liveDataFiles() + b.files().liveDeleteFiles())
                    / (double)
                        Math.max(1, a.files().liveDataFiles() + a.files().liveDeleteFiles())));
      }
    }
    // issue 7's target: the consolidated snapshot phase reaches >= 0.8 of the source's own rate
    Optional<ModeResult> sourceOnly = passed(modes, "source-only");
    for (String mode : List.of("consolidated", "consolidated+zk")) {
      Optional<ModeResult> m = passed(modes, mode);
      if (m.isPresent()
          && sourceOnly.isPresent()
          && m.get().snapshot() != null
          && sourceOnly.get().snapshot() != null) {
        r.put(
            "snapshot rows/s " + mode + " / source-only",
            round(
                m.get().snapshot().rowsPerSecond() / sourceOnly.get().snapshot().rowsPerSecond()));
        if (m.get().snapshot().writersMillis() > 0) {
          // the same point source-only counts at: rows out of the sources, before the checkpoint
          // and commit that make the last of them visible
          r.put(
              "snapshot rows/s into the writers " + mode + " / source-only",
              round(
                  m.get().snapshot().writersRowsPerSecond()
                      / sourceOnly.get().snapshot().rowsPerSecond()));
        }
      }
    }
    if (query != null) {
      r.put("query: N tables / one table", round(query.ratio()));
    }
    return r;
  }

  private static Optional<ModeResult> passed(List<ModeResult> modes, String label) {
    return modes.stream()
        .filter(m -> m.mode().equals(label) && m.status().equals(ModeResult.PASSED))
        .findFirst();
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  static Map<String, String> methods() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(
        "snapshot throughput",
        "rows loaded / (when the table watcher first saw the first snapshot holding every loaded row as a distinct live row, counted with Iceberg's generic reader with deletes applied, not the total-records summary, which includes rows hidden by deletes - job submission), so job start-up is included; per source parallelism divides by the sum of the sources' parallelism; 'after first commit' excludes start-up: live rows added after the first commit with rows / time since the watcher saw that commit");
    m.put(
        "warm-up",
        "with --warm-up (the default) every mode first runs once on at most "
            + WARM_UP_ROWS_PER_SHARD
            + " rows per shard and 5 s of changes, untimed and not reported, so that no mode pays the JVM's class loading and JIT compilation for the others (the first mode of a cold JVM otherwise took up to twice as long to load the same snapshot)");
    m.put(
        "snapshot rows into the writers",
        "consolidated modes: rows loaded / (when the Shardberg writers' numRecordsIn, summed over their subtasks and read every 250 ms, first reached them - job submission): the point source-only counts at; the rest of the snapshot phase is the checkpoint and commit that make the last rows visible (up to one checkpoint interval)");
    m.put(
        "snapshot phase deletes",
        "commits, added-delete-files and added-equality-deletes of the snapshot that first held every loaded row and its ancestors: what the initial load left for readers to merge (0 when it was written insert-only)");
    m.put(
        "source-only",
        "the consolidated mode's sources (the job's ShardbergPipeline.buildSources, same generated config) feeding a counting map and a discarding sink, no table: snapshot throughput = rows loaded / (time the count reached them - job submission); 'after first commit' holds the rate after the first counted row; passes only when exactly shards x rows-per-shard rows were counted by the time the job ended; no change phase");
    m.put(
        "change throughput",
        "changes applied in MySQL / (stream time + time until the table showed every shard's last change)");
    m.put(
        "freshness",
        "for every row in the data files a snapshot adds during the change phase: the time the table watcher first saw the snapshot (visible to a reader; polled every 200 ms, so up to 200 ms late; not the snapshot's timestampMillis, stamped before the metadata swap) - the row's mysql_commit_ts (MariaDB clock, same machine); deletes carry no row and are not timed");
    m.put(
        "writer flush",
        "consolidated modes, change phase: per Flink checkpoint, the files the writers closed (sum over writer subtasks) and the time of the slowest writer's close (DeltaTaskWriter.complete: closing every open data/delete file of the checkpoint), from the writers' own log line; coordinator commit ms: the duration the coordinator logs per data commit of the change phase (refresh, lock, RowDelta + progress record in one transaction)");
    m.put("commits", "snapshots observed on the table (polled every 200 ms)");
    m.put(
        "commit duration and CommitFailedException retries",
        "per-shard: Iceberg's own CommitReport (catalog metrics-reporter-impl) of every successful commit: totalDuration, and attempts - 1 (Iceberg retries only on CommitFailedException); a commit out of retries fails its job and shows as a restart. Consolidated modes: Iceberg's CommitReport does not cover the coordinator's transactional commits, so the duration is the coordinator's commitDurationMs histogram (every data and heartbeat commit of the run, from the refresh under the lock to the committed transaction; the last 1,024 per job attempt) and the retries are its commitRetries counter plus the CommitReport retries of other committers (consolidated+zk's maintenance)");
    m.put("restarts", "the job's numRestarts gauge, through a Flink metric reporter");
    m.put(
        "files and bytes per commit",
        "added-data-files + added-delete-files and added-files-size of the snapshot summaries, over commits that added files");
    m.put(
        "small files",
        "live data and delete files of the final snapshot smaller than "
            + (ModeRunner.SMALL_FILE_BYTES >> 20)
            + " MiB");
    m.put(
        "peak heap",
        "JVM heap used, sampled every 100 ms during the mode (MiniCluster runs in this JVM; MariaDB does not)");
    m.put(
        "correctness",
        "per shard, row count and order-independent checksum of MySQL vs the table's current snapshot read with Iceberg's generic reader");
    m.put(
        "query side",
        "the consolidated result rewritten as one table partitioned by shard and as N tables, one Parquet file per shard each; both scanned once to warm up, then timed, with Iceberg's generic reader");
    return m;
  }
}
