package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import dev.shardberg.router.RouterOptions;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * The checks of one key at a time: Flink parses each set value (what it cannot parse is reported
 * and left unset), required keys are present, and set numbers and durations are in range (defaults
 * are valid: only set values are checked).
 */
final class KeyChecks {
  /**
   * Enum keys without a default: Flink does not tell an option's enum class, so their values are
   * named here.
   */
  private static final Map<String, List<String>> ENUMS_WITHOUT_DEFAULT =
      Map.of(
          TARGET_CATALOG_TYPE.key(),
          Arrays.stream(CatalogType.values()).map(Object::toString).toList());

  private final Problems problems;

  KeyChecks(Problems problems) {
    this.problems = problems;
  }

  /**
   * Has Flink parse every set value; one it cannot parse is reported, removed from {@code conf} and
   * marked invalid, so no rule reads it.
   *
   * @param name the key as the file spells it (with the list index for {@code sources[i]})
   */
  void checkTypes(
      Configuration conf,
      FlatConfig flat,
      List<ConfigOption<?>> options,
      Function<ConfigOption<?>, String> name) {
    for (ConfigOption<?> option : options) {
      if (!conf.containsKey(option.key())) {
        continue; // unset, a map (its entries are prefixed keys) or a typed list
      }
      try {
        conf.get(option);
      } catch (IllegalArgumentException e) {
        String key = name.apply(option);
        String value = flat.raw.get(option.key());
        problems.add(
            switch (ValueType.of(option)) {
              case DURATION ->
                  "Cannot parse '"
                      + key
                      + "' = '"
                      + value
                      + "' as a duration: write e.g. 500ms, 10s, 5min or 1h.";
              case INT -> "Cannot parse '" + key + "' = '" + value + "': expected a whole number.";
              case BOOLEAN ->
                  "Cannot parse '" + key + "' = '" + value + "': expected true or false.";
              case ENUM ->
                  "Cannot use '"
                      + key
                      + "' = '"
                      + value
                      + "': use "
                      + oneOf(enumValues(option))
                      + ".";
              default -> "Cannot parse '" + key + "' = '" + value + "': " + e.getMessage();
            });
        conf.removeKey(option.key());
        problems.markInvalid(key);
      }
    }
  }

  private static List<String> enumValues(ConfigOption<?> option) {
    List<String> values = ValueType.enumValues(option);
    return values.isEmpty() ? ENUMS_WITHOUT_DEFAULT.getOrDefault(option.key(), List.of()) : values;
  }

  private static String oneOf(List<String> values) {
    if (values.size() < 2) {
      return String.join("", values);
    }
    return String.join(", ", values.subList(0, values.size() - 1))
        + " or "
        + values.get(values.size() - 1);
  }

  void checkRequired(
      Configuration conf, List<ConfigOption<?>> options, Function<ConfigOption<?>, String> name) {
    for (ConfigOption<?> option : options) {
      String key = name.apply(option);
      if (isRequired(option)
          && option != RouterOptions.SOURCES
          && !conf.containsKey(option.key())
          && !problems.isInvalid(key)) {
        problems.add("Missing key '" + key + "': " + ConfigReference.description(option));
      }
    }
  }

  // ---- value ranges (defaults are valid: only set values are checked) --------------------------

  void positive(Configuration conf, ConfigOption<Integer> option) {
    if (conf.containsKey(option.key()) && conf.get(option) < 1) {
      problems.add(
          "Cannot use '" + option.key() + "' = " + conf.get(option) + ": it must be at least 1.");
    }
  }

  void nonNegative(Configuration conf, ConfigOption<Integer> option) {
    if (conf.containsKey(option.key()) && conf.get(option) < 0) {
      problems.add(
          "Cannot use '" + option.key() + "' = " + conf.get(option) + ": it must be 0 or more.");
    }
  }

  void longerThanZero(Configuration conf, FlatConfig flat, ConfigOption<?> option) {
    if (!conf.containsKey(option.key())) {
      return;
    }
    Duration d = (Duration) conf.get(option);
    if (d.isZero()) {
      String raw = flat.raw.getOrDefault(option.key(), d.toString());
      problems.add("Cannot use '" + option.key() + "' = '" + raw + "': it must be longer than 0.");
    }
  }
}
