package dev.shardberg.job;

import dev.shardberg.job.config.ShardbergConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Where a local {@code run} keeps its checkpoints, and which one it resumes from.
 *
 * <p>Flink writes a retained checkpoint as {@code <dir>/<flink-job-id>/chk-<n>/_metadata}; the
 * {@code _metadata} file appears only when the checkpoint has completed, so a directory without it
 * (a run killed mid-checkpoint) is never picked. Every run of the pipeline gets a new Flink job id,
 * so the newest checkpoint is the one with the newest {@code _metadata}, whatever its number (a run
 * started with {@code --fresh} counts from 1 again). Checkpoints are retained on cancellation and
 * on a killed process (see {@link ShardbergPipeline}); Flink keeps the last one of each run. A run
 * stopped with Ctrl-C takes a final savepoint under {@code <dir>/}{@value #STOP_SAVEPOINTS}{@code
 * /savepoint-…}, which counts like a checkpoint (newest {@code _metadata} wins).
 */
public final class LocalCheckpoints {
  /**
   * Default root of a local run's checkpoints, relative to the working directory (beside the demo's
   * data).
   */
  public static final String DEFAULT_ROOT = "shardberg-data/checkpoints";

  private static final Pattern CHECKPOINT_DIR =
      Pattern.compile("chk-(\\d+)|savepoint-[0-9a-f]+-[0-9a-f]+");

  /**
   * Where a local {@code run} stopped with Ctrl-C writes its final savepoint, under {@link
   * #directory}.
   */
  public static final String STOP_SAVEPOINTS = "stopped";

  private LocalCheckpoints() {}

  /**
   * A completed, retained checkpoint: its directory (the value for {@code -s}) and number; or the
   * savepoint a stopped {@code run} took ({@code checkpointId} -1).
   */
  public record Retained(URI directory, long checkpointId, long modifiedMillis) {
    @Override
    public String toString() {
      return checkpointId < 0
          ? "the savepoint taken when a run stopped, at " + directory
          : "checkpoint " + checkpointId + " at " + directory;
    }
  }

  /**
   * {@code pipeline.checkpoint-dir} when set, else {@code shardberg-data/checkpoints/<pipeline.id>}
   * under the working directory.
   */
  public static URI directory(ShardbergConfig config) {
    String configured = config.pipeline().checkpointDir();
    if (configured != null) {
      URI uri = URI.create(configured);
      return uri.getScheme() == null ? Path.of(configured).toAbsolutePath().toUri() : uri;
    }
    String name = config.pipeline().id().replaceAll("[^A-Za-z0-9_.-]", "_");
    return Path.of(DEFAULT_ROOT, name).toAbsolutePath().toUri();
  }

  /** The newest completed checkpoint under {@code directory}, if any (any Flink file system). */
  public static Optional<Retained> latest(URI directory) throws IOException {
    org.apache.flink.core.fs.Path root = new org.apache.flink.core.fs.Path(directory);
    FileSystem fs = root.getFileSystem();
    if (!fs.exists(root)) {
      return Optional.empty();
    }
    Optional<Retained> newest = Optional.empty();
    for (FileStatus job : list(fs, root)) {
      if (!job.isDir()) {
        continue;
      }
      for (FileStatus chk : list(fs, job.getPath())) {
        Matcher m = CHECKPOINT_DIR.matcher(chk.getPath().getName());
        if (!chk.isDir() || !m.matches()) {
          continue;
        }
        org.apache.flink.core.fs.Path metadata =
            new org.apache.flink.core.fs.Path(chk.getPath(), "_metadata");
        if (!fs.exists(metadata)) {
          continue;
        }
        long id = m.group(1) == null ? -1 : Long.parseLong(m.group(1));
        Retained candidate =
            new Retained(
                chk.getPath().toUri(), id, fs.getFileStatus(metadata).getModificationTime());
        if (newest.isEmpty() || NEWEST_FIRST.compare(candidate, newest.get()) < 0) {
          newest = Optional.of(candidate);
        }
      }
    }
    return newest;
  }

  private static final Comparator<Retained> NEWEST_FIRST =
      Comparator.comparingLong(Retained::modifiedMillis)
          .thenComparingLong(Retained::checkpointId)
          .reversed();

  private static FileStatus[] list(FileSystem fs, org.apache.flink.core.fs.Path dir)
      throws IOException {
    FileStatus[] children = fs.listStatus(dir);
    return children == null ? new FileStatus[0] : children;
  }

  /**
   * The environment of a local {@code run}: a MiniCluster that checkpoints under {@link #directory}
   * and restores the newest retained checkpoint there (none with {@code fresh}), saying which on
   * {@code out}.
   */
  public static StreamExecutionEnvironment environment(
      ShardbergConfig config, boolean fresh, PrintWriter out) throws IOException {
    return environment(config, fresh, out, new Configuration());
  }

  /**
   * As {@link #environment(ShardbergConfig, boolean, PrintWriter)}, with {@code extra} settings
   * (the web port).
   */
  public static StreamExecutionEnvironment environment(
      ShardbergConfig config, boolean fresh, PrintWriter out, Configuration extra)
      throws IOException {
    URI dir = directory(config);
    Optional<Retained> latest = fresh ? Optional.empty() : latest(dir);
    if (latest.isPresent()) {
      out.println("Resuming from " + latest.get() + " (--fresh starts without state instead)");
    } else if (fresh) {
      out.println("Starting without state (--fresh); checkpoints go to " + dir);
    } else {
      out.println("No retained checkpoint under " + dir + ": starting without state");
    }
    out.flush();
    Configuration conf = configuration(dir, latest);
    conf.addAll(extra);
    return StreamExecutionEnvironment.getExecutionEnvironment(conf);
  }

  /**
   * The environment of a local {@code run} that resumes from {@code savepoint}, one it has just
   * taken itself (to read shard tables created while it ran), with {@code extra} settings.
   */
  public static StreamExecutionEnvironment resumeEnvironment(
      ShardbergConfig config, URI savepoint, Configuration extra) {
    Configuration conf =
        configuration(directory(config), Optional.of(new Retained(savepoint, -1, 0)));
    conf.addAll(extra);
    return StreamExecutionEnvironment.getExecutionEnvironment(conf);
  }

  /**
   * The local environment's configuration: checkpoints under {@code directory}, restored from
   * {@code resumeFrom}.
   */
  public static Configuration configuration(URI directory, Optional<Retained> resumeFrom) {
    Configuration conf = new Configuration();
    conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, directory.toString());
    resumeFrom.ifPresent(
        r -> conf.set(StateRecoveryOptions.SAVEPOINT_PATH, r.directory().toString()));
    return conf;
  }
}
