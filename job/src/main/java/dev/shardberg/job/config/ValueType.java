package dev.shardberg.job.config;

import dev.shardberg.router.RouterOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * What kind of value a {@link ConfigOption} takes, for the loader (which YAML shape to accept, what
 * to say when Flink cannot parse a value) and the reference's type column. Nothing is declared
 * here: Flink keeps an option's class to itself, so the kind is read from the option's default
 * value or, without one, from what Flink parses a probe value into.
 */
enum ValueType {
  STRING("string"),
  INT("int"),
  BOOLEAN("boolean"),
  DURATION("duration"),
  MEMORY("memory size"),
  ENUM("enum"),
  MAP("map"),
  LIST("list"),
  HOSTS("list of hosts");

  private final String label;

  ValueType(String label) {
    this.label = label;
  }

  String label() {
    return label;
  }

  static ValueType of(ConfigOption<?> option) {
    if (option.key().equals(RouterOptions.SOURCES.key())) {
      return HOSTS;
    }
    Object sample = option.hasDefaultValue() ? option.defaultValue() : probe(option);
    if (sample instanceof Integer) {
      return INT;
    } else if (sample instanceof Boolean) {
      return BOOLEAN;
    } else if (sample instanceof Duration) {
      return DURATION;
    } else if (sample instanceof org.apache.flink.configuration.MemorySize) {
      return MEMORY;
    } else if (sample instanceof Map) {
      return MAP;
    } else if (sample instanceof List) {
      return LIST;
    } else if (sample instanceof String) {
      return STRING;
    }
    return ENUM; // an enum default, or no probe parses (an enum without a default)
  }

  /** The values of an enum option with a default, lower case as in YAML; empty when unknown. */
  static List<String> enumValues(ConfigOption<?> option) {
    if (option.hasDefaultValue() && option.defaultValue() instanceof Enum<?> e) {
      return java.util.Arrays.stream(e.getDeclaringClass().getEnumConstants())
          .map(Object::toString)
          .toList();
    }
    return List.of();
  }

  private static Object probe(ConfigOption<?> option) {
    for (String raw : List.of("1", "true")) {
      try {
        return Configuration.fromMap(Map.of(option.key(), raw)).get(option);
      } catch (IllegalArgumentException e) {
        // not this kind: try the next probe
      }
    }
    return null;
  }
}
