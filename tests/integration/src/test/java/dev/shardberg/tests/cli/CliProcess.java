package dev.shardberg.tests.cli;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The developer CLI ({@link ShardbergDevCli}, what {@code bin/shardberg} runs) in its own JVM, as a
 * user starts it: bin/shardberg's log configuration writing to {@code logFile}, this test's class
 * path, working directory {@code dir}, standard error into standard output.
 */
public final class CliProcess {
  private CliProcess() {}

  public static ProcessBuilder cli(Path dir, List<String> args, Path logFile) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx768m");
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-opens") || a.startsWith("--add-exports"))
        .forEach(command::add);
    command.add("-Dlog4j2.configurationFile=classpath:shardberg-cli-log4j2.properties");
    command.add("-Dshardberg.log.file=" + logFile);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ShardbergDevCli.class.getName());
    command.addAll(args);
    return new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
  }

  /**
   * Stops a running {@code run} the way Ctrl-C does (SIGTERM: a final savepoint), waiting up to
   * three minutes before killing it.
   */
  public static void stop(Process run) throws Exception {
    if (!run.isAlive()) {
      return;
    }
    new ProcessBuilder("kill", "-TERM", Long.toString(run.pid())).start().waitFor();
    if (!run.waitFor(3, TimeUnit.MINUTES)) {
      run.destroyForcibly();
    }
  }
}
