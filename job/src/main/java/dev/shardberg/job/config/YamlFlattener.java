package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import com.fasterxml.jackson.databind.JsonNode;
import dev.shardberg.router.RouterOptions;
import java.time.DateTimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;

/**
 * The YAML tree flattened into dotted keys, checking its structure: every key known, every value of
 * the right shape. A map key's entries become {@code key.name} entries, which Flink reads back as a
 * map; lists are typed here; each {@code sources[]} entry becomes a {@link FlatConfig} of its own.
 * An unknown key is reported with the closest known one, rendered with the list index.
 */
final class YamlFlattener {
  private final Problems problems;
  private final FlatConfig top = new FlatConfig();
  private final List<FlatConfig> sourceEntries = new ArrayList<>();

  YamlFlattener(Problems problems) {
    this.problems = problems;
  }

  /** Flattens the file's top-level mapping into {@link #top()} and {@link #sourceEntries()}. */
  void flatten(JsonNode root) {
    collect(root, "", "", top);
  }

  FlatConfig top() {
    return top;
  }

  /** One per {@code sources[]} entry, in the file's order. */
  List<FlatConfig> sourceEntries() {
    return sourceEntries;
  }

  private void collect(JsonNode object, String concretePrefix, String keyPrefix, FlatConfig into) {
    Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      String concrete = concretePrefix + field.getKey();
      String keyPath = keyPrefix + field.getKey();
      JsonNode node = field.getValue();
      ConfigOption<?> option = find(keyPath).orElse(null);
      if (option != null) {
        collectValue(option, concrete, node, into);
      } else if (isSection(keyPath)) {
        if (node.isNull()) {
          continue;
        }
        if (!node.isObject()) {
          problems.add(
              "Key '"
                  + concrete
                  + "' is a section: give it nested keys ("
                  + childrenOf(keyPath)
                  + "), not a value.");
        } else {
          collect(node, concrete + ".", keyPath + ".", into);
        }
      } else {
        String suggestion = suggestion(keyPath, concretePrefix, keyPrefix);
        problems.add(
            "Unknown key '"
                + concrete
                + "'"
                + (suggestion.isEmpty() ? "." : suggestion)
                + " Every key is listed in docs/config.md.");
      }
    }
  }

  private void collectValue(
      ConfigOption<?> option, String concrete, JsonNode node, FlatConfig into) {
    if (node.isNull()) {
      return; // "key:" with no value = not set
    }
    switch (ValueType.of(option)) {
      case HOSTS -> {
        if (!node.isArray()) {
          problems.add(
              "Key '" + concrete + "' must be a list (one '- name: …' entry per MySQL host).");
          return;
        }
        for (int i = 0; i < node.size(); i++) {
          JsonNode element = node.get(i);
          String elementPath = concrete + "[" + i + "]";
          FlatConfig entry = new FlatConfig();
          sourceEntries.add(entry);
          if (!element.isObject()) {
            problems.add(
                "Entry '" + elementPath + "' must be a mapping (name:, host:, port:, user:, …).");
          } else {
            collect(element, elementPath + ".", RouterOptions.SOURCE_PREFIX, entry);
          }
        }
      }
      case MAP -> {
        if (!node.isObject()) {
          problems.add("Key '" + concrete + "' must be a mapping of 'name: value' pairs.");
          return;
        }
        node.fields()
            .forEachRemaining(
                e -> {
                  if (!e.getValue().isValueNode()) {
                    problems.add(
                        "Key '"
                            + concrete
                            + "."
                            + e.getKey()
                            + "' must be a plain value (string or number), not a nested structure.");
                  } else {
                    into.raw.put(option.key() + "." + e.getKey(), e.getValue().asText());
                  }
                });
      }
      case LIST -> {
        if (option.key().equals(RouterOptions.TABLES_EXCLUDE_SHARDS.key())
            || option.key().equals(RouterOptions.TABLES_REREAD_SHARDS.key())) {
          into.typed.put(option, shardNumbers(concrete, node));
          return;
        }
        if (!node.isArray() && !node.isValueNode()) {
          problems.add(
              "Key '" + concrete + "' must be a list of names, e.g. [id] or [tenant_id, id].");
          return;
        }
        into.typed.put(option, names(concrete, node));
      }
      default -> {
        if (!node.isValueNode()) {
          problems.add(
              "Key '"
                  + concrete
                  + "' takes a single value, not a nested structure: "
                  + ConfigReference.description(option));
          return;
        }
        String text = node.asText();
        if (text.isBlank()) {
          return;
        }
        ValueType type = ValueType.of(option);
        if (type == ValueType.DURATION && isoDuration(text) != null) {
          into.typed.put(
              option, isoDuration(text)); // Flink parses "10s"; ISO-8601 "PT10S" is the JDK's
        } else {
          into.raw.put(option.key(), type == ValueType.STRING ? text : text.trim());
        }
      }
    }
  }

  /** A list of shard numbers: a YAML sequence of ints >= 0, or one string with commas. */
  private List<Integer> shardNumbers(String concrete, JsonNode node) {
    List<Integer> numbers = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    if (node.isArray()) {
      node.forEach(e -> texts.add(e.isValueNode() ? e.asText().trim() : "(a nested structure)"));
    } else if (node.isValueNode()) {
      for (String part : node.asText().split(",")) {
        if (!part.isBlank()) {
          texts.add(part.trim());
        }
      }
    }
    for (String text : texts) {
      try {
        int n = Integer.parseInt(text);
        if (n < 0) {
          throw new NumberFormatException();
        }
        numbers.add(n);
      } catch (NumberFormatException e) {
        problems.add(
            "Key '"
                + concrete
                + "' must list shard numbers (ints >= 0), e.g. [3] or [3, 17]; '"
                + text
                + "' is not one.");
      }
    }
    if (!node.isArray() && !node.isValueNode()) {
      problems.add("Key '" + concrete + "' must list shard numbers, e.g. [3] or [3, 17].");
    }
    return numbers;
  }

  /** A list of names: a YAML sequence, or one string with commas. */
  private List<String> names(String concrete, JsonNode node) {
    List<String> list = new ArrayList<>();
    if (node.isValueNode()) {
      for (String part : node.asText().split(",")) {
        if (!part.isBlank()) {
          list.add(part.trim());
        }
      }
      return list;
    }
    for (JsonNode element : node) {
      if (!element.isValueNode() || element.asText().isBlank()) {
        problems.add("Key '" + concrete + "' must list plain column names, e.g. [tenant_id, id].");
      } else {
        list.add(element.asText().trim());
      }
    }
    return list;
  }

  private static Duration isoDuration(String text) {
    String t = text.trim();
    if (!t.startsWith("P") && !t.startsWith("p")) {
      return null;
    }
    try {
      return Duration.parse(t);
    } catch (DateTimeException e) {
      return null;
    }
  }

  private static boolean isSection(String keyPath) {
    String prefix = keyPath + ".";
    return all().stream().anyMatch(o -> o.key().startsWith(prefix));
  }

  private static String childrenOf(String keyPath) {
    String prefix = keyPath + ".";
    Set<String> children = new LinkedHashSet<>();
    for (ConfigOption<?> option : all()) {
      if (option.key().startsWith(prefix)) {
        String rest = option.key().substring(prefix.length());
        int dot = rest.indexOf('.');
        children.add(dot < 0 ? rest : rest.substring(0, dot));
      }
    }
    return String.join(", ", children);
  }

  /** " — did you mean 'x'?" with the closest known key, rendered with the element index. */
  private static String suggestion(String keyPath, String concretePrefix, String keyPrefix) {
    String leaf = keyPath.substring(keyPath.lastIndexOf('.') + 1);
    List<String> known = all().stream().map(ConfigOption::key).toList();
    String best =
        known.stream()
            .filter(k -> k.endsWith("." + leaf) || k.equals(leaf))
            .findFirst()
            .orElseGet(
                () ->
                    known.stream()
                        .min(Comparator.comparingInt((String k) -> distance(k, keyPath)))
                        .filter(k -> distance(k, keyPath) <= Math.max(3, keyPath.length() / 3))
                        .orElse(null));
    if (best == null) {
      return "";
    }
    String rendered =
        best.startsWith(keyPrefix) && !keyPrefix.isEmpty()
            ? concretePrefix + best.substring(keyPrefix.length())
            : best.replace("[]", "[0]");
    return "; did you mean '" + rendered + "'?";
  }

  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
