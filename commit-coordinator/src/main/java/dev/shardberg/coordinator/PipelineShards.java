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
   * shards are not known ({@code options.shards()} null). Checked at the start.
   */
  static void check(Map<String, String> properties, CoordinatorOptions options) {
    if (options.shards() == null) {
      return;
    }
    refuseShared(
        properties,
        options,
        options.shards(),
        new TreeSet<>(),
        String.format(
            "Cannot start pipeline %s on table %s", options.pipelineId(), options.tableName()));
  }

  /**
   * As above, at the commit of {@code checkpoint}: for the plan's shards, those {@code captured}
   * while the job runs (a shard table created on MySQL meanwhile, whose number another pipeline may
   * already write) and those the checkpoint writes (a restored entry may hold rows of a shard the
   * new plan no longer has).
   */
  static void checkCommit(
      Map<String, String> properties,
      CoordinatorOptions options,
      SortedSet<Integer> captured,
      PendingCheckpoint checkpoint) {
    if (options.shards() == null) {
      return;
    }
    SortedSet<Integer> unplanned = new TreeSet<>(captured);
    unplanned.addAll(checkpoint.shardCounts().keySet());
    unplanned.removeAll(options.shards());
    SortedSet<Integer> shards = new TreeSet<>(options.shards());
    shards.addAll(unplanned);
    refuseShared(
        properties,
        options,
        shards,
        unplanned,
        String.format(
            "Cannot commit checkpoint %d of pipeline %s on table %s",
            checkpoint.checkpointId(), options.pipelineId(), options.tableName()));
  }

  private static void refuseShared(
      Map<String, String> properties,
      CoordinatorOptions options,
      SortedSet<Integer> shards,
      SortedSet<Integer> unplanned,
      String refusal) {
    String conflict = conflict(properties, options.pipelineId(), shards, unplanned, refusal);
    if (conflict != null) {
      throw new PipelineConflictException(conflict);
    }
  }

  /**
   * The refusal naming every other pipeline and the shards it shares, or null when none overlap.
   *
   * @param unplanned of {@code shards}, those not in the plan of this run: captured while the job
   *     ran (named as such)
   * @param refusal what is refused, with the pipeline and the table
   */
  static String conflict(
      Map<String, String> properties,
      String pipelineId,
      SortedSet<Integer> shards,
      SortedSet<Integer> unplanned,
      String refusal) {
    SortedMap<String, SortedSet<Integer>> overlaps = overlaps(properties, pipelineId, shards);
    if (overlaps.isEmpty()) {
      return null;
    }
    StringBuilder others = new StringBuilder();
    SortedSet<Integer> unplannedShared = new TreeSet<>();
    overlaps.forEach(
        (other, both) -> {
          others
              .append(others.length() == 0 ? "" : "; ")
              .append("pipeline ")
              .append(other)
              .append(" writes shard(s) ")
              .append(encode(both))
              .append(" too (table property ")
              .append(propertyKey(other))
              .append(')');
          both.stream().filter(unplanned::contains).forEach(unplannedShared::add);
        });
    String unplannedNote =
        unplannedShared.isEmpty()
            ? ""
            : String.format(
                " Shard(s) %s are not in this run's plan: a table created on MySQL while a job of"
                    + " this pipeline ran. This checkpoint holds rows of them and is not committed: leave the"
                    + " number out (tables.exclude-shards) or map it to another (tables.shard-map),"
                    + " and resume from a checkpoint or savepoint taken before that table was"
                    + " created.",
                encode(unplannedShared));
    return String.format(
        "%s: %s. Two pipelines that write one shard number mix two sources into one key space, and"
            + " their rows overwrite each other.%s Give each pipeline its own shard numbers"
            + " (tables.shard-map, the patterns or tables.exclude-shards), or, if the other pipeline"
            + " is retired for good, remove its table property.",
        refusal, others, unplannedNote);
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
