package dev.shardberg.tests.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.tests.job.CapturedLog;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The MySQL binlog client logs through java.util.logging; in {@code bin/shardberg} its warnings
 * (with stack traces) go to the log file, not to the console between the CLI's lines.
 */
class JavaLoggingToLogTest {
  @Test
  void aWarningWithAStackTraceGoesToTheLogNotToTheConsole() {
    Logger root = LogManager.getLogManager().getLogger("");
    Handler[] handlers = root.getHandlers();
    Level level = root.getLevel();
    PrintStream err = System.err;
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    try (CapturedLog log =
        new CapturedLog("com.github.shyiko.mysql.binlog", org.apache.logging.log4j.Level.WARN)) {
      // java.util.logging's console handler writes to the System.err of the moment it was made
      System.setErr(new PrintStream(console, true, StandardCharsets.UTF_8));
      for (Handler h : handlers) {
        root.removeHandler(h);
      }
      root.addHandler(new java.util.logging.ConsoleHandler());
      JavaLoggingToLog.install();
      Logger.getLogger("com.github.shyiko.mysql.binlog.BinaryLogClient")
          .log(
              Level.WARNING,
              "Failed to restore connection to 127.0.0.1:3306",
              new java.io.EOFException("gone"));
      assertThat(
              log.has(
                  org.apache.logging.log4j.Level.WARN,
                  "Failed to restore connection to 127.0.0.1:3306"))
          .as(log.lines().toString())
          .isTrue();
    } finally {
      System.setErr(err);
      for (Handler h : root.getHandlers()) {
        root.removeHandler(h);
      }
      for (Handler h : handlers) {
        root.addHandler(h);
      }
      root.setLevel(level);
    }
    assertThat(console.toString(StandardCharsets.UTF_8)).isEmpty();
  }
}
