package dev.shardberg.router;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/** Compares the schemas of all shards and derives the one schema they share (pure logic). */
final class SchemaComparison {
  private SchemaComparison() {}

  /** A shard table with the schema read from it; {@code primaryKey} is the real MySQL primary key. */
  record ShardColumns(ShardTable table, List<MySqlColumn> columns, List<String> primaryKey) {}

  /**
   * Returns the shared schema (key = keyColumns when given, else the primary key), or throws one
   * {@link ShardRouterException} listing every shard that differs from the majority.
   */
  static ShardSchema sharedSchema(List<ShardColumns> shards, List<String> keyColumns) {
    Preconditions.checkArgument(!shards.isEmpty(), "Cannot compare schemas: no shard");
    List<ShardColumns> ordered = new ArrayList<>(shards);
    ordered.sort(Comparator.comparingInt(s -> s.table().shard()));

    // Majority by full signature; ties go to the schema of the lowest shard number (first seen).
    Map<String, List<ShardColumns>> bySignature = new LinkedHashMap<>();
    for (ShardColumns s : ordered) {
      bySignature.computeIfAbsent(signature(s), k -> new ArrayList<>()).add(s);
    }
    List<ShardColumns> majority = null;
    for (List<ShardColumns> group : bySignature.values()) {
      if (majority == null || group.size() > majority.size()) {
        majority = group;
      }
    }
    ShardColumns reference = majority.get(0);
    if (bySignature.size() > 1) {
      List<String> lines = new ArrayList<>();
      for (ShardColumns s : ordered) {
        if (!signature(s).equals(signature(reference))) {
          for (String diff : differences(reference, s)) {
            lines.add(String.format("  - shard %d (%s): %s", s.table().shard(), s.table().describe(), diff));
          }
        }
      }
      int differing = ordered.size() - majority.size();
      throw new ShardRouterException(
          String.format(
              "Cannot use the shards as one table: %d of %d shard(s) differ from the schema of the majority (%d shard(s), e.g. shard %d %s):%n%s%nMake every shard's table identical (same columns in the same order, types, nullability and primary key), then start again.",
              differing,
              ordered.size(),
              majority.size(),
              reference.table().shard(),
              reference.table().describe(),
              String.join(System.lineSeparator(), lines)));
    }

    List<String> key = keyColumns.isEmpty() ? reference.primaryKey() : keyColumns;
    if (key.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot use table %s as an upsert source: it has no primary key; add a primary key to every shard or name the key columns in tables.key-columns",
              reference.table().describe()));
    }
    Set<String> names = new HashSet<>();
    reference.columns().forEach(c -> names.add(c.name()));
    for (String k : key) {
      Preconditions.checkState(
          names.contains(k),
          "Cannot use key column '%s' from tables.key-columns: table %s has no such column (columns: %s)",
          k,
          reference.table().describe(),
          reference.columns().stream().map(MySqlColumn::name).toList());
      MySqlColumn col = reference.columns().stream().filter(c -> c.name().equals(k)).findFirst().orElseThrow();
      Preconditions.checkState(
          !col.nullable(),
          "Cannot use column '%s' as a key column: it is nullable in table %s; Iceberg identifier fields must be NOT NULL (make the column NOT NULL or pick other tables.key-columns)",
          k,
          reference.table().describe());
    }
    return new ShardSchema(reference.columns(), key);
  }

  private static String signature(ShardColumns s) {
    StringBuilder sb = new StringBuilder();
    for (MySqlColumn c : s.columns()) {
      sb.append(c.name()).append(':').append(c.signature()).append(';');
    }
    return sb.append("pk=").append(s.primaryKey()).toString();
  }

  private static List<String> differences(ShardColumns expected, ShardColumns found) {
    List<String> diffs = new ArrayList<>();
    int n = Math.max(expected.columns().size(), found.columns().size());
    for (int i = 0; i < n; i++) {
      MySqlColumn e = i < expected.columns().size() ? expected.columns().get(i) : null;
      MySqlColumn f = i < found.columns().size() ? found.columns().get(i) : null;
      if (e != null && f != null && e.name().equals(f.name())) {
        if (!e.signature().equals(f.signature())) {
          diffs.add(String.format("column '%s': expected %s, found %s", e.name(), e.describeType(), f.describeType()));
        }
      } else if (!Objects.equals(e, f)) {
        diffs.add(
            String.format(
                "column #%d: expected %s, found %s",
                i + 1,
                e == null ? "(none)" : "'" + e.name() + "' " + e.describeType(),
                f == null ? "(none)" : "'" + f.name() + "' " + f.describeType()));
      }
    }
    if (!expected.primaryKey().equals(found.primaryKey())) {
      diffs.add(String.format("primary key: expected %s, found %s", expected.primaryKey(), found.primaryKey()));
    }
    return diffs;
  }
}
