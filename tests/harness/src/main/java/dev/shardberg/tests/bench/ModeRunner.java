package dev.shardberg.tests.bench;

import dev.shardberg.coordinator.ForklessLocalFileSystem;
import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.TableVerifier;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.router.Secret;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableCreator;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.tagging.ShardTaggingDeserializer;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.TestingServer;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSource;
import org.apache.flink.cdc.connectors.mysql.table.StartupOptions;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.io.CloseableIterable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one mode against freshly reloaded shards: builds and submits the Flink job to a local
 * MiniCluster, follows the table through the snapshot phase, runs the change stream, waits until
 * the table has caught up, verifies it against the shards and gathers every figure into a {@link
 * ModeResult}.
 */
final class ModeRunner {
  private static final Logger LOG = LoggerFactory.getLogger(ModeRunner.class);
  static final String CATALOG = "bench";
  static final TableIdentifier TABLE = TableIdentifier.of("shop", "orders");
  static final long SMALL_FILE_BYTES = 8L * 1024 * 1024;
  private static final long PROGRESS_EVERY_MS = 2_000;
  private static final int CHANGE_THREADS = 4;
  static final long BASELINE_POLL_INTERVAL_MS = 50;

  private final Workload workload;
  private final BenchWarehouse warehouses;
  private final Progress progress;

  ModeRunner(Workload workload, BenchWarehouse warehouses, Progress progress) {
    this.workload = workload;
    this.warehouses = warehouses;
    this.progress = progress;
  }

  /** A catalog loader over {@code warehouse} whose commits report to {@link CommitReports}. */
  static CatalogLoader catalogLoader(String warehouse) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    props.put(CatalogProperties.METRICS_REPORTER_IMPL, CommitReports.class.getName());
    // The same local file system the job's catalogs use (Catalogs.loader), so both modes pay the
    // same
    // per-file cost on the local warehouse; it applies to file: only, an hdfs:// warehouse goes
    // through
    // Hadoop's HDFS client.
    return CatalogLoader.hadoop(
        CATALOG,
        ForklessLocalFileSystem.install(new org.apache.hadoop.conf.Configuration()),
        props);
  }

  /**
   * Commits, delete files and equality-delete rows added by {@code snapshotId} and its ancestors:
   * what the snapshot phase left in the table when it had every loaded row.
   */
  private static long[] addedUntil(org.apache.iceberg.Table table, long snapshotId) {
    table.refresh();
    long commits = 0;
    long deleteFiles = 0;
    long equalityDeletes = 0;
    for (org.apache.iceberg.Snapshot s :
        org.apache.iceberg.util.SnapshotUtil.ancestorsOf(snapshotId, table::snapshot)) {
      commits++;
      deleteFiles += Long.parseLong(s.summary().getOrDefault("added-delete-files", "0"));
      equalityDeletes += Long.parseLong(s.summary().getOrDefault("added-equality-deletes", "0"));
    }
    return new long[] {commits, deleteFiles, equalityDeletes};
  }

  ModeResult run(BenchConfig.Mode mode, BenchConfig config, String warehouse) throws Exception {
    if (mode == BenchConfig.Mode.SOURCE_ONLY) {
      return runSourceOnly(config, warehouse);
    }
    progress.mode(mode.label() + " N=" + config.shards());
    workload.reset(config.shards(), config.rowsPerShard(), progress);
    CommitReports.drain();

    // the harness reads (watcher, verification) through its own catalog; on s3 it skips the
    // injected latency, which the job's catalog (jobCatalog, the config file's) pays
    CatalogLoader catalogLoader = warehouses.observerCatalog(warehouse);
    Catalog catalog = catalogLoader.loadCatalog();
    String runId =
        mode.label().replace('+', '-') + "-n" + config.shards() + "-" + System.nanoTime();
    String jobName;
    int sourceParallelismTotal;
    StreamExecutionEnvironment env;
    TestingServer zooKeeper = null;
    Maintenance maintenance = null;
    Table table;
    TableLoader tableLoader;
    if (mode == BenchConfig.Mode.PER_SHARD) {
      ShardPlan plan = ShardDiscovery.discover(spec());
      TableLayout layout =
          TableLayout.derive(plan.schema(), config.buckets(), null, java.util.Map.of());
      table = TableCreator.createOrValidate(catalog, TABLE, layout);
      tableLoader = TableLoader.fromCatalog(catalogLoader, TABLE);
      env = environment(1, config.checkpointMinPause());
      env.enableCheckpointing(
          config.checkpointInterval().toMillis(), CheckpointingMode.EXACTLY_ONCE);
      perShardJob(
          env, plan, layout, TableLoader.fromCatalog(warehouses.jobCatalog(warehouse), TABLE));
      sourceParallelismTotal = plan.shardCount();
      jobName = "bench-" + runId;
    } else {
      // this project's own pipeline, assembled by the job module from a config file, as `run` does
      if (mode == BenchConfig.Mode.CONSOLIDATED_ZK) {
        zooKeeper = new TestingServer(true);
        progress.line(
            "zk", "ZooKeeper (Curator TestingServer) on %s", zooKeeper.getConnectString());
      }
      ShardbergConfig jobConfig =
          ShardbergConfig.load(
              writeJobConfig(
                  config,
                  warehouse,
                  runId,
                  zooKeeper == null ? null : zooKeeper.getConnectString()));
      env = environment(config.sourceParallelism(), config.checkpointMinPause());
      ShardbergPipeline.Assembled assembled = ShardbergPipeline.build(env, jobConfig);
      jobName = assembled.jobName();
      table = catalog.loadTable(TABLE);
      tableLoader = TableLoader.fromCatalog(catalogLoader, TABLE);
      sourceParallelismTotal = assembled.plan().hostNames().size() * config.sourceParallelism();
      if (zooKeeper != null) {
        maintenance =
            new Maintenance(
                ZooKeeperOptions.of(zooKeeper.getConnectString()),
                jobConfig.target().qualifiedName(),
                catalog,
                progress);
      }
    }
    int sourceCount =
        mode == BenchConfig.Mode.PER_SHARD ? config.shards() : workload.servers().size();

    HeapSampler heap = new HeapSampler();
    CheckpointLog flushLog = mode == BenchConfig.Mode.PER_SHARD ? null : CheckpointLog.start();
    long expectedRows = config.totalRows();
    List<String> failures = new ArrayList<>();
    ModeResult.Snapshot snapshot = null;
    ModeResult.Changes changes = null;
    long streamStartMillis = 0;
    long restarts;
    dev.shardberg.tests.demo.SchemaRollout rolloutRun = null;
    try (TableWatcher watcher = new TableWatcher(table, config.shards())) {
      long submitted = System.currentTimeMillis();
      JobClient job = env.executeAsync(jobName);
      progress.line(
          "job",
          "submitted %s (%d source(s), total source parallelism %d)",
          jobName,
          sourceCount,
          sourceParallelismTotal);
      if (maintenance != null) {
        maintenance.start();
      }
      try {
        // snapshot phase
        // done when a snapshot holds every loaded row as a distinct live row (deletes applied)
        AtomicLong writersReached = new AtomicLong(-1);
        String watchedJob = jobName;
        boolean loaded =
            await(
                config.phaseTimeout(),
                job,
                watcher::checkHealthy,
                () -> {
                  // when the writers had every loaded row: what source-only measures, before
                  // the checkpoint and the commit that make them visible
                  if (writersReached.get() < 0
                      && RestartCounter.writerRecordsIn(watchedJob) >= expectedRows) {
                    writersReached.set(System.currentTimeMillis());
                  }
                  return watcher.totalRecords() >= expectedRows
                      && watcher.firstWithLiveRows(expectedRows) != null;
                },
                () ->
                    progress.line(
                        "snapshot",
                        "rows in data files %,d of %,d, commits %d, heap %s",
                        watcher.totalRecords(),
                        expectedRows,
                        watcher.commitCount(),
                        mb(heap.current())));
        if (!loaded) {
          failures.add(
              String.format(
                  "snapshot phase did not commit %,d distinct rows within %s (rows in data files %,d)",
                  expectedRows, config.phaseTimeout(), watcher.totalRecords()));
        } else {
          // times are when the watcher first saw a snapshot: when a reader could see its rows
          TableWatcher.Commit complete = watcher.firstWithLiveRows(expectedRows);
          long reached = complete.firstSeenMillis();
          long ms = Math.max(1, reached - submitted);
          double rate = expectedRows * 1000.0 / ms;
          TableWatcher.Commit first =
              watcher.commits().stream()
                  .filter(c -> c.addedRecords() > 0)
                  .findFirst()
                  .orElseThrow();
          double steady =
              first.firstSeenMillis() >= reached
                  ? rate
                  : (expectedRows - watcher.liveRows(first.snapshotId()))
                      * 1000.0
                      / (reached - first.firstSeenMillis());
          long[] added = addedUntil(table, complete.snapshotId());
          snapshot =
              new ModeResult.Snapshot(
                  expectedRows,
                  ms,
                  rate,
                  rate / sourceParallelismTotal,
                  steady,
                  added[0],
                  added[1],
                  added[2],
                  // read every 250 ms, so up to that late: never later than the commit that
                  // showed the rows (the writers had them before it)
                  writersReached.get() < 0
                      ? -1
                      : Math.max(1, Math.min(writersReached.get(), reached) - submitted));
          progress.line(
              "snapshot",
              "done: %,d rows in %,d ms since submission = %,.0f rows/s (%,.0f per source parallelism);"
                  + " %,.0f rows/s after the first commit; %,d commits, %,d delete files, %,d equality deletes",
              expectedRows,
              ms,
              rate,
              rate / sourceParallelismTotal,
              steady,
              added[0],
              added[1],
              added[2]);
          if (snapshot.writersMillis() > 0) {
            progress.line(
                "snapshot",
                "the writers had every row %,d ms after submission = %,.0f rows/s; the checkpoint"
                    + " and commit that made the last ones visible took %,d ms more",
                snapshot.writersMillis(),
                snapshot.writersRowsPerSecond(),
                ms - snapshot.writersMillis());
          }

          // change phase
          streamStartMillis = System.currentTimeMillis();
          long streamStart = streamStartMillis;
          watcher.trackFreshness(streamStart * 1000);
          AtomicLong lastLine = new AtomicLong();
          dev.shardberg.tests.demo.SchemaRollout rollout = null;
          if (mode == BenchConfig.Mode.CONSOLIDATED_DDL) {
            rollout =
                new dev.shardberg.tests.demo.SchemaRollout(
                    workload.rolloutTargets(),
                    config.duration(),
                    line -> progress.line("ddl", "%s", line));
            rollout.start();
          }
          Workload.ChangeCounts counts =
              workload.changeStream(
                  config.changeRate(),
                  config.duration().toMillis(),
                  config.mix(),
                  config.skew(),
                  CHANGE_THREADS,
                  () -> {
                    long now = System.currentTimeMillis();
                    if (now - lastLine.get() >= PROGRESS_EVERY_MS) {
                      lastLine.set(now);
                      watcher.checkHealthy();
                      progress.line(
                          "changes",
                          "%,d s of %,d s, lag %s, commits %d, heap %s",
                          (now - streamStart) / 1000,
                          config.duration().toSeconds(),
                          lagText(watcher.visibleLagMillis()),
                          watcher.commitCount(),
                          mb(heap.current()));
                    }
                  });
          long streamEnd = System.currentTimeMillis();
          if (rollout != null) {
            rollout.stop();
            rolloutRun = rollout;
          }
          long[] marks = workload.markAndReadNewest();
          boolean caughtUp =
              await(
                  config.phaseTimeout(),
                  job,
                  watcher::checkHealthy,
                  () -> watcher.caughtUp(marks),
                  () ->
                      progress.line(
                          "catch-up",
                          "waiting for the table to show every shard's last change; lag %s, commits %d",
                          lagText(watcher.visibleLagMillis()),
                          watcher.commitCount()));
          long catchUp = System.currentTimeMillis() - streamEnd;
          if (!caughtUp) {
            failures.add(
                String.format(
                    "the table did not catch up with the change stream within %s",
                    config.phaseTimeout()));
          }
          long total = counts.total();
          changes =
              new ModeResult.Changes(
                  counts.inserts(),
                  counts.updates(),
                  counts.deletes(),
                  counts.elapsedMs(),
                  counts.ratePerSecond(),
                  catchUp,
                  total * 1000.0 / Math.max(1, counts.elapsedMs() + catchUp));
          progress.line(
              "changes",
              "applied %,d changes (%,.0f/s) in MySQL; table caught up %,d ms after the stream ended",
              total,
              counts.ratePerSecond(),
              catchUp);
        }
        JobStatus status = job.getJobStatus().get(30, TimeUnit.SECONDS);
        if (status.isGloballyTerminalState()) {
          failures.add("the Flink job ended early with status " + status);
        }
      } finally {
        if (maintenance != null) {
          maintenance.close();
        }
        restarts = RestartCounter.restarts(jobName);
        cancelQuietly(job);
      }
      heap.close();

      ModeResult.Verification verification = null;
      if (failures.isEmpty()) {
        progress.line(
            "verify",
            "comparing the table with the union of %d shards (counts + checksums)",
            config.shards());
        VerifyReport v = verify(table);
        List<String> mismatches = new ArrayList<>();
        for (VerifyReport.ShardResult c : v.shards()) {
          if (!c.matches()) {
            mismatches.add(
                String.format(
                    "shard %d (%s): MySQL %d rows / checksum %d, Iceberg %d rows / checksum %d; first differences %s",
                    c.shard(),
                    c.label(),
                    c.mysqlRows(),
                    c.mysqlChecksum(),
                    c.icebergRows(),
                    c.icebergChecksum(),
                    c.differences()));
          }
        }
        v.unexpectedShards()
            .forEach(
                (s, rows) ->
                    mismatches.add(
                        "shard "
                            + s
                            + " has "
                            + rows
                            + " rows in the table but is not among the shards"));
        verification =
            new ModeResult.Verification(v.matches(), v.mysqlRows(), v.icebergRows(), mismatches);
        progress.line(
            "verify",
            "%s: MySQL %,d rows, Iceberg %,d rows%s",
            v.matches() ? "PASSED" : "FAILED",
            v.mysqlRows(),
            v.icebergRows(),
            mismatches.isEmpty() ? "" : "; " + mismatches);
        if (!v.matches()) {
          failures.add("the table differs from the union of the shards: " + mismatches);
        }
      }

      List<TableWatcher.Commit> commits = watcher.commits();
      List<CommitReports.Sample> reports = CommitReports.drain();
      List<TableWatcher.FreshnessSample> fresh = watcher.freshness();
      ModeResult result =
          new ModeResult(
              mode.label(),
              failures.isEmpty() ? ModeResult.PASSED : ModeResult.FAILED,
              String.join("; ", failures),
              config.shards(),
              workload.servers().size(),
              expectedRows,
              sourceParallelismTotal,
              snapshot,
              changes,
              freshness(fresh),
              mode == BenchConfig.Mode.PER_SHARD
                  ? commitFigures(commits, reports)
                  : coordinatorCommitFigures(
                      commits,
                      reports,
                      RestartCounter.commitDurations(jobName),
                      RestartCounter.commitRetries(jobName)),
              fileFigures(table, commits),
              restarts,
              heap.peak(),
              verification,
              timeline(fresh, streamStartMillis),
              maintenance == null ? null : maintenance.figures(reports),
              null,
              flushLog == null || streamStartMillis == 0
                  ? null
                  : flushLog.figures(streamStartMillis),
              rolloutRun == null
                  ? null
                  : rolloutFigures(rolloutRun, config.shards(), fresh, commits, table));
      progress.line(
          "result",
          "%s%s",
          result.status(),
          result.reason().isEmpty() ? "" : ": " + result.reason());
      return result;
    } finally {
      heap.close();
      if (flushLog != null) {
        flushLog.close();
      }
      if (maintenance != null) {
        maintenance.close();
      }
      if (zooKeeper != null) {
        zooKeeper.close();
      }
      tableLoader.close();
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }

  /**
   * {@code source-only}: the sources of {@code consolidated}, built by the job's own code ({@link
   * ShardbergPipeline#configureCheckpointsAndRestarts} and {@link ShardbergPipeline#buildSources})
   * from the same generated config (same source options, parallelism and checkpoint interval),
   * feeding a map that counts rows into a {@link RowTally} and a discarding sink: no writers, no
   * commits, no table. Snapshot phase only (no change stream, no freshness). It passes when exactly
   * {@code shards x rowsPerShard} rows were counted by the time the job was cancelled.
   */
  private ModeResult runSourceOnly(BenchConfig config, String warehouse) throws Exception {
    BenchConfig.Mode mode = BenchConfig.Mode.SOURCE_ONLY;
    progress.mode(mode.label() + " N=" + config.shards());
    workload.reset(config.shards(), config.rowsPerShard(), progress);
    String runId = mode.label() + "-n" + config.shards() + "-" + System.nanoTime();
    ShardbergConfig jobConfig =
        ShardbergConfig.load(writeJobConfig(config, warehouse, runId, null));
    StreamExecutionEnvironment env =
        environment(config.sourceParallelism(), config.checkpointMinPause());
    ShardbergPipeline.configureCheckpointsAndRestarts(env, jobConfig);
    ShardbergPipeline.Sources sources = ShardbergPipeline.buildSources(env, jobConfig);
    sources
        .changes()
        .map(new RowTally.Counting(runId))
        .name("count rows")
        .uid("bench-count-rows")
        .sinkTo(new DiscardingSink<>())
        .name("discard rows")
        .uid("bench-discard-rows");
    String jobName = "bench " + jobConfig.pipeline().id();
    int sourceParallelismTotal = sources.plan().hostNames().size() * config.sourceParallelism();
    long expectedRows = config.totalRows();

    List<String> failures = new ArrayList<>();
    ModeResult.Snapshot snapshot = null;
    long restarts;
    RowTally tally = RowTally.open(runId, expectedRows);
    HeapSampler heap = new HeapSampler();
    try {
      long submitted = System.currentTimeMillis();
      JobClient job = env.executeAsync(jobName);
      progress.line(
          "job",
          "submitted %s (%d source(s), total source parallelism %d, counting sink only)",
          jobName,
          workload.servers().size(),
          sourceParallelismTotal);
      try {
        boolean counted =
            await(
                config.phaseTimeout(),
                job,
                () -> {},
                () -> tally.rows() >= expectedRows,
                () ->
                    progress.line(
                        "snapshot",
                        "rows counted %,d of %,d, heap %s",
                        tally.rows(),
                        expectedRows,
                        mb(heap.current())));
        if (!counted) {
          failures.add(
              String.format(
                  "snapshot phase did not count %,d rows within %s (counted %,d)",
                  expectedRows, config.phaseTimeout(), tally.rows()));
        } else {
          // the same start point as the other modes: job submission, so start-up is included
          long reached =
              tally.expectedReachedMillis() >= 0
                  ? tally.expectedReachedMillis()
                  : System.currentTimeMillis();
          long first = tally.firstRowMillis() >= 0 ? tally.firstRowMillis() : reached;
          long ms = Math.max(1, reached - submitted);
          double rate = expectedRows * 1000.0 / ms;
          double steady = first >= reached ? rate : (expectedRows - 1) * 1000.0 / (reached - first);
          snapshot =
              new ModeResult.Snapshot(
                  expectedRows, ms, rate, rate / sourceParallelismTotal, steady, -1, -1, -1, -1);
          progress.line(
              "snapshot",
              "done: %,d rows counted in %,d ms since submission = %,.0f rows/s (%,.0f per source"
                  + " parallelism); %,.0f rows/s after the first row",
              expectedRows,
              ms,
              rate,
              rate / sourceParallelismTotal,
              steady);
        }
        JobStatus status = job.getJobStatus().get(30, TimeUnit.SECONDS);
        if (status.isGloballyTerminalState()) {
          failures.add("the Flink job ended early with status " + status);
        }
      } finally {
        restarts = RestartCounter.restarts(jobName);
        cancelQuietly(job);
        awaitEnd(job);
      }
      heap.close();

      // read after the job ended: a row replayed late (e.g. after a restart) still counts against
      // it
      long countedRows = tally.rows();
      boolean exact = countedRows == expectedRows;
      if (!exact) {
        failures.add(
            String.format(
                "the counting sink saw %,d rows; expected exactly %,d (%d shards x %,d rows)",
                countedRows, expectedRows, config.shards(), config.rowsPerShard()));
      }
      progress.line(
          "count",
          "%s: %,d rows counted, %,d loaded",
          exact ? "PASSED" : "FAILED",
          countedRows,
          expectedRows);
      ModeResult result =
          new ModeResult(
              mode.label(),
              failures.isEmpty() ? ModeResult.PASSED : ModeResult.FAILED,
              String.join("; ", failures),
              config.shards(),
              workload.servers().size(),
              expectedRows,
              sourceParallelismTotal,
              snapshot,
              null,
              null,
              null,
              null,
              restarts,
              heap.peak(),
              null,
              List.of(),
              null,
              new ModeResult.SourceCount(expectedRows, countedRows, exact),
              null,
              null);
      progress.line(
          "result",
          "%s%s",
          result.status(),
          result.reason().isEmpty() ? "" : ": " + result.reason());
      return result;
    } finally {
      heap.close();
      RowTally.close(runId);
    }
  }

  /** The YAML a user would write for this workload (the `run` command's input). */
  Path writeJobConfig(BenchConfig config, String warehouse, String runId, String zooKeeperConnect)
      throws java.io.IOException {
    return writeJobConfig(config, warehouse, runId, zooKeeperConnect, null, null, null);
  }

  /**
   * The YAML a user would write for this workload; {@code maintenance} non-null turns the job's own
   * maintenance on with those settings (the long-run mode), null leaves it off; {@code deleteMode}
   * non-null is the job's {@code target.delete-mode}, null: equality; {@code checkpointDir}
   * non-null is its {@code pipeline.checkpoint-dir} (null: checkpoints in the JobManager's memory,
   * which deletes by position refuse).
   */
  Path writeJobConfig(
      BenchConfig config,
      String warehouse,
      String runId,
      String zooKeeperConnect,
      LongRun.MaintenanceSettings maintenance,
      String deleteMode,
      Path checkpointDir)
      throws java.io.IOException {
    Path dir = config.output().toAbsolutePath().resolve("configs");
    java.nio.file.Files.createDirectories(dir);
    Path passwordFile = dir.resolve("mysql.password");
    java.nio.file.Files.writeString(passwordFile, Workload.CDC_PASSWORD + "\n");
    StringBuilder yaml = new StringBuilder();
    yaml.append("# written by `shardberg bench` for mode run ").append(runId).append('\n');
    yaml.append("pipeline:\n");
    yaml.append("  id: bench-").append(runId).append('\n');
    yaml.append("  checkpoint-interval: ")
        .append(config.checkpointInterval().toMillis())
        .append("ms\n");
    yaml.append("  parallelism: ").append(config.sourceParallelism()).append('\n');
    yaml.append("  writer-parallelism: ").append(config.sourceParallelism()).append('\n');
    yaml.append("  restart:\n    attempts: 20\n    delay: 2s\n");
    if (checkpointDir != null) {
      yaml.append("  checkpoint-dir: ").append(checkpointDir.toUri()).append('\n');
    }
    yaml.append("sources:\n");
    int h = 0;
    for (EmbeddedMariaDb server : workload.servers()) {
      int first = 5000 + 100 * h++;
      yaml.append("  - name: ").append(server.name()).append('\n');
      yaml.append("    host: ").append(server.host()).append('\n');
      yaml.append("    port: ").append(server.port()).append('\n');
      yaml.append("    user: ").append(Workload.CDC_USER).append('\n');
      yaml.append("    password-file: ").append(passwordFile.toAbsolutePath()).append('\n');
      yaml.append("    server-id-range: ")
          .append(first)
          .append('-')
          .append(first + config.sourceParallelism() - 1)
          .append('\n');
      yaml.append("    jdbc-properties:\n      useSSL: \"false\"\n");
    }
    yaml.append("tables:\n");
    yaml.append("  database-pattern: '").append(Workload.DATABASE).append("'\n");
    yaml.append("  table-pattern: '").append(Workload.TABLE_PREFIX).append("(?<shard>\\d+)'\n");
    yaml.append("source:\n  startup-mode: initial\n  server-time-zone: UTC\n");
    yaml.append("target:\n");
    yaml.append(warehouses.catalogYaml(warehouse));
    yaml.append("  namespace: ")
        .append(TABLE.namespace())
        .append("\n  table: ")
        .append(TABLE.name())
        .append('\n');
    yaml.append("  buckets: ").append(config.buckets()).append('\n');
    // the bench's runs without a mode delete by key, as every figure in BENCHMARKS.md before the
    // position default was measured
    yaml.append("  delete-mode: ")
        .append(deleteMode == null ? "equality" : deleteMode)
        .append('\n');
    if (config.closeConcurrency() != null) {
      yaml.append("  close-concurrency: ").append(config.closeConcurrency()).append('\n');
    }
    if (zooKeeperConnect != null) {
      yaml.append("coordinator:\n  zookeeper:\n    connect: ")
          .append(zooKeeperConnect)
          .append('\n');
    }
    // The modes compare ingest alone (per-shard jobs have no maintenance); the long-run mode
    // compares
    // the job with and without its own maintenance (issue 14).
    if (maintenance == null) {
      yaml.append("maintenance:\n  enabled: false\n");
    } else {
      yaml.append("maintenance:\n  enabled: true\n");
      yaml.append("  interval: ").append(maintenance.interval().toMillis()).append("ms\n");
      yaml.append("  expire-snapshots:\n    max-age: ")
          .append(maintenance.expireAfter().toMillis())
          .append("ms\n");
      if (maintenance.minSmallFiles() != null || maintenance.maxPartitions() != null) {
        yaml.append("  compaction:\n");
      }
      if (maintenance.minSmallFiles() != null) {
        yaml.append("    min-small-files: ").append(maintenance.minSmallFiles()).append('\n');
      }
      if (maintenance.maxPartitions() != null) {
        yaml.append("    max-partitions-per-cycle: ")
            .append(maintenance.maxPartitions())
            .append('\n');
      }
    }
    Path file = dir.resolve(runId + ".yaml");
    java.nio.file.Files.writeString(file, yaml.toString());
    return file;
  }

  /**
   * The job's own verifier: per shard, counts and content checksums, MySQL against the table, read
   * as the CLI's verify reads them (the CDC user, the hosts' JDBC properties).
   */
  VerifyReport verify(Table table) {
    LogicalTableSpec spec = spec();
    ShardPlan plan = ShardDiscovery.discover(spec);
    return new TableVerifier(table, plan.schema().columns(), TableLayout.SHARD_COLUMN, 5)
        .verify(Reconciliation.shardSources(spec, plan));
  }

  private LogicalTableSpec spec() {
    List<MySqlHost> hosts = new ArrayList<>();
    for (EmbeddedMariaDb server : workload.servers()) {
      hosts.add(
          new MySqlHost(
              server.name(),
              server.host(),
              server.port(),
              Workload.CDC_USER,
              Secret.of(Workload.CDC_PASSWORD),
              Map.of("useSSL", "false")));
    }
    return new LogicalTableSpec(
        hosts, Workload.DATABASE, Workload.TABLE_PREFIX + "(?<shard>\\d+)", Map.of(), List.of());
  }

  StreamExecutionEnvironment environment(int parallelism, Duration checkpointMinPause) {
    Configuration conf = new Configuration();
    // kept by the job's own checkpoint settings (ShardbergPipeline sets interval, mode, timeout)
    conf.set(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS, checkpointMinPause);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 20);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofSeconds(2));
    conf.set(TaskManagerOptions.NUM_TASK_SLOTS, parallelism);
    conf.setString("metrics.reporter.bench.factory.class", RestartCounter.Factory.class.getName());
    return StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
  }

  private MySqlSource<RowData> source(
      EmbeddedMariaDb server, ShardPlan plan, String host, TableLayout layout, String serverIds) {
    return MySqlSource.<RowData>builder()
        .hostname(server.host())
        .port(server.port())
        .username(Workload.CDC_USER)
        .password(Workload.CDC_PASSWORD)
        .databaseList(ShardTaggingDeserializer.databaseListOf(plan, host))
        .tableList(ShardTaggingDeserializer.tableListOf(plan, host))
        .serverId(serverIds)
        .serverTimeZone("UTC")
        .startupOptions(StartupOptions.initial())
        .debeziumProperties(baselineDebezium())
        .deserializer(ShardTaggingDeserializer.forHost(plan, host, layout))
        .build();
  }

  /**
   * The baseline's sources poll like the job's (its source.poll-interval default, 50 ms) rather
   * than Debezium's 500 ms, so the comparison isolates the sink and commit path.
   */
  private static java.util.Properties baselineDebezium() {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("poll.interval.ms", String.valueOf(BASELINE_POLL_INTERVAL_MS));
    return p;
  }

  private EmbeddedMariaDb server(String host) {
    return workload.servers().stream().filter(s -> s.name().equals(host)).findFirst().orElseThrow();
  }

  /**
   * The baseline: per shard, its own CDC source and its own stock Iceberg upsert sink (writer +
   * committer), all writing the same table. One Flink job holds the N independent chains, so every
   * committer commits right after the same checkpoint: the contention of N jobs whose checkpoints
   * line up (separate jobs drift apart and collide less often, but a job failure there stops one
   * shard instead of all).
   */
  private void perShardJob(
      StreamExecutionEnvironment env, ShardPlan plan, TableLayout layout, TableLoader loader) {
    for (ShardTable shard : plan.allTables()) {
      ShardPlan single = new ShardPlan(Map.of(shard.hostName(), List.of(shard)), plan.schema());
      String serverId = String.valueOf(6000 + shard.shard());
      DataStream<RowData> changes =
          env.fromSource(
                  source(server(shard.hostName()), single, shard.hostName(), layout, serverId),
                  WatermarkStrategy.noWatermarks(),
                  "MySQL shard " + shard.shard())
              .uid("mysql-shard-" + shard.shard())
              .setParallelism(1);
      FlinkSink.forRowData(changes)
          .tableLoader(loader.clone())
          .upsert(true)
          .equalityFieldColumns(layout.equalityColumns())
          .writeParallelism(1)
          .uidPrefix("iceberg-shard-" + shard.shard())
          .append();
    }
  }

  /**
   * Waits (polling every 250 ms, a progress line every two seconds) until done, the job dies or
   * time runs out.
   */
  static boolean await(
      Duration timeout, JobClient job, Runnable healthCheck, BooleanSupplier done, Runnable line)
      throws Exception {
    long deadline = System.currentTimeMillis() + timeout.toMillis();
    long lastLine = 0;
    while (!done.getAsBoolean()) {
      healthCheck.run();
      if (System.currentTimeMillis() > deadline) {
        return false;
      }
      JobStatus status = job.getJobStatus().get(30, TimeUnit.SECONDS);
      if (status.isGloballyTerminalState()) {
        return false;
      }
      if (System.currentTimeMillis() - lastLine >= PROGRESS_EVERY_MS) {
        lastLine = System.currentTimeMillis();
        line.run();
      }
      // polling an external system (the table, or the counting sink's tally) that offers no
      // notification
      TimeUnit.MILLISECONDS.sleep(250);
    }
    return true;
  }

  static void cancelQuietly(JobClient job) {
    try {
      job.cancel().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.debug("Cancelling the bench job: {}", e.toString());
    }
  }

  /**
   * Waits until a cancelled job has ended (its result, normally a cancellation, is of no interest).
   */
  static void awaitEnd(JobClient job) {
    try {
      job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.debug("The bench job ended: {}", e.toString());
    }
  }

  static ModeResult.Freshness freshness(List<TableWatcher.FreshnessSample> samples) {
    if (samples.isEmpty()) {
      return new ModeResult.Freshness(0, -1, -1, -1, -1);
    }
    long[] values =
        samples.stream()
            .mapToLong(TableWatcher.FreshnessSample::freshnessMillis)
            .sorted()
            .toArray();
    return new ModeResult.Freshness(
        values.length,
        percentile(values, 50),
        percentile(values, 95),
        percentile(values, 99),
        values[values.length - 1]);
  }

  static ModeResult.Commits commitFigures(
      List<TableWatcher.Commit> commits, List<CommitReports.Sample> reports) {
    long[] durations =
        reports.stream()
            .mapToLong(CommitReports.Sample::durationMillis)
            .filter(d -> d >= 0)
            .sorted()
            .toArray();
    long retries = reports.stream().mapToLong(r -> Math.max(0, r.attempts() - 1)).sum();
    long retried = reports.stream().filter(r -> r.attempts() > 1).count();
    long maxAttempts = reports.stream().mapToLong(CommitReports.Sample::attempts).max().orElse(0);
    return new ModeResult.Commits(
        commits.size(),
        reports.size(),
        durations.length == 0 ? -1 : percentile(durations, 50),
        durations.length == 0 ? -1 : percentile(durations, 99),
        retries,
        retried,
        maxAttempts);
  }

  /**
   * The job's own modes: commit durations are the coordinator's ({@code commitDurationMs}: one
   * Iceberg transaction per checkpoint, data or heartbeat, from the refresh under the lock to the
   * committed transaction), because Iceberg's CommitReport does not cover a transaction's commit;
   * retries are the coordinator's ({@code commitRetries}) plus those Iceberg reported for other
   * commits (the external maintenance committer of consolidated+zk).
   */
  static ModeResult.Commits coordinatorCommitFigures(
      List<TableWatcher.Commit> commits,
      List<CommitReports.Sample> reports,
      long[] coordinatorDurations,
      long coordinatorRetries) {
    ModeResult.Commits others = commitFigures(commits, reports);
    long[] durations = coordinatorDurations.clone();
    java.util.Arrays.sort(durations);
    return new ModeResult.Commits(
        commits.size(),
        durations.length,
        durations.length == 0 ? -1 : percentile(durations, 50),
        durations.length == 0 ? -1 : percentile(durations, 99),
        others.commitFailedRetries() + coordinatorRetries,
        others.commitsThatRetried(),
        others.maxAttempts());
  }

  static ModeResult.Files fileFigures(Table table, List<TableWatcher.Commit> commits) {
    List<TableWatcher.Commit> writing =
        commits.stream().filter(c -> c.addedDataFiles() + c.addedDeleteFiles() > 0).toList();
    int n = Math.max(1, writing.size());
    double data =
        writing.stream().mapToLong(TableWatcher.Commit::addedDataFiles).sum() / (double) n;
    double deletes =
        writing.stream().mapToLong(TableWatcher.Commit::addedDeleteFiles).sum() / (double) n;
    double bytes =
        writing.stream().mapToLong(TableWatcher.Commit::addedFilesBytes).sum() / (double) n;
    table.refresh();
    long liveData = 0;
    long small = 0;
    Set<String> deleteFiles = new HashSet<>();
    if (table.currentSnapshot() != null) {
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          liveData++;
          if (task.file().fileSizeInBytes() < SMALL_FILE_BYTES) {
            small++;
          }
          for (DeleteFile d : task.deletes()) {
            if (deleteFiles.add(d.location()) && d.fileSizeInBytes() < SMALL_FILE_BYTES) {
              small++;
            }
          }
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException("Cannot plan the files of " + table.name(), e);
      }
    }
    return new ModeResult.Files(
        data + deletes,
        data,
        deletes,
        bytes,
        liveData,
        deleteFiles.size(),
        small,
        SMALL_FILE_BYTES);
  }

  /**
   * The rollout's window is from its first ALTER to its last; a row belongs to it by its write time
   * (first seen minus freshness). Commits: the watcher's first sight of each snapshot.
   */
  static ModeResult.SchemaRolloutFigures rolloutFigures(
      dev.shardberg.tests.demo.SchemaRollout rollout,
      int shards,
      List<TableWatcher.FreshnessSample> samples,
      List<TableWatcher.Commit> commits,
      Table table) {
    long from = rollout.firstMillis();
    long to = rollout.lastMillis();
    List<Long> in = new ArrayList<>();
    List<Long> out = new ArrayList<>();
    for (TableWatcher.FreshnessSample s : samples) {
      long written = s.firstSeenMillis() - s.freshnessMillis();
      (from >= 0 && written >= from && written <= to ? in : out).add(s.freshnessMillis());
    }
    long maxGap = 0;
    long previous = -1;
    for (TableWatcher.Commit c : commits) {
      long seen = c.firstSeenMillis();
      if (from >= 0 && seen >= from && seen <= to + 1) {
        if (previous >= 0) {
          maxGap = Math.max(maxGap, seen - previous);
        }
      }
      previous = seen;
    }
    table.refresh();
    return new ModeResult.SchemaRolloutFigures(
        rollout.applied(),
        shards,
        from < 0 ? 0 : (to - from) / 1000.0,
        in.size(),
        p99(in),
        p99(out),
        maxGap,
        table.schema().findField(dev.shardberg.tests.demo.SchemaRollout.COLUMN) != null);
  }

  private static long p99(List<Long> values) {
    if (values.isEmpty()) {
      return -1;
    }
    long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
    return percentile(sorted, 99);
  }

  /**
   * Per committed snapshot of the change phase: the worst freshness of the rows it made visible.
   */
  static List<ModeResult.Point> timeline(
      List<TableWatcher.FreshnessSample> samples, long startMillis) {
    Map<Long, Long> worst = new java.util.TreeMap<>();
    for (TableWatcher.FreshnessSample s : samples) {
      worst.merge(s.firstSeenMillis(), s.freshnessMillis(), Math::max);
    }
    List<ModeResult.Point> points = new ArrayList<>();
    worst.forEach(
        (at, f) -> points.add(new ModeResult.Point((at - startMillis) / 1000.0, f / 1000.0)));
    return points;
  }

  static long percentile(long[] sorted, int p) {
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  static String lagText(long ms) {
    return ms < 0 ? "-" : String.format("%.1f s", ms / 1000.0);
  }

  static String mb(long bytes) {
    return String.format("%,d MiB", bytes / (1024 * 1024));
  }

  /** Samples the JVM heap every 100 ms; the peak is what the report shows. */
  static final class HeapSampler implements AutoCloseable {
    private final ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "bench-heap-sampler");
              t.setDaemon(true);
              return t;
            });
    private final AtomicLong peak = new AtomicLong();

    HeapSampler() {
      timer.scheduleAtFixedRate(
          () -> peak.accumulateAndGet(current(), Math::max), 0, 100, TimeUnit.MILLISECONDS);
    }

    long current() {
      return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    long peak() {
      return peak.get();
    }

    @Override
    public void close() {
      timer.shutdownNow();
    }
  }
}
