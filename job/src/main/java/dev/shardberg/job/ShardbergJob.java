package dev.shardberg.job;

import dev.shardberg.job.cli.ShardbergCli;
import java.util.Set;

/**
 * Main class of the {@code flink run} jar: {@code flink run
 * target/shardberg-job-<version>-flink.jar --config orders.yaml}. Without a command it runs the
 * pipeline; {@code validate|status|verify --config FILE} also work.
 */
public final class ShardbergJob {
  private static final Set<String> COMMANDS =
      Set.of("run", "validate", "status", "verify", "help", "-h", "--help", "-V", "--version");

  private ShardbergJob() {}

  public static void main(String[] args) {
    String[] withCommand = args;
    if (args.length == 0 || !COMMANDS.contains(args[0])) {
      withCommand = new String[args.length + 1];
      withCommand[0] = "run";
      System.arraycopy(args, 0, withCommand, 1, args.length);
    }
    HadoopClientExit.prepare();
    int exit;
    try {
      exit = ShardbergCli.commandLine().execute(withCommand);
    } finally {
      HadoopClientExit.beforeExit();
    }
    if (exit != 0) {
      // under `flink run` a non-zero exit must surface as a failed submission, with the message
      // above
      throw new IllegalStateException(
          "shardberg "
              + withCommand[0]
              + " failed (exit code "
              + exit
              + "); see the message above."
              + (args.length == 0
                  ? " Usage: flink run shardberg-job-<version>-flink.jar --config FILE"
                  : ""));
    }
  }
}
