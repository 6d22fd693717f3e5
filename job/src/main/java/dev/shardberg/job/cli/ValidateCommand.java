package dev.shardberg.job.cli;

import dev.shardberg.job.TablePlan;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

@Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    description = {
      "Checks the config, discovers the shards, compares their schemas and prints the table plan.",
      "Connects to MySQL and the catalog, writes nothing."
    })
public class ValidateCommand implements Callable<Integer> {
  @Mixin ConfigOption config;
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    out.print(TablePlan.of(config.load()).render());
    out.println("OK: the config is valid; `run` would start the pipeline as planned above.");
    out.flush();
    return 0;
  }
}
