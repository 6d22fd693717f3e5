package dev.shardberg.tests.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.job.ShardbergJob;
import dev.shardberg.tests.cli.CliRun;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every bad config fails before anything starts: exit code 2, the key at fault and the fix. */
class ShardbergCliTest {
  private static final String SECRET = "hunter2-\u00e9-very-secret";

  @TempDir Path dir;

  /** A valid config; the tests below break its text in one place or another. */
  private String good() throws Exception {
    Path password = Files.writeString(dir.resolve("pw"), SECRET + "\n");
    return TestConfig.pipeline("cli-test")
        .checkpointInterval("2s")
        .source(
            new TestConfig.Source("a", "127.0.0.1", 1)
                .user("cdc")
                .passwordFile(password)
                .serverIds("5400-5400"))
        .source(
            new TestConfig.Source("b", "127.0.0.1", 2)
                .user("cdc")
                .passwordFile(password)
                .serverIds("5401-5401"))
        .tables("shop", "orders_(?<shard>\\d+)")
        .hadoopCatalog(dir.resolve("wh").toUri())
        .table("shop", "orders")
        .yaml();
  }

  private CliRun run(String command, String yaml) throws Exception {
    Path file = Files.writeString(dir.resolve("config.yaml"), yaml);
    return CliRun.cli(command, "--config", file.toString());
  }

  private void assertBadConfig(String yaml, String message) throws Exception {
    for (String command : new String[] {"validate", "run", "status", "verify"}) {
      CliRun result = run(command, yaml);
      assertThat(result.exit()).as("%s: %s", command, result.err()).isEqualTo(2);
      assertThat(result.err()).contains(message).doesNotContain(SECRET);
      assertThat(result.out()).isEmpty();
    }
  }

  @Test
  void unknownKeyNamesThePathAndSuggestsTheClosest() throws Exception {
    assertBadConfig(
        good().replace("    port: 2\n", "    prot: 2\n"),
        "Unknown key 'sources[1].prot'; did you mean 'sources[1].port'? Every key is listed in docs/config.md.");
    assertBadConfig(
        good().replace("  table: orders\n", "  table: orders\n  bucket-count: 8\n"),
        "Unknown key 'target.bucket-count'; did you mean 'target.buckets'?");
  }

  @Test
  void missingKeys() throws Exception {
    assertBadConfig(
        good().replace("  id: cli-test\n", ""),
        "Missing key 'pipeline.id': Stable id of this pipeline");
    assertBadConfig(good().replace("  namespace: shop\n", ""), "Missing key 'target.namespace'");
    assertBadConfig(
        good()
            .replace(
                "    password-file: " + dir.resolve("pw") + "\n    server-id-range: 5401-5401",
                "    server-id-range: 5401-5401"),
        "Missing password for source 'b': set 'sources[1].password-env' (name of an environment variable) or 'sources[1].password-file'");
  }

  @Test
  void overlappingServerIdRangesNameBothSources() throws Exception {
    assertBadConfig(
        good().replace("5401-5401", "5400-5403"),
        "Server-id ranges of sources 'a' (sources[0].server-id-range = 5400) and 'b' (sources[1].server-id-range = 5400-5403)"
            + " overlap: give every source its own range, e.g. 5404-5407 for 'b'.");
  }

  @Test
  void serverIdRangeSmallerThanSourceParallelism() throws Exception {
    assertBadConfig(
        good()
            .replace(
                "  checkpoint-interval: 2s\n", "  checkpoint-interval: 2s\n  parallelism: 2\n"),
        "'sources[0].server-id-range' = 5400 holds 1 server id(s) but pipeline.parallelism is 2 (each source reader needs its own id):"
            + " widen it to 5400-5401 or lower pipeline.parallelism.");
  }

  @Test
  void badRegexNamesTheKeyAndTheFix() throws Exception {
    assertBadConfig(
        good().replace("database-pattern: shop", "database-pattern: 'shop[0-9'"),
        "Cannot compile 'tables.database-pattern' = 'shop[0-9' as a Java regex: Unclosed character class near index 7."
            + " Fix the regex (escape literal characters such as . ( [ with a backslash, and quote the value in YAML).");
  }

  @Test
  void everyProblemIsReportedAtOnce() throws Exception {
    CliRun result =
        run(
            "validate",
            good()
                .replace("  id: cli-test\n", "")
                .replace("type: hadoop", "type: glue")
                .replace("5401-5401", "5400"));
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .contains("(3 problems)")
        .contains("Missing key 'pipeline.id'")
        .contains("Cannot use 'target.catalog.type' = 'glue': use hadoop, hive, rest or jdbc.")
        .contains("Server-id ranges of sources 'a'");
  }

  @Test
  void unreachableHostIsNamedWithoutThePassword() throws Exception {
    CliRun result = run("validate", good());
    assertThat(result.exit()).as(result.err()).isEqualTo(2);
    assertThat(result.err()).contains("127.0.0.1:1").contains("cdc").doesNotContain(SECRET);
  }

  @Test
  void missingConfigFile() {
    CliRun result = CliRun.cli("validate", "--config", dir.resolve("nope.yaml").toString());
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .contains("Cannot read config file '" + dir.resolve("nope.yaml") + "'")
        .contains("Check the --config path.");
  }

  @ParameterizedTest
  @ValueSource(strings = {"run", "validate", "status", "verify", "demo"})
  void everyCommandHasHelp(String command) {
    CliRun help = CliRun.cli(command, "--help");
    assertThat(help.exit()).isZero();
    assertThat(help.out()).startsWith("Usage: shardberg " + command).contains("--help");
    if (!command.equals("demo")) {
      assertThat(help.out()).contains("-c, --config=FILE");
      CliRun missing = CliRun.cli(command);
      assertThat(missing.exit()).isEqualTo(2);
      assertThat(missing.err()).contains("Missing required option: '--config=FILE'");
    }
  }

  @Test
  void flinkRunEntryPointWithoutConfigFailsClearly() {
    assertThatThrownBy(() -> ShardbergJob.main(new String[0]))
        .hasMessageContaining("shardberg run failed (exit code 2)")
        .hasMessageContaining("Usage: flink run shardberg-job-<version>-flink.jar --config FILE");
  }
}
