package dev.shardberg.router;

import java.util.Arrays;
import java.util.Locale;

/**
 * What the job does with a schema change (DDL) on a shard ({@code schema.change-behavior}; the
 * rules are in docs/schema-evolution.md).
 */
public enum SchemaChangeBehavior {
  /**
   * Evolve the one Iceberg table in flight: column changes that Iceberg can take (a new optional
   * column, a widening, a column made optional) are applied through Iceberg's schema API before any
   * row that needs them is written; DDL that changes no column is ignored; anything else stops the
   * job.
   */
  EVOLVE("evolve"),
  /** Stop the job at the first DDL of any kind, at once (no restarts), naming shard and DDL. */
  FAIL("fail");

  private final String key;

  SchemaChangeBehavior(String key) {
    this.key = key;
  }

  public String key() {
    return key;
  }

  /** As written in the config file (Flink's enum options parse by this). */
  @Override
  public String toString() {
    return key;
  }

  public static SchemaChangeBehavior parse(String value) {
    for (SchemaChangeBehavior b : values()) {
      if (b.key.equals(value.trim().toLowerCase(Locale.ROOT))) {
        return b;
      }
    }
    throw new IllegalArgumentException(
        String.format(
            "Unknown schema change behavior '%s'; use one of %s",
            value, Arrays.stream(values()).map(SchemaChangeBehavior::key).toList()));
  }
}
