package dev.shardberg.coordinator;

import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How far the insert-only check of each shard has held: the writers scanned a shard at snapshot s
 * and found it empty; once a check has found no foreign write into it between s and snapshot v (the
 * table's current snapshot at a staging check, or the pipeline's own commit), a later check needs
 * only the history after v. Without this, every check walked back to s, and an initial load longer
 * than another pipeline's snapshot max-age (or any expiry tool's) failed for good once s expired.
 *
 * <p>Keyed per shard by every scan or point that led to the newest one, so a writer result that
 * still carries the original scan id resolves to the newest point. Memory only: pending checkpoints
 * are written to state with their scans resolved, and a restored run writes no insert-only rows.
 *
 * <p>Invariant: {@code resolve(k, s) = v} only if a check found no foreign write into shard k
 * between s and v, and v is a descendant of s in the history the check read.
 */
final class VerifiedPoints {
  private final Map<Integer, Map<Long, Long>> byShard = new HashMap<>();

  /** The point from which shard {@code shard}'s check must start, given its scan {@code scan}. */
  long resolve(int shard, long scan) {
    Map<Long, Long> points = byShard.get(shard);
    return points == null ? scan : points.getOrDefault(scan, scan);
  }

  /** Every shard's scan resolved. */
  SortedMap<Integer, Long> resolve(SortedMap<Integer, Long> scans) {
    SortedMap<Integer, Long> resolved = new TreeMap<>();
    scans.forEach((shard, scan) -> resolved.put(shard, resolve(shard, scan)));
    return resolved;
  }

  /**
   * Records that a check from {@code checked} (as resolved) found no foreign write up to snapshot
   * {@code upTo}: each scan or point that resolved to a checked one now resolves to {@code upTo}.
   */
  void advance(SortedMap<Integer, Long> checked, long upTo) {
    checked.forEach(
        (shard, from) -> {
          Map<Long, Long> points = byShard.computeIfAbsent(shard, s -> new HashMap<>());
          points.replaceAll((scan, point) -> point.equals(from) ? upTo : point);
          points.put(from, upTo);
          points.put(upTo, upTo);
        });
  }

  /** Each shard's points (usually one), in no particular order. */
  Map<Integer, java.util.Set<Long>> pointsByShard() {
    Map<Integer, java.util.Set<Long>> all = new HashMap<>();
    byShard.forEach((shard, points) -> all.put(shard, new java.util.HashSet<>(points.values())));
    return all;
  }

  /** The newest points of every shard: the snapshots later checks walk back to. */
  java.util.Set<Long> newest() {
    java.util.Set<Long> newest = new java.util.HashSet<>();
    byShard.values().forEach(points -> newest.addAll(points.values()));
    return newest;
  }
}
