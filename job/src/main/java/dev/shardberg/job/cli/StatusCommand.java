package dev.shardberg.job.cli;

import dev.shardberg.job.PipelineStatus;
import dev.shardberg.job.TableHealthReport;
import dev.shardberg.job.config.ShardbergConfig;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "status", mixinStandardHelpOptions = true,
    description = {"Shows what the pipeline committed, read from the table's snapshot summaries:",
        "last committed checkpoint, time of the last commit, freshness, per-shard record counts;",
        "then the table's health per shard: data and delete files, average file size, rows read per live row, last compaction."})
public class StatusCommand implements Callable<Integer> {
  @Mixin ConfigOption config;
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--history", defaultValue = "5", description = "How many recent commits to list (default ${DEFAULT-VALUE}).")
  int history;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    ShardbergConfig loaded = config.load();
    PipelineStatus status = PipelineStatus.read(loaded);
    out.print(status.render(history));
    out.println();
    out.print(TableHealthReport.read(loaded).render());
    out.flush();
    return 0;
  }
}
