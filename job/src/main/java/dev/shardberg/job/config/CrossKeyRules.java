package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.router.RouterOptions;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * The rules across keys, checked once every value parses, in a fixed order (the order of the
 * messages): the pipeline's ranges, the sources, the tables, maintenance, the CDC source, the
 * stateless start, the target and the coordinator. The {@code tables.*} and {@code
 * coordinator.zookeeper.*} rules are here; the sources' are in {@link SourceRules}, the target's
 * and maintenance's in {@link TargetRules}.
 */
final class CrossKeyRules {
  private static final Pattern SHARD_GROUP = Pattern.compile("\\(\\?<shard>");

  private final Problems problems;
  private final KeyChecks keys;
  private final FlatConfig top;
  private final SourceRules sourceRules;
  private final TargetRules targetRules;

  /**
   * @param top the file's top level, for the raw text of a value in a message
   * @param env environment lookup (for {@code password-env}); {@code System::getenv} outside tests
   */
  CrossKeyRules(Problems problems, KeyChecks keys, FlatConfig top, Function<String, String> env) {
    this.problems = problems;
    this.keys = keys;
    this.top = top;
    this.sourceRules = new SourceRules(problems, keys, env);
    this.targetRules = new TargetRules(problems, keys, env);
  }

  /**
   * @param conf the top level, its unparsable values already removed
   * @param sources one configuration per {@code sources[]} entry, in the file's order
   */
  void check(Configuration conf, List<Configuration> sources) {
    keys.positive(conf, PIPELINE_PARALLELISM);
    keys.positive(conf, PIPELINE_WRITER_PARALLELISM);
    keys.positive(conf, CoordinatorConfigOptions.HEARTBEAT_EVERY_EMPTY_CHECKPOINTS);
    keys.nonNegative(conf, PIPELINE_RESTART_ATTEMPTS);
    for (ConfigOption<?> option : topLevel()) {
      if (ValueType.of(option) == ValueType.DURATION
          && option != PIPELINE_RESTART_DELAY
          && !option.key().startsWith(CoordinatorConfigOptions.ZK_PREFIX)
          && !option.key().startsWith(MaintenanceOptions.PREFIX)) {
        keys.longerThanZero(conf, top, option);
      }
    }
    sourceRules.sources(conf.get(PIPELINE_PARALLELISM), sources);
    tables(conf);
    Set<Integer> both = new TreeSet<>(conf.get(RouterOptions.TABLES_EXCLUDE_SHARDS));
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
    targetRules.maintenance(conf);
    sourceRules.cdc(conf);
    OnStatelessStart onStatelessStart = conf.get(PIPELINE_ON_STATELESS_START);
    StartupMode startupMode = conf.get(SOURCE_STARTUP_MODE);
    if (onStatelessStart == OnStatelessStart.RESNAPSHOT
        && !problems.isInvalid(SOURCE_STARTUP_MODE.key())
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
    targetRules.target(conf);
    coordinator(conf);
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
        keys.longerThanZero(conf, top, option);
      }
    }
    keys.nonNegative(conf, CoordinatorConfigOptions.ZK_RETRY_MAX_RETRIES);
  }
}
