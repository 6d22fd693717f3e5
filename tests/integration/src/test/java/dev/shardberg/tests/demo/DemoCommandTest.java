package dev.shardberg.tests.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The demo as a user runs it, in the experimental deletes by position (issue 28): two real MariaDB
 * servers, the real job, random changes, then verify against the shards. It must pass, and no
 * equality delete may be committed.
 */
class DemoCommandTest {
  @TempDir Path dir;

  @Test
  void aTinyDemoPassesWithDeletesByPosition() {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int exit;
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      exit =
          new CommandLine(new DemoCommand())
              .execute(
                  "--shards",
                  "2",
                  "--rows",
                  "400",
                  "--duration",
                  "3s",
                  "--rate",
                  "30",
                  "--checkpoint-interval",
                  "1s",
                  "--parallelism",
                  "1",
                  "--no-schema-rollout",
                  "--delete-mode",
                  "position",
                  "--data-dir",
                  dir.toString());
    } finally {
      System.setOut(console);
    }
    String out = captured.toString(StandardCharsets.UTF_8);
    assertThat(exit).as(out).isZero();
    assertThat(out)
        .contains("verify:               PASSED")
        .contains("delete-mode position, format v3; equality deletes committed: 0,");
  }

  @Test
  void anUnknownDeleteModeIsRefusedNamingTheOption() {
    StringWriter err = new StringWriter();
    int exit =
        new CommandLine(new DemoCommand())
            .setErr(new PrintWriter(err))
            .execute("--delete-mode", "by-key", "--data-dir", dir.toString());
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString()).contains("--delete-mode is equality or position, not 'by-key'");
  }
}
