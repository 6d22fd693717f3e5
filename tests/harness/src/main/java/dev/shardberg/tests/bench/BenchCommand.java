package dev.shardberg.tests.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code shardberg bench}: the load-test harness, one report over every mode. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Runs the same MySQL workload (embedded MariaDB shards) through each mode and writes a report:",
      "  consolidated     this project: one source per host, one coordinator, one commit per checkpoint",
      "  per-shard        the baseline: one CDC source + one stock Iceberg upsert sink per shard, one table",
      "  consolidated+zk  consolidated with the ZooKeeper commit lock and a concurrent maintenance committer",
      "  source-only      consolidated's sources into a sink that only counts rows (no table): the snapshot",
      "                   rate of the CDC source itself; opt-in, e.g. --modes source-only,consolidated,per-shard",
      "Output: results.json, report.md and PNG charts in --output. Exit code 0 only if every mode that ran",
      "passed its correctness check (table == union of the shards; source-only: exactly the loaded rows counted).",
      "--long-run 30m runs instead the consolidated pipeline once per --long-run-runs entry (maintenance off, on, position deletes) for that long each,",
      "measuring full-scan time, files, delete files and bytes over time: long-run.md/.json/.csv/.png in --output."
    })
public final class BenchCommand implements Callable<Integer> {

  @Option(
      names = "--shards",
      defaultValue = "8",
      description = "Number of shards N (default ${DEFAULT-VALUE}).")
  int shards;

  @Option(
      names = "--rows-per-shard",
      defaultValue = "10000",
      description = "Rows loaded into each shard before the job starts (default ${DEFAULT-VALUE}).")
  int rowsPerShard;

  @Option(
      names = "--hosts",
      defaultValue = "2",
      description =
          "Embedded MariaDB servers K; shard n lives on host n mod K (default ${DEFAULT-VALUE}).")
  int hosts;

  @Option(
      names = "--duration",
      defaultValue = "45s",
      description = "How long the change stream runs: 45s, 2m, 500ms (default ${DEFAULT-VALUE}).")
  String duration;

  @Option(
      names = "--modes",
      defaultValue = "consolidated,per-shard,consolidated+zk",
      split = ",",
      description =
          "Modes to run, in order: consolidated, per-shard, consolidated+zk, source-only (default ${DEFAULT-VALUE}).")
  List<String> modes;

  @Option(
      names = "--output",
      defaultValue = "bench-report",
      description = "Report directory (default ${DEFAULT-VALUE}).")
  Path output;

  @Option(
      names = "--change-rate",
      defaultValue = "200",
      description = "Changes per second over all shards (default ${DEFAULT-VALUE}).")
  int changeRate;

  @Option(
      names = "--mix",
      defaultValue = "96/2/2",
      description = "Update/insert/delete percentages of the changes (default ${DEFAULT-VALUE}).")
  String mix;

  @Option(
      names = "--skew",
      defaultValue = "0",
      description =
          "Share of the changes sent to shard 0, the hot shard; 0 = uniform (default ${DEFAULT-VALUE}).")
  double skew;

  @Option(
      names = "--checkpoint-interval",
      defaultValue = "5s",
      description = "Flink checkpoint interval (default ${DEFAULT-VALUE}).")
  String checkpointInterval;

  @Option(
      names = "--source-parallelism",
      defaultValue = "2",
      description =
          "Parallelism of each host's source (consolidated modes, source-only) and of the writers (consolidated modes) (default ${DEFAULT-VALUE}).")
  int sourceParallelism;

  @Option(
      names = "--buckets",
      defaultValue = "5",
      description =
          "Buckets of the key in the table's partition spec, identity(shard_number) then bucket(B, key), in every mode (default ${DEFAULT-VALUE}, the job's target.buckets default).")
  int buckets;

  @Option(
      names = "--sweep",
      split = ",",
      description =
          "Shard counts of the scale sweep, e.g. 8,32,128 (consolidated and per-shard; default: none).")
  List<Integer> sweep = new ArrayList<>();

  @Option(
      names = "--sweep-total-rows",
      defaultValue = "64000",
      description = "Total rows of every sweep run (default ${DEFAULT-VALUE}).")
  long sweepTotalRows;

  @Option(
      names = "--sweep-duration",
      defaultValue = "20s",
      description = "Change-stream duration of every sweep run (default ${DEFAULT-VALUE}).")
  String sweepDuration;

  @Option(
      names = "--phase-timeout",
      defaultValue = "5m",
      description =
          "A snapshot or catch-up phase that takes longer fails the mode (default ${DEFAULT-VALUE}).")
  String phaseTimeout;

  @Option(
      names = "--no-query-side",
      negatable = false,
      description = "Skip the query-side comparison (one table vs N tables).")
  boolean noQuerySide;

  @Option(
      names = "--sweep-only",
      negatable = false,
      description = "Run only the scale sweep (--sweep), not the modes at --shards.")
  boolean sweepOnly;

  @Option(
      names = "--warehouse",
      defaultValue = "local",
      description =
          "File system of the tables: local (a directory under"
              + " --output, Shardberg's fork-free local FS), hdfs (a real HDFS, Hadoop's MiniDFSCluster with 1 DataNode in its own JVM)"
              + " or s3 (an S3-compatible store, S3Proxy in memory, behind Iceberg's REST catalog, both in this JVM) (default ${DEFAULT-VALUE}).")
  String warehouse;

  @Option(
      names = "--store-latency",
      defaultValue = "0ms",
      description =
          "With --warehouse s3: every request of the job and of the catalog to the store is answered this much later, e.g. 50ms (default ${DEFAULT-VALUE}).")
  String storeLatency;

  @Option(
      names = "--close-concurrency",
      description =
          "The job's target.close-concurrency: partitions each writer closes at once at a checkpoint (default: the job's, 8).")
  Integer closeConcurrency;

  @Option(
      names = "--checkpoint-min-pause",
      defaultValue = "0ms",
      description =
          "Flink's minimum pause between two checkpoints (0: Flink's default; a checkpoint that outlasts --checkpoint-interval is followed at once by the next) (default ${DEFAULT-VALUE}).")
  String checkpointMinPause;

  @Option(
      names = "--warm-up",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "Run every mode once first on a few rows, untimed and not reported, so that the first mode does not pay the JVM's warm-up for the others (default ${DEFAULT-VALUE}; --no-warm-up skips it).")
  boolean warmUp;

  @Option(
      names = "--long-run",
      description =
          "Long-run mode: the change stream runs this long (e.g. 30m), once per --long-run-runs entry (the job's maintenance off, on, position deletes); replaces the modes (default: off).")
  String longRun;

  @Option(
      names = "--long-run-runs",
      defaultValue = "off,on",
      description =
          "Long-run mode: the runs, in order, comma-separated: off (equality deletes, the job's maintenance off), on (equality deletes, maintenance on), position (target.delete-mode position: writers delete by position and compact their own partitions; maintenance on for expiry) (default ${DEFAULT-VALUE}).")
  String longRunRuns;

  @Option(
      names = "--sample-interval",
      defaultValue = "1m",
      description =
          "Long-run mode: how often the table is measured (scan times, files, bytes) (default ${DEFAULT-VALUE}).")
  String sampleInterval;

  @Option(
      names = "--maintenance-interval",
      defaultValue = "30s",
      description =
          "Long-run mode: maintenance.interval of the maintenance-on run; its maintenance.expire-snapshots.max-age is 4 times this (default ${DEFAULT-VALUE}).")
  String maintenanceInterval;

  @Option(
      names = "--compaction-min-small-files",
      description =
          "Long-run mode: maintenance.compaction.min-small-files of the maintenance-on and position runs (default: the job's, 5); in position mode the files a writer adds to a partition before it compacts it.")
  Integer compactionMinSmallFiles;

  @Option(
      names = "--compaction-max-partitions",
      description =
          "Long-run mode: maintenance.compaction.max-partitions-per-cycle of the maintenance-on and position runs (default: the job's); in position mode the partitions each writer starts rewriting per checkpoint.")
  Integer compactionMaxPartitions;

  @Option(
      names = "--scan-budget",
      defaultValue = "90s",
      description =
          "Long-run mode: once a full scan of a run takes longer, that run's later scans, its end check and its compacted copy are not done (an unmaintained table's scan grows with data files times delete files) (default ${DEFAULT-VALUE}).")
  String scanBudget;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    BenchConfig config = toConfig(commandLine());
    if (longRun != null && config.warehouseFs() != BenchConfig.WarehouseFs.LOCAL) {
      throw new IllegalArgumentException(
          "Cannot run the bench: --long-run runs on a local warehouse only, got --warehouse "
              + config.warehouseFs());
    }
    if (longRun != null) {
      Duration interval = parseDuration("--maintenance-interval", maintenanceInterval);
      LongRun.Result result =
          new LongRun(
                  config,
                  parseDuration("--long-run", longRun),
                  parseDuration("--sample-interval", sampleInterval),
                  new LongRun.MaintenanceSettings(
                      interval,
                      interval.multipliedBy(4),
                      compactionMinSmallFiles,
                      compactionMaxPartitions),
                  LongRun.Variant.parse(longRunRuns),
                  parseDuration("--scan-budget", scanBudget),
                  new Progress(System.out))
              .run();
      boolean passed = LongRun.passed(result);
      System.out.println(
          passed
              ? "bench: every long run passed (table == shards where checked, no stale-base commit retry, no restart)"
              : "bench: a long run FAILED; see " + LongRun.MD);
      result.runs().stream()
          .filter(r -> r.notRead() != null)
          .forEach(
              r ->
                  System.out.println(
                      "bench: " + r.run() + ": " + r.notRead() + "; table == shards not checked"));
      return passed ? 0 : 1;
    }
    Report.Results results = new Bench(config, System.out, warmUp).run();
    boolean allPassed =
        results.modes().stream().allMatch(m -> !m.status().equals(ModeResult.FAILED))
            && results.sweep().stream().allMatch(m -> !m.status().equals(ModeResult.FAILED));
    System.out.println(
        allPassed
            ? "bench: every mode that ran passed its correctness check"
            : "bench: a mode FAILED; see report.md");
    return allPassed ? 0 : 1;
  }

  BenchConfig toConfig(String command) {
    List<BenchConfig.Mode> parsed = modes.stream().map(BenchConfig.Mode::parse).distinct().toList();
    return new BenchConfig(
        shards,
        rowsPerShard,
        hosts,
        parseDuration("--duration", duration),
        parsed,
        output,
        changeRate,
        BenchConfig.Mix.parse(mix),
        skew,
        parseDuration("--checkpoint-interval", checkpointInterval),
        sourceParallelism,
        buckets,
        sweep == null ? List.of() : sweep,
        sweepTotalRows,
        parseDuration("--sweep-duration", sweepDuration),
        parseDuration("--phase-timeout", phaseTimeout),
        !noQuerySide,
        sweepOnly,
        command,
        BenchConfig.WarehouseFs.parse(warehouse),
        parseDuration("--store-latency", storeLatency),
        closeConcurrency,
        parseDuration("--checkpoint-min-pause", checkpointMinPause));
  }

  private String commandLine() {
    List<String> args =
        spec == null
            ? List.of()
            : new ArrayList<>(spec.commandLine().getParseResult().originalArgs());
    // under the full CLI the parse result still starts with the subcommand's own name
    if (!args.isEmpty() && args.get(0).equals(spec.name())) {
      args.remove(0);
    }
    return "bin/shardberg bench " + String.join(" ", args);
  }

  /** {@code 45s}, {@code 2m}, {@code 500ms}, {@code 1h}, or plain seconds. */
  static Duration parseDuration(String option, String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      } else if (t.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
      } else if (t.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      } else if (t.endsWith("h")) {
        return Duration.ofHours(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      return Duration.ofSeconds(Long.parseLong(t));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          String.format(
              "Cannot parse %s '%s': write a number with ms, s, m or h, e.g. 45s", option, text),
          e);
    }
  }

  /** Runs {@code bench} on its own (the CLI registers it next to {@code demo}). */
  public static void main(String[] args) {
    System.exit(new CommandLine(new BenchCommand()).execute(args));
  }
}
