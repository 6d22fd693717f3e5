package dev.shardberg.tests.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One JVM of the cluster: its process, the Flink log file and the file holding its stdout/stderr.
 */
record FlinkProcess(String name, Process process, Path logFile, Path outFile) {

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** SIGKILL (what {@code kill -9 <pid>} sends), then wait until the process is gone. */
  void kill() {
    ProcessHandle.of(process.pid()).ifPresent(ProcessHandle::destroyForcibly);
    waitForExit(30);
  }

  /**
   * SIGTERM, so the JVM runs its shutdown hooks; SIGKILL if it is still there after the grace
   * period.
   */
  void stop(int graceSeconds) {
    process.destroy();
    if (!waitForExit(graceSeconds)) {
      kill();
    }
  }

  private boolean waitForExit(int seconds) {
    try {
      return process.waitFor(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The last lines of the Flink log and of stdout/stderr, for exception messages. */
  String tail(int lines) {
    return "---- "
        + name
        + " (pid "
        + pid()
        + (isAlive() ? ", alive" : ", exited " + process.exitValue())
        + ") log "
        + logFile
        + ":\n"
        + tailOf(logFile, lines)
        + "---- "
        + name
        + " stdout/stderr "
        + outFile
        + ":\n"
        + tailOf(outFile, lines);
  }

  static String tailOf(Path file, int lines) {
    if (!Files.exists(file)) {
      return "(no such file)\n";
    }
    try {
      // lenient decoding: a log may hold anything, and a tail must never fail
      List<String> all =
          new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList();
      StringBuilder out = new StringBuilder();
      all.subList(Math.max(0, all.size() - lines), all.size())
          .forEach(l -> out.append(l).append('\n'));
      return out.toString();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the log " + file, e);
    }
  }
}
