package dev.shardberg.job.cli;

import dev.shardberg.job.PipelineStatus;
import dev.shardberg.job.TableHealthReport;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.observe.HostLag;
import dev.shardberg.job.observe.StatusReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "Shows what the pipeline committed, read from the table's snapshot summaries:",
      "last committed checkpoint, time of the last commit, freshness, per-shard record counts and newest committed change;",
      "then the table's health per shard: data and delete files, average file size, rows read per live row, last compaction;",
      "with --flink-rest, per MySQL host the running job's binlog lag and connection state."
    })
public class StatusCommand implements Callable<Integer> {
  @Mixin ConfigOption config;
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--history",
      defaultValue = "5",
      description = "How many recent commits to list (default ${DEFAULT-VALUE}).")
  int history;

  @Option(
      names = "--json",
      description = "Print one JSON document instead of the text (fields: docs/observability.md).")
  boolean json;

  @Option(
      names = "--flink-rest",
      paramLabel = "URL",
      description =
          "Flink REST address of the running job (a cluster's JobManager, or http://localhost:N of `run --web-port N`):"
              + " adds per-host binlog lag and connection state.")
  String flinkRest;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    ShardbergConfig loaded = config.load();
    PipelineStatus status = PipelineStatus.read(loaded);
    StatusReport report = report(status, loaded.pipeline().id());
    if (json) {
      out.print(report.json());
    } else {
      out.print(status.render(history));
      out.print(report.renderLag());
      out.println();
      out.print(TableHealthReport.read(loaded).render());
    }
    out.flush();
    return 0;
  }

  private StatusReport report(PipelineStatus status, String pipelineId) {
    if (flinkRest == null) {
      return StatusReport.of(status, null, null);
    }
    try {
      return StatusReport.of(status, HostLag.read(flinkRest, pipelineId), null);
    } catch (IOException | RuntimeException e) {
      return StatusReport.of(
          status,
          List.of(),
          "cannot read the running job's metrics at " + flinkRest + ": " + e.getMessage());
    }
  }
}
