package dev.shardberg.coordinator;

import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which shards each pipeline writes into a table, kept in the table property {@code
 * shardberg.shards.<pipeline-id>} (written with the pipeline's commits, in the same transaction),
 * so that a second pipeline whose shard numbers overlap is refused before it mixes two sources into
 * one key space: rows of two MySQL tables with the same {@code shard_number} and key would
 * overwrite each other silently.
 *
 * <p>Format: ascending ranges and numbers, {@code 0-15,20,31-40}.
 */
public final class PipelineShards {
  /** Prefix of the table property; the pipeline id follows. */
  public static final String PROPERTY_PREFIX = "shardberg.shards.";

  private PipelineShards() {}

  public static String propertyKey(String pipelineId) {
    return PROPERTY_PREFIX + pipelineId;
  }

  /**
   * For every other pipeline recorded in {@code properties}, the shards of {@code shards} it writes
   * too.
   */
  public static SortedMap<String, SortedSet<Integer>> overlaps(
      Map<String, String> properties, String pipelineId, SortedSet<Integer> shards) {
    SortedMap<String, SortedSet<Integer>> overlaps = new TreeMap<>();
    properties.forEach(
        (key, value) -> {
          if (!key.startsWith(PROPERTY_PREFIX) || key.equals(propertyKey(pipelineId))) {
            return;
          }
          SortedSet<Integer> both = decode(value);
          both.retainAll(shards);
          if (!both.isEmpty()) {
            overlaps.put(key.substring(PROPERTY_PREFIX.length()), both);
          }
        });
    return overlaps;
  }

  /**
   * Refuses ({@link PipelineConflictException}) when another pipeline recorded in {@code
   * properties} writes one of the pipeline's shard numbers; nothing to check when the pipeline's
   * shards are not known ({@code options.shards()} null).
   */
  static void check(Map<String, String> properties, CoordinatorOptions options) {
    check(properties, options, options.shards());
  }

  /** As above, for {@code shards}: the plan's and those captured while the job runs. */
  static void check(
      Map<String, String> properties, CoordinatorOptions options, SortedSet<Integer> shards) {
    if (shards == null) {
      return;
    }
    String conflict = conflict(properties, options.pipelineId(), options.tableName(), shards);
    if (conflict != null) {
      throw new PipelineConflictException(conflict);
    }
  }

  /**
   * The refusal naming every other pipeline and the shards it shares, or null when none overlap.
   */
  static String conflict(
      Map<String, String> properties,
      String pipelineId,
      String tableName,
      SortedSet<Integer> shards) {
    SortedMap<String, SortedSet<Integer>> overlaps = overlaps(properties, pipelineId, shards);
    if (overlaps.isEmpty()) {
      return null;
    }
    StringBuilder others = new StringBuilder();
    overlaps.forEach(
        (other, both) ->
            others
                .append(others.length() == 0 ? "" : "; ")
                .append("pipeline ")
                .append(other)
                .append(" writes shard(s) ")
                .append(encode(both))
                .append(" too (table property ")
                .append(propertyKey(other))
                .append(')'));
    return String.format(
        "Cannot start pipeline %s on table %s: %s. Two pipelines that write one shard number mix two"
            + " sources into one key space, and their rows overwrite each other. Give each pipeline"
            + " its own shard numbers (tables.shard-map, the patterns or tables.exclude-shards), or,"
            + " if the other pipeline is retired for good, remove its table property.",
        pipelineId, tableName, others);
  }

  static String encode(SortedSet<Integer> shards) {
    StringBuilder out = new StringBuilder();
    Integer start = null;
    Integer previous = null;
    for (int shard : shards) {
      if (previous != null && shard == previous + 1) {
        previous = shard;
        continue;
      }
      append(out, start, previous);
      start = shard;
      previous = shard;
    }
    append(out, start, previous);
    return out.toString();
  }

  private static void append(StringBuilder out, Integer start, Integer end) {
    if (start == null) {
      return;
    }
    if (out.length() > 0) {
      out.append(',');
    }
    out.append(start);
    if (!start.equals(end)) {
      out.append('-').append(end);
    }
  }

  static SortedSet<Integer> decode(String value) {
    SortedSet<Integer> shards = new TreeSet<>();
    if (value == null || value.isBlank()) {
      return shards;
    }
    for (String part : value.split(",")) {
      String range = part.trim();
      int dash = range.indexOf('-', 1);
      if (dash < 0) {
        shards.add(Integer.parseInt(range));
      } else {
        int from = Integer.parseInt(range.substring(0, dash));
        int to = Integer.parseInt(range.substring(dash + 1));
        for (int shard = from; shard <= to; shard++) {
          shards.add(shard);
        }
      }
    }
    return shards;
  }
}
