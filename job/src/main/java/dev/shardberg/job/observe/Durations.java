package dev.shardberg.job.observe;

import java.time.Duration;

/**
 * Durations on the console and in reports, read by a person: {@code 850 ms}, {@code 4.2 s}, {@code
 * 17 min}, {@code 3 h}. Each step holds below 120 of its unit, so a value never reads as "1 min"
 * for 119 seconds.
 */
public final class Durations {
  private Durations() {}

  /** {@code 850 ms}, {@code 4.2 s}, {@code 17 min}, {@code 3 h}: an elapsed time or an age. */
  public static String human(Duration d) {
    return d.toMinutes() < 120 ? humanToMinutes(d) : d.toHours() + " h";
  }

  /**
   * As {@link #human} up to 2 hours, then still in minutes ({@code 185 min}): a live progress line,
   * which keeps moving.
   */
  public static String humanToMinutes(Duration d) {
    if (d.toMillis() < 1000) {
      return d.toMillis() + " ms";
    }
    if (d.toSeconds() < 120) {
      return String.format("%.1f s", d.toMillis() / 1000.0);
    }
    return d.toMinutes() + " min";
  }

  /** An estimate, in whole units: {@code 8 s}, {@code 17 min}, {@code 2 h 5 min}. */
  public static String estimate(Duration d) {
    if (d.toSeconds() < 120) {
      return d.toSeconds() + " s";
    }
    if (d.toMinutes() < 120) {
      return d.toMinutes() + " min";
    }
    return d.toHours() + " h " + d.toMinutesPart() + " min";
  }
}
