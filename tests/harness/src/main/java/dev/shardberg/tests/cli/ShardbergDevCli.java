package dev.shardberg.tests.cli;

import dev.shardberg.job.cli.ShardbergCli;
import dev.shardberg.tests.demo.DemoCommand;
import picocli.CommandLine;

/**
 * The full local CLI behind {@code bin/shardberg}: the job's commands (run, validate, status,
 * verify) plus {@code demo}, which needs the embedded MariaDB and a local Flink and therefore lives
 * here, outside the {@code flink run} jar.
 */
public final class ShardbergDevCli {
  private ShardbergDevCli() {}

  public static CommandLine commandLine() {
    CommandLine cmd = ShardbergCli.commandLine();
    cmd.addSubcommand("demo", new DemoCommand());
    cmd.addSubcommand("bench", new dev.shardberg.tests.bench.BenchCommand());
    return cmd;
  }

  public static void main(String[] args) {
    // the binlog client logs through java.util.logging, by default to the console: to the log file
    // instead
    JavaLoggingToLog.install();
    System.exit(commandLine().execute(args));
  }
}
