package dev.shardberg.job.cli;

import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.config.ShardbergConfig;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.TimeUtils;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Runs the pipeline: snapshot, then binlog, into the Iceberg table, until cancelled.",
      "Under `flink run` it is submitted to the cluster (resume with `flink run -s`); from this CLI it runs in a local",
      "MiniCluster, keeps its checkpoints (pipeline.checkpoint-dir, default ./"
          + LocalCheckpoints.DEFAULT_ROOT
          + "/<pipeline.id>)",
      "and resumes from the newest one by itself. Locally it prints one line per phase and a progress line;",
      "Ctrl-C stops it with a final savepoint that the next run resumes from."
    })
public class RunCommand implements Callable<Integer> {
  @Mixin ConfigOption config;

  @Option(
      names = "--fresh",
      description =
          "Local run: ignore retained checkpoints and start without state (refused on a table this pipeline"
              + " already wrote, unless pipeline.on-stateless-start is resnapshot).")
  boolean fresh;

  @Option(
      names = "--web-port",
      paramLabel = "PORT",
      description =
          "Local run: serve Flink's web dashboard and REST API on this port of localhost (job graph, checkpoints,"
              + " backpressure, metrics; `status --flink-rest http://localhost:PORT` reads the lag per host from it).")
  Integer webPort;

  @Option(
      names = "--progress-interval",
      paramLabel = "DURATION",
      defaultValue = "10s",
      description = "Local run: how often the progress line is printed (default ${DEFAULT-VALUE}).")
  String progressInterval;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    ShardbergConfig loaded = config.load();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    if (!(env instanceof LocalStreamEnvironment)) {
      // under `flink run`: the cluster's environment; attached, the client stays and reads new
      // shard tables by a savepoint and a resume
      return new ClusterRun(loaded, spec.commandLine().getOut()).run(env);
    }
    Duration every;
    try {
      every =
          TimeUtils.parseDuration(
              progressInterval); // the parser of the config's durations (Flink's)
    } catch (IllegalArgumentException e) {
      every = null;
    }
    if (every == null || every.isZero() || every.isNegative()) {
      throw new ParameterException(
          spec.commandLine(),
          "Cannot use --progress-interval " + progressInterval + ": write e.g. 2s or 1min");
    }
    // Flink's local cluster always serves its REST API (on a random port without --web-port); the
    // port is
    // chosen here so the progress line can read the job's metrics (snapshot rows, lag per host)
    // from it
    int restPort = webPort != null ? webPort : freeLocalPort();
    Configuration extra = new Configuration();
    extra.set(RestOptions.BIND_ADDRESS, "localhost");
    extra.set(RestOptions.ADDRESS, "localhost");
    extra.set(RestOptions.PORT, restPort);
    extra.set(RestOptions.BIND_PORT, String.valueOf(restPort));
    // the REST layer answers from its cache of the metrics and refreshes it, in the background,
    // when asked
    // again after this long (Flink's default, 10 s, made the host lines lag behind): each progress
    // line
    // asks, then reads the refreshed values (LocalRun.readHosts)
    extra.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofMillis(500));
    env = LocalCheckpoints.environment(loaded, fresh, spec.commandLine().getOut(), extra);
    return new LocalRun(
            loaded, spec.commandLine().getOut(), System.console() != null, every, webPort, restPort)
        .run(
            env,
            savepoint ->
                LocalCheckpoints.resumeEnvironment(loaded, java.net.URI.create(savepoint), extra));
  }

  private static int freeLocalPort() throws java.io.IOException {
    try (java.net.ServerSocket socket =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
