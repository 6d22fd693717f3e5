package dev.shardberg.router.discovery;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A sharded logical table: the hosts to look on, anchored Java regexes for database and table
 * names, and the shard-number rule. The number comes from the named group {@code (?<shard>\d+)} of
 * the table pattern or, failing that, of the database pattern; a table whose groups capture nothing
 * takes its number from {@code explicitShardMap} (keys "db.table"). {@code keyColumns} empty means
 * "use the primary key". Shards numbered in {@code excludedShards} are left out of the plan.
 */
public record LogicalTableSpec(
    List<MySqlHost> hosts,
    String databasePattern,
    String tablePattern,
    Map<String, Integer> explicitShardMap,
    List<String> keyColumns,
    Set<Integer> excludedShards)
    implements Serializable {

  public static final String SHARD_GROUP = "shard";
  private static final String SHARD_GROUP_SYNTAX = "(?<" + SHARD_GROUP + ">";

  /** No shard excluded. */
  public LogicalTableSpec(
      List<MySqlHost> hosts,
      String databasePattern,
      String tablePattern,
      Map<String, Integer> explicitShardMap,
      List<String> keyColumns) {
    this(hosts, databasePattern, tablePattern, explicitShardMap, keyColumns, Set.of());
  }

  public LogicalTableSpec {
    excludedShards = excludedShards == null ? Set.of() : Set.copyOf(excludedShards);
    Preconditions.checkArgument(
        hosts != null && !hosts.isEmpty(),
        "Cannot define the logical table: "
            + RouterOptions.SOURCES.key()
            + " is empty; list at least one MySQL host");
    hosts = List.copyOf(hosts);
    Set<String> names = new HashSet<>();
    for (MySqlHost host : hosts) {
      Preconditions.checkArgument(
          names.add(host.name()),
          "Cannot define the logical table: two sources are named '%s'; give each a unique "
              + RouterOptions.SOURCE_NAME.key(),
          host.name());
    }
    compile(RouterOptions.TABLES_DATABASE_PATTERN.key(), databasePattern);
    compile(RouterOptions.TABLES_TABLE_PATTERN.key(), tablePattern);
    explicitShardMap =
        explicitShardMap == null
            ? Map.of()
            : Collections.unmodifiableMap(new LinkedHashMap<>(explicitShardMap));
    for (Map.Entry<String, Integer> e : explicitShardMap.entrySet()) {
      String key = e.getKey();
      int dot = key == null ? -1 : key.indexOf('.');
      Preconditions.checkArgument(
          dot > 0 && dot < key.length() - 1,
          "Cannot use "
              + RouterOptions.TABLES_SHARD_MAP.key()
              + " key '%s': it must be 'database.table'",
          key);
      Preconditions.checkArgument(
          e.getValue() != null && e.getValue() >= 0,
          "Cannot use "
              + RouterOptions.TABLES_SHARD_MAP.key()
              + " entry '%s': shard number %s must be an int >= 0",
          key,
          e.getValue());
    }
    boolean hasGroup =
        databasePattern.contains(SHARD_GROUP_SYNTAX) || tablePattern.contains(SHARD_GROUP_SYNTAX);
    Preconditions.checkArgument(
        hasGroup || !explicitShardMap.isEmpty(),
        "Cannot derive shard numbers: neither "
            + RouterOptions.TABLES_DATABASE_PATTERN.key()
            + " '%s' nor "
            + RouterOptions.TABLES_TABLE_PATTERN.key()
            + " '%s' has a named group (?<shard>\\d+), and "
            + RouterOptions.TABLES_SHARD_MAP.key()
            + " is empty; add the group to one pattern (e.g. 'orders_(?<shard>\\d+)') or list every table in "
            + RouterOptions.TABLES_SHARD_MAP.key(),
        databasePattern,
        tablePattern);
    keyColumns = keyColumns == null ? List.of() : List.copyOf(keyColumns);
    Preconditions.checkArgument(
        new HashSet<>(keyColumns).size() == keyColumns.size(),
        "Cannot use " + RouterOptions.TABLES_KEY_COLUMNS.key() + " %s: a column is listed twice",
        keyColumns);
  }

  /** Re-checks the spec (the canonical constructor already did); handy after deserialization. */
  public LogicalTableSpec validate() {
    return new LogicalTableSpec(
        hosts, databasePattern, tablePattern, explicitShardMap, keyColumns, excludedShards);
  }

  public MySqlHost host(String name) {
    return hosts.stream()
        .filter(h -> h.name().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    String.format(
                        "Cannot find source '%s': known sources are %s", name, hostNames())));
  }

  public List<String> hostNames() {
    return hosts.stream().map(MySqlHost::name).toList();
  }

  /** True when both names fully match their patterns. */
  public boolean matches(String database, String table) {
    return compile(RouterOptions.TABLES_DATABASE_PATTERN.key(), databasePattern)
            .matcher(database)
            .matches()
        && compile(RouterOptions.TABLES_TABLE_PATTERN.key(), tablePattern).matcher(table).matches();
  }

  /**
   * The shard number of a matching table: the table pattern's group, else the database pattern's
   * group, else the explicit map; empty when none of them gives one.
   *
   * @throws IllegalArgumentException when the captured number does not fit an int
   */
  public Optional<Integer> shardNumber(String database, String table) {
    Optional<String> captured = captureShard(tablePattern, table);
    if (captured.isEmpty()) {
      captured = captureShard(databasePattern, database);
    }
    if (captured.isPresent()) {
      try {
        return Optional.of(Integer.parseInt(captured.get()));
      } catch (NumberFormatException e) {
        throw new ShardRouterException(
            String.format(
                "Cannot assign a shard number to table '%s.%s': the captured number '%s' is not an int >= 0; use (?<shard>\\d+) with at most 9 digits or list the table in "
                    + RouterOptions.TABLES_SHARD_MAP.key(),
                database,
                table,
                captured.get()));
      }
    }
    return Optional.ofNullable(explicitShardMap.get(database + "." + table));
  }

  private static Optional<String> captureShard(String regex, String name) {
    if (!regex.contains(SHARD_GROUP_SYNTAX)) {
      return Optional.empty();
    }
    Matcher m = compile("", regex).matcher(name);
    if (!m.matches()) {
      return Optional.empty();
    }
    return Optional.ofNullable(m.group(SHARD_GROUP));
  }

  private static Pattern compile(String key, String regex) {
    Preconditions.checkArgument(
        regex != null && !regex.isEmpty(),
        "Cannot use %s: it is empty; give an anchored Java regex such as 'orders_(?<shard>\\d+)'",
        key);
    try {
      return Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(
          String.format(
              "Cannot parse %s '%s': %s (at index %d). It is a Java regular expression matched against the whole name; escape metacharacters such as . $ ( ) [ ] with a backslash (e.g. 'app\\.v2') or quote a literal part with \\Q...\\E",
              key, regex, e.getDescription(), e.getIndex()),
          e);
    }
  }

  /**
   * The list of "db.table" keys of the explicit map that name no discovered table (for warnings).
   */
  List<String> unusedShardMapKeys(Set<String> discoveredQualifiedNames) {
    List<String> unused = new ArrayList<>();
    for (String key : explicitShardMap.keySet()) {
      if (!discoveredQualifiedNames.contains(key)) {
        unused.add(key);
      }
    }
    return unused;
  }
}
