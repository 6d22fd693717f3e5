package dev.shardberg.job.cli;

import dev.shardberg.job.ShardbergPipeline;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "run", mixinStandardHelpOptions = true,
    description = {"Runs the pipeline: snapshot, then binlog, into the Iceberg table, until cancelled.",
        "Under `flink run` it is submitted to the cluster; from this CLI it runs in a local MiniCluster."})
public class RunCommand implements Callable<Integer> {
  @Mixin ConfigOption config;

  @Override
  public Integer call() throws Exception {
    ShardbergPipeline.run(config.load());
    return 0;
  }
}
