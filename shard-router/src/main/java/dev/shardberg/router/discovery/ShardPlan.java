package dev.shardberg.router.discovery;

import dev.shardberg.router.ShardTable;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.types.MySqlColumn;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The immutable result of discovery: every shard table per host (hosts in config order, tables by
 * shard number) and the schema they all share.
 */
public record ShardPlan(
    Map<String, List<ShardTable>> tablesByHost,
    ShardSchema schema,
    Map<Integer, List<MySqlColumn>> shardColumns)
    implements Serializable {

  /** Every shard has exactly the columns of {@code schema}. */
  public ShardPlan(Map<String, List<ShardTable>> tablesByHost, ShardSchema schema) {
    this(tablesByHost, schema, Map.of());
  }

  public ShardPlan {
    shardColumns = Map.copyOf(shardColumns);
    LinkedHashMap<String, List<ShardTable>> copy = new LinkedHashMap<>();
    tablesByHost.forEach(
        (host, tables) -> {
          List<ShardTable> sorted = new ArrayList<>(tables);
          sorted.sort(Comparator.comparingInt(ShardTable::shard));
          copy.put(host, List.copyOf(sorted));
        });
    tablesByHost = Collections.unmodifiableMap(copy);
  }

  /**
   * The columns of one shard: the shared schema's, unless the shards differ in evolvable ways
   * (schema.change-behavior=evolve), when the schema is their union and each shard has its own.
   */
  public List<MySqlColumn> columnsOf(int shard) {
    return shardColumns.getOrDefault(shard, schema.columns());
  }

  /**
   * Per shard that differs from the union schema, its differences ("lacks column 'x'", "column 'q'
   * is int NOT NULL, the table's bigint NOT NULL"); empty when every shard has the schema's
   * columns.
   */
  public Map<Integer, List<String>> differences() {
    Map<Integer, List<String>> result = new java.util.TreeMap<>();
    shardColumns.forEach(
        (shard, columns) -> {
          List<String> lines = new ArrayList<>();
          for (MySqlColumn u : schema.columns()) {
            MySqlColumn c =
                columns.stream().filter(x -> x.name().equals(u.name())).findFirst().orElse(null);
            if (c == null) {
              lines.add("lacks column '" + u.name() + "' (reads NULL)");
            } else if (!c.signature().equals(u.signature())) {
              lines.add(
                  "column '"
                      + u.name()
                      + "' is "
                      + c.describeType()
                      + ", the table's "
                      + u.describeType());
            }
          }
          if (!lines.isEmpty()) {
            result.put(shard, lines);
          }
        });
    return result;
  }

  /** Every shard table, ordered by shard number. */
  public List<ShardTable> allTables() {
    return tablesByHost.values().stream()
        .flatMap(List::stream)
        .sorted(Comparator.comparingInt(ShardTable::shard))
        .toList();
  }

  /**
   * The shard tables of one host; empty when the host has none (such hosts are not keys of {@link
   * #tablesByHost()}, so iterating it yields only hosts that need a CDC source).
   */
  public List<ShardTable> tablesOf(String hostName) {
    return tablesByHost.getOrDefault(hostName, List.of());
  }

  /** The hosts that have at least one shard, in config order. */
  public List<String> hostNames() {
    return List.copyOf(tablesByHost.keySet());
  }

  /** Every shard number of the plan, ascending. */
  public java.util.SortedSet<Integer> shardNumbers() {
    java.util.SortedSet<Integer> numbers = new java.util.TreeSet<>();
    tablesByHost.values().forEach(tables -> tables.forEach(t -> numbers.add(t.shard())));
    return numbers;
  }

  public int shardCount() {
    return tablesByHost.values().stream().mapToInt(List::size).sum();
  }

  /** A human-readable description (the CLI's {@code validate} prints it). */
  public String describe() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format("%d shard(s) on %d host(s)%n", shardCount(), tablesByHost.size()));
    tablesByHost.forEach(
        (host, tables) -> {
          sb.append(String.format("  host '%s': %d shard(s)%n", host, tables.size()));
          for (ShardTable t : tables) {
            sb.append(String.format("    shard %-5d %s%n", t.shard(), t.qualifiedName()));
          }
        });
    sb.append(
        String.format(
            "schema (%d columns, key %s = %s):%n",
            schema.columns().size(), schema.primaryKey(), schema.keyIndex()));
    for (MySqlColumn c : schema.columns()) {
      sb.append(String.format("  %-30s %s%n", c.name(), c.describeType()));
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return "ShardPlan{"
        + tablesByHost.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue().size() + " shards")
            .collect(Collectors.joining(", "))
        + ", key="
        + schema.primaryKey()
        + "}";
  }
}
