package dev.shardberg.job.cli;

import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.verify.VerifyReport;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    description = {
      "Reconciles the Iceberg table against the shards: per-shard row counts and content checksums,",
      "plus the first differing keys. Exit code 0 only when every shard matches.",
      "Run it when the sources are quiet (or the pipeline caught up); rows changing meanwhile show as differences."
    })
public class VerifyCommand implements Callable<Integer> {
  @Mixin ConfigOption config;
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--max-differences",
      defaultValue = "10",
      description = "Differing keys to list per shard (default ${DEFAULT-VALUE}).")
  int maxDifferences;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    VerifyReport report = Reconciliation.verify(config.load(), maxDifferences);
    out.print(report.render());
    out.flush();
    return report.matches() ? 0 : ShardbergCli.EXIT_PROBLEM;
  }
}
