package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code verify} as a user runs it against a cluster's table: the shaded job jar's entry point in a
 * JVM of its own, on the classpath of the Flink distribution under test, with only the given
 * environment added (credentials live there, never in the config or the test JVM).
 */
final class ShadedJarVerify {
  private ShadedJarVerify() {}

  /** Runs it, asserts it ends with exit code 0 within 5 minutes, and returns its output. */
  static String assertPasses(
      Path jobJar, Path config, Path workDir, Map<String, String> environment) throws Exception {
    Path out = workDir.resolve("verify-" + System.nanoTime() + ".out");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(FlinkSessionCluster.JAVA_17_OPTS);
    command.add("-cp");
    command.add(jobJar + ":" + System.getProperty(FlinkSessionCluster.DIST_PROPERTY) + "/*");
    command.add("dev.shardberg.job.ShardbergJob");
    command.addAll(List.of("verify", "--config", config.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
    builder.environment().putAll(environment);
    Process verify = builder.start();
    assertThat(verify.waitFor(5, TimeUnit.MINUTES)).as("verify ends within 5 minutes").isTrue();
    String output = Files.readString(out, StandardCharsets.UTF_8);
    assertThat(verify.exitValue()).as("verify exit code; output:%n%s", output).isZero();
    return output;
  }
}
