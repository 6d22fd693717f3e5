package dev.shardberg.job.cli;

import dev.shardberg.router.ShardRouterException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code shardberg run|validate|status|verify --config FILE}. The tests module adds {@code demo}
 * (and the harness) on top of {@link #commandLine()}.
 *
 * <p>Exit codes: 0 success; 1 the command ran and found a problem (verify mismatch, job failed); 2
 * the config or the shards cannot be used (message names the key and the fix).
 */
@Command(
    name = "shardberg",
    mixinStandardHelpOptions = true,
    versionProvider = ShardbergCli.Version.class,
    description =
        "Turns a MySQL table sharded N ways into one Apache Iceberg table, kept live by one Flink job.",
    subcommands = {
      RunCommand.class,
      ValidateCommand.class,
      StatusCommand.class,
      VerifyCommand.class
    })
public class ShardbergCli implements Runnable {
  public static final int EXIT_PROBLEM = 1;
  public static final int EXIT_BAD_CONFIG = 2;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "Missing command: run, validate, status or verify (see --help)");
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line with the error handling every entry point shares. */
  public static CommandLine commandLine() {
    return configure(new CommandLine(new ShardbergCli()));
  }

  public static CommandLine configure(CommandLine cmd) {
    cmd.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          PrintWriter err = commandLine.getErr();
          // the config loader, the router's checks (Preconditions) and discovery: the input is at
          // fault
          if (e instanceof IllegalArgumentException || e instanceof ShardRouterException) {
            err.println("Error: " + e.getMessage());
            err.flush();
            return EXIT_BAD_CONFIG;
          }
          err.println("Error: " + rootMessage(e));
          err.flush();
          org.slf4j.LoggerFactory.getLogger(ShardbergCli.class).debug("Command failed", e);
          return EXIT_PROBLEM;
        });
    return cmd;
  }

  private static String rootMessage(Throwable e) {
    StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
    Throwable cause = e.getCause();
    while (cause != null && cause != e) {
      if (cause.getMessage() != null && !sb.toString().contains(cause.getMessage())) {
        sb.append(System.lineSeparator())
            .append("  caused by: ")
            .append(cause.getClass().getSimpleName())
            .append(": ")
            .append(cause.getMessage());
      }
      e = cause;
      cause = cause.getCause();
    }
    return sb.toString();
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = ShardbergCli.class.getPackage().getImplementationVersion();
      return new String[] {"shardberg " + (v == null ? "dev" : v)};
    }
  }
}
