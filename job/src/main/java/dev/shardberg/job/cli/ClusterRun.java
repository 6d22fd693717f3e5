package dev.shardberg.job.cli;

import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.observe.Durations;
import dev.shardberg.job.observe.HostLag;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardTable;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code run} under {@code flink run}, attached (the default; not {@code -d}): the submitting
 * client stays while the job runs, so it reads shard tables created meanwhile as the local run does
 * ({@code tables.new-shards: adopt}): every {@code tables.discovery-interval} it runs discovery as
 * a start would ({@link NewShardCheck}, the host watches read from the cluster's REST API); a new
 * shard table makes it stop the job with a savepoint and submit it again from that savepoint with
 * the table in the plan — the source reads it alone from a fresh snapshot, every other shard goes
 * on from its binlog position. Detached ({@code flink run -d}), or with no directory to take the
 * savepoint in, it submits once and the job only warns about such tables (docs/shard-fleet.md).
 */
final class ClusterRun {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterRun.class);

  /** Sub-directory of the checkpoint directory the savepoints of adoptions go to. */
  static final String ADOPTION_SAVEPOINTS = LocalCheckpoints.STOP_SAVEPOINTS;

  /** The executor of an application-mode deployment. */
  static final String APPLICATION_MODE =
      org.apache.flink.client.deployment.application.executors.EmbeddedExecutor.NAME;

  private final ShardbergConfig config;
  private final PrintWriter out;

  ClusterRun(ShardbergConfig config, PrintWriter out) {
    this.config = config;
    this.out = out;
  }

  int run(StreamExecutionEnvironment first) throws Exception {
    ReadableConfig flink = first.getConfiguration();
    String notFollowed = whyNotFollowed(config, flink);
    if (notFollowed != null) {
      LOG.info(
          "Pipeline {}: submitted once; shard tables created while the job runs are read {} ({})",
          config.pipeline().id(),
          config.tables().newShards() == dev.shardberg.router.NewShards.CAPTURE
              ? "by the job from the binlog when made by CREATE TABLE (tables.new-shards: capture),"
                  + " at the next resume when renamed into the patterns"
              : "at the next resume",
          notFollowed);
      ShardbergPipeline.run(first, config);
      return 0;
    }
    String savepoints = savepointDirectory(config, flink);
    String rest = restUrl(flink);
    StreamExecutionEnvironment env = first;
    ShardbergPipeline.Assembled before = null;
    while (true) {
      ShardbergPipeline.Assembled assembled = ShardbergPipeline.build(env, config);
      if (before != null) {
        List<ShardTable> added = NewShardCheck.added(before.plan(), assembled.plan());
        say(
            "New in this run, each read alone from a fresh snapshot: %s",
            added.isEmpty() ? "none (gone again?)" : NewShardCheck.describe(added));
      }
      before = assembled;
      JobClient job = env.executeAsync(assembled.jobName());
      CompletableFuture<JobExecutionResult> result = job.getJobExecutionResult();
      Duration every = config.tables().discoveryInterval();
      if (config.tables().newShards() == dev.shardberg.router.NewShards.CAPTURE) {
        say(
            "Running: Flink job %s; the job reads shard tables created by CREATE TABLE from the"
                + " binlog (%s: capture), and this client looks every %s for those it does not"
                + " (renamed into the patterns) and reads them by a savepoint and a resume",
            job.getJobID(), RouterOptions.TABLES_NEW_SHARDS.key(), Durations.humanToMinutes(every));
      } else {
        say(
            "Running: Flink job %s; this client looks for new shard tables every %s and reads them"
                + " by a savepoint and a resume (%s: adopt; stop this client and the job goes on"
                + " without)",
            job.getJobID(), Durations.humanToMinutes(every), RouterOptions.TABLES_NEW_SHARDS.key());
      }
      // tables.new-shards: capture: when each new table was first found unread by the job
      java.util.Map<String, Long> unreadSince = new java.util.HashMap<>();
      String said = null;
      String savepoint = null;
      while (savepoint == null) {
        try {
          result.get(every.toMillis(), TimeUnit.MILLISECONDS);
          return 0; // the job ended by itself (bounded input, a stop from outside)
        } catch (TimeoutException e) {
          // running: look for new shard tables
        }
        List<HostLag> hosts = readHosts(rest);
        NewShardCheck.Outcome outcome =
            NewShardCheck.check(
                config,
                assembled.plan(),
                () -> ShardbergPipeline.discover(config),
                hosts,
                unreadSince,
                System.currentTimeMillis());
        if (outcome instanceof NewShardCheck.Adopt adopt) {
          savepoint = adopt(job, result, adopt, savepoints);
        } else if (outcome instanceof NewShardCheck.Stop refused) {
          stopForShards(job, refused, savepoints);
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
      Configuration resume = new Configuration();
      resume.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
      // under flink run: the cluster's environment again, its configuration with this savepoint
      env = StreamExecutionEnvironment.getExecutionEnvironment(resume);
    }
  }

  /**
   * Why this submission cannot follow the fleet (null when it can): detached, or no directory for
   * the savepoints.
   */
  static String whyNotFollowed(ShardbergConfig config, ReadableConfig flink) {
    if (!flink.get(DeploymentOptions.ATTACHED)) {
      return "a detached submission (flink run -d): the client does not stay";
    }
    if (APPLICATION_MODE.equals(flink.get(DeploymentOptions.TARGET))) {
      // this main runs in the JobManager, where Flink allows one job per application with high
      // availability: a second submission after the savepoint could fail the application
      return "an application-mode deployment: its main runs one job";
    }
    if (savepointDirectory(config, flink) == null) {
      return "no directory for the savepoint of an adoption: set pipeline.checkpoint-dir, or "
          + CheckpointingOptions.SAVEPOINT_DIRECTORY.key()
          + " or "
          + CheckpointingOptions.CHECKPOINTS_DIRECTORY.key()
          + " on the cluster";
    }
    return null;
  }

  /**
   * The cluster's savepoint directory, else the pipeline's (or the cluster's) checkpoint directory
   * with {@value #ADOPTION_SAVEPOINTS}/ under it, as the local run keeps them; null when none is
   * set.
   */
  static String savepointDirectory(ShardbergConfig config, ReadableConfig flink) {
    java.util.Optional<String> savepoints =
        flink.getOptional(CheckpointingOptions.SAVEPOINT_DIRECTORY);
    if (savepoints.isPresent()) {
      return savepoints.get();
    }
    String checkpoints =
        config.pipeline().checkpointDir() != null
            ? config.pipeline().checkpointDir()
            : flink.getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY).orElse(null);
    return checkpoints == null
        ? null
        : checkpoints.replaceAll("/$", "") + "/" + ADOPTION_SAVEPOINTS;
  }

  /** The cluster's REST API as this client reaches it. */
  static String restUrl(ReadableConfig flink) {
    String address =
        flink
            .getOptional(RestOptions.ADDRESS)
            .orElse(flink.getOptional(JobManagerOptions.ADDRESS).orElse("localhost"));
    boolean tls = flink.get(org.apache.flink.configuration.SecurityOptions.SSL_REST_ENABLED);
    return (tls ? "https://" : "http://") + address + ":" + flink.get(RestOptions.PORT);
  }

  private List<HostLag> readHosts(String rest) {
    try {
      return HostLag.read(rest, config.pipeline().id());
    } catch (Exception e) {
      LOG.debug("Cannot read the job's host metrics at {}: {}", rest, e.toString());
      return List.of();
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
      String savepoints)
      throws Exception {
    say(
        "New shard table(s) on MySQL: %s. Reading them: a savepoint, then a resume from it that"
            + " reads them alone from a fresh snapshot; the other shards go on from their binlog"
            + " position…",
        NewShardCheck.describe(adopt.added()));
    String savepoint;
    try {
      savepoint =
          job.stopWithSavepoint(false, savepoints, SavepointFormatType.CANONICAL)
              .get(5, TimeUnit.MINUTES);
    } catch (Exception e) {
      LOG.warn(
          "Pipeline {}: the savepoint to read new shard tables failed", config.pipeline().id(), e);
      if (result.isDone()) {
        result.get(); // the job ended meanwhile: its own failure says how
        return null;
      }
      say(
          "Cannot take the savepoint to read them now (%s); the job goes on and the next check"
              + " tries again",
          e);
      return null;
    }
    try {
      result.get(2, TimeUnit.MINUTES);
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("The stopped job's result: {}", e.toString());
    }
    say(
        "Savepoint %s taken; submitting the job again from it with the new shard table(s)",
        savepoint);
    return savepoint;
  }

  /**
   * New shard tables that cannot be read as they are (a start would refuse them the same way): stop
   * with a savepoint and fail the submission, saying why and how to go on.
   */
  private void stopForShards(JobClient job, NewShardCheck.Stop refused, String savepoints)
      throws Exception {
    LOG.error(
        "Pipeline {}: shard tables on MySQL cannot be read: {}",
        config.pipeline().id(),
        refused.message());
    String state;
    try {
      state =
          "savepoint "
              + job.stopWithSavepoint(false, savepoints, SavepointFormatType.CANONICAL)
                  .get(5, TimeUnit.MINUTES);
    } catch (Exception e) {
      LOG.warn("Stop with savepoint failed; the job goes on", e);
      state = "the job still runs (the savepoint failed: " + e + ")";
    }
    throw new IllegalStateException(
        String.format(
            "The shard tables on MySQL changed and cannot be read as they are now: %s. Stopped;"
                + " state: %s. To go on: do what the message says, then resume from that"
                + " savepoint (flink run -s) with the same config.",
            StopReason.oneLine(refused.message()), state));
  }

  /** Says once per set of tables and reason why new shard tables are not read (yet). */
  private String sayOnce(String said, List<ShardTable> added, String why, boolean notByThisRun) {
    String text =
        notByThisRun
            ? String.format(
                "New shard table(s) on MySQL: %s. Not read by this job: %s",
                NewShardCheck.describe(added), why)
            : String.format(
                "New shard table(s) on MySQL: %s. Not read yet: %s; looked at again every %s",
                NewShardCheck.describe(added),
                why,
                Durations.humanToMinutes(config.tables().discoveryInterval()));
    if (!text.equals(said)) {
      say("%s", text);
    }
    return text;
  }

  private void say(String format, Object... args) {
    String text = String.format(format, args);
    LOG.info("Pipeline {}: {}", config.pipeline().id(), text);
    out.println(text);
    out.flush();
  }
}
