package dev.shardberg.job.config;

import java.util.Locale;

/** {@code source.startup-mode}: where each host's source starts reading. */
public enum StartupMode {
  INITIAL,
  LATEST,
  TIMESTAMP;

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
