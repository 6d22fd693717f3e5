package dev.shardberg.tests.demo;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.ShardCounts;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.PipelineStatus;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.TimeUtils;
import org.apache.iceberg.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The embedded default: two MariaDB servers with N shards of {@code shop.orders_n}, the real job in
 * a local MiniCluster into a Hadoop catalog on disk, random changes while it runs, then {@code
 * verify}.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Starts two embedded MariaDB servers holding N shards of an orders table, loads them, runs the real",
      "Shardberg job in a local Flink MiniCluster into an Iceberg table (Hadoop catalog on local disk), applies",
      "random inserts/updates/deletes on random shards while it runs, waits until the table caught up, verifies it",
      "against the shards and prints a summary. Exit code 0 only if verify passed."
    })
public class DemoCommand implements Callable<Integer> {
  static final String PIPELINE_ID = "demo-orders";
  static final String CDC_USER = "shardberg_cdc";

  @Option(
      names = "--shards",
      defaultValue = "8",
      description = "Shards (tables) in all, spread over two servers (default ${DEFAULT-VALUE}).")
  int shards;

  @Option(
      names = "--rows",
      defaultValue = "200000",
      description = "Rows loaded before the job starts, in all (default ${DEFAULT-VALUE}).")
  int rows;

  @Option(
      names = "--duration",
      defaultValue = "30s",
      description =
          "How long random changes run once the snapshot is committed (default ${DEFAULT-VALUE}).")
  String duration;

  @Option(
      names = "--rate",
      defaultValue = "200",
      description = "Random changes per second during --duration (default ${DEFAULT-VALUE}).")
  int rate;

  @Option(
      names = "--checkpoint-interval",
      defaultValue = "5s",
      description = "Checkpoint (= commit) interval (default ${DEFAULT-VALUE}).")
  String checkpointInterval;

  @Option(
      names = "--parallelism",
      defaultValue = "2",
      description = "Source readers per server and Iceberg writers (default ${DEFAULT-VALUE}).")
  int parallelism;

  @Option(
      names = "--data-dir",
      defaultValue = "shardberg-data",
      description = "Where the warehouse, config and logs go (default ./${DEFAULT-VALUE}).")
  Path dataDir;

  @Option(
      names = "--seed",
      defaultValue = "42",
      description = "Seed of the generated rows and changes (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--schema-rollout",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "During the change phase, add a column to the shards one by one (ALTER TABLE … ADD COLUMN "
              + SchemaRollout.COLUMN
              + "), as a schema rollout over many shards arrives; the table follows in flight"
              + " (default on; --no-schema-rollout to leave the schema alone).")
  boolean schemaRollout;

  @Option(
      names = "--delete-mode",
      defaultValue = "position",
      description =
          "The job's target.delete-mode: position (the job's default for a table it creates: the"
              + " writers own their partitions and delete by position; no equality delete is"
              + " written), or equality (deletes by key) (default ${DEFAULT-VALUE}).")
  String deleteMode;

  @Option(
      names = "--format-version",
      description =
          "The new table's Iceberg format version, 2 or 3 (target.table-properties.format-version;"
              + " default: the job's, 3 with --delete-mode position, else 2).")
  Integer formatVersion;

  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  private final PrintStream out = System.out;
  private final Instant started = Instant.now();

  @Override
  public Integer call() throws Exception {
    if (shards < 2 || rows < shards || parallelism < 1 || parallelism > 4) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(),
          "Need --shards >= 2, --rows >= --shards and --parallelism between 1 and 4");
    }
    if (!deleteMode.equals("equality") && !deleteMode.equals("position")) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(), "--delete-mode is equality or position, not '" + deleteMode + "'");
    }
    if (formatVersion != null && formatVersion != 2 && formatVersion != 3) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(), "--format-version is 2 or 3, not " + formatVersion);
    }
    Duration changeDuration = durationOption(duration, "--duration");
    Duration interval = durationOption(checkpointInterval, "--checkpoint-interval");
    int rowsPerShard = rows / shards;
    long totalRows = (long) rowsPerShard * shards;
    Path warehouse = dataDir.resolve("warehouse").toAbsolutePath();
    deleteRecursively(warehouse);
    deleteRecursively(dataDir.resolve("checkpoints")); // each demo starts without state
    Files.createDirectories(dataDir);

    progress("starting two embedded MariaDB servers (binlog on)…");
    List<EmbeddedMariaDb> servers = new ArrayList<>();
    try {
      java.util.concurrent.CompletableFuture<EmbeddedMariaDb> b =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> EmbeddedMariaDb.start("demo-b", 2));
      try {
        servers.add(EmbeddedMariaDb.start("demo-a", 1));
      } finally {
        servers.add(b.join());
      }
      OrdersShards orders = new OrdersShards(servers, shards);
      orders.createTables();
      progress("servers up; creating %d shard tables and loading…", shards);
      progress(
          "loading %,d rows into %d shards (%d on %s:%d, %d on %s:%d)…",
          totalRows,
          shards,
          orders.shardsOf(servers.get(0)).size(),
          servers.get(0).host(),
          servers.get(0).port(),
          orders.shardsOf(servers.get(1)).size(),
          servers.get(1).host(),
          servers.get(1).port());
      long loadStart = System.nanoTime();
      orders.load(rowsPerShard, seed);
      progress("loaded in %.1f s", (System.nanoTime() - loadStart) / 1e9);

      String password = "demo-" + Long.toHexString(seed * 0x9E3779B97F4A7C15L);
      for (EmbeddedMariaDb server : servers) {
        server.createCdcUser(CDC_USER, password);
      }
      Path configFile = writeConfig(servers, warehouse, password, interval);
      ShardbergConfig config = ShardbergConfig.load(configFile);
      progress("config: %s", configFile);

      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
      Instant jobStart = Instant.now();
      JobClient job = ShardbergPipeline.start(env, config);
      progress(
          "job %s running in a local MiniCluster; table %s",
          job.getJobID(), config.target().qualifiedName());
      Table table = Catalogs.loadTable(config.target());
      try {
        return runPhases(
            job,
            config,
            table,
            orders,
            rowsPerShard,
            totalRows,
            jobStart,
            changeDuration,
            interval);
      } finally {
        if (!job.getJobStatus().get().isGloballyTerminalState()) {
          job.cancel().get();
        }
      }
    } finally {
      for (EmbeddedMariaDb server : servers) {
        server.close();
      }
    }
  }

  private int runPhases(
      JobClient job,
      ShardbergConfig config,
      Table table,
      OrdersShards orders,
      int rowsPerShard,
      long totalRows,
      Instant jobStart,
      Duration changeDuration,
      Duration interval)
      throws Exception {
    // 1. snapshot phase: until every loaded row is committed
    Instant snapshotDone = null;
    Instant deadline = Instant.now().plus(Duration.ofMinutes(10));
    while (snapshotDone == null) {
      checkRunning(job);
      PipelineStatus status = PipelineStatus.of(table, PIPELINE_ID, Clock.systemUTC());
      long committed = added(status);
      double seconds = Duration.between(jobStart, Instant.now()).toMillis() / 1000.0;
      progress(
          "snapshot: %,d / %,d rows committed in %d commits (%,.0f rows/s)",
          committed, totalRows, status.commits().size(), committed / Math.max(seconds, 0.001));
      if (committed >= totalRows) {
        snapshotDone =
            status.commits().stream()
                .sorted(Comparator.comparingLong(CommitRecord::checkpointId))
                .filter(
                    new java.util.function.Predicate<CommitRecord>() {
                      long sum;

                      @Override
                      public boolean test(CommitRecord c) {
                        sum +=
                            c.shardCounts().values().stream()
                                .mapToLong(ShardCounts::addedRecords)
                                .sum();
                        return sum >= totalRows;
                      }
                    })
                .map(c -> Instant.ofEpochMilli(c.timestampMillis()))
                .findFirst()
                .orElse(Instant.now());
        break;
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            "The snapshot phase did not finish in 10 minutes; see " + logFile());
      }
      Thread.sleep(2_000);
    }
    double snapshotSeconds = Duration.between(jobStart, snapshotDone).toMillis() / 1000.0;
    double snapshotRate = totalRows / snapshotSeconds;
    progress(
        "snapshot committed: %,d rows in %.1f s = %,.0f rows/s (%,.0f rows/s per source reader)",
        totalRows,
        snapshotSeconds,
        snapshotRate,
        snapshotRate / (config.sources().size() * config.pipeline().parallelism()));

    // 2. change phase: random inserts/updates/deletes on random shards
    LocalDateTime changesFrom = OrdersShards.nowUtc();
    FreshnessProbe freshness = new FreshnessProbe(table, PIPELINE_ID, "updated_at", changesFrom);
    freshness.skipExisting();
    SchemaRollout rollout =
        new SchemaRollout(
            SchemaRollout.of(orders, shards), changeDuration, line -> progress("%s", line));
    try (ChangeGenerator changes =
        new ChangeGenerator(orders, shards, rowsPerShard, rate, seed + 1)) {
      changes.start();
      if (schemaRollout) {
        rollout.start();
      }
      Instant changesEnd = Instant.now().plus(changeDuration);
      while (Instant.now().isBefore(changesEnd)) {
        Thread.sleep(
            Math.min(2_000, Math.max(1, Duration.between(Instant.now(), changesEnd).toMillis())));
        checkRunning(job);
        freshness.poll();
        PipelineStatus status = PipelineStatus.of(table, PIPELINE_ID, Clock.systemUTC());
        progress(
            "changes: %,d applied (%,d ins / %,d upd / %,d del); checkpoint %d committed; freshness p50 %s p99 %s",
            changes.total(),
            changes.inserts(),
            changes.updates(),
            changes.deletes(),
            status.lastCheckpointId(),
            seconds(freshness.quantileMillis(0.5)),
            seconds(freshness.quantileMillis(0.99)));
      }
      changes.stop();
      rollout.stop();
      progress(
          "changes stopped: %,d applied (%,d inserts, %,d updates, %,d deletes); waiting for the table to catch up…",
          changes.total(), changes.inserts(), changes.updates(), changes.deletes());

      // 3. caught up = verify matches (rows committed after the last change)
      VerifyReport report = null;
      Instant verifyDeadline = Instant.now().plus(interval.multipliedBy(10).plusSeconds(60));
      while (Instant.now().isBefore(verifyDeadline)) {
        checkRunning(job);
        report = Reconciliation.verify(config, 5);
        if (report.matches()) {
          break;
        }
        progress(
            "not caught up yet: MySQL %,d rows, Iceberg %,d rows; %d shard(s) differ",
            report.mysqlRows(),
            report.icebergRows(),
            report.shards().stream().filter(s -> !s.matches()).count());
        Thread.sleep(Math.max(1_000, interval.toMillis() / 2));
      }
      freshness.poll();
      PipelineStatus status = PipelineStatus.of(table, PIPELINE_ID, Clock.systemUTC());
      out.println();
      out.print(report.render());
      out.println();
      out.println("Summary");
      out.printf(
          Locale.ROOT,
          "  shards:               %d on 2 MariaDB servers → %s%n",
          shards,
          table.name());
      out.printf(
          Locale.ROOT,
          "  rows:                 %,d loaded; %,d after %,d changes (MySQL) / %,d (Iceberg)%n",
          totalRows,
          report.mysqlRows(),
          changes.total(),
          report.icebergRows());
      out.printf(
          Locale.ROOT,
          "  commits:              %d (one per checkpoint of %s; last checkpoint %d)%n",
          status.commits().size(),
          interval,
          status.lastCheckpointId());
      out.printf(
          Locale.ROOT,
          "  snapshot throughput:  %,.0f rows/s committed (%,.0f per source reader, %d readers)%n",
          snapshotRate,
          snapshotRate / (config.sources().size() * config.pipeline().parallelism()),
          config.sources().size() * config.pipeline().parallelism());
      out.printf(
          Locale.ROOT,
          "  freshness:            p50 %s, p99 %s (MySQL write → visible in a committed snapshot, %,d rows sampled)%n",
          seconds(freshness.quantileMillis(0.5)),
          seconds(freshness.quantileMillis(0.99)),
          freshness.samples());
      if (schemaRollout) {
        table.refresh();
        out.printf(
            Locale.ROOT,
            "  schema rollout:       column %s added on %d of %d shards while changes ran; table %s (schema %d)%n",
            SchemaRollout.COLUMN,
            rollout.applied(),
            shards,
            table.schema().findField(SchemaRollout.COLUMN) == null ? "lacks it" : "has it",
            table.schema().schemaId());
      }
      table.refresh();
      out.printf(
          Locale.ROOT,
          "  deletes:              delete-mode %s, format v%d; equality deletes committed: %d,"
              + " position deletes / deletion vectors committed: %d%n",
          deleteMode,
          ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion(),
          summed(table, "added-equality-deletes"),
          summed(table, "added-position-deletes"));
      out.printf(
          Locale.ROOT, "  verify:               %s%n", report.matches() ? "PASSED" : "FAILED");
      out.printf(
          Locale.ROOT,
          "  table on disk:        %s (inspect with: bin/shardberg status --config %s)%n",
          config.target().catalog().warehouse(),
          dataDir.resolve("demo-config.yaml"));
      out.printf(
          Locale.ROOT,
          "  took:                 %.1f s%n",
          Duration.between(started, Instant.now()).toMillis() / 1000.0);
      return report.matches() ? 0 : 1;
    }
  }

  /** The sum of a snapshot summary counter over the table's snapshots. */
  private static long summed(Table table, String counter) {
    long total = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      total += Long.parseLong(snapshot.summary().getOrDefault(counter, "0"));
    }
    return total;
  }

  private Duration durationOption(String value, String option) {
    Duration d;
    try {
      d = TimeUtils.parseDuration(value); // the parser of the config's durations (Flink's)
    } catch (IllegalArgumentException e) {
      d = null;
    }
    if (d == null || d.isZero()) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(),
          "Cannot parse " + option + " '" + value + "': write e.g. 500ms, 10s or 2min");
    }
    return d;
  }

  private static long added(PipelineStatus status) {
    return status.totals().values().stream().mapToLong(ShardCounts::addedRecords).sum();
  }

  private void checkRunning(JobClient job) {
    JobStatus state;
    try {
      state = job.getJobStatus().get();
    } catch (Exception e) {
      throw new IllegalStateException(
          "The job is gone (" + e.getMessage() + "); see " + logFile(), e);
    }
    if (state.isGloballyTerminalState()) {
      throw new IllegalStateException(
          "The job ended unexpectedly (" + state + "); see " + logFile());
    }
  }

  private static String logFile() {
    return System.getProperty("shardberg.log.file", "the log");
  }

  private Path writeConfig(
      List<EmbeddedMariaDb> servers, Path warehouse, String password, Duration interval)
      throws IOException {
    Path passwordFile = dataDir.resolve("demo-mysql.password").toAbsolutePath();
    Files.deleteIfExists(passwordFile);
    Files.createFile(
        passwordFile,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(passwordFile, password + "\n");
    StringBuilder yaml = new StringBuilder();
    yaml.append("# written by `shardberg demo`: ")
        .append(shards)
        .append(" shards of shop.orders_N on two embedded MariaDB servers\n");
    yaml.append("pipeline:\n");
    yaml.append("  id: ").append(PIPELINE_ID).append('\n');
    yaml.append("  checkpoint-interval: ").append(interval.toMillis()).append("ms\n");
    yaml.append("  parallelism: ").append(parallelism).append('\n');
    yaml.append("  writer-parallelism: ").append(parallelism).append('\n');
    yaml.append("  restart:\n    attempts: 3\n    delay: 2s\n");
    // where the writers' state goes; deletes by position need one (OwnerStateStorage)
    yaml.append("  checkpoint-dir: ")
        .append(dataDir.resolve("checkpoints").toAbsolutePath().toUri())
        .append('\n');
    yaml.append("sources:\n");
    int firstId = 5400;
    for (EmbeddedMariaDb server : servers) {
      yaml.append("  - name: ").append(server.name()).append('\n');
      yaml.append("    host: ").append(server.host()).append('\n');
      yaml.append("    port: ").append(server.port()).append('\n');
      yaml.append("    user: ").append(CDC_USER).append('\n');
      yaml.append("    password-file: ").append(passwordFile).append('\n');
      yaml.append("    server-id-range: ")
          .append(firstId)
          .append('-')
          .append(firstId + 3)
          .append('\n');
      yaml.append(
          "    jdbc-properties:\n      useSSL: \"false\"\n      allowPublicKeyRetrieval: \"true\"\n");
      firstId += 4;
    }
    yaml.append("tables:\n");
    yaml.append("  database-pattern: '").append(OrdersShards.DATABASE).append("'\n");
    yaml.append("  table-pattern: '").append(OrdersShards.TABLE_PATTERN).append("'\n");
    yaml.append("source:\n  startup-mode: initial\n  server-time-zone: UTC\n");
    yaml.append("target:\n");
    yaml.append("  catalog:\n    type: hadoop\n    name: demo\n    warehouse: ")
        .append(warehouse.toUri())
        .append('\n');
    yaml.append("  namespace: shop\n  table: orders\n  buckets: 5\n");
    yaml.append("  delete-mode: ").append(deleteMode).append('\n');
    if (formatVersion != null) {
      yaml.append("  table-properties:\n    format-version: \"")
          .append(formatVersion)
          .append("\"\n");
    }
    Path file = dataDir.resolve("demo-config.yaml");
    Files.writeString(file, yaml.toString());
    return file;
  }

  private void progress(String format, Object... args) {
    double t = Duration.between(started, Instant.now()).toMillis() / 1000.0;
    out.printf(Locale.ROOT, "[%6.1fs] %s%n", t, String.format(Locale.ROOT, format, args));
    out.flush();
  }

  private static String seconds(long millis) {
    return millis < 0 ? "-" : String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
