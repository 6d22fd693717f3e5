package dev.shardberg.job.config;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/** One level of the file, flattened: raw text for Flink to parse, and lists already typed. */
final class FlatConfig {
  final Map<String, String> raw = new LinkedHashMap<>();
  final Map<ConfigOption<?>, Object> typed = new LinkedHashMap<>();

  Configuration toConfiguration() {
    Configuration conf = Configuration.fromMap(raw);
    typed.forEach((option, value) -> set(conf, option, value));
    return conf;
  }

  @SuppressWarnings("unchecked")
  private static <T> void set(Configuration conf, ConfigOption<T> option, Object value) {
    conf.set(option, (T) value);
  }
}
