package dev.shardberg.job.cli;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.ShardCounts;
import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.PipelineStatus;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.observe.Durations;
import dev.shardberg.job.observe.HostLag;
import dev.shardberg.job.observe.SnapshotProgress;
import dev.shardberg.router.discovery.ShardDiscovery;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * A local {@code run} on the console: one line per phase (assembled, running, first commit,
 * stopping, stopped) and a progress line every {@code progressEvery} (commits, rows, rows/s,
 * freshness, the binlog lag per host and, while the snapshot is read, its rows, rows/s and ETA —
 * the last two from the job's metrics through the local REST API on {@code restPort}). In a
 * terminal the progress line is rewritten in place; otherwise (a pipe, a file, a test) every
 * progress line is a plain line. A job that stops by itself (a failure Flink does not restart, or
 * restarts no more) ends the console with two lines, {@code Stopped:} the reason ({@link
 * StopReason}) and {@code To go on:} the way on, and the run exits 1; its stack trace goes to the
 * log only.
 *
 * <p>Ctrl-C (SIGINT) or SIGTERM stops the job with a final savepoint under the checkpoint directory
 * ({@link LocalCheckpoints#STOP_SAVEPOINTS}), which the next {@code run} resumes from, and prints
 * where it is. The signals are taken before the JVM begins to shut down (a shutdown hook would race
 * Flink's own hooks tearing the MiniCluster down).
 */
final class LocalRun {
  private static final Logger LOG = LoggerFactory.getLogger(LocalRun.class);

  private final ShardbergConfig config;
  private final PrintWriter out;
  private final boolean terminal;
  private final Duration progressEvery;
  private final Integer webPort;
  private final int restPort;

  /**
   * Counted down by a stop signal or the end of the job: whichever comes first ends the wait
   * between progress lines.
   */
  private volatile CountDownLatch wake = new CountDownLatch(1);

  /** How long a progress line waits for the job's metrics to be read after it was asked for. */
  private static final Duration FRESH_READING_WAIT = Duration.ofSeconds(2);

  private volatile boolean stopRequested;

  /**
   * @param webPort the port the user asked the dashboard on; null when not asked
   * @param restPort the port of the local Flink REST API (the web port, or one the CLI picked)
   */
  LocalRun(
      ShardbergConfig config,
      PrintWriter out,
      boolean terminal,
      Duration progressEvery,
      Integer webPort,
      int restPort) {
    this.config = config;
    this.out = out;
    this.terminal = terminal;
    this.progressEvery = progressEvery;
    this.webPort = webPort;
    this.restPort = restPort;
  }

  /**
   * Runs until stopped or failed. With {@code resumeFrom} (a savepoint path → the environment that
   * resumes from it; null: never) the run also reads shard tables created while it runs ({@code
   * tables.new-shards: adopt}): every {@code tables.discovery-interval} it runs discovery as a
   * start would ({@link NewShardCheck}); a new shard table makes it stop the job with a savepoint
   * and resume from it with the table in the plan — the source reads it alone from a fresh
   * snapshot, every other shard goes on from its binlog position.
   */
  int run(
      StreamExecutionEnvironment first,
      java.util.function.Function<String, StreamExecutionEnvironment> resumeFrom)
      throws Exception {
    StreamExecutionEnvironment env = first;
    boolean signalsHandled = false;
    java.util.Set<Integer> adopted = null;
    ShardbergPipeline.Assembled before = null;
    while (true) {
      ShardbergPipeline.Assembled assembled = ShardbergPipeline.build(env, config);
      Map<String, Integer> perHost = new java.util.TreeMap<>();
      assembled.plan().tablesByHost().forEach((host, tables) -> perHost.put(host, tables.size()));
      line(
          "Assembled: %d shards on %d host%s (%s) -> %s, %s",
          assembled.plan().shardCount(),
          perHost.size(),
          perHost.size() == 1 ? "" : "s",
          perHost.entrySet().stream()
              .map(e -> e.getKey() + ": " + e.getValue())
              .collect(Collectors.joining(", ")),
          config.target().qualifiedName(),
          dev.shardberg.job.DeleteModes.describe(
              assembled.deleteMode(), assembled.deleteModeChosen()));
      if (before != null) {
        // what this resume's discovery found new: the adopted tables, and any created since
        List<dev.shardberg.router.ShardTable> added =
            NewShardCheck.added(before.plan(), assembled.plan());
        line(
            "New in this run, each read alone from a fresh snapshot: %s",
            added.isEmpty() ? "none (gone again?)" : NewShardCheck.describe(added));
        adopted =
            added.stream()
                .map(dev.shardberg.router.ShardTable::shard)
                .collect(Collectors.toCollection(java.util.TreeSet::new));
      }
      before = assembled;
      CountDownLatch jobWake = new CountDownLatch(1);
      wake = jobWake;
      JobClient job = env.executeAsync(assembled.jobName());
      // The client keeps the job's result: it still answers once the MiniCluster has shut down,
      // which it does as soon as the job ends (after that, asking the cluster for the job's status
      // only fails with "MiniCluster is not yet running or has already been shut down")
      CompletableFuture<JobExecutionResult> result = job.getJobExecutionResult();
      result.whenComplete((r, e) -> jobWake.countDown());
      URI checkpoints = LocalCheckpoints.directory(config);
      line(
          "Running: Flink job %s, one commit per checkpoint (every %s), checkpoints under %s; Ctrl-C stops with a final savepoint",
          job.getJobID(),
          Durations.humanToMinutes(config.pipeline().checkpointInterval()),
          checkpoints);
      if (webPort != null) {
        line(
            "Flink dashboard: http://localhost:%d (status --flink-rest http://localhost:%d shows the lag per host)",
            webPort, webPort);
      }
      if (!signalsHandled) {
        handleStopSignals();
        signalsHandled = true;
      } else if (stopRequested) {
        jobWake.countDown(); // a signal while the resumed job was being built
      }
      Table table = dev.shardberg.job.Catalogs.loadTable(config.target());
      boolean resumed =
          env.getConfiguration().getOptional(StateRecoveryOptions.SAVEPOINT_PATH).isPresent();
      Progress progress =
          new Progress(
              job.getJobID().toString(),
              Instant.now(),
              adopted != null
                  ? adopted
                  : snapshotting(
                      assembled.plan().shardNumbers(), resumed, config.tables().rereadShards()),
              ShardDiscovery.estimatedRows(
                  ShardbergPipeline.logicalTable(config).hosts(), assembled.plan()));
      Duration every = config.tables().discoveryInterval();
      Instant nextCheck = Instant.now().plus(every);
      // tables.new-shards: capture: when each new table was first found unread by the job
      java.util.Map<String, Long> unreadSince = new java.util.HashMap<>();
      String said = null; // the last line about new shard tables not read, said once
      String savepoint = null;
      while (savepoint == null) {
        jobWake.await(progressEvery.toMillis(), TimeUnit.MILLISECONDS);
        if (result.isDone()) {
          return ended(result, checkpoints);
        }
        if (stopRequested) {
          endProgress();
          return stop(job, checkpoints);
        }
        List<HostLag> hosts = progress(table, progress);
        if (resumeFrom == null || Instant.now().isBefore(nextCheck)) {
          continue;
        }
        nextCheck = Instant.now().plus(every);
        NewShardCheck.Outcome outcome =
            NewShardCheck.check(
                config,
                assembled.plan(),
                () -> ShardbergPipeline.discover(config),
                hosts,
                unreadSince,
                System.currentTimeMillis());
        if (outcome instanceof NewShardCheck.Adopt adopt) {
          savepoint = adopt(job, result, adopt, checkpoints);
        } else if (outcome instanceof NewShardCheck.Stop refused) {
          return stopForShards(job, refused, checkpoints);
        } else if (outcome instanceof NewShardCheck.Left left) {
          said = sayOnce(said, left.added(), left.why(), true);
        } else if (outcome instanceof NewShardCheck.Later later) {
          if (later.added().isEmpty()) {
            LOG.warn("Pipeline {}: {}", config.pipeline().id(), later.why());
          } else {
            said = sayOnce(said, later.added(), later.why(), false);
          }
        }
      }
      awaitPortFree();
      env = resumeFrom.apply(savepoint);
    }
  }

  /**
   * Stops the job with a savepoint to read {@code adopt}'s tables; the savepoint's path, or null
   * when it could not be taken (the job goes on; the next check tries again).
   */
  private String adopt(
      JobClient job,
      CompletableFuture<JobExecutionResult> result,
      NewShardCheck.Adopt adopt,
      URI checkpoints)
      throws Exception {
    line(
        "New shard table(s) on MySQL: %s. Reading them: a savepoint, then a resume from it that reads them alone"
            + " from a fresh snapshot; the other shards go on from their binlog position…",
        NewShardCheck.describe(adopt.added()));
    LOG.info(
        "Pipeline {}: stopping with a savepoint to read new shard table(s) {}",
        config.pipeline().id(),
        NewShardCheck.describe(adopt.added()));
    String target =
        checkpoints.toString().replaceAll("/$", "") + "/" + LocalCheckpoints.STOP_SAVEPOINTS;
    String savepoint;
    try {
      savepoint =
          job.stopWithSavepoint(false, target, SavepointFormatType.CANONICAL)
              .get(5, TimeUnit.MINUTES);
    } catch (Exception e) {
      LOG.warn(
          "Pipeline {}: the savepoint to read new shard tables failed", config.pipeline().id(), e);
      if (result.isDone()) {
        throw e; // the job ended meanwhile: ended() says how
      }
      line(
          "Cannot take the savepoint to read them now (%s); the job goes on and the next check tries again",
          rootMessage(e));
      return null;
    }
    try {
      result.get(2, TimeUnit.MINUTES);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      LOG.debug("The stopped job's result: {}", e.toString());
    }
    line("Savepoint %s taken; resuming from it with the new shard table(s)", savepoint);
    return savepoint;
  }

  /**
   * New shard tables that cannot be read as they are (a start would refuse them the same way): stop
   * with a savepoint and say why and how to go on.
   */
  private int stopForShards(JobClient job, NewShardCheck.Stop refused, URI checkpoints)
      throws Exception {
    LOG.error(
        "Pipeline {}: shard tables on MySQL cannot be read: {}",
        config.pipeline().id(),
        refused.message());
    line("The shard tables on MySQL changed and cannot be read as they are now:");
    int stopped = stop(job, checkpoints);
    line("Stopped: %s", StopReason.oneLine(refused.message()));
    line(
        "To go on: do what the line above says, then `run` with the same config resumes from %s.",
        stopped == 0 ? "the savepoint above" : "the newest state kept");
    return ShardbergCli.EXIT_PROBLEM;
  }

  /** Says once per set of tables and reason why new shard tables are not read (yet). */
  private String sayOnce(
      String said, List<dev.shardberg.router.ShardTable> added, String why, boolean notByThisRun) {
    String text =
        notByThisRun
            ? String.format(
                "New shard table(s) on MySQL: %s. Not read by this run: %s",
                NewShardCheck.describe(added), why)
            : String.format(
                "New shard table(s) on MySQL: %s. Not read yet: %s; the run looks again every %s",
                NewShardCheck.describe(added),
                why,
                Durations.humanToMinutes(config.tables().discoveryInterval()));
    if (!text.equals(said)) {
      line("%s", text);
      LOG.warn("Pipeline {}: {}", config.pipeline().id(), text);
    }
    return text;
  }

  /**
   * Waits until the REST port of the stopped MiniCluster is free again (it shuts down right after
   * its job ended), at most a minute: the resumed job's MiniCluster binds the same port.
   */
  private void awaitPortFree() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (System.nanoTime() < deadline) {
      try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
        probe.setReuseAddress(true);
        probe.bind(
            new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), restPort));
        return;
      } catch (java.io.IOException inUse) {
        Thread.sleep(200);
      }
    }
    LOG.warn("Port {} is still taken a minute after the job stopped", restPort);
  }

  /**
   * The job ended by itself: on a failure the console ends with the reason and the way on, one line
   * each (the stack trace goes to the log file only), and the run exits {@link
   * ShardbergCli#EXIT_PROBLEM}.
   */
  private int ended(CompletableFuture<JobExecutionResult> result, URI checkpoints)
      throws Exception {
    endProgress();
    Throwable failure;
    try {
      result.get();
      line("Job ended: FINISHED");
      return 0;
    } catch (ExecutionException e) {
      failure = e.getCause() == null ? e : e.getCause();
    }
    StopReason reason = StopReason.of(failure);
    LOG.error("Pipeline {} stopped: {}", config.pipeline().id(), reason.message(), failure);
    String resume;
    try {
      resume =
          LocalCheckpoints.latest(checkpoints)
              .map(
                  r ->
                      "`run` with the same config resumes from "
                          + r
                          + " (the newest state kept; --fresh starts without state)")
              .orElse("no checkpoint was kept, so `run` with the same config starts without state");
    } catch (java.io.IOException | RuntimeException e) {
      LOG.warn("Cannot list the retained checkpoints under {}", checkpoints, e);
      resume =
          "`run` with the same config resumes from the newest state under "
              + checkpoints
              + " (which cannot be listed now: "
              + StopReason.oneLine(e.getMessage())
              + ")";
    }
    String logFile = System.getProperty("shardberg.log.file");
    String details = logFile == null ? "" : " The stack trace is in " + logFile + ".";
    line("Stopped: %s", reason.message());
    if (reason.cancelled()) {
      line("To go on: %s.%s", resume, details);
    } else if (reason.ours()) {
      line("To go on: do what the line above says; %s.%s", resume, details);
    } else {
      line("To go on: remove the cause (see the stack trace); %s.%s", resume, details);
    }
    return ShardbergCli.EXIT_PROBLEM;
  }

  private int stop(JobClient job, URI checkpoints) throws Exception {
    line(
        "Stopping: taking a final savepoint (the commit of everything read so far), then stopping the job…");
    String target =
        checkpoints.toString().replaceAll("/$", "") + "/" + LocalCheckpoints.STOP_SAVEPOINTS;
    try {
      String savepoint =
          job.stopWithSavepoint(false, target, SavepointFormatType.CANONICAL)
              .get(5, TimeUnit.MINUTES);
      line(
          "Stopped. State: savepoint %s; `run` with the same config resumes from it (--fresh ignores it).",
          savepoint);
      return 0;
    } catch (Exception e) {
      LOG.warn("Stop with savepoint failed; cancelling", e);
      job.cancel().get(2, TimeUnit.MINUTES);
      String retained =
          LocalCheckpoints.latest(checkpoints).map(Object::toString).orElse("none yet");
      line(
          "Stopped without a final savepoint (%s). State: %s; `run` resumes from it.",
          rootMessage(e), retained);
      return ShardbergCli.EXIT_PROBLEM;
    }
  }

  private void handleStopSignals() {
    for (String name : List.of("INT", "TERM")) {
      try {
        Signal.handle(
            new Signal(name),
            signal -> {
              stopRequested = true;
              wake.countDown();
            });
      } catch (IllegalArgumentException unsupported) {
        LOG.debug("Cannot handle SIG{} here; the JVM's default applies", name);
      }
    }
    if (sigintIgnored()) {
      line(
          "Ctrl-C (SIGINT) is ignored by this process (started in the background): stop it with `kill %d` (SIGTERM)",
          ProcessHandle.current().pid());
    }
  }

  /**
   * Whether this process inherited SIGINT ignored (a start in the background without job control),
   * which no Java handler can catch; read from Linux's {@code /proc/self/status}, false elsewhere.
   */
  static boolean sigintIgnored() {
    try {
      for (String line :
          java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
        if (line.startsWith("SigIgn:")) {
          return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & (1L << 1))
              != 0;
        }
      }
    } catch (java.io.IOException | RuntimeException notLinux) {
      LOG.debug("Cannot read this process's ignored signals: {}", notLinux.toString());
    }
    return false;
  }

  /** Counters between two progress lines. */
  private static final class Progress {
    final String flinkJobId;
    final Instant started;
    final java.util.Set<Integer> snapshotting;
    final Map<Integer, Long> estimatedRows;
    boolean firstCommitSeen;
    long lastRows = -1;
    Instant lastAt;
    SnapshotProgress lastSnapshot;
    Instant lastSnapshotAt;

    Progress(
        String flinkJobId,
        Instant started,
        java.util.Set<Integer> snapshotting,
        Map<Integer, Long> estimatedRows) {
      this.flinkJobId = flinkJobId;
      this.started = started;
      this.lastAt = started;
      this.lastSnapshotAt = started;
      this.snapshotting = snapshotting;
      this.estimatedRows = estimatedRows;
    }
  }

  /** Prints a progress line; returns the host watches' readings it was made of (empty if none). */
  private List<HostLag> progress(Table table, Progress p) {
    List<HostLag> hosts = List.of();
    try {
      PipelineStatus status = PipelineStatus.of(table, config.pipeline().id(), Clock.systemUTC());
      long added = status.totals().values().stream().mapToLong(ShardCounts::addedRecords).sum();
      long deleted = status.totals().values().stream().mapToLong(ShardCounts::deletedRecords).sum();
      Instant now = status.now();
      Instant asked = Instant.now();
      hosts = readHosts(asked);
      String snapshot = snapshot(hosts, p, now);
      if (!status.committed()) {
        progressLine(
            "waiting for the first commit (%s since start)%s",
            Durations.humanToMinutes(Duration.between(p.started, now)), snapshot);
        return hosts;
      }
      CommitRecord last = status.commits().get(0);
      if (!p.firstCommitSeen) {
        String first = firstCommitLine(status, p.flinkJobId);
        if (first != null) {
          p.firstCommitSeen = true;
          line("%s", first);
        }
      }
      long rows = added + deleted;
      double perSecond =
          p.lastRows < 0
              ? 0
              : (rows - p.lastRows)
                  * 1000.0
                  / Math.max(1, Duration.between(p.lastAt, now).toMillis());
      p.lastRows = rows;
      p.lastAt = now;
      progressLine(
          "checkpoint %d committed %s ago; +%d -%d rows in %d shards, %.0f rows/s%s%s",
          last.checkpointId(),
          Durations.humanToMinutes(status.sinceLastCommit()),
          added,
          deleted,
          status.totals().size(),
          perSecond,
          snapshot,
          hosts(hosts, Instant.now(), asked));
    } catch (RuntimeException e) {
      progressLine("cannot read the table's progress: %s", rootMessage(e));
    }
    return hosts;
  }

  /**
   * The shards this run reads a snapshot of: every shard at a start without state; on a resume the
   * ones read again ({@code tables.reread-shards}), the others going on from their binlog position.
   * (A resume during the initial snapshot also goes on with the snapshot of shards not done yet:
   * they count once their rows pass, {@link SnapshotProgress}.)
   */
  static java.util.Set<Integer> snapshotting(
      java.util.Set<Integer> planShards, boolean resumed, java.util.Set<Integer> reread) {
    if (!resumed) {
      return java.util.Set.copyOf(planShards);
    }
    java.util.Set<Integer> shards = new java.util.TreeSet<>(reread);
    shards.retainAll(planShards);
    return shards;
  }

  /**
   * "First commit: …" once this run (Flink job {@code flinkJobId}) has committed, naming its oldest
   * commit (several can land between two progress lines) with that commit's rows; null before.
   * Commits of the runs this one resumed from are not this run's.
   */
  static String firstCommitLine(PipelineStatus status, String flinkJobId) {
    CommitRecord first = null;
    for (CommitRecord c : status.commits()) { // newest first
      if (flinkJobId.equals(c.flinkJobId())) {
        first = c;
      }
    }
    if (first == null) {
      return null;
    }
    long added = first.shardCounts().values().stream().mapToLong(ShardCounts::addedRecords).sum();
    return String.format(
        "First commit: checkpoint %d, %d rows in %d shards",
        first.checkpointId(), added, first.shardCounts().size());
  }

  /**
   * The job's view per host, as read at or after {@code asked}. Flink's REST API answers from its
   * cache of the job's metrics and refreshes the cache in the background when asked, so a first
   * answer holds what the previous line read (a host lost since would still show reachable): asked
   * again, briefly, until every host's gauges were read after {@code asked} (older ones are then
   * shown with their age). Empty when the REST API cannot be read (the line then goes without it).
   */
  private List<HostLag> readHosts(Instant asked) {
    long deadline =
        System.nanoTime() + Math.min(FRESH_READING_WAIT.toNanos(), progressEvery.toNanos());
    try {
      List<HostLag> hosts = HostLag.read("http://localhost:" + restPort, config.pipeline().id());
      while (!HostLag.sampledSince(hosts, asked) && System.nanoTime() < deadline) {
        Thread.sleep(100);
        hosts = HostLag.read("http://localhost:" + restPort, config.pipeline().id());
      }
      return hosts;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    } catch (Exception e) {
      LOG.debug("Cannot read the job's host metrics at localhost:{}: {}", restPort, e.toString());
      return List.of();
    }
  }

  /** "; snapshot: …" while snapshot rows are being read, else "". */
  private static String snapshot(List<HostLag> hosts, Progress p, Instant now) {
    if (hosts.isEmpty()) {
      return "";
    }
    SnapshotProgress current = SnapshotProgress.of(hosts);
    String text =
        current.describe(
            p.lastSnapshot,
            Duration.between(p.lastSnapshotAt, now),
            p.snapshotting,
            p.estimatedRows);
    p.lastSnapshot = current;
    p.lastSnapshotAt = now;
    return text == null ? "" : "; snapshot: " + text;
  }

  private static String hosts(List<HostLag> hosts, Instant now, Instant notBefore) {
    return hosts.isEmpty()
        ? ""
        : "; "
            + hosts.stream().map(h -> h.describe(now, notBefore)).collect(Collectors.joining(", "));
  }

  private boolean progressOpen;

  private void progressLine(String format, Object... args) {
    String text = "progress: " + String.format(format, args);
    if (terminal) {
      out.print("\r\033[2K" + text);
      progressOpen = true;
    } else {
      out.println(text);
    }
    out.flush();
  }

  private void endProgress() {
    if (progressOpen) {
      out.println();
      progressOpen = false;
    }
  }

  private void line(String format, Object... args) {
    endProgress();
    out.println(String.format(format, args));
    out.flush();
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }
}
