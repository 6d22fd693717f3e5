package dev.shardberg.job.config;

/**
 * One key of the YAML config: its dotted kebab-case path, what kind of value it takes, its default
 * (as written in YAML, {@code null} when there is none) and what it means.
 *
 * <p>Keys under a list of objects carry {@code []} in their path, e.g. {@code sources[].host}; error
 * messages render the index of the offending element instead ({@code sources[1].host}).
 */
public record ConfigKey(String key, Kind kind, boolean required, String defaultValue, String description) {

  /** The shape of a value. MAP and LIST keys take a whole YAML mapping / sequence as their value. */
  public enum Kind {
    STRING,
    INT,
    BOOLEAN,
    DURATION,
    MAP,
    LIST,
    SECTION_LIST
  }

  static ConfigKey required(String key, Kind kind, String description) {
    return new ConfigKey(key, kind, true, null, description);
  }

  static ConfigKey optional(String key, Kind kind, String defaultValue, String description) {
    return new ConfigKey(key, kind, false, defaultValue, description);
  }
}
