package dev.shardberg.job.config;

import java.util.Locale;

/**
 * {@code pipeline.on-stateless-start}: what a start without state does on a table this pipeline
 * wrote.
 */
public enum OnStatelessStart {
  FAIL,
  RESNAPSHOT;

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
