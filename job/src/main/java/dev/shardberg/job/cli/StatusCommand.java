package dev.shardberg.job.cli;

import dev.shardberg.job.PipelineStatus;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "status", mixinStandardHelpOptions = true,
    description = {"Shows what the pipeline committed, read from the table's snapshot summaries:",
        "last committed checkpoint, time of the last commit, freshness, per-shard record counts."})
public class StatusCommand implements Callable<Integer> {
  @Mixin ConfigOption config;
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--history", defaultValue = "5", description = "How many recent commits to list (default ${DEFAULT-VALUE}).")
  int history;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PipelineStatus status = PipelineStatus.read(config.load());
    out.print(status.render(history));
    out.flush();
    return 0;
  }
}
