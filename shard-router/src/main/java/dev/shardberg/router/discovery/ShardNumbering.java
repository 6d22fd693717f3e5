package dev.shardberg.router.discovery;

import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Numbers the tables found on the hosts as shards of the logical table and leaves out the shards of
 * {@code tables.exclude-shards}: pure logic, no JDBC.
 */
final class ShardNumbering {
  /** Logs as discovery did before this class was split out of it: the log lines stay the same. */
  private static final Logger LOG = LoggerFactory.getLogger(ShardDiscovery.class);

  private ShardNumbering() {}

  /**
   * Leaves out the shards of {@code tables.exclude-shards} (before their schema is compared with
   * the others': a shard left out for a change the table cannot follow must not stop the start).
   */
  static Map<String, List<ShardTable>> exclude(
      LogicalTableSpec spec, Map<String, List<ShardTable>> assigned) {
    if (spec.excludedShards().isEmpty()) {
      return assigned;
    }
    Set<Integer> seen = new TreeSet<>();
    Map<String, List<ShardTable>> kept = new LinkedHashMap<>();
    assigned.forEach(
        (host, tables) -> {
          List<ShardTable> left = new ArrayList<>();
          for (ShardTable t : tables) {
            if (spec.excludedShards().contains(t.shard())) {
              seen.add(t.shard());
              LOG.info(
                  "Shard {} ({}) is excluded ({}): not read; its rows in the table stay as they are until it is"
                      + " included again, then it is read from a fresh snapshot",
                  t.shard(),
                  t.describe(),
                  RouterOptions.TABLES_EXCLUDE_SHARDS.key());
            } else {
              left.add(t);
            }
          }
          if (!left.isEmpty()) {
            kept.put(host, left);
          }
        });
    Set<Integer> unknown = new TreeSet<>(spec.excludedShards());
    unknown.removeAll(seen);
    if (!unknown.isEmpty()) {
      LOG.warn(
          "{} lists shard(s) {} that no table maps to; nothing to exclude for them",
          RouterOptions.TABLES_EXCLUDE_SHARDS.key(),
          unknown);
    }
    if (kept.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot capture changes: every shard found is excluded by %s %s; include at least one",
              RouterOptions.TABLES_EXCLUDE_SHARDS.key(), new TreeSet<>(spec.excludedShards())));
    }
    return kept;
  }

  /**
   * Assigns shard numbers (pure logic). Hosts without a matching table are left out with a WARN.
   *
   * @throws ShardRouterException for a matched table without number, two tables with one number, or
   *     no table at all
   */
  static Map<String, List<ShardTable>> assign(
      LogicalTableSpec spec, Map<String, List<FoundTable>> found) {
    List<FoundTable> unnumbered = new ArrayList<>();
    Map<Integer, List<FoundTable>> byNumber = new TreeMap<>();
    Map<String, List<ShardTable>> result = new LinkedHashMap<>();
    Set<String> qualifiedNames = new HashSet<>();
    for (Map.Entry<String, List<FoundTable>> e : found.entrySet()) {
      if (e.getValue().isEmpty()) {
        LOG.warn(
            "Host '{}' has no table matching "
                + RouterOptions.TABLES_DATABASE_PATTERN.key()
                + " '{}' and "
                + RouterOptions.TABLES_TABLE_PATTERN.key()
                + " '{}'; it gets no CDC source (check the patterns if it should have shards)",
            e.getKey(),
            spec.databasePattern(),
            spec.tablePattern());
        continue;
      }
      List<ShardTable> tables = new ArrayList<>();
      for (FoundTable t : e.getValue()) {
        qualifiedNames.add(t.qualifiedName());
        Optional<Integer> shard = spec.shardNumber(t.database(), t.table());
        if (shard.isEmpty()) {
          unnumbered.add(t);
          continue;
        }
        byNumber.computeIfAbsent(shard.get(), k -> new ArrayList<>()).add(t);
        tables.add(new ShardTable(t.hostName(), t.database(), t.table(), shard.get()));
      }
      result.put(e.getKey(), tables);
    }
    if (result.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot find any table matching "
                  + RouterOptions.TABLES_DATABASE_PATTERN.key()
                  + " '%s' and "
                  + RouterOptions.TABLES_TABLE_PATTERN.key()
                  + " '%s' on host(s) %s; the patterns are anchored Java regexes matched against whole names (check them, the case of the names and the user's privileges)",
              spec.databasePattern(),
              spec.tablePattern(),
              spec.hostNames()));
    }
    if (!unnumbered.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot assign a shard number to %d matched table(s): %s; the named group (?<shard>\\d+) captured nothing and "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + " has no entry for them. Add them to "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + " (key 'database.table') or tighten "
                  + RouterOptions.TABLES_DATABASE_PATTERN.key()
                  + " / "
                  + RouterOptions.TABLES_TABLE_PATTERN.key()
                  + " to leave them out",
              unnumbered.size(),
              unnumbered.stream().map(FoundTable::describe).collect(Collectors.joining(", "))));
    }
    List<String> duplicates = new ArrayList<>();
    byNumber.forEach(
        (number, tables) -> {
          if (tables.size() > 1) {
            duplicates.add(
                String.format(
                    "shard number %d is taken by %s",
                    number,
                    tables.stream()
                        .map(FoundTable::describe)
                        .collect(Collectors.joining(" and "))));
          }
        });
    if (!duplicates.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot assign shard numbers: %s; every shard table needs its own number (fix the patterns or "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + ")",
              String.join("; ", duplicates)));
    }
    for (String unused : spec.unusedShardMapKeys(qualifiedNames)) {
      LOG.warn(
          RouterOptions.TABLES_SHARD_MAP.key()
              + " entry '{}' names no matching table on any host; remove it or fix the name",
          unused);
    }
    return result;
  }
}
