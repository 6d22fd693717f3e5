package dev.shardberg.tests.bench;

import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;

/** Live progress on the terminal: one line per event, and at least one every few seconds. */
final class Progress {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");
  private final PrintStream out;
  private volatile String mode = "-";

  Progress(PrintStream out) {
    this.out = out;
  }

  void mode(String mode) {
    this.mode = mode;
  }

  void line(String phase, String template, Object... args) {
    out.printf(
        "%s [%s] %-9s %s%n",
        LocalTime.now().format(TIME), mode, phase, String.format(template, args));
    out.flush();
  }
}
