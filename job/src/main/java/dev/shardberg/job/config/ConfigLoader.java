package dev.shardberg.job.config;

import dev.shardberg.router.SchemaChangeBehavior;

import static dev.shardberg.job.config.ShardbergOptions.*;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.shardberg.job.config.ConfigKey.Kind;
import dev.shardberg.job.config.ShardbergConfig.CatalogConfig;
import dev.shardberg.job.config.ShardbergConfig.CatalogType;
import dev.shardberg.job.config.ShardbergConfig.CdcConfig;
import dev.shardberg.job.config.ShardbergConfig.CoordinatorConfig;
import dev.shardberg.job.config.ShardbergConfig.OnStatelessStart;
import dev.shardberg.job.config.ShardbergConfig.PasswordRef;
import dev.shardberg.job.config.ShardbergConfig.PipelineConfig;
import dev.shardberg.job.config.ShardbergConfig.ServerIdRange;
import dev.shardberg.job.config.ShardbergConfig.SourceConfig;
import dev.shardberg.job.config.ShardbergConfig.StartupMode;
import dev.shardberg.job.config.ShardbergConfig.TablesConfig;
import dev.shardberg.job.config.ShardbergConfig.TargetConfig;
import dev.shardberg.job.config.ShardbergConfig.ZooKeeperConfig;
import dev.shardberg.router.ExactFloatDriver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * YAML → {@link ShardbergConfig}. Every problem is collected and reported at once, each naming the
 * key (with the list index for {@code sources[i]}), the bad value and the fix. Nothing is started
 * before this passes.
 */
public final class ConfigLoader {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Pattern DURATION =
      Pattern.compile("(\\d+)\\s*(ms|milli|millis|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days)?");
  private static final Pattern SERVER_ID_RANGE = Pattern.compile("\\s*(\\d+)\\s*(?:-\\s*(\\d+)\\s*)?");
  private static final Pattern SHARD_GROUP = Pattern.compile("\\(\\?<shard>");

  private final String origin;
  private final Function<String, String> env;
  private final Map<String, JsonNode> values = new LinkedHashMap<>();
  private final List<String> problems = new ArrayList<>();

  private ConfigLoader(String origin, Function<String, String> env) {
    this.origin = origin;
    this.env = env;
  }

  public static ShardbergConfig load(Path file) {
    String yaml;
    try {
      yaml = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException("Cannot read config file '" + file + "': " + e.getMessage() + ". Check the --config path.");
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
      throw new ConfigException(origin, List.of("Cannot parse YAML: " + e.getOriginalMessage()
          + (e.getLocation() != null ? " (line " + e.getLocation().getLineNr() + ")" : "") + ". Fix the YAML syntax."));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new ConfigException(origin, List.of("The file is empty. Start from docs/example-config.yaml."));
    }
    if (!root.isObject()) {
      throw new ConfigException(origin, List.of("The top level must be a mapping of keys (pipeline:, sources:, tables:, source:, target:)."));
    }
    collect(root, "", "");
    if (!problems.isEmpty()) {
      throw new ConfigException(origin, problems);
    }
    ShardbergConfig config = build();
    if (!problems.isEmpty()) {
      throw new ConfigException(origin, problems);
    }
    return config;
  }

  // ---- structure: every key known, every value of the right shape ------------------------------

  private void collect(JsonNode object, String concretePrefix, String keyPrefix) {
    Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      String concrete = concretePrefix + field.getKey();
      String keyPath = keyPrefix + field.getKey();
      JsonNode node = field.getValue();
      ConfigKey key = ShardbergOptions.find(keyPath).orElse(null);
      if (key != null) {
        collectValue(key, concrete, node);
      } else if (isSection(keyPath)) {
        if (node.isNull()) {
          continue;
        }
        if (!node.isObject()) {
          problems.add("Key '" + concrete + "' is a section: give it nested keys (" + childrenOf(keyPath, concretePrefix, keyPrefix) + "), not a value.");
        } else {
          collect(node, concrete + ".", keyPath + ".");
        }
      } else {
        String suggestion = suggestion(keyPath, concretePrefix, keyPrefix);
        problems.add("Unknown key '" + concrete + "'" + (suggestion.isEmpty() ? "." : suggestion)
            + " Every key is listed in docs/config.md.");
      }
    }
  }

  private void collectValue(ConfigKey key, String concrete, JsonNode node) {
    if (node.isNull()) {
      return; // "key:" with no value = not set
    }
    switch (key.kind()) {
      case SECTION_LIST -> {
        if (!node.isArray()) {
          problems.add("Key '" + concrete + "' must be a list (one '- name: …' entry per MySQL host).");
          return;
        }
        values.put(concrete, node);
        for (int i = 0; i < node.size(); i++) {
          JsonNode element = node.get(i);
          String elementPath = concrete + "[" + i + "]";
          if (!element.isObject()) {
            problems.add("Entry '" + elementPath + "' must be a mapping (name:, host:, port:, user:, …).");
          } else {
            collect(element, elementPath + ".", key.key() + "[].");
          }
        }
      }
      case MAP -> {
        if (!node.isObject()) {
          problems.add("Key '" + concrete + "' must be a mapping of 'name: value' pairs.");
          return;
        }
        node.fields().forEachRemaining(e -> {
          if (!e.getValue().isValueNode()) {
            problems.add("Key '" + concrete + "." + e.getKey() + "' must be a plain value (string or number), not a nested structure.");
          }
        });
        values.put(concrete, node);
      }
      case LIST -> {
        if (!node.isArray() && !node.isValueNode()) {
          problems.add("Key '" + concrete + "' must be a list of names, e.g. [id] or [tenant_id, id].");
          return;
        }
        values.put(concrete, node);
      }
      default -> {
        if (!node.isValueNode()) {
          problems.add("Key '" + concrete + "' takes a single value, not a nested structure: " + key.description());
          return;
        }
        values.put(concrete, node);
      }
    }
  }

  private static boolean isSection(String keyPath) {
    String prefix = keyPath + ".";
    return ShardbergOptions.all().stream().anyMatch(k -> k.key().startsWith(prefix));
  }

  private static String childrenOf(String keyPath, String concretePrefix, String keyPrefix) {
    String prefix = keyPath + ".";
    Set<String> children = new java.util.LinkedHashSet<>();
    for (ConfigKey k : ShardbergOptions.all()) {
      if (k.key().startsWith(prefix)) {
        String rest = k.key().substring(prefix.length());
        int dot = rest.indexOf('.');
        children.add(dot < 0 ? rest : rest.substring(0, dot));
      }
    }
    return String.join(", ", children);
  }

  /** " — did you mean 'x'?" with the closest known key, rendered with the element index. */
  private static String suggestion(String keyPath, String concretePrefix, String keyPrefix) {
    String leaf = keyPath.substring(keyPath.lastIndexOf('.') + 1);
    List<String> known = ShardbergOptions.all().stream().map(ConfigKey::key).toList();
    String best = known.stream()
        .filter(k -> k.endsWith("." + leaf) || k.equals(leaf))
        .findFirst()
        .orElseGet(() -> known.stream()
            .min(Comparator.comparingInt((String k) -> distance(k, keyPath)))
            .filter(k -> distance(k, keyPath) <= Math.max(3, keyPath.length() / 3))
            .orElse(null));
    if (best == null) {
      return "";
    }
    String rendered = best.startsWith(keyPrefix) && !keyPrefix.isEmpty()
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

  // ---- typed values ------------------------------------------------------------------------------

  private ShardbergConfig build() {
    int parallelism = positiveInt(PIPELINE_PARALLELISM, PIPELINE_PARALLELISM.key());
    Integer writers = optionalInt(PIPELINE_WRITER_PARALLELISM, PIPELINE_WRITER_PARALLELISM.key());
    PipelineConfig pipeline = new PipelineConfig(
        string(PIPELINE_ID, PIPELINE_ID.key()),
        duration(PIPELINE_CHECKPOINT_INTERVAL, PIPELINE_CHECKPOINT_INTERVAL.key()),
        duration(PIPELINE_CHECKPOINT_TIMEOUT, PIPELINE_CHECKPOINT_TIMEOUT.key()),
        string(PIPELINE_CHECKPOINT_DIR, PIPELINE_CHECKPOINT_DIR.key()),
        parallelism,
        writers == null ? parallelism : writers,
        positiveInt(PIPELINE_HEARTBEAT_EVERY_EMPTY_CHECKPOINTS, PIPELINE_HEARTBEAT_EVERY_EMPTY_CHECKPOINTS.key()),
        nonNegativeInt(PIPELINE_RESTART_ATTEMPTS, PIPELINE_RESTART_ATTEMPTS.key()),
        duration(PIPELINE_RESTART_DELAY, PIPELINE_RESTART_DELAY.key()),
        onStatelessStart());

    List<SourceConfig> sources = sources(parallelism);
    TablesConfig tables = tables();
    CdcConfig cdc = cdc();
    if (pipeline.onStatelessStart() == OnStatelessStart.RESNAPSHOT && cdc.startupMode() != null
        && cdc.startupMode() != StartupMode.INITIAL) {
      problems.add("Cannot use '" + PIPELINE_ON_STATELESS_START.key() + "' = resnapshot with 'source.startup-mode' = "
          + cdc.startupMode() + ": a re-snapshot removes the shards' rows and reads them again, which needs the"
          + " snapshot; set source.startup-mode to initial or " + PIPELINE_ON_STATELESS_START.key() + " to fail.");
    }
    TargetConfig target = target();
    CoordinatorConfig coordinator = coordinator();
    return new ShardbergConfig(pipeline, sources, tables, cdc, target, coordinator);
  }

  private OnStatelessStart onStatelessStart() {
    String raw = string(PIPELINE_ON_STATELESS_START, PIPELINE_ON_STATELESS_START.key());
    try {
      return OnStatelessStart.parse(raw);
    } catch (IllegalArgumentException e) {
      problems.add("Cannot use '" + PIPELINE_ON_STATELESS_START.key() + "' = '" + raw + "': use fail or resnapshot.");
      return null;
    }
  }

  private List<SourceConfig> sources(int parallelism) {
    JsonNode list = values.get(SOURCES.key());
    if (list == null || list.isEmpty()) {
      problems.add("Missing key 'sources': list at least one MySQL host (name, host, port, user, password-env or password-file, server-id-range).");
      return List.of();
    }
    List<SourceConfig> sources = new ArrayList<>();
    Map<String, Integer> names = new LinkedHashMap<>();
    for (int i = 0; i < list.size(); i++) {
      String at = "sources[" + i + "].";
      String name = string(SOURCE_NAME, at + "name");
      if (name != null && names.putIfAbsent(name, i) != null) {
        problems.add("Source name '" + name + "' is used by sources[" + names.get(name) + "] and sources[" + i
            + "]: give every source a unique 'name' (it names the operator uids).");
      }
      String passwordEnv = string(SOURCE_PASSWORD_ENV, at + "password-env");
      String passwordFile = string(SOURCE_PASSWORD_FILE, at + "password-file");
      PasswordRef password = password(name, at, passwordEnv, passwordFile);
      ServerIdRange ids = serverIdRange(at + "server-id-range", parallelism);
      sources.add(new SourceConfig(
          name,
          string(SOURCE_HOST, at + "host"),
          port(at + "port"),
          string(SOURCE_USER, at + "user"),
          password,
          stringMap(SOURCE_JDBC_PROPERTIES, at + "jdbc-properties"),
          ids));
    }
    for (int i = 0; i < sources.size(); i++) {
      for (int j = i + 1; j < sources.size(); j++) {
        SourceConfig a = sources.get(i);
        SourceConfig b = sources.get(j);
        if (a.serverIds() != null && b.serverIds() != null && a.serverIds().overlaps(b.serverIds())) {
          int width = b.serverIds().size();
          int free = sources.stream().filter(s -> s.serverIds() != null).mapToInt(s -> s.serverIds().last()).max().orElse(0) + 1;
          problems.add("Server-id ranges of sources '" + a.name() + "' (sources[" + i + "].server-id-range = " + a.serverIds()
              + ") and '" + b.name() + "' (sources[" + j + "].server-id-range = " + b.serverIds()
              + ") overlap: give every source its own range, e.g. " + free + "-" + (free + width - 1) + " for '" + b.name() + "'.");
        }
      }
    }
    return sources;
  }

  private PasswordRef password(String sourceName, String at, String passwordEnv, String passwordFile) {
    String who = sourceName == null ? at.substring(0, at.length() - 1) : "source '" + sourceName + "'";
    if (passwordEnv != null && passwordFile != null) {
      problems.add("Both '" + at + "password-env' and '" + at + "password-file' are set for " + who + ": keep exactly one.");
      return null;
    }
    if (passwordEnv == null && passwordFile == null) {
      problems.add("Missing password for " + who + ": set '" + at + "password-env' (name of an environment variable) or '"
          + at + "password-file' (path of a file holding it). Passwords never go into the config file.");
      return null;
    }
    if (passwordEnv != null) {
      if (env.apply(passwordEnv) == null) {
        problems.add("Cannot read the password of " + who + ": environment variable '" + passwordEnv + "' (" + at
            + "password-env) is not set. Export it before starting, or use '" + at + "password-file'.");
      }
      return PasswordRef.ofEnv(passwordEnv);
    }
    Path file = Path.of(passwordFile);
    if (!Files.isReadable(file)) {
      problems.add("Cannot read the password of " + who + ": file '" + passwordFile + "' (" + at
          + "password-file) does not exist or is not readable. Fix the path or its permissions.");
    }
    return PasswordRef.ofFile(passwordFile);
  }

  private ServerIdRange serverIdRange(String path, int parallelism) {
    String raw = string(SOURCE_SERVER_ID_RANGE, path);
    if (raw == null) {
      return null;
    }
    Matcher m = SERVER_ID_RANGE.matcher(raw);
    if (!m.matches()) {
      problems.add("Cannot parse '" + path + "' = '" + raw + "': write FIRST-LAST, e.g. 5400-5403.");
      return null;
    }
    long first = Long.parseLong(m.group(1));
    long last = m.group(2) == null ? first : Long.parseLong(m.group(2));
    if (first < 1 || last > 0xFFFFFFFFL || first > last || last > Integer.MAX_VALUE) {
      problems.add("Cannot use '" + path + "' = '" + raw + "': FIRST must be >= 1 and <= LAST, both below 2147483648.");
      return null;
    }
    ServerIdRange range = new ServerIdRange((int) first, (int) last);
    if (range.size() < parallelism) {
      problems.add("'" + path + "' = " + range + " holds " + range.size() + " server id(s) but pipeline.parallelism is "
          + parallelism + " (each source reader needs its own id): widen it to " + first + "-" + (first + parallelism - 1)
          + " or lower pipeline.parallelism.");
    }
    return range;
  }

  private TablesConfig tables() {
    String databasePattern = regex(TABLES_DATABASE_PATTERN);
    String tablePattern = regex(TABLES_TABLE_PATTERN);
    Map<String, Integer> shardMap = new LinkedHashMap<>();
    stringMap(TABLES_SHARD_MAP, TABLES_SHARD_MAP.key()).forEach((table, number) -> {
      try {
        int n = Integer.parseInt(number.trim());
        if (n < 0) {
          throw new NumberFormatException();
        }
        shardMap.put(table, n);
      } catch (NumberFormatException e) {
        problems.add("Cannot use '" + TABLES_SHARD_MAP.key() + "." + table + "' = '" + number + "': shard numbers are integers >= 0.");
      }
    });
    Set<Integer> seen = new HashSet<>();
    shardMap.forEach((table, n) -> {
      if (!seen.add(n)) {
        List<String> same = shardMap.entrySet().stream().filter(e -> e.getValue() == n.intValue()).map(Map.Entry::getKey).toList();
        if (same.get(0).equals(table)) {
          return;
        }
        problems.add("'" + TABLES_SHARD_MAP.key() + "' gives shard number " + n + " to " + same + ": every table needs its own number.");
      }
    });
    for (String table : shardMap.keySet()) {
      if (!table.contains(".")) {
        problems.add("Cannot use '" + TABLES_SHARD_MAP.key() + "." + table + "': name the table as 'database.table'.");
      }
    }
    boolean hasGroup = (databasePattern != null && SHARD_GROUP.matcher(databasePattern).find())
        || (tablePattern != null && SHARD_GROUP.matcher(tablePattern).find());
    if (databasePattern != null && tablePattern != null && !hasGroup && shardMap.isEmpty()) {
      problems.add("No shard-number rule: add a named group (?<shard>\\d+) to 'tables.table-pattern' or 'tables.database-pattern'"
          + " (e.g. orders_(?<shard>\\d+)), or list every table in 'tables.shard-map'.");
    }
    return new TablesConfig(databasePattern, tablePattern, shardMap, stringList(TABLES_KEY_COLUMNS, TABLES_KEY_COLUMNS.key()));
  }

  private String regex(ConfigKey key) {
    String pattern = string(key, key.key());
    if (pattern == null) {
      return null;
    }
    try {
      Pattern.compile(pattern);
      return pattern;
    } catch (PatternSyntaxException e) {
      problems.add("Cannot compile '" + key.key() + "' = '" + pattern + "' as a Java regex: " + e.getDescription()
          + " near index " + e.getIndex() + ". Fix the regex (escape literal characters such as . ( [ with a backslash,"
          + " and quote the value in YAML).");
      return null;
    }
  }

  private CdcConfig cdc() {
    String modeRaw = string(SOURCE_STARTUP_MODE, SOURCE_STARTUP_MODE.key());
    StartupMode mode = null;
    try {
      mode = StartupMode.parse(modeRaw);
    } catch (IllegalArgumentException e) {
      problems.add("Cannot use '" + SOURCE_STARTUP_MODE.key() + "' = '" + modeRaw + "': use initial, latest or timestamp.");
    }
    String timestampRaw = string(SOURCE_STARTUP_TIMESTAMP, SOURCE_STARTUP_TIMESTAMP.key());
    Instant timestamp = null;
    if (timestampRaw != null) {
      try {
        timestamp = timestampRaw.chars().allMatch(Character::isDigit)
            ? Instant.ofEpochMilli(Long.parseLong(timestampRaw))
            : Instant.parse(timestampRaw);
      } catch (DateTimeException | NumberFormatException e) {
        problems.add("Cannot parse '" + SOURCE_STARTUP_TIMESTAMP.key() + "' = '" + timestampRaw
            + "': use an ISO-8601 instant such as 2026-01-31T12:00:00Z, or epoch milliseconds.");
      }
    }
    if (mode == StartupMode.TIMESTAMP && timestampRaw == null) {
      problems.add("Missing key '" + SOURCE_STARTUP_TIMESTAMP.key() + "': 'source.startup-mode' is timestamp; set the instant to start"
          + " reading the binlog from (e.g. 2026-01-31T12:00:00Z).");
    }
    if (mode != null && mode != StartupMode.TIMESTAMP && timestampRaw != null) {
      problems.add("'" + SOURCE_STARTUP_TIMESTAMP.key() + "' is set but 'source.startup-mode' is " + mode
          + ": set the mode to timestamp or remove the timestamp.");
    }
    String zone = string(SOURCE_SERVER_TIME_ZONE, SOURCE_SERVER_TIME_ZONE.key());
    try {
      ZoneId.of(zone);
    } catch (DateTimeException e) {
      problems.add("Cannot use '" + SOURCE_SERVER_TIME_ZONE.key() + "' = '" + zone + "': not a time zone id; use e.g. UTC or Europe/Berlin.");
    }
    Map<String, String> debezium = stringMap(SOURCE_DEBEZIUM_PROPERTIES, SOURCE_DEBEZIUM_PROPERTIES.key());
    for (String driverKey : new TreeSet<>(ExactFloatDriver.DEBEZIUM_PROPERTIES.keySet())) {
      if (debezium.containsKey(driverKey)) {
        problems.add("Cannot set '" + SOURCE_DEBEZIUM_PROPERTIES.key() + "." + driverKey
            + "': Shardberg sets it to its own driver, which reads MySQL FLOAT exactly in the snapshot"
            + " (docs/sources.md); remove the key.");
      }
    }
    return new CdcConfig(
        mode,
        timestamp,
        positiveInt(SOURCE_SNAPSHOT_CHUNK_SIZE, SOURCE_SNAPSHOT_CHUNK_SIZE.key()),
        positiveInt(SOURCE_FETCH_SIZE, SOURCE_FETCH_SIZE.key()),
        positiveInt(SOURCE_CONNECTION_POOL_SIZE, SOURCE_CONNECTION_POOL_SIZE.key()),
        duration(SOURCE_POLL_INTERVAL, SOURCE_POLL_INTERVAL.key()),
        zone,
        duration(SOURCE_CONNECT_TIMEOUT, SOURCE_CONNECT_TIMEOUT.key()),
        duration(SOURCE_HEARTBEAT_INTERVAL, SOURCE_HEARTBEAT_INTERVAL.key()),
        duration(SOURCE_BINLOG_FORMAT_CHECK_INTERVAL, SOURCE_BINLOG_FORMAT_CHECK_INTERVAL.key()),
        debezium);
  }

  private TargetConfig target() {
    String typeRaw = string(TARGET_CATALOG_TYPE, TARGET_CATALOG_TYPE.key());
    CatalogType type = null;
    if (typeRaw != null) {
      try {
        type = CatalogType.valueOf(typeRaw.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        problems.add("Cannot use '" + TARGET_CATALOG_TYPE.key() + "' = '" + typeRaw + "': use hadoop, hive or rest.");
      }
    }
    String uri = string(TARGET_CATALOG_URI, TARGET_CATALOG_URI.key());
    String warehouse = string(TARGET_CATALOG_WAREHOUSE, TARGET_CATALOG_WAREHOUSE.key());
    if (type == CatalogType.HADOOP && warehouse == null) {
      problems.add("Missing key '" + TARGET_CATALOG_WAREHOUSE.key() + "': a hadoop catalog needs its warehouse directory"
          + " (e.g. hdfs://nn/warehouse or file:///tmp/warehouse).");
    }
    if ((type == CatalogType.HIVE || type == CatalogType.REST) && uri == null) {
      problems.add("Missing key '" + TARGET_CATALOG_URI.key() + "': a " + type + " catalog needs its "
          + (type == CatalogType.HIVE ? "metastore URI (thrift://host:9083)" : "REST endpoint (https://host/api/catalog)") + ".");
    }
    String confDir = string(TARGET_CATALOG_HADOOP_CONF_DIR, TARGET_CATALOG_HADOOP_CONF_DIR.key());
    if (confDir != null && !Files.isDirectory(Path.of(confDir))) {
      problems.add("'" + TARGET_CATALOG_HADOOP_CONF_DIR.key() + "' = '" + confDir + "' is not a directory: point it at the directory"
          + " holding core-site.xml / hdfs-site.xml / hive-site.xml, or remove it.");
    }
    CatalogConfig catalog = new CatalogConfig(
        type,
        string(TARGET_CATALOG_NAME, TARGET_CATALOG_NAME.key()),
        uri,
        warehouse,
        confDir,
        stringMap(TARGET_CATALOG_PROPERTIES, TARGET_CATALOG_PROPERTIES.key()));
    return new TargetConfig(
        catalog,
        string(TARGET_NAMESPACE, TARGET_NAMESPACE.key()),
        string(TARGET_TABLE, TARGET_TABLE.key()),
        positiveInt(TARGET_BUCKETS, TARGET_BUCKETS.key()),
        string(TARGET_KEY_COLUMN, TARGET_KEY_COLUMN.key()),
        stringMap(TARGET_TABLE_PROPERTIES, TARGET_TABLE_PROPERTIES.key()),
        bool(TARGET_INSERT_ONLY_INITIAL_LOAD, TARGET_INSERT_ONLY_INITIAL_LOAD.key()),
        schemaChangeBehavior());
  }

  private SchemaChangeBehavior schemaChangeBehavior() {
    String raw = string(SCHEMA_CHANGE_BEHAVIOR, SCHEMA_CHANGE_BEHAVIOR.key());
    try {
      return SchemaChangeBehavior.parse(raw);
    } catch (IllegalArgumentException e) {
      problems.add("Cannot use '" + SCHEMA_CHANGE_BEHAVIOR.key() + "' = '" + raw + "': use evolve or fail.");
      return null;
    }
  }

  private CoordinatorConfig coordinator() {
    Duration lockTimeout = duration(COORDINATOR_LOCK_TIMEOUT, COORDINATOR_LOCK_TIMEOUT.key());
    String connect = string(ZK_CONNECT, ZK_CONNECT.key());
    if (connect == null) {
      List<String> orphans = values.keySet().stream().filter(k -> k.startsWith("coordinator.zookeeper.")).toList();
      if (!orphans.isEmpty()) {
        problems.add("'" + String.join("', '", orphans) + "' set but '" + ZK_CONNECT.key()
            + "' is not: set the ZooKeeper connect string to enable HA mode, or remove the zookeeper keys.");
      }
      return new CoordinatorConfig(lockTimeout, null);
    }
    String rootPath = string(ZK_ROOT_PATH, ZK_ROOT_PATH.key());
    if (!rootPath.startsWith("/") || (rootPath.length() > 1 && rootPath.endsWith("/"))) {
      problems.add("Cannot use '" + ZK_ROOT_PATH.key() + "' = '" + rootPath + "': a ZooKeeper path starts with '/' and does not end with one.");
    }
    Duration zkLock = values.containsKey(ZK_LOCK_TIMEOUT.key()) ? duration(ZK_LOCK_TIMEOUT, ZK_LOCK_TIMEOUT.key()) : lockTimeout;
    return new CoordinatorConfig(lockTimeout, new ZooKeeperConfig(
        connect,
        rootPath,
        duration(ZK_SESSION_TIMEOUT, ZK_SESSION_TIMEOUT.key()),
        duration(ZK_CONNECTION_TIMEOUT, ZK_CONNECTION_TIMEOUT.key()),
        zkLock,
        duration(ZK_RETRY_BASE_SLEEP, ZK_RETRY_BASE_SLEEP.key()),
        nonNegativeInt(ZK_RETRY_MAX_RETRIES, ZK_RETRY_MAX_RETRIES.key())));
  }

  // ---- scalar readers: record a problem and return null/default on failure ---------------------

  private String raw(ConfigKey key, String path) {
    JsonNode node = values.get(path);
    String value = node == null ? null : node.asText();
    if (value != null && value.isBlank()) {
      value = null;
    }
    if (value == null) {
      value = key.defaultValue();
    }
    if (value == null && key.required()) {
      problems.add("Missing key '" + path + "': " + key.description());
    }
    return value;
  }

  private String string(ConfigKey key, String path) {
    return raw(key, path);
  }

  private Integer optionalInt(ConfigKey key, String path) {
    String value = raw(key, path);
    if (value == null) {
      return null;
    }
    try {
      int n = Integer.parseInt(value.trim());
      if (n < 1) {
        problems.add("Cannot use '" + path + "' = " + n + ": it must be at least 1.");
      }
      return n;
    } catch (NumberFormatException e) {
      problems.add("Cannot parse '" + path + "' = '" + value + "': expected a whole number.");
      return null;
    }
  }

  private int positiveInt(ConfigKey key, String path) {
    Integer n = optionalInt(key, path);
    return n == null ? 1 : n;
  }

  private int nonNegativeInt(ConfigKey key, String path) {
    String value = raw(key, path);
    try {
      int n = Integer.parseInt(value.trim());
      if (n < 0) {
        problems.add("Cannot use '" + path + "' = " + n + ": it must be 0 or more.");
      }
      return n;
    } catch (NumberFormatException | NullPointerException e) {
      problems.add("Cannot parse '" + path + "' = '" + value + "': expected a whole number.");
      return 0;
    }
  }

  private boolean bool(ConfigKey key, String path) {
    String value = raw(key, path);
    String t = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    if (t.equals("true") || t.equals("false")) {
      return Boolean.parseBoolean(t);
    }
    problems.add("Cannot parse '" + path + "' = '" + value + "': expected true or false.");
    return false;
  }

  private int port(String path) {
    Integer port = optionalInt(SOURCE_PORT, path);
    if (port != null && port > 65535) {
      problems.add("Cannot use '" + path + "' = " + port + ": a port is between 1 and 65535.");
    }
    return port == null ? 3306 : port;
  }

  private Duration duration(ConfigKey key, String path) {
    String value = raw(key, path);
    if (value == null) {
      return null;
    }
    Duration d = parseDuration(value);
    if (d == null) {
      problems.add("Cannot parse '" + path + "' = '" + value + "' as a duration: write e.g. 500ms, 10s, 5min or 1h.");
    } else if (d.isZero() && key != PIPELINE_RESTART_DELAY) {
      problems.add("Cannot use '" + path + "' = '" + value + "': it must be longer than 0.");
    }
    return d;
  }

  /** Parses "500ms", "10s", "5min", "1h", "2d" or ISO-8601 "PT10S"; null when it is none of these. */
  public static Duration parseDuration(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("pt")) {
      try {
        return Duration.parse(t);
      } catch (DateTimeException e) {
        return null;
      }
    }
    Matcher m = DURATION.matcher(t);
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "ms" : m.group(2);
    return switch (unit) {
      case "ms", "milli", "millis" -> Duration.ofMillis(n);
      case "s", "sec", "secs", "second", "seconds" -> Duration.ofSeconds(n);
      case "m", "min", "mins", "minute", "minutes" -> Duration.ofMinutes(n);
      case "h", "hour", "hours" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  private Map<String, String> stringMap(ConfigKey key, String path) {
    JsonNode node = values.get(path);
    Map<String, String> map = new LinkedHashMap<>();
    if (node != null) {
      node.fields().forEachRemaining(e -> map.put(e.getKey(), e.getValue().asText()));
    }
    return map;
  }

  private List<String> stringList(ConfigKey key, String path) {
    JsonNode node = values.get(path);
    List<String> list = new ArrayList<>();
    if (node == null) {
      return list;
    }
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
        problems.add("Key '" + path + "' must list plain column names, e.g. [tenant_id, id].");
      } else {
        list.add(element.asText().trim());
      }
    }
    return list;
  }
}
