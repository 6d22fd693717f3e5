package dev.shardberg.job.cli;

import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import java.util.concurrent.Callable;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "run", mixinStandardHelpOptions = true,
    description = {"Runs the pipeline: snapshot, then binlog, into the Iceberg table, until cancelled.",
        "Under `flink run` it is submitted to the cluster (resume with `flink run -s`); from this CLI it runs in a local",
        "MiniCluster, keeps its checkpoints (pipeline.checkpoint-dir, default ./" + LocalCheckpoints.DEFAULT_ROOT + "/<pipeline.id>)",
        "and resumes from the newest one by itself."})
public class RunCommand implements Callable<Integer> {
  @Mixin ConfigOption config;

  @Option(names = "--fresh",
      description = "Local run: ignore retained checkpoints and start without state (refused on a table this pipeline"
          + " already wrote, unless pipeline.on-stateless-start is resnapshot).")
  boolean fresh;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    ShardbergConfig loaded = config.load();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    if (env instanceof LocalStreamEnvironment) {
      env = LocalCheckpoints.environment(loaded, fresh, spec.commandLine().getOut());
    }
    ShardbergPipeline.run(env, loaded);
    return 0;
  }
}
