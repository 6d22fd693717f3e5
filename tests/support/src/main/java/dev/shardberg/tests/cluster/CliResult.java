package dev.shardberg.tests.cluster;

import java.util.List;

/**
 * One run of the real {@code flink} command line client ({@code CliFrontend} in its own JVM).
 *
 * @param args the arguments after {@code flink}, e.g. {@code [run, -d, job.jar, --config, f.yaml]}
 * @param exitCode the client JVM's exit code
 * @param output its standard output and standard error, interleaved
 */
public record CliResult(List<String> args, int exitCode, String output) {

  public CliResult {
    args = List.copyOf(args);
  }

  public boolean succeeded() {
    return exitCode == 0;
  }

  /** A one-paragraph description for assertion and exception messages. */
  public String describe() {
    return "`flink " + String.join(" ", args) + "` exited " + exitCode + ", output:\n" + output;
  }
}
