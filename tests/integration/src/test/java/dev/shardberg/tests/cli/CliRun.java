package dev.shardberg.tests.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * One run of the developer CLI ({@link ShardbergDevCli}, what {@code bin/shardberg} runs) in this
 * JVM, its standard output and standard error captured apart.
 *
 * @param exit the command's exit code
 */
public record CliRun(int exit, String out, String err) {

  /** Runs {@code shardberg <args>} in this JVM and returns what it printed. */
  public static CliRun cli(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = ShardbergDevCli.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int exit = cmd.execute(args);
    return new CliRun(exit, out.toString(), err.toString());
  }
}
