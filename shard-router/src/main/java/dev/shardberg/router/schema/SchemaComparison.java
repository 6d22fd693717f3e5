package dev.shardberg.router.schema;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.TypeMapping;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/** Compares the schemas of all shards and derives the one schema they share (pure logic). */
public final class SchemaComparison {
  private SchemaComparison() {}

  /**
   * A shard table with the schema read from it; {@code primaryKey} is the real MySQL primary key,
   * {@code indexes} every index of the table (the primary key included).
   */
  public record ShardColumns(
      ShardTable table,
      List<MySqlColumn> columns,
      List<String> primaryKey,
      List<MySqlIndex> indexes) {
    /** A shard whose only index is its primary key (none when {@code primaryKey} is empty). */
    ShardColumns(ShardTable table, List<MySqlColumn> columns, List<String> primaryKey) {
      this(
          table,
          columns,
          primaryKey,
          primaryKey.isEmpty() ? List.of() : List.of(MySqlIndex.primary(primaryKey)));
    }
  }

  /**
   * Returns the shared schema (key = keyColumns when given, else the primary key), or throws one
   * {@link ShardRouterException} listing every shard that differs from the majority.
   */
  static ShardSchema sharedSchema(List<ShardColumns> shards, List<String> keyColumns) {
    return sharedSchema(shards, keyColumns, false);
  }

  /**
   * As {@link #sharedSchema(List, List)}; with {@code union}, shards that differ only in evolvable
   * ways (a column some shards lack, a type one shard widened, NULL-able on some shards; the same
   * primary key) share their union: every column of any shard, in the majority's order then by
   * first appearance, of the widest type, NULL-able unless NOT NULL on every shard.
   */
  public static ShardSchema sharedSchema(
      List<ShardColumns> shards, List<String> keyColumns, boolean union) {
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
    ShardColumns merged = union && bySignature.size() > 1 ? union(majority.get(0), ordered) : null;
    if (merged != null) {
      bySignature = Map.of(signature(merged), List.of(merged));
    } else if (union && bySignature.size() > 1) {
      ShardRouterException refusal = notEvolvable(ordered);
      if (refusal != null) {
        throw refusal;
      }
    }
    final ShardColumns reference = merged != null ? merged : majority.get(0);
    if (bySignature.size() > 1) {
      List<String> lines = new ArrayList<>();
      for (ShardColumns s : ordered) {
        if (!signature(s).equals(signature(reference))) {
          for (String diff : differences(reference, s)) {
            lines.add(
                String.format(
                    "  - shard %d (%s): %s", s.table().shard(), s.table().describe(), diff));
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
      List<String> candidates =
          reference.indexes().stream()
              .filter(i -> i.unique() && allNotNull(reference, i.columns()))
              .map(MySqlIndex::describe)
              .toList();
      throw new ShardRouterException(
          String.format(
              "Cannot use table %s as an upsert source: it has no primary key; add a primary key to every shard or name the columns of a UNIQUE index whose columns are all NOT NULL in "
                  + RouterOptions.TABLES_KEY_COLUMNS.key()
                  + " (%s)",
              reference.table().describe(),
              candidates.isEmpty()
                  ? "the table has no such index"
                  : "candidates: " + String.join(", ", candidates)));
    }
    Set<String> names = new HashSet<>();
    reference.columns().forEach(c -> names.add(c.name()));
    for (String k : key) {
      Preconditions.checkState(
          names.contains(k),
          "Cannot use key column '%s' from "
              + RouterOptions.TABLES_KEY_COLUMNS.key()
              + ": table %s has no such column (columns: %s)",
          k,
          reference.table().describe(),
          reference.columns().stream().map(MySqlColumn::name).toList());
      MySqlColumn col =
          reference.columns().stream().filter(c -> c.name().equals(k)).findFirst().orElseThrow();
      Preconditions.checkState(
          !col.nullable(),
          "Cannot use column '%s' as a key column: it is nullable in table %s; Iceberg identifier fields must be NOT NULL (make the column NOT NULL or pick other "
              + RouterOptions.TABLES_KEY_COLUMNS.key()
              + ")",
          k,
          reference.table().describe());
    }
    MySqlIndex keyIndex = keyIndex(ordered, key);
    return new ShardSchema(
        reference.columns(), key, keyIndex.describeAsKey(), reference.primaryKey(), Map.of());
  }

  /**
   * The index that makes {@code key} a row identity on every shard: the primary key or a UNIQUE
   * index with exactly the key's columns (in any order), all NOT NULL. Throws one exception naming
   * every shard without one and listing its indexes. Returns the index of the first shard (by
   * number).
   */
  static MySqlIndex keyIndex(List<ShardColumns> ordered, List<String> key) {
    Set<String> keySet = new HashSet<>(key);
    MySqlIndex first = null;
    List<String> lines = new ArrayList<>();
    for (ShardColumns s : ordered) {
      MySqlIndex found = null;
      for (MySqlIndex index : s.indexes()) {
        boolean sameColumns =
            index.columns().size() == key.size() && keySet.equals(new HashSet<>(index.columns()));
        if (index.unique() && sameColumns && allNotNull(s, index.columns())) {
          if (found == null || index.isPrimary()) {
            found = index; // the primary key wins over a UNIQUE index on the same columns
          }
        }
      }
      if (found == null) {
        lines.add(
            String.format(
                "  - shard %d (%s): key-columns (%s) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: %s",
                s.table().shard(),
                s.table().qualifiedName() + " on host " + s.table().hostName(),
                String.join(", ", key),
                s.indexes().isEmpty()
                    ? "(none)"
                    : s.indexes().stream()
                        .map(MySqlIndex::describe)
                        .collect(Collectors.joining(", "))));
      } else if (first == null) {
        first = found;
      }
    }
    if (!lines.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot use "
                  + RouterOptions.TABLES_KEY_COLUMNS.key()
                  + " %s as the row key: on %d of %d shard(s) no PRIMARY KEY or UNIQUE index has exactly these columns, all NOT NULL, so two different rows could share one key and be merged into one:%n%s%nName the columns of the primary key or of such a UNIQUE index in "
                  + RouterOptions.TABLES_KEY_COLUMNS.key()
                  + ", or add the index on every shard.",
              key,
              lines.size(),
              ordered.size(),
              String.join(System.lineSeparator(), lines)));
    }
    return first;
  }

  /**
   * The union of the shards' columns, or null when two shards differ in a way the table cannot
   * hold.
   */
  private static ShardColumns union(ShardColumns reference, List<ShardColumns> shards) {
    java.util.LinkedHashMap<String, MySqlColumn> columns = new java.util.LinkedHashMap<>();
    reference.columns().forEach(c -> columns.put(c.name(), c));
    for (ShardColumns s : shards) {
      if (!s.primaryKey().equals(reference.primaryKey())) {
        return null;
      }
      for (MySqlColumn c : s.columns()) {
        MySqlColumn u = columns.get(c.name());
        if (u == null) {
          columns.put(c.name(), nullable(c));
          continue;
        }
        org.apache.iceberg.types.Type ut = TypeMapping.toIcebergType(u);
        org.apache.iceberg.types.Type ct = TypeMapping.toIcebergType(c);
        // a DECIMAL of more than 38 digits (an Iceberg string) only grows its precision at the same
        // scale
        String wideUp = SchemaEvolution.wideDecimalChange(u, c);
        String wideDown = SchemaEvolution.wideDecimalChange(c, u);
        if (wideUp != null && wideDown != null) {
          return null;
        }
        MySqlColumn wider = u;
        if (!ut.equals(ct)) {
          if (SchemaEvolution.promotable(ut, ct)) {
            wider = c;
          } else if (!SchemaEvolution.promotable(ct, ut)) {
            return null;
          }
        } else if (wideUp == null && wideDown != null) {
          wider = c; // both strings: c's DECIMAL has more digits
        }
        if (c.nullable() || u.nullable()) {
          wider = nullable(wider);
        }
        columns.put(c.name(), wider);
      }
    }
    for (ShardColumns s : shards) {
      columns.replaceAll(
          (name, c) -> s.columns().stream().anyMatch(x -> x.name().equals(name)) ? c : nullable(c));
    }
    return new ShardColumns(
        reference.table(),
        List.copyOf(columns.values()),
        reference.primaryKey(),
        reference.indexes());
  }

  /**
   * The refusal in evolve mode: only the differences the table cannot hold (another primary key, a
   * column type that is no widening of the others'), each against what most shards have. The
   * differences evolve takes (added, dropped or moved columns, wider types, NULL-able columns) are
   * not listed: they do not stop the start, and "make every shard identical" would contradict the
   * mode. Null when nothing blocks (then the union does not fail either).
   */
  private static ShardRouterException notEvolvable(List<ShardColumns> ordered) {
    java.util.SortedMap<Integer, List<String>> blocking = new java.util.TreeMap<>();
    // the primary key most shards have (ties: the lowest shard's)
    Map<List<String>, List<ShardColumns>> byKey = new LinkedHashMap<>();
    ordered.forEach(s -> byKey.computeIfAbsent(s.primaryKey(), k -> new ArrayList<>()).add(s));
    List<ShardColumns> keyMajority = largest(byKey.values());
    for (ShardColumns s : ordered) {
      if (!s.primaryKey().equals(keyMajority.get(0).primaryKey())) {
        blocking
            .computeIfAbsent(s.table().shard(), k -> new ArrayList<>())
            .add(
                String.format(
                    "primary key %s, and %s on %d other shard(s) (e.g. shard %d)",
                    s.primaryKey(),
                    keyMajority.get(0).primaryKey(),
                    keyMajority.size(),
                    keyMajority.get(0).table().shard()));
      }
    }
    // per column, the shards' types in groups that widen to one another (INT/BIGINT, DECIMAL(p,s)
    // of
    // any p, ...): the group of most shards is what the others are measured against
    Map<String, List<List<Typed>>> groupsByColumn = new LinkedHashMap<>();
    for (ShardColumns s : ordered) {
      for (MySqlColumn c : s.columns()) {
        Typed typed = new Typed(s, c, TypeMapping.toIcebergType(c));
        List<List<Typed>> groups = groupsByColumn.computeIfAbsent(c.name(), k -> new ArrayList<>());
        groups.stream()
            .filter(g -> widensOneWay(g.get(0), typed))
            .findFirst()
            .ifPresentOrElse(g -> g.add(typed), () -> groups.add(new ArrayList<>(List.of(typed))));
      }
    }
    groupsByColumn.forEach(
        (name, groups) -> {
          List<Typed> most = largest(groups);
          Typed widest = most.get(0);
          for (Typed t : most) {
            if (widens(widest, t)) {
              widest = t;
            }
          }
          for (List<Typed> group : groups) {
            if (group != most) {
              for (Typed t : group) {
                String note = SchemaEvolution.wideDecimalNote(widest.column(), t.column());
                blocking
                    .computeIfAbsent(t.shard().table().shard(), k -> new ArrayList<>())
                    .add(
                        String.format(
                            "column '%s' is %s, and %s on %d other shard(s) (e.g. shard %d): neither type widens to the other%s",
                            name,
                            t.column().describeType(),
                            widest.column().describeType(),
                            most.size(),
                            widest.shard().table().shard(),
                            note == null ? "" : " (" + note + ")"));
              }
            }
          }
        });
    if (blocking.isEmpty()) {
      return null;
    }
    List<String> lines = new ArrayList<>();
    for (ShardColumns s : ordered) {
      for (String diff : blocking.getOrDefault(s.table().shard(), List.of())) {
        lines.add(
            String.format("  - shard %d (%s): %s", s.table().shard(), s.table().describe(), diff));
      }
    }
    return new ShardRouterException(
        String.format(
            "Cannot use the shards as one table: %d of %d shard(s) differ from the others in a way the table cannot follow"
                + " (schema.change-behavior is evolve: columns added, dropped or in another order, wider types and NULL-able"
                + " columns are taken, and are not listed here):%n%s%n"
                + "Give these shards the primary key and column types of the others (a type may differ by a widening only:"
                + " INT/BIGINT, FLOAT/DOUBLE, DECIMAL(p,s) with another precision p), or leave them out with"
                + " "
                + RouterOptions.TABLES_EXCLUDE_SHARDS.key()
                + ": %s and read them again later with "
                + RouterOptions.TABLES_REREAD_SHARDS.key()
                + " (docs/schema-evolution.md, \"Re-reading one shard\"); then start again.",
            blocking.size(),
            ordered.size(),
            String.join(System.lineSeparator(), lines),
            blocking.keySet()));
  }

  /** A shard's column with its Iceberg type. */
  private record Typed(
      ShardColumns shard, MySqlColumn column, org.apache.iceberg.types.Type type) {}

  /**
   * Whether the table can go from {@code from}'s column to {@code to}'s, a different one: an
   * Iceberg promotion, or a DECIMAL of more than 38 digits (an Iceberg string) that grows at the
   * same scale.
   */
  private static boolean widens(Typed from, Typed to) {
    if (SchemaEvolution.wideDecimalChange(from.column(), to.column()) != null) {
      return false; // into, out of or between DECIMALs of more than 38 digits in a way the string
      // cannot follow
    }
    if (from.type().equals(to.type())) {
      return !from.column().describeType().equals(to.column().describeType())
          && SchemaEvolution.wideDecimalChange(to.column(), from.column())
              != null; // a wide DECIMAL that grows
    }
    return SchemaEvolution.promotable(from.type(), to.type());
  }

  /** Whether one of the two columns widens to the other (or they are the same). */
  private static boolean widensOneWay(Typed a, Typed b) {
    return a.type().equals(b.type())
            && SchemaEvolution.wideDecimalChange(a.column(), b.column()) == null
            && SchemaEvolution.wideDecimalChange(b.column(), a.column()) == null
        || widens(a, b)
        || widens(b, a);
  }

  /** The largest of {@code groups}; ties go to the first. */
  private static <T> List<T> largest(java.util.Collection<List<T>> groups) {
    List<T> largest = null;
    for (List<T> g : groups) {
      if (largest == null || g.size() > largest.size()) {
        largest = g;
      }
    }
    return largest;
  }

  private static MySqlColumn nullable(MySqlColumn c) {
    return c.nullable()
        ? c
        : new MySqlColumn(
            c.name(),
            c.dataType(),
            c.columnType(),
            true,
            c.defaultValue(),
            c.length(),
            c.precision(),
            c.scale(),
            c.unsigned());
  }

  private static boolean allNotNull(ShardColumns shard, List<String> columns) {
    for (String name : columns) {
      boolean notNull =
          shard.columns().stream().anyMatch(c -> c.name().equals(name) && !c.nullable());
      if (!notNull) {
        return false;
      }
    }
    return true;
  }

  private static String signature(ShardColumns s) {
    StringBuilder sb = new StringBuilder();
    for (MySqlColumn c : s.columns()) {
      sb.append(c.name()).append(':').append(c.signature()).append(';');
    }
    return sb.append("pk=").append(s.primaryKey()).toString();
  }

  /**
   * How {@code found} differs from a shard with {@code columns} and primary key {@code primaryKey}
   * (the plan's), one line per column as discovery reports a differing shard; empty when identical.
   */
  public static List<String> differencesFrom(
      List<MySqlColumn> columns, List<String> primaryKey, ShardColumns found) {
    return differences(new ShardColumns(found.table(), columns, primaryKey), found);
  }

  private static List<String> differences(ShardColumns expected, ShardColumns found) {
    List<String> diffs = new ArrayList<>();
    int n = Math.max(expected.columns().size(), found.columns().size());
    for (int i = 0; i < n; i++) {
      MySqlColumn e = i < expected.columns().size() ? expected.columns().get(i) : null;
      MySqlColumn f = i < found.columns().size() ? found.columns().get(i) : null;
      if (e != null && f != null && e.name().equals(f.name())) {
        if (!e.signature().equals(f.signature())) {
          String note = SchemaEvolution.wideDecimalNote(e, f);
          diffs.add(
              String.format(
                      "column '%s': expected %s, found %s",
                      e.name(), e.describeType(), f.describeType())
                  + (note == null ? "" : " (" + note + ")"));
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
      diffs.add(
          String.format(
              "primary key: expected %s, found %s", expected.primaryKey(), found.primaryKey()));
    }
    return diffs;
  }
}
