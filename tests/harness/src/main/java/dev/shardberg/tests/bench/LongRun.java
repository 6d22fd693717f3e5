package dev.shardberg.tests.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.source.FlinkSource;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;

/**
 * {@code bench --long-run}: issue 14's "the seed's week, simulated". The consolidated pipeline runs
 * the same update-heavy change stream on freshly reloaded shards once per {@code --long-run-runs}
 * entry ({@link Variant}: the job's own maintenance off, on, or position deletes), and every {@code
 * --sample-interval} measures the table as a reader finds it: full-scan time with Iceberg's generic
 * reader and with Flink's batch source (a bounded {@link FlinkSource} job on its own local
 * cluster), live data files, equality and position delete files, bytes of live files and bytes on
 * disk under the table location. At the end (job stopped) it measures once more, verifies table ==
 * shards, and writes a freshly compacted copy of the table (same schema and spec, one file per
 * partition, no deletes) whose scan time is the yardstick. Output: {@code long-run.json}, {@code
 * long-run.csv}, {@code long-run.png} (both runs on one chart, {@link LongRunChart}) and {@code
 * long-run.md}.
 */
final class LongRun {
  static final String JSON = "long-run.json";
  static final String CSV = "long-run.csv";
  static final String CHART = "long-run.png";
  static final String MD = "long-run.md";

  /**
   * The target: scan time at the end with maintenance within this factor of a compacted
   * table.
   */
  static final double SCAN_TARGET = 1.5;

  /**
   * Issue 28's target for position deletes: every scan within this factor of a compacted table. The
   * compacted copy is made of the end table; the rows hardly change in number over an update-heavy
   * stream, so it is the yardstick of every sample.
   */
  static final double POSITION_SCAN_TARGET = 1.2;

  private static final int CHANGE_THREADS = 4;

  /**
   * Held so the level sticks: the binlog client logs every connect at INFO through
   * java.util.logging.
   */
  private static final java.util.logging.Logger BINLOG_CLIENT_LOG =
      java.util.logging.Logger.getLogger("com.github.shyiko.mysql.binlog");

  /** A scan time that stands for "not read": the run's tables passed the scan budget. */
  static final long NOT_READ = -1;

  /**
   * The job's maintenance settings for the "on" and "position" runs; {@code minSmallFiles} and
   * {@code maxPartitions} null keep the job's {@code maintenance.compaction.min-small-files} and
   * {@code max-partitions-per-cycle}.
   */
  record MaintenanceSettings(
      Duration interval, Duration expireAfter, Integer minSmallFiles, Integer maxPartitions) {
    MaintenanceSettings(Duration interval, Duration expireAfter) {
      this(interval, expireAfter, null, null);
    }
  }

  /** The runs {@code --long-run-runs} chooses from, in the order they run. */
  enum Variant {
    /** Equality deletes (the default write path), the job's maintenance off. */
    OFF("maintenance off", "off", false, null),
    /** Equality deletes, the job's maintenance on: its compactions and merges (issue 14). */
    ON("maintenance on", "on", true, null),
    /**
     * {@code target.delete-mode: position} (issue 28): the writers own their partitions, delete by
     * position (deletion vectors on the new v3 table) and compact their own partitions; the job's
     * maintenance on for the table-level work (expiry, orphans).
     */
    POSITION("position deletes (owners)", "position", true, "position");

    final String label;
    final String option;
    final boolean maintenance;
    final String deleteMode;

    Variant(String label, String option, boolean maintenance, String deleteMode) {
      this.label = label;
      this.option = option;
      this.maintenance = maintenance;
      this.deleteMode = deleteMode;
    }

    /** {@code --long-run-runs}: a comma-separated list of off, on, position. */
    static List<Variant> parse(String list) {
      List<Variant> variants = new ArrayList<>();
      for (String name : list.split(",")) {
        String n = name.trim();
        Variant v =
            java.util.Arrays.stream(values())
                .filter(x -> x.option.equals(n))
                .findFirst()
                .orElseThrow(
                    () ->
                        new IllegalArgumentException(
                            "Cannot run the bench: --long-run-runs takes off, on and position"
                                + " (comma-separated), got '"
                                + n
                                + "'"));
        if (variants.contains(v)) {
          throw new IllegalArgumentException(
              "Cannot run the bench: --long-run-runs names '" + n + "' twice");
        }
        variants.add(v);
      }
      return variants;
    }
  }

  /** One measurement of the table. */
  record Sample(
      String run,
      double elapsedSeconds,
      String phase,
      long snapshots,
      long liveRows,
      long dataFiles,
      long equalityDeleteFiles,
      long positionDeleteFiles,
      long liveBytes,
      long diskBytes,
      long genericScanMillis,
      long flinkScanMillis) {}

  /** A freshly compacted copy of a run's final table: the scan-time yardstick. */
  record Compacted(
      long rows, long dataFiles, long bytes, long genericScanMillis, long flinkScanMillis) {}

  /** One run (maintenance off or on, or position deletes). */
  record RunResult(
      String run,
      boolean maintenance,
      String deleteMode,
      String status,
      String reason,
      long changesApplied,
      double changesPerSecond,
      ModeResult.Freshness freshness,
      long ingestCommits,
      long maintenanceCommits,
      long commitFailedRetries,
      long compactions,
      long merges,
      long ownerCompactions,
      long compactionsDropped,
      long compactionsFailed,
      long expiredSnapshots,
      long restarts,
      boolean verified,
      long mysqlRows,
      long icebergRows,
      List<Sample> samples,
      Sample end,
      Compacted compacted,
      String notRead) {}

  /**
   * The scan budget of one run: once a full scan took longer than {@code limit}, the run's later
   * samples, its end verification and its compacted copy are not read (without maintenance the cost
   * of reading grows with data files times equality delete files per partition, so a long run's
   * last scans would take far longer than the run).
   */
  static final class ScanBudget {
    private final long limitMillis;
    private String exceeded;

    ScanBudget(Duration limit) {
      this.limitMillis = limit.toMillis();
    }

    void record(double elapsedSeconds, long genericMillis, long flinkMillis) {
      if (exceeded == null && Math.max(genericMillis, flinkMillis) > limitMillis) {
        exceeded =
            String.format(
                Locale.ROOT,
                "not read after t=%.0f s: a full scan took %,d ms, over the scan budget of %,d ms",
                elapsedSeconds,
                Math.max(genericMillis, flinkMillis),
                limitMillis);
      }
    }

    /** Why the table is no longer read, or null while it is. */
    String exceeded() {
      return exceeded;
    }
  }

  /** Everything the long-run report shows. */
  record Result(
      String command,
      Map<String, Object> machine,
      Map<String, String> versions,
      Map<String, Object> settings,
      List<RunResult> runs,
      Map<String, Object> comparison,
      Map<String, String> methods,
      String startedAt,
      long wallMillis) {}

  private final BenchConfig config;
  private final Duration longRun;
  private final Duration sampleInterval;
  private final MaintenanceSettings maintenance;
  private final List<Variant> variants;
  private final Duration scanBudget;
  private final Progress progress;

  LongRun(
      BenchConfig config,
      Duration longRun,
      Duration sampleInterval,
      MaintenanceSettings maintenance,
      List<Variant> variants,
      Duration scanBudget,
      Progress progress) {
    this.config = config;
    this.longRun = longRun;
    this.sampleInterval = sampleInterval;
    this.maintenance = maintenance;
    this.variants = List.copyOf(variants);
    this.scanBudget = scanBudget;
    this.progress = progress;
  }

  /** The runs and the report; true when all passed (table == shards, no conflict, no restart). */
  Result run() throws Exception {
    BINLOG_CLIENT_LOG.setLevel(java.util.logging.Level.WARNING);
    long start = System.currentTimeMillis();
    String startedAt = Instant.now().toString();
    Path out = config.output().toAbsolutePath();
    Files.createDirectories(out);
    Map<String, Object> machine = Report.machine();
    List<RunResult> runs = new ArrayList<>();
    try (Workload workload = Workload.start(config.hosts(), progress)) {
      ModeRunner runner = new ModeRunner(workload, BenchWarehouse.local(config.output()), progress);
      for (Variant variant : variants) {
        runs.add(runOnce(workload, runner, variant, out));
      }
    }
    Result result =
        new Result(
            config.command(),
            machine,
            Report.versions(),
            settings(),
            runs,
            comparison(runs),
            methods(),
            startedAt,
            System.currentTimeMillis() - start);
    write(out, result);
    progress.mode("report");
    progress.line("done", "long-run report in %s (%s, %s, %s, %s)", out, MD, JSON, CSV, CHART);
    return result;
  }

  static boolean passed(Result result) {
    return result.runs().stream().allMatch(r -> r.status().equals(ModeResult.PASSED));
  }

  private RunResult runOnce(Workload workload, ModeRunner runner, Variant variant, Path out)
      throws Exception {
    boolean on = variant.maintenance;
    boolean position = variant == Variant.POSITION;
    String run = variant.label;
    progress.mode("long-run " + run);
    Path warehouse = out.resolve("warehouse").resolve("long-run-" + variant.option);
    deleteTree(warehouse);
    workload.reset(config.shards(), config.rowsPerShard(), progress);
    CommitReports.drain();
    CatalogLoader loader = ModeRunner.catalogLoader(warehouse.toUri().toString());
    Catalog catalog = loader.loadCatalog();
    String runId = "long-run-" + variant.option + "-n" + config.shards() + "-" + System.nanoTime();
    ShardbergConfig jobConfig =
        ShardbergConfig.load(
            runner.writeJobConfig(
                config,
                warehouse.toUri().toString(),
                runId,
                null,
                on ? maintenance : null,
                variant.deleteMode,
                // every run the same checkpoint storage: a directory (the owners' state of the
                // position run outgrows the JobManager's memory)
                out.resolve("checkpoints").resolve(runId)));
    StreamExecutionEnvironment env =
        runner.environment(config.sourceParallelism(), java.time.Duration.ZERO);
    ShardbergPipeline.Assembled assembled = ShardbergPipeline.build(env, jobConfig);
    String jobName = assembled.jobName();
    Table table = catalog.loadTable(ModeRunner.TABLE);
    Path tableDir =
        Path.of(
            java.net.URI.create(
                table.location().startsWith("file:")
                    ? table.location()
                    : "file:" + table.location()));
    List<String> failures = new ArrayList<>();
    List<Sample> samples = new ArrayList<>();
    ScanBudget budget = new ScanBudget(scanBudget);
    long expectedRows = config.totalRows();
    Workload.ChangeCounts counts = new Workload.ChangeCounts(0, 0, 0, 0);
    long restarts;
    long compactions;
    long dropped;
    long compactionsFailed;
    long coordinatorRetries;
    long expired;
    Sample end = null;
    Compacted compacted = null;
    VerifyReport verify = null;
    List<TableWatcher.FreshnessSample> fresh;
    List<TableWatcher.Commit> commits;
    try (TableWatcher watcher = new TableWatcher(table, config.shards())) {
      JobClient job = env.executeAsync(jobName);
      progress.line(
          "job",
          "submitted %s, %s deletes, maintenance %s",
          jobName,
          position ? "position" : "equality",
          on
              ? "on (interval "
                  + maintenance.interval()
                  + ", snapshots expire after "
                  + maintenance.expireAfter()
                  + ")"
              : "off");
      try {
        boolean loaded =
            ModeRunner.await(
                config.phaseTimeout(),
                job,
                watcher::checkHealthy,
                () ->
                    watcher.totalRecords() >= expectedRows
                        && watcher.firstWithLiveRows(expectedRows) != null,
                () ->
                    progress.line(
                        "snapshot",
                        "rows in data files %,d of %,d",
                        watcher.totalRecords(),
                        expectedRows));
        if (!loaded) {
          failures.add(
              String.format(
                  "snapshot phase did not commit %,d distinct rows within %s",
                  expectedRows, config.phaseTimeout()));
        } else {
          long streamStart = System.currentTimeMillis();
          watcher.trackFreshness(streamStart * 1000);
          AtomicLong lastLine = new AtomicLong();
          CompletableFuture<Workload.ChangeCounts> stream =
              CompletableFuture.supplyAsync(
                  () ->
                      workload.changeStream(
                          config.changeRate(),
                          longRun.toMillis(),
                          config.mix(),
                          config.skew(),
                          CHANGE_THREADS,
                          () -> {
                            long now = System.currentTimeMillis();
                            if (now - lastLine.get() >= 10_000) {
                              lastLine.set(now);
                              progress.line(
                                  "changes",
                                  "%,d s of %,d s, lag %s, commits %d",
                                  (now - streamStart) / 1000,
                                  longRun.toSeconds(),
                                  ModeRunner.lagText(watcher.visibleLagMillis()),
                                  watcher.commitCount());
                            }
                          }));
          samples.add(sample(run, "changes", 0, table, loader, tableDir, budget));
          long next = streamStart + sampleInterval.toMillis();
          while (true) {
            try {
              // paces the samples; returns as soon as the stream ends
              counts =
                  stream.get(Math.max(0, next - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
              break;
            } catch (TimeoutException e) {
              watcher.checkHealthy();
              samples.add(
                  sample(
                      run,
                      "changes",
                      (System.currentTimeMillis() - streamStart) / 1000.0,
                      table,
                      loader,
                      tableDir,
                      budget));
              next = Math.max(next + sampleInterval.toMillis(), System.currentTimeMillis());
            }
          }
          long[] marks = workload.markAndReadNewest();
          boolean caughtUp =
              ModeRunner.await(
                  config.phaseTimeout(),
                  job,
                  watcher::checkHealthy,
                  () -> watcher.caughtUp(marks),
                  () ->
                      progress.line(
                          "catch-up", "lag %s", ModeRunner.lagText(watcher.visibleLagMillis())));
          if (!caughtUp) {
            failures.add(
                "the table did not catch up with the change stream within "
                    + config.phaseTimeout());
          }
          progress.line(
              "changes", "applied %,d changes (%,.0f/s)", counts.total(), counts.ratePerSecond());
          if (job.getJobStatus().get(30, TimeUnit.SECONDS).isGloballyTerminalState()) {
            failures.add("the Flink job ended early");
          }
          // the end state, job stopped: the same table for both runs' last measurement and the copy
          ModeRunner.cancelQuietly(job);
          ModeRunner.awaitEnd(job);
          end =
              sample(
                  run,
                  "end",
                  (System.currentTimeMillis() - streamStart) / 1000.0,
                  table,
                  loader,
                  tableDir,
                  budget);
          samples.add(end);
          if (budget.exceeded() == null) {
            verify = runner.verify(table);
            if (!verify.matches()) {
              failures.add("the table differs from the union of the shards");
            }
            compacted = compactedCopy(catalog, loader, table, on);
          } else {
            // verify and the compacted copy read the whole table like a scan: not done past the
            // budget
            progress.line(
                "end", "table == shards not checked and no compacted copy: %s", budget.exceeded());
            if (on) {
              failures.add("with maintenance on the table " + budget.exceeded());
            }
          }
        }
      } finally {
        ModeRunner.cancelQuietly(job);
      }
      restarts = RestartCounter.restarts(jobName);
      compactions = RestartCounter.maintenanceCounter(jobName, "compactions");
      dropped = RestartCounter.maintenanceCounter(jobName, "compactionsDropped");
      compactionsFailed = RestartCounter.maintenanceCounter(jobName, "compactionsFailed");
      coordinatorRetries = RestartCounter.commitRetries(jobName);
      expired = RestartCounter.maintenanceCounter(jobName, "expiredSnapshots");
      fresh = watcher.freshness();
      commits = watcher.commits();
    } finally {
      if (catalog instanceof AutoCloseable c) {
        c.close();
      }
    }
    List<CommitReports.Sample> reports =
        CommitReports.drain().stream()
            .filter(r -> r.table() != null && r.table().endsWith(ModeRunner.TABLE.toString()))
            .toList();
    // Iceberg's CommitReport retries (maintenance commits) + the coordinator's own, which no
    // CommitReport covers
    long retries =
        reports.stream().mapToLong(r -> Math.max(0, r.attempts() - 1)).sum() + coordinatorRetries;
    long maintenanceCommits = commits.stream().filter(c -> "replace".equals(c.operation())).count();
    // compactions as the table records them (the snapshot summary's shardberg.maintenance), not
    // only the job's metric
    compactions =
        Math.max(
            compactions,
            commits.stream().filter(c -> "compaction".equals(c.maintenance())).count());
    long merges = commits.stream().filter(c -> "merge".equals(c.maintenance())).count();
    // an owner's compaction travels in its checkpoint's commit: the only data files that commit
    // removes
    long ownerCompactions =
        position
            ? commits.stream()
                .filter(c -> !"replace".equals(c.operation()) && c.deletedDataFiles() > 0)
                .count()
            : 0;
    if (position) {
      samples.stream()
          .filter(s -> s.equalityDeleteFiles() > 0)
          .findFirst()
          .ifPresent(
              s ->
                  failures.add(
                      String.format(
                          Locale.ROOT,
                          "%d equality-delete file(s) in the table at t=%.0f s (position mode"
                              + " writes none)",
                          s.equalityDeleteFiles(),
                          s.elapsedSeconds())));
    }
    progress.line(
        "metrics", "maintenance counters seen: %s", RestartCounter.maintenanceCounterIds());
    long ingestCommits = commits.stream().filter(c -> !"replace".equals(c.operation())).count();
    if (retries > 0) {
      failures.add(retries + " commit attempts retried on a stale base (CommitFailedException)");
    }
    if (compactionsFailed > 0) {
      failures.add(compactionsFailed + " compactions failed");
    }
    if (restarts > 0) {
      failures.add("the job restarted " + restarts + " times");
    }
    RunResult result =
        new RunResult(
            run,
            on,
            position ? "position" : "equality",
            failures.isEmpty() ? ModeResult.PASSED : ModeResult.FAILED,
            String.join("; ", failures),
            counts.total(),
            counts.ratePerSecond(),
            ModeRunner.freshness(fresh),
            ingestCommits,
            maintenanceCommits,
            retries,
            compactions,
            merges,
            ownerCompactions,
            dropped,
            compactionsFailed,
            expired,
            restarts,
            verify != null && verify.matches(),
            verify == null ? -1 : verify.mysqlRows(),
            verify == null ? -1 : verify.icebergRows(),
            samples,
            end,
            compacted,
            budget.exceeded());
    progress.line(
        "result",
        "%s%s; freshness p99 %,d ms; stale-base retries %d; compactions %d, merges %d (dropped %d)",
        result.status(),
        result.reason().isEmpty() ? "" : ": " + result.reason(),
        result.freshness().p99Millis(),
        retries,
        compactions,
        merges,
        dropped);
    return result;
  }

  /** Measures the table's current snapshot: files, bytes, and a full scan with both readers. */
  private Sample sample(
      String run,
      String phase,
      double elapsed,
      Table table,
      CatalogLoader loader,
      Path tableDir,
      ScanBudget budget) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    long dataFiles = 0;
    long liveBytes = 0;
    Set<String> eq = new HashSet<>();
    Set<String> pos = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(current.snapshotId()).planFiles()) {
      for (FileScanTask task : tasks) {
        dataFiles++;
        liveBytes += task.file().fileSizeInBytes();
        for (DeleteFile d : task.deletes()) {
          boolean added =
              d.content() == FileContent.EQUALITY_DELETES
                  ? eq.add(d.location())
                  : pos.add(d.location());
          if (added) {
            liveBytes += d.fileSizeInBytes();
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot plan the files of " + table.name(), e);
    }
    long[] generic = {NOT_READ, NOT_READ};
    long flink = NOT_READ;
    if (budget.exceeded() == null && "end".equals(phase)) {
      // the job is stopped: the end snapshot stays
      generic = genericScan(table, current.snapshotId());
      flink = flinkScan(TableLoader.fromCatalog(loader, ModeRunner.TABLE), current.snapshotId());
      budget.record(elapsed, generic[1], flink);
      if (budget.exceeded() == null) {
        // the end scans are the ratio's numerator: the median of three, as for the compacted copy
        long snapshotId = current.snapshotId();
        TableLoader tableLoader = TableLoader.fromCatalog(loader, ModeRunner.TABLE);
        generic =
            new long[] {
              generic[0], medianOfThree(generic[1], () -> genericScan(table, snapshotId)[1])
            };
        flink = medianOfThree(flink, () -> flinkScan(tableLoader, snapshotId));
      }
    } else if (budget.exceeded() == null) {
      TableLoader tableLoader = TableLoader.fromCatalog(loader, ModeRunner.TABLE);
      generic =
          whileRunning(
              table, id -> genericScan(table, id), new long[] {NOT_READ, NOT_READ}, "generic");
      flink = whileRunning(table, id -> flinkScan(tableLoader, id), NOT_READ, "Flink");
      budget.record(elapsed, generic[1], flink);
    }
    long snapshots = 0;
    for (Snapshot ignored : table.snapshots()) {
      snapshots++;
    }
    Sample s =
        new Sample(
            run,
            Math.round(elapsed * 10) / 10.0,
            phase,
            snapshots,
            generic[0],
            dataFiles,
            eq.size(),
            pos.size(),
            liveBytes,
            diskBytes(tableDir),
            generic[1],
            flink);
    progress.line(
        "sample",
        "t=%.0f s: %,d data files, %,d equality + %,d position delete files, %s live / %s on disk; %s",
        s.elapsedSeconds(),
        dataFiles,
        eq.size(),
        pos.size(),
        ModeRunner.mb(liveBytes),
        ModeRunner.mb(s.diskBytes()),
        s.genericScanMillis() == NOT_READ
            ? "scans skipped (" + budget.exceeded() + ")"
            : String.format(
                Locale.ROOT,
                "scan generic %,d ms, Flink %,d ms (%,d rows)",
                s.genericScanMillis(),
                s.flinkScanMillis(),
                s.liveRows()));
    return s;
  }

  /**
   * A scan while the job runs, of the newest snapshot: the job's snapshot expiry may delete a file
   * of it while a long scan reads it (a scan longer than {@code expire-snapshots.max-age}: at 1,280
   * partitions one took 82 s and the next one 80 s of the same snapshot, and a Flink scan failed on
   * a file gone). Such a scan is run once more on the newest snapshot, then shown as not read (and
   * said so) rather than ending the bench.
   */
  private <T> T whileRunning(
      Table table, java.util.function.LongFunction<T> scan, T notRead, String reader) {
    for (int attempt = 1; ; attempt++) {
      table.refresh();
      long snapshotId = table.currentSnapshot().snapshotId();
      try {
        return scan.apply(snapshotId);
      } catch (RuntimeException e) {
        if (!fileGone(e)) {
          throw e;
        }
        if (attempt == 2) {
          progress.line(
              "sample",
              "%s scan not read: a file of snapshot %d was deleted while it read it, twice (%s)",
              reader,
              snapshotId,
              e.getMessage());
          return notRead;
        }
      }
    }
  }

  static boolean fileGone(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.io.FileNotFoundException
          || t instanceof java.nio.file.NoSuchFileException
          || t instanceof org.apache.iceberg.exceptions.NotFoundException) {
        return true;
      }
    }
    return false;
  }

  /** Full scan with Iceberg's generic reader, every column, deletes applied: {rows, ms}. */
  static long[] genericScan(Table table, long snapshotId) {
    long start = System.nanoTime();
    long rows = 0;
    long sink = 0;
    try (CloseableIterable<Record> all =
        IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      for (Record r : all) {
        rows++;
        sink += r.size();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot scan " + table.name(), e);
    }
    if (sink == 42) {
      System.out.print(""); // keep the JIT from dropping the loop
    }
    return new long[] {rows, (System.nanoTime() - start) / 1_000_000};
  }

  /**
   * Full scan with Flink's batch source: a {@link FlinkSource} job (parallelism 1, like the generic
   * reader's one thread) on its own local cluster; the job's net runtime, not the cluster's
   * start-up.
   */
  static long flinkScan(TableLoader loader, long snapshotId) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
    org.apache.flink.configuration.Configuration conf =
        new org.apache.flink.configuration.Configuration();
    conf.setString("table.exec.iceberg.infer-source-parallelism", "false");
    // FlinkSource (the InputFormat-based bounded source): IcebergSource (FLIP-27) needs
    // flink-connector-files, which the harness does not carry
    FlinkSource.forRowData()
        .env(env)
        .tableLoader(loader)
        .snapshotId(snapshotId)
        .streaming(false)
        .flinkConf(conf)
        .build()
        .sinkTo(new DiscardingSink<>())
        .setParallelism(1);
    try {
      return env.execute("long-run full scan").getNetRuntime(TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(
          "Cannot scan the table with Flink's batch source: " + e.getMessage(), e);
    }
  }

  /**
   * A freshly compacted copy of {@code table}: same schema, spec and properties, its live rows
   * written as one data file per partition, no delete files; scanned with both readers (each once
   * to warm up, then timed).
   */
  private Compacted compactedCopy(Catalog catalog, CatalogLoader loader, Table table, boolean on) {
    TableIdentifier id = TableIdentifier.of(ModeRunner.TABLE.namespace(), "orders_compacted");
    if (catalog.tableExists(id)) {
      catalog.dropTable(id, true);
    }
    Table copy = catalog.createTable(id, table.schema(), table.spec(), table.properties());
    Map<PartitionKey, List<Record>> byPartition = new HashMap<>();
    InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
    long rows = 0;
    try (CloseableIterable<Record> all = IcebergGenerics.read(table).build()) {
      for (Record r : all) {
        PartitionKey key = new PartitionKey(copy.spec(), copy.schema());
        key.partition(wrapper.wrap(r));
        byPartition.computeIfAbsent(key, k -> new ArrayList<>()).add(r.copy());
        rows++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + table.name(), e);
    }
    GenericAppenderFactory factory = new GenericAppenderFactory(copy.schema(), copy.spec());
    AppendFiles append = copy.newAppend();
    long bytes = 0;
    for (Map.Entry<PartitionKey, List<Record>> e : byPartition.entrySet()) {
      String location =
          copy.locationProvider()
              .newDataLocation(copy.spec(), e.getKey(), UUID.randomUUID() + ".parquet");
      DataWriter<Record> writer =
          factory.newDataWriter(
              EncryptedFiles.plainAsEncryptedOutput(copy.io().newOutputFile(location)),
              FileFormat.PARQUET,
              e.getKey());
      try (writer) {
        e.getValue().forEach(writer::write);
      } catch (IOException ex) {
        throw new UncheckedIOException("Cannot write " + location, ex);
      }
      DataFile file = writer.toDataFile();
      bytes += file.fileSizeInBytes();
      append.appendFile(file);
    }
    append.commit();
    long snapshot = copy.currentSnapshot().snapshotId();
    TableLoader copyLoader = TableLoader.fromCatalog(loader, id);
    // warmed up once, then the median of three (a single scan on a shared machine is noisy)
    genericScan(copy, snapshot);
    long generic =
        medianOfThree(genericScan(copy, snapshot)[1], () -> genericScan(copy, snapshot)[1]);
    flinkScan(copyLoader, snapshot);
    long flink =
        medianOfThree(flinkScan(copyLoader, snapshot), () -> flinkScan(copyLoader, snapshot));
    progress.line(
        "compacted",
        "a compacted copy (%,d rows, %d files, %s): scan generic %,d ms, Flink %,d ms",
        rows,
        byPartition.size(),
        ModeRunner.mb(bytes),
        generic,
        flink);
    return new Compacted(rows, byPartition.size(), bytes, generic, flink);
  }

  /**
   * The bytes of the files under {@code dir}, walked while the job writes and removes files there:
   * a file or directory that is gone by the time the walk reaches it (a temporary manifest, a
   * checksum, an expired file) counts nothing. (A stream walk failed the whole run on one.)
   */
  static long diskBytes(Path dir) {
    if (!Files.exists(dir)) {
      return 0;
    }
    long[] bytes = {0};
    try {
      Files.walkFileTree(
          dir,
          new java.nio.file.SimpleFileVisitor<>() {
            @Override
            public java.nio.file.FileVisitResult visitFile(
                Path file, java.nio.file.attribute.BasicFileAttributes attributes) {
              if (attributes.isRegularFile()) {
                bytes[0] += attributes.size();
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e)
                throws IOException {
              if (e instanceof java.nio.file.NoSuchFileException) {
                return java.nio.file.FileVisitResult.CONTINUE; // removed meanwhile
              }
              throw e;
            }

            @Override
            public java.nio.file.FileVisitResult postVisitDirectory(Path d, IOException e)
                throws IOException {
              if (e != null && !(e instanceof java.nio.file.NoSuchFileException)) {
                throw e;
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot measure " + dir, e);
    }
    return bytes[0];
  }

  private static void deleteTree(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private Map<String, Object> settings() {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("longRunSeconds", longRun.toSeconds());
    s.put("sampleIntervalSeconds", sampleInterval.toSeconds());
    s.put("maintenanceIntervalMillis", maintenance.interval().toMillis());
    s.put("maintenanceExpireSnapshotsMaxAgeMillis", maintenance.expireAfter().toMillis());
    if (maintenance.minSmallFiles() != null) {
      s.put("compactionMinSmallFiles", maintenance.minSmallFiles());
    }
    if (maintenance.maxPartitions() != null) {
      s.put("compactionMaxPartitionsPerCycle", maintenance.maxPartitions());
    }
    s.put("shards", config.shards());
    s.put("rowsPerShard", config.rowsPerShard());
    s.put("hosts", config.hosts());
    s.put("changeRatePerSecond", config.changeRate());
    s.put("mixUpdateInsertDelete", config.mix().toString());
    s.put("checkpointIntervalMillis", config.checkpointInterval().toMillis());
    s.put("sourceParallelism", config.sourceParallelism());
    s.put("buckets", config.buckets());
    return s;
  }

  /** The targets, side by side. */
  static Map<String, Object> comparison(List<RunResult> runs) {
    Map<String, Object> c = new LinkedHashMap<>();
    RunResult off = run(runs, Variant.OFF);
    RunResult on = run(runs, Variant.ON);
    RunResult position = run(runs, Variant.POSITION);
    for (RunResult r : runs) {
      if (r.end() == null) {
        continue;
      }
      Sample first = r.samples().get(0);
      c.put(
          r.run() + ": data files start -> end", first.dataFiles() + " -> " + r.end().dataFiles());
      c.put(
          r.run() + ": delete files start -> end",
          (first.equalityDeleteFiles() + first.positionDeleteFiles())
              + " -> "
              + (r.end().equalityDeleteFiles() + r.end().positionDeleteFiles()));
      c.put(
          r.run() + ": generic scan ms start -> end",
          first.genericScanMillis() + " -> " + scanText(r, Sample::genericScanMillis));
      c.put(
          r.run() + ": Flink scan ms start -> end",
          first.flinkScanMillis() + " -> " + scanText(r, Sample::flinkScanMillis));
      if (r.compacted() != null) {
        c.put(
            r.run() + ": end generic scan / compacted copy",
            round(
                r.end().genericScanMillis()
                    / (double) Math.max(1, r.compacted().genericScanMillis())));
        c.put(
            r.run() + ": end Flink scan / compacted copy",
            round(
                r.end().flinkScanMillis() / (double) Math.max(1, r.compacted().flinkScanMillis())));
      }
      if (r.compacted() != null && lastRead(r) != null) {
        c.put(
            r.run() + ": slowest sample generic / Flink scan / compacted copy",
            round(
                    worst(r, Sample::genericScanMillis)
                        / (double) Math.max(1, r.compacted().genericScanMillis()))
                + " / "
                + round(
                    worst(r, Sample::flinkScanMillis)
                        / (double) Math.max(1, r.compacted().flinkScanMillis())));
      }
      c.put(r.run() + ": freshness p99 ms", r.freshness().p99Millis());
      c.put(r.run() + ": stale-base commit retries (must be 0)", r.commitFailedRetries());
    }
    if (on != null && on.end() != null && on.compacted() != null) {
      double ratio =
          on.end().genericScanMillis() / (double) Math.max(1, on.compacted().genericScanMillis());
      c.put(
          "target: with maintenance, end scan within "
              + SCAN_TARGET
              + "x of a compacted table (generic reader)",
          ratio <= SCAN_TARGET ? "met (" + round(ratio) + "x)" : "NOT met (" + round(ratio) + "x)");
    }
    if (position != null && position.compacted() != null && lastRead(position) != null) {
      double generic =
          worst(position, Sample::genericScanMillis)
              / (double) Math.max(1, position.compacted().genericScanMillis());
      double flink =
          worst(position, Sample::flinkScanMillis)
              / (double) Math.max(1, position.compacted().flinkScanMillis());
      c.put(
          "target: with position deletes, every scan within "
              + POSITION_SCAN_TARGET
              + "x of a compacted table (generic / Flink, slowest sample)",
          (generic <= POSITION_SCAN_TARGET && flink <= POSITION_SCAN_TARGET ? "met (" : "NOT met (")
              + round(generic)
              + "x / "
              + round(flink)
              + "x)");
    }
    if (on != null && position != null && on.end() != null && position.end() != null) {
      c.put(
          "live files at the end, maintenance on / position",
          liveFiles(on.end()) + " / " + liveFiles(position.end()));
      c.put(
          "freshness p99 position - maintenance on (ms)",
          position.freshness().p99Millis() - on.freshness().p99Millis());
    }
    if (off != null && on != null && off.end() != null && on.end() != null) {
      long offFiles =
          off.end().dataFiles() + off.end().equalityDeleteFiles() + off.end().positionDeleteFiles();
      long onFiles =
          on.end().dataFiles() + on.end().equalityDeleteFiles() + on.end().positionDeleteFiles();
      c.put("live files at the end, off / on", offFiles + " / " + onFiles);
      c.put(
          "freshness p99 on - off (ms; target <= 2000)",
          on.freshness().p99Millis() - off.freshness().p99Millis());
    }
    return c;
  }

  private static RunResult run(List<RunResult> runs, Variant variant) {
    return runs.stream().filter(r -> r.run().equals(variant.label)).findFirst().orElse(null);
  }

  private static long liveFiles(Sample s) {
    return s.dataFiles() + s.equalityDeleteFiles() + s.positionDeleteFiles();
  }

  /** The slowest measured scan of a run (its samples while the job ran and its end). */
  private static long worst(RunResult r, java.util.function.ToLongFunction<Sample> scan) {
    return r.samples().stream().mapToLong(scan).max().orElse(NOT_READ);
  }

  /** The median of {@code first} and two more of {@code scan}. */
  private static long medianOfThree(long first, java.util.function.LongSupplier scan) {
    long[] three = {first, scan.getAsLong(), scan.getAsLong()};
    java.util.Arrays.sort(three);
    return three[1];
  }

  /** The end scan time, or the last one measured when the run passed its scan budget. */
  private static String scanText(RunResult r, java.util.function.ToLongFunction<Sample> scan) {
    if (scan.applyAsLong(r.end()) != NOT_READ) {
      return Long.toString(scan.applyAsLong(r.end()));
    }
    Sample last = lastRead(r);
    return last == null
        ? "not read"
        : String.format(
            Locale.ROOT,
            "not read (over the scan budget; last read at t=%.0f s: %d)",
            last.elapsedSeconds(),
            scan.applyAsLong(last));
  }

  /** The run's last sample whose scans were measured. */
  static Sample lastRead(RunResult r) {
    Sample last = null;
    for (Sample s : r.samples()) {
      if (s.genericScanMillis() != NOT_READ) {
        last = s;
      }
    }
    return last;
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  static Map<String, String> methods() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(
        "runs",
        "the consolidated pipeline (the job's own code, from a generated config) on freshly reloaded shards, the same seeded rows and change stream, chosen by --long-run-runs: maintenance off (maintenance.enabled false), maintenance on (true, with a shorter maintenance.interval and expire-snapshots.max-age for the run), position (target.delete-mode position on a new v3 table: the writers delete by position and compact their own partitions; maintenance on as in the on run for expiry and orphans)");
    m.put(
        "generic scan",
        "every row and column of the current snapshot read with Iceberg's generic reader (IcebergGenerics, deletes applied), one thread, in this JVM while the job runs");
    m.put(
        "Flink scan",
        "a batch job with Iceberg's bounded FlinkSource at parallelism 1 on its own local cluster: the job's net runtime (cluster start-up excluded)");
    m.put(
        "files",
        "distinct live data files, equality and position delete files of the current snapshot (its scan plan)");
    m.put(
        "bytes",
        "live: sizes of those files; on disk: every file under the table location (data, deletes, manifests, metadata; what expiry and orphan removal reclaim)");
    m.put(
        "end",
        "measured after the change stream ended, the table caught up and the job was stopped; its scans are the median of three");
    m.put(
        "scan budget",
        "once a full scan of a run took longer than --scan-budget, that run's later scans, its end check (table == shards) and its compacted copy are not done (they read the whole table too); shown as not read, -1 in the CSV and JSON");
    m.put(
        "compacted copy",
        "the end table's live rows written to a new table with the same schema, spec and properties, one Parquet file per partition and no deletes; each reader scans it once to warm up, then three times: the median");
    m.put(
        "stale-base retries",
        "Iceberg's CommitReport attempts - 1 over the commits that report one (maintenance's; Iceberg retries only on CommitFailedException) + the coordinator's commitRetries (its checkpoint commits are transactions, which no CommitReport covers)");
    m.put(
        "compactions",
        "the job's maintenance counters (compactions, compactionsDropped: planned on a snapshot whose inputs changed, dropped and planned again; compactionsFailed)");
    m.put(
        "merges",
        "maintenance snapshots that merged a partition's files newer than its last compaction into one data file and one equality-delete file (after checkpoint commits, between cycles; maintenance.compaction.merge-min-files)");
    m.put(
        "checkpoints",
        "every run keeps its checkpoints in a directory under --output (pipeline.checkpoint-dir): the owners' state of the position run outgrows the JobManager's memory, and every run is measured with the same storage");
    m.put(
        "owner compactions",
        "position run: checkpoint commits that remove data files (an owner's compaction of its partition travels in its checkpoint's commit)");
    m.put(
        "freshness",
        "the watcher's first sight of a snapshot (visible to a reader, polled every 200 ms) - the row's mysql_commit_ts, every row version (shard, id, commit ts) the change phase's snapshots add, timed once where it first appears (a compaction's rewrite of a row is not a fresh change)");
    return m;
  }

  private static void write(Path out, Result result) throws IOException {
    new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(out.resolve(JSON).toFile(), result);
    StringBuilder csv =
        new StringBuilder(
            "run,phase,elapsed_s,snapshots,live_rows,data_files,equality_delete_files,"
                + "position_delete_files,live_bytes,disk_bytes,generic_scan_ms,flink_scan_ms\n");
    for (RunResult r : result.runs()) {
      for (Sample s : r.samples()) {
        csv.append(
            String.format(
                Locale.ROOT,
                "%s,%s,%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d%n",
                s.run(),
                s.phase(),
                s.elapsedSeconds(),
                s.snapshots(),
                s.liveRows(),
                s.dataFiles(),
                s.equalityDeleteFiles(),
                s.positionDeleteFiles(),
                s.liveBytes(),
                s.diskBytes(),
                s.genericScanMillis(),
                s.flinkScanMillis()));
      }
    }
    Files.writeString(out.resolve(CSV), csv);
    LongRunChart.write(result, out.resolve(CHART));
    Files.writeString(out.resolve(MD), markdown(result));
  }

  private static String millis(long ms) {
    return ms == NOT_READ ? "not read" : String.format(Locale.ROOT, "%,d", ms);
  }

  static String markdown(Result result) {
    StringBuilder md =
        new StringBuilder(
            "# Shardberg long-run report: "
                + String.join(" vs ", result.runs().stream().map(RunResult::run).toList())
                + "\n\n");
    md.append("Command: `").append(result.command()).append("`  \n");
    md.append("Started ")
        .append(result.startedAt())
        .append(", took ")
        .append(result.wallMillis() / 1000)
        .append(" s. Machine: ")
        .append(result.machine())
        .append(". Versions: ")
        .append(result.versions())
        .append(".\n\n");
    md.append("Settings: ").append(result.settings()).append("\n\n");
    md.append("![scan time, files, delete files, bytes over time](")
        .append(CHART)
        .append(")  \nSeries: [")
        .append(CSV)
        .append("](")
        .append(CSV)
        .append(")\n\n");
    md.append(
        "| run | status | changes | freshness p50 / p99 ms | ingest commits | maintenance commits | compactions / merges (dropped) | owner compactions | stale-base retries | restarts | table == shards |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (RunResult r : result.runs()) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s%s | %,d (%,.0f/s) | %,d / %,d | %d | %d | %d / %d (%d) | %d | %d | %d | %s |%n",
              r.run(),
              r.status(),
              r.reason().isEmpty() ? "" : ": " + r.reason(),
              r.changesApplied(),
              r.changesPerSecond(),
              r.freshness().p50Millis(),
              r.freshness().p99Millis(),
              r.ingestCommits(),
              r.maintenanceCommits(),
              r.compactions(),
              r.merges(),
              r.compactionsDropped(),
              r.ownerCompactions(),
              r.commitFailedRetries(),
              r.restarts(),
              r.notRead() != null
                  ? "not checked"
                  : String.format(
                      Locale.ROOT, "%s (%,d rows)", r.verified() ? "yes" : "NO", r.icebergRows())));
    }
    md.append(
        "\n| run | t (s) | data files | eq. delete files | pos. delete files | live MiB | on disk MiB | generic scan ms | Flink scan ms |\n");
    md.append("|---|---|---|---|---|---|---|---|---|\n");
    for (RunResult r : result.runs()) {
      for (Sample s : r.samples()) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s%.0f | %,d | %,d | %,d | %.1f | %.1f | %s | %s |%n",
                r.run(),
                s.phase().equals("end") ? "end " : "",
                s.elapsedSeconds(),
                s.dataFiles(),
                s.equalityDeleteFiles(),
                s.positionDeleteFiles(),
                s.liveBytes() / 1048576.0,
                s.diskBytes() / 1048576.0,
                millis(s.genericScanMillis()),
                millis(s.flinkScanMillis())));
      }
      if (r.notRead() != null) {
        md.append(String.format(Locale.ROOT, "| %s: %s | | | | | | | | |%n", r.run(), r.notRead()));
      }
      if (r.compacted() != null) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s: compacted copy | | %,d | 0 | 0 | %.1f | | %,d | %,d |%n",
                r.run(),
                r.compacted().dataFiles(),
                r.compacted().bytes() / 1048576.0,
                r.compacted().genericScanMillis(),
                r.compacted().flinkScanMillis()));
      }
    }
    md.append("\n## Comparison\n\n| | |\n|---|---|\n");
    result
        .comparison()
        .forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
    md.append("\n## How each figure is measured\n\n");
    result
        .methods()
        .forEach((k, v) -> md.append("- **").append(k).append("**: ").append(v).append('\n'));
    return md.toString();
  }
}
