package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.job.config.ShardbergConfig.ServerIdRange;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.types.ExactSnapshotDriver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * YAML → Flink {@link Configuration} → {@link ShardbergConfig}. The YAML tree is flattened into
 * dotted keys (a map key's entries become {@code key.name} entries, which Flink reads back as a
 * map); each {@code sources[]} entry becomes a configuration of its own. Only keys listed in {@link
 * ShardbergOptions#all()} are accepted, values are parsed by Flink's own conversions ({@code 10s},
 * {@code 5min}, {@code true}, enum names), then the rules across keys below are checked. Every
 * problem is collected and reported at once, each naming the key (with the list index for {@code
 * sources[i]}), the bad value and the fix. Nothing is started before this passes.
 */
public final class ConfigLoader {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Pattern SHARD_GROUP = Pattern.compile("\\(\\?<shard>");

  /**
   * Enum keys without a default: Flink does not tell an option's enum class, so their values are
   * named here.
   */
  private static final Map<String, List<String>> ENUMS_WITHOUT_DEFAULT =
      Map.of(
          TARGET_CATALOG_TYPE.key(),
          Arrays.stream(CatalogType.values()).map(Object::toString).toList());

  private final String origin;
  private final Function<String, String> env;
  private final Flat top = new Flat();
  private final List<Flat> sourceEntries = new ArrayList<>();
  private final Set<String> invalid = new HashSet<>();
  private final List<String> problems = new ArrayList<>();

  /** One level of the file, flattened: raw text for Flink to parse, and lists already typed. */
  private static final class Flat {
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

  private ConfigLoader(String origin, Function<String, String> env) {
    this.origin = origin;
    this.env = env;
  }

  public static ShardbergConfig load(Path file) {
    String yaml;
    try {
      yaml = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(
          "Cannot read config file '"
              + file
              + "': "
              + e.getMessage()
              + ". Check the --config path.");
    }
    return parse(yaml, file.toString(), System::getenv);
  }

  /**
   * @param origin the file name, used in messages
   * @param env environment lookup (for {@code password-env}); {@code System::getenv} outside tests
   */
  public static ShardbergConfig parse(String yaml, String origin, Function<String, String> env) {
    return new ConfigLoader(origin, env).parse(yaml);
  }

  private ShardbergConfig parse(String yaml) {
    JsonNode root;
    try {
      root = YAML.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new ConfigException(
          origin,
          List.of(
              "Cannot parse YAML: "
                  + e.getOriginalMessage()
                  + (e.getLocation() != null ? " (line " + e.getLocation().getLineNr() + ")" : "")
                  + ". Fix the YAML syntax."));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new ConfigException(
          origin, List.of("The file is empty. Start from docs/example-config.yaml."));
    }
    if (!root.isObject()) {
      throw new ConfigException(
          origin,
          List.of(
              "The top level must be a mapping of keys (pipeline:, sources:, tables:, source:, target:)."));
    }
    collect(root, "", "", top);
    if (!problems.isEmpty()) {
      throw new ConfigException(origin, problems);
    }
    Configuration conf = top.toConfiguration();
    checkTypes(conf, top, topLevel(), ConfigOption::key);
    List<Configuration> sources = new ArrayList<>();
    for (int i = 0; i < sourceEntries.size(); i++) {
      int index = i;
      Configuration source = sourceEntries.get(i).toConfiguration();
      checkTypes(source, sourceEntries.get(i), perSource(), o -> RouterOptions.sourceKey(o, index));
      sources.add(source);
    }
    checkRequired(conf, topLevel(), ConfigOption::key);
    checkRules(conf, sources);
    if (!problems.isEmpty()) {
      throw new ConfigException(origin, problems);
    }
    return ShardbergConfig.from(conf, sources);
  }

  // ---- structure: every key known, every value of the right shape ------------------------------

  private void collect(JsonNode object, String concretePrefix, String keyPrefix, Flat into) {
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

  private void collectValue(ConfigOption<?> option, String concrete, JsonNode node, Flat into) {
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
          Flat entry = new Flat();
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

  // ---- values: Flink parses each one; what it cannot parse is reported and left unset ----------

  private void checkTypes(
      Configuration conf,
      Flat flat,
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
        invalid.add(key);
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

  private void checkRequired(
      Configuration conf, List<ConfigOption<?>> options, Function<ConfigOption<?>, String> name) {
    for (ConfigOption<?> option : options) {
      String key = name.apply(option);
      if (isRequired(option)
          && option != RouterOptions.SOURCES
          && !conf.containsKey(option.key())
          && !invalid.contains(key)) {
        problems.add("Missing key '" + key + "': " + ConfigReference.description(option));
      }
    }
  }

  // ---- rules across keys ------------------------------------------------------------------------

  private void checkRules(Configuration conf, List<Configuration> sources) {
    positive(conf, PIPELINE_PARALLELISM);
    positive(conf, PIPELINE_WRITER_PARALLELISM);
    positive(conf, CoordinatorConfigOptions.HEARTBEAT_EVERY_EMPTY_CHECKPOINTS);
    nonNegative(conf, PIPELINE_RESTART_ATTEMPTS);
    for (ConfigOption<?> option : topLevel()) {
      if (ValueType.of(option) == ValueType.DURATION
          && option != PIPELINE_RESTART_DELAY
          && !option.key().startsWith(CoordinatorConfigOptions.ZK_PREFIX)
          && !option.key().startsWith(MaintenanceOptions.PREFIX)) {
        longerThanZero(conf, top, option);
      }
    }
    sources(conf.get(PIPELINE_PARALLELISM), sources);
    tables(conf);
    java.util.Set<Integer> both =
        new java.util.TreeSet<>(conf.get(RouterOptions.TABLES_EXCLUDE_SHARDS));
    both.retainAll(conf.get(RouterOptions.TABLES_REREAD_SHARDS));
    if (!both.isEmpty()) {
      problems.add(
          "Shard(s) "
              + both
              + " are in both "
              + RouterOptions.TABLES_EXCLUDE_SHARDS.key()
              + " and "
              + RouterOptions.TABLES_REREAD_SHARDS.key()
              + ": a shard is either left out or read again; remove it from one of them.");
    }
    maintenance(conf);
    cdc(conf);
    OnStatelessStart onStatelessStart = conf.get(PIPELINE_ON_STATELESS_START);
    StartupMode startupMode = conf.get(SOURCE_STARTUP_MODE);
    if (onStatelessStart == OnStatelessStart.RESNAPSHOT
        && !invalid.contains(SOURCE_STARTUP_MODE.key())
        && startupMode != StartupMode.INITIAL) {
      problems.add(
          "Cannot use '"
              + PIPELINE_ON_STATELESS_START.key()
              + "' = resnapshot with '"
              + SOURCE_STARTUP_MODE.key()
              + "' = "
              + startupMode
              + ": a re-snapshot removes the shards' rows and reads them again, which needs the"
              + " snapshot; set "
              + SOURCE_STARTUP_MODE.key()
              + " to initial or "
              + PIPELINE_ON_STATELESS_START.key()
              + " to fail.");
    }
    target(conf);
    coordinator(conf);
  }

  private void sources(int parallelism, List<Configuration> sources) {
    if (sources.isEmpty()) {
      problems.add(
          "Missing key '"
              + RouterOptions.SOURCES.key()
              + "': list at least one MySQL host (name, host, port, user,"
              + " password-env or password-file, server-id-range).");
      return;
    }
    List<String> names = new ArrayList<>();
    List<ServerIdRange> ranges = new ArrayList<>();
    for (int i = 0; i < sources.size(); i++) {
      int index = i;
      Configuration source = sources.get(i);
      checkRequired(source, perSource(), o -> RouterOptions.sourceKey(o, index));
      String name = source.get(RouterOptions.SOURCE_NAME);
      int first = names.indexOf(name);
      if (name != null && first >= 0) {
        problems.add(
            "Source name '"
                + name
                + "' is used by sources["
                + first
                + "] and sources["
                + i
                + "]: give every source a unique 'name' (it names the operator uids).");
      }
      names.add(name);
      int port = source.get(RouterOptions.SOURCE_PORT);
      if (port < 1) {
        problems.add(
            "Cannot use '"
                + RouterOptions.sourceKey(RouterOptions.SOURCE_PORT, i)
                + "' = "
                + port
                + ": it must be at least 1.");
      } else if (port > 65535) {
        problems.add(
            "Cannot use '"
                + RouterOptions.sourceKey(RouterOptions.SOURCE_PORT, i)
                + "' = "
                + port
                + ": a port is between 1 and 65535.");
      }
      password(
          name,
          i,
          source.get(RouterOptions.SOURCE_PASSWORD_ENV),
          source.get(RouterOptions.SOURCE_PASSWORD_FILE));
      ranges.add(
          serverIdRange(
              RouterOptions.sourceKey(RouterOptions.SOURCE_SERVER_ID_RANGE, i),
              source.get(RouterOptions.SOURCE_SERVER_ID_RANGE),
              parallelism));
    }
    for (int i = 0; i < ranges.size(); i++) {
      for (int j = i + 1; j < ranges.size(); j++) {
        ServerIdRange a = ranges.get(i);
        ServerIdRange b = ranges.get(j);
        if (a != null && b != null && a.overlaps(b)) {
          int width = b.size();
          int free =
              ranges.stream().filter(r -> r != null).mapToInt(ServerIdRange::last).max().orElse(0)
                  + 1;
          problems.add(
              "Server-id ranges of sources '"
                  + names.get(i)
                  + "' ("
                  + RouterOptions.sourceKey(RouterOptions.SOURCE_SERVER_ID_RANGE, i)
                  + " = "
                  + a
                  + ") and '"
                  + names.get(j)
                  + "' ("
                  + RouterOptions.sourceKey(RouterOptions.SOURCE_SERVER_ID_RANGE, j)
                  + " = "
                  + b
                  + ") overlap: give every source its own range, e.g. "
                  + free
                  + "-"
                  + (free + width - 1)
                  + " for '"
                  + names.get(j)
                  + "'.");
        }
      }
    }
  }

  /** Exactly one password source, and it can be read; the password itself is never read here. */
  private void password(String sourceName, int index, String passwordEnv, String passwordFile) {
    String envKey = RouterOptions.sourceKey(RouterOptions.SOURCE_PASSWORD_ENV, index);
    String fileKey = RouterOptions.sourceKey(RouterOptions.SOURCE_PASSWORD_FILE, index);
    String who = sourceName == null ? "sources[" + index + "]" : "source '" + sourceName + "'";
    if (passwordEnv != null && passwordFile != null) {
      problems.add(
          "Both '" + envKey + "' and '" + fileKey + "' are set for " + who + ": keep exactly one.");
    } else if (passwordEnv == null && passwordFile == null) {
      problems.add(
          "Missing password for "
              + who
              + ": set '"
              + envKey
              + "' (name of an environment variable) or '"
              + fileKey
              + "' (path of a file holding it). Passwords never go into the config file.");
    } else if (passwordEnv != null) {
      if (env.apply(passwordEnv) == null) {
        problems.add(
            "Cannot read the password of "
                + who
                + ": environment variable '"
                + passwordEnv
                + "' ("
                + envKey
                + ") is not set. Export it before starting, or use '"
                + fileKey
                + "'.");
      }
    } else if (!Files.isReadable(Path.of(passwordFile))) {
      problems.add(
          "Cannot read the password of "
              + who
              + ": file '"
              + passwordFile
              + "' ("
              + fileKey
              + ") does not exist or is not readable. Fix the path or its permissions.");
    }
  }

  private ServerIdRange serverIdRange(String key, String raw, int parallelism) {
    if (raw == null) {
      return null;
    }
    Matcher m = ServerIdRange.SYNTAX.matcher(raw);
    if (!m.matches()) {
      problems.add("Cannot parse '" + key + "' = '" + raw + "': write FIRST-LAST, e.g. 5400-5403.");
      return null;
    }
    long first = Long.parseLong(m.group(1));
    long last = m.group(2) == null ? first : Long.parseLong(m.group(2));
    if (first < 1 || last > 0xFFFFFFFFL || first > last || last > Integer.MAX_VALUE) {
      problems.add(
          "Cannot use '"
              + key
              + "' = '"
              + raw
              + "': FIRST must be >= 1 and <= LAST, both below 2147483648.");
      return null;
    }
    ServerIdRange range = ServerIdRange.parse(raw);
    if (range.size() < parallelism) {
      problems.add(
          "'"
              + key
              + "' = "
              + range
              + " holds "
              + range.size()
              + " server id(s) but "
              + PIPELINE_PARALLELISM.key()
              + " is "
              + parallelism
              + " (each source reader needs its own id): widen it to "
              + first
              + "-"
              + (first + parallelism - 1)
              + " or lower "
              + PIPELINE_PARALLELISM.key()
              + ".");
    }
    return range;
  }

  private void tables(Configuration conf) {
    String databasePattern = regex(conf, RouterOptions.TABLES_DATABASE_PATTERN);
    String tablePattern = regex(conf, RouterOptions.TABLES_TABLE_PATTERN);
    String mapKey = RouterOptions.TABLES_SHARD_MAP.key();
    Map<String, Integer> shardMap = new LinkedHashMap<>();
    conf.get(RouterOptions.TABLES_SHARD_MAP)
        .forEach(
            (table, number) -> {
              try {
                int n = Integer.parseInt(number.trim());
                if (n < 0) {
                  throw new NumberFormatException();
                }
                shardMap.put(table, n);
              } catch (NumberFormatException e) {
                problems.add(
                    "Cannot use '"
                        + mapKey
                        + "."
                        + table
                        + "' = '"
                        + number
                        + "': shard numbers are integers >= 0.");
              }
            });
    Set<Integer> seen = new HashSet<>();
    shardMap.forEach(
        (table, n) -> {
          if (!seen.add(n)) {
            List<String> same =
                shardMap.entrySet().stream()
                    .filter(e -> e.getValue() == n.intValue())
                    .map(Map.Entry::getKey)
                    .toList();
            if (same.get(0).equals(table)) {
              return;
            }
            problems.add(
                "'"
                    + mapKey
                    + "' gives shard number "
                    + n
                    + " to "
                    + same
                    + ": every table needs its own number.");
          }
        });
    for (String table : shardMap.keySet()) {
      if (!table.contains(".")) {
        problems.add(
            "Cannot use '" + mapKey + "." + table + "': name the table as 'database.table'.");
      }
    }
    boolean hasGroup =
        (databasePattern != null && SHARD_GROUP.matcher(databasePattern).find())
            || (tablePattern != null && SHARD_GROUP.matcher(tablePattern).find());
    if (databasePattern != null && tablePattern != null && !hasGroup && shardMap.isEmpty()) {
      problems.add(
          "No shard-number rule: add a named group (?<shard>\\d+) to '"
              + RouterOptions.TABLES_TABLE_PATTERN.key()
              + "' or '"
              + RouterOptions.TABLES_DATABASE_PATTERN.key()
              + "' (e.g. orders_(?<shard>\\d+)), or list every table in '"
              + mapKey
              + "'.");
    }
  }

  private String regex(Configuration conf, ConfigOption<String> option) {
    String pattern = conf.get(option);
    if (pattern == null) {
      return null;
    }
    try {
      Pattern.compile(pattern);
      return pattern;
    } catch (PatternSyntaxException e) {
      problems.add(
          "Cannot compile '"
              + option.key()
              + "' = '"
              + pattern
              + "' as a Java regex: "
              + e.getDescription()
              + " near index "
              + e.getIndex()
              + ". Fix the regex (escape literal characters such as . ( [ with a backslash,"
              + " and quote the value in YAML).");
      return null;
    }
  }

  private void cdc(Configuration conf) {
    StartupMode mode =
        invalid.contains(SOURCE_STARTUP_MODE.key()) ? null : conf.get(SOURCE_STARTUP_MODE);
    String timestamp = conf.get(SOURCE_STARTUP_TIMESTAMP);
    if (timestamp != null) {
      try {
        ShardbergConfig.CdcConfig.parseTimestamp(timestamp);
      } catch (DateTimeException | NumberFormatException e) {
        problems.add(
            "Cannot parse '"
                + SOURCE_STARTUP_TIMESTAMP.key()
                + "' = '"
                + timestamp
                + "': use an ISO-8601 instant such as 2026-01-31T12:00:00Z, or epoch milliseconds.");
      }
    }
    if (mode == StartupMode.TIMESTAMP && timestamp == null) {
      problems.add(
          "Missing key '"
              + SOURCE_STARTUP_TIMESTAMP.key()
              + "': '"
              + SOURCE_STARTUP_MODE.key()
              + "' is timestamp; set the"
              + " instant to start reading the binlog from (e.g. 2026-01-31T12:00:00Z).");
    }
    if (mode != null && mode != StartupMode.TIMESTAMP && timestamp != null) {
      problems.add(
          "'"
              + SOURCE_STARTUP_TIMESTAMP.key()
              + "' is set but '"
              + SOURCE_STARTUP_MODE.key()
              + "' is "
              + mode
              + ": set the mode to timestamp or remove the timestamp.");
    }
    String zone = conf.get(SOURCE_SERVER_TIME_ZONE);
    try {
      ZoneId.of(zone);
    } catch (DateTimeException e) {
      problems.add(
          "Cannot use '"
              + SOURCE_SERVER_TIME_ZONE.key()
              + "' = '"
              + zone
              + "': not a time zone id; use e.g. UTC or Europe/Berlin.");
    }
    Map<String, String> debezium = conf.get(SOURCE_DEBEZIUM_PROPERTIES);
    for (String driverKey : new TreeSet<>(ExactSnapshotDriver.DEBEZIUM_PROPERTIES.keySet())) {
      if (debezium.containsKey(driverKey)) {
        problems.add(
            "Cannot set '"
                + SOURCE_DEBEZIUM_PROPERTIES.key()
                + "."
                + driverKey
                + "': Shardberg sets it to its own driver, which reads MySQL FLOAT and TIME exactly in the snapshot"
                + " (docs/sources.md); remove the key.");
      }
    }
    if (debezium.containsKey("connect.keep.alive.interval.ms")) {
      problems.add(
          "Cannot set '"
              + SOURCE_DEBEZIUM_PROPERTIES.key()
              + ".connect.keep.alive.interval.ms': use '"
              + SOURCE_KEEP_ALIVE_INTERVAL.key()
              + "' instead.");
    }
    Duration healthCheck = conf.get(RouterOptions.SOURCE_HEALTH_CHECK_INTERVAL);
    Duration unreachable = conf.get(RouterOptions.SOURCE_UNREACHABLE_TIMEOUT);
    if (unreachable.compareTo(healthCheck) <= 0) {
      problems.add(
          "Cannot use '"
              + RouterOptions.SOURCE_UNREACHABLE_TIMEOUT.key()
              + "' = "
              + unreachable
              + ": it must be longer than '"
              + RouterOptions.SOURCE_HEALTH_CHECK_INTERVAL.key()
              + "' ("
              + healthCheck
              + ").");
    }
    positive(conf, SOURCE_SNAPSHOT_CHUNK_SIZE);
    positive(conf, SOURCE_FETCH_SIZE);
    positive(conf, SOURCE_CONNECTION_POOL_SIZE);
  }

  private void target(Configuration conf) {
    CatalogType type = conf.get(TARGET_CATALOG_TYPE);
    if (type == CatalogType.HADOOP && conf.get(TARGET_CATALOG_WAREHOUSE) == null) {
      problems.add(
          "Missing key '"
              + TARGET_CATALOG_WAREHOUSE.key()
              + "': a hadoop catalog needs its warehouse directory"
              + " (e.g. hdfs://nn/warehouse or file:///tmp/warehouse).");
    }
    if ((type == CatalogType.HIVE || type == CatalogType.REST)
        && conf.get(TARGET_CATALOG_URI) == null) {
      problems.add(
          "Missing key '"
              + TARGET_CATALOG_URI.key()
              + "': a "
              + type
              + " catalog needs its "
              + (type == CatalogType.HIVE
                  ? "metastore URI (thrift://host:9083)"
                  : "REST endpoint (https://host/api/catalog)")
              + ".");
    }
    String confDir = conf.get(TARGET_CATALOG_HADOOP_CONF_DIR);
    if (confDir != null && !Files.isDirectory(Path.of(confDir))) {
      problems.add(
          "'"
              + TARGET_CATALOG_HADOOP_CONF_DIR.key()
              + "' = '"
              + confDir
              + "' is not a directory: point it at the directory"
              + " holding core-site.xml / hdfs-site.xml / hive-site.xml, or remove it.");
    }
    positive(conf, RouterOptions.TARGET_BUCKETS);
    String warehouse = conf.get(TARGET_CATALOG_WAREHOUSE);
    String scheme = warehouse == null ? null : objectStoreScheme(warehouse);
    if (type == CatalogType.HADOOP && scheme != null) {
      problems.add(
          "Cannot use '"
              + TARGET_CATALOG_TYPE.key()
              + "' = hadoop with '"
              + TARGET_CATALOG_WAREHOUSE.key()
              + "' = '"
              + warehouse
              + "': the hadoop catalog commits by renaming a metadata file, which is not atomic on an object store ("
              + scheme
              + "://), so two commits (the job's schema changes and checkpoints, maintenance, another writer) can"
              + " overwrite each other and a checkpoint is lost silently. Use a catalog with an atomic swap (type hive or rest)"
              + " with its warehouse on the object store, or a warehouse on HDFS or a local file system.");
    }
    String hiveLock = conf.get(RouterOptions.TARGET_TABLE_PROPERTIES).get(HIVE_LOCK_ENABLED);
    if (type == CatalogType.HIVE && hiveLock != null && !Boolean.parseBoolean(hiveLock.trim())) {
      problems.add(
          "Cannot set '"
              + RouterOptions.TARGET_TABLE_PROPERTIES.key()
              + "."
              + HIVE_LOCK_ENABLED
              + "' = "
              + hiveLock
              + " with a hive catalog: without the metastore lock the commit's swap is atomic only on a Hive 4 metastore,"
              + " and the bundled Hive client is 2.3, so two commits can overwrite each other and a checkpoint is lost silently."
              + " Remove the key (the lock is on by default).");
    }
  }

  /** Iceberg's table property that turns the Hive Metastore lock around commits off. */
  static final String HIVE_LOCK_ENABLED = "engine.hive.lock-enabled";

  /** The scheme of an object-store location (no atomic rename), or null. */
  static String objectStoreScheme(String location) {
    int colon = location.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    String scheme = location.substring(0, colon).toLowerCase(java.util.Locale.ROOT);
    return Set.of(
                "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos",
                "cosn", "obs", "r2")
            .contains(scheme)
        ? scheme
        : null;
  }

  /**
   * The {@code maintenance.*} ranges are checked where they are declared, by {@link
   * MaintenanceSettings}.
   */
  private void maintenance(Configuration conf) {
    MaintenanceSettings settings;
    try {
      settings = MaintenanceSettings.from(conf);
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage() + ". Fix the maintenance key in the config file.");
      return;
    }
    if (settings.enabled()
        && settings.orphanFiles()
        && conf.containsKey(MaintenanceOptions.ORPHAN_FILES_MIN_AGE.key())) {
      // A writer's file is closed at a barrier and staged when the checkpoint is taken: until then
      // only its age protects it from orphan removal. A checkpoint takes at most the timeout, and
      // files opened up to an interval before its barrier; three of those is the margin.
      Duration interval = conf.get(ShardbergOptions.PIPELINE_CHECKPOINT_INTERVAL);
      Duration timeout = conf.get(ShardbergOptions.PIPELINE_CHECKPOINT_TIMEOUT);
      Duration safe = interval.plus(timeout).multipliedBy(3);
      if (settings.orphanMinAge().compareTo(safe) < 0) {
        problems.add(
            "Cannot use '"
                + MaintenanceOptions.ORPHAN_FILES_MIN_AGE.key()
                + "' = "
                + settings.orphanMinAge()
                + ": orphan removal would delete files the writers wrote for checkpoints not yet taken, and the next commit"
                + " would reference them (every scan of their partitions then fails). It must be at least 3 x ('"
                + ShardbergOptions.PIPELINE_CHECKPOINT_INTERVAL.key()
                + "' + '"
                + ShardbergOptions.PIPELINE_CHECKPOINT_TIMEOUT.key()
                + "') = "
                + safe
                + "; the default is 1 day.");
      }
    }
  }

  private void coordinator(Configuration conf) {
    String connect = conf.get(CoordinatorConfigOptions.ZK_CONNECT);
    if (connect == null) {
      List<String> orphans =
          conf.keySet().stream()
              .filter(k -> k.startsWith(CoordinatorConfigOptions.ZK_PREFIX))
              .sorted()
              .toList();
      if (!orphans.isEmpty()) {
        problems.add(
            "'"
                + String.join("', '", orphans)
                + "' set but '"
                + CoordinatorConfigOptions.ZK_CONNECT.key()
                + "' is not: set the ZooKeeper connect string to enable HA mode, or remove the zookeeper keys.");
      }
      return;
    }
    String rootPath = conf.get(CoordinatorConfigOptions.ZK_ROOT_PATH);
    if (!rootPath.startsWith("/") || (rootPath.length() > 1 && rootPath.endsWith("/"))) {
      problems.add(
          "Cannot use '"
              + CoordinatorConfigOptions.ZK_ROOT_PATH.key()
              + "' = '"
              + rootPath
              + "': a ZooKeeper path starts with '/' and does not end with one.");
    }
    for (ConfigOption<?> option : topLevel()) {
      if (ValueType.of(option) == ValueType.DURATION
          && option.key().startsWith(CoordinatorConfigOptions.ZK_PREFIX)) {
        longerThanZero(conf, top, option);
      }
    }
    nonNegative(conf, CoordinatorConfigOptions.ZK_RETRY_MAX_RETRIES);
  }

  // ---- value ranges (defaults are valid: only set values are checked) --------------------------

  private void positive(Configuration conf, ConfigOption<Integer> option) {
    if (conf.containsKey(option.key()) && conf.get(option) < 1) {
      problems.add(
          "Cannot use '" + option.key() + "' = " + conf.get(option) + ": it must be at least 1.");
    }
  }

  private void nonNegative(Configuration conf, ConfigOption<Integer> option) {
    if (conf.containsKey(option.key()) && conf.get(option) < 0) {
      problems.add(
          "Cannot use '" + option.key() + "' = " + conf.get(option) + ": it must be 0 or more.");
    }
  }

  private void longerThanZero(Configuration conf, Flat flat, ConfigOption<?> option) {
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
