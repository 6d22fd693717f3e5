package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The shaded job jar ({@code flink run}'s) as the cluster tests use it. */
final class ShadedJob {
  /** Surefire sets it to the jar the job module built. */
  static final String JAR_PROPERTY = "shardberg.job.jar";

  private ShadedJob() {}

  /** The jar, which must exist (built by {@code mvn -B verify} before the integration tests). */
  static Path jar() {
    String jar = System.getProperty(JAR_PROPERTY);
    assertThat(jar)
        .as(
            "system property %s (surefire sets it to ../../job/target/shardberg-job-<version>-flink.jar)",
            JAR_PROPERTY)
        .isNotBlank();
    Path path = Path.of(jar).toAbsolutePath().normalize();
    assertThat(path)
        .as(
            "Cannot find the shaded job jar %s: build it first (`mvn -B verify` from the repo root "
                + "does; or `mvn -B -pl job -am -DskipTests package`)",
            path)
        .isRegularFile();
    return path;
  }

  /**
   * {@code verify} as a user runs it against a cluster's table: the jar's entry point in a JVM of
   * its own, on the classpath of the Flink distribution under test, with only the given environment
   * added (credentials live there, never in the config or the test JVM). Runs it, asserts it ends
   * with exit code 0 within 5 minutes, and returns its output.
   */
  static String assertVerifyPasses(
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
