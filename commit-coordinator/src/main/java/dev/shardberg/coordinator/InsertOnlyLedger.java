package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.TableMaintainer;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.UpdateProperties;

/**
 * The committer's account of insert-only rows (an initial load written without key deletes): from
 * where each shard's check must start ({@link VerifiedPoints}), the staging check, and the oldest
 * snapshot whose history later checks still read, published in the table for every expiry to keep.
 */
final class InsertOnlyLedger {
  private final Table table;
  private final CoordinatorOptions options;
  private final String shardColumn;
  private final VerifiedPoints points = new VerifiedPoints();

  /**
   * Shards whose idle check met a foreign write or an expired history: their point stays (their
   * next insert-only rows are refused as before) and is not walked again at every checkpoint.
   */
  private final Set<Integer> stuck = new HashSet<>();

  /** Insert-only scans of the newest staged checkpoint: the next ones likely carry them too. */
  private SortedMap<Integer, Long> latest = new TreeMap<>();

  InsertOnlyLedger(Table table, CoordinatorOptions options, String shardColumn) {
    this.table = table;
    this.options = options;
    this.shardColumn = shardColumn;
  }

  /** Every shard's scan resolved to where its check starts now. */
  SortedMap<Integer, Long> resolve(SortedMap<Integer, Long> scans) {
    return points.resolve(scans);
  }

  /** The entry with its scans resolved (itself when it has no insert-only rows). */
  PendingCheckpoint resolve(PendingCheckpoint entry) {
    return entry.insertOnlyScans().isEmpty()
        ? entry
        : entry.withInsertOnlyScans(points.resolve(entry.insertOnlyScans()));
  }

  /**
   * Checks a checkpoint about to be staged: no other committer wrote into its insert-only shards
   * since the last verified point. Returns the snapshot the check held up to (later checks start
   * there), or empty when there is nothing to check; throws when the check finds a write or expired
   * history.
   */
  Optional<Long> checkBeforeStaging(PendingCheckpoint staged) {
    SortedMap<Integer, Long> scans = staged.insertOnlyScans();
    if (scans.isEmpty()) {
      return Optional.empty();
    }
    table.refresh();
    Optional<InsertOnlyCheck.Finding> finding =
        InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), scans);
    if (finding.isPresent()) {
      throw CommitRefusals.insertOnlyNotStaged(options, staged, scans, finding.get());
    }
    return Optional.ofNullable(table.currentSnapshot()).map(s -> s.snapshotId());
  }

  /**
   * Carries on the points of the shards {@code staged} wrote no insert-only rows to: a check from
   * each such point up to the current snapshot, so that it follows the table while the writers
   * write other rows. Without it a shard's point stayed where its last insert-only rows were
   * checked — for an initial load, its end — and snapshot expiry, which keeps every point's
   * history, expired nothing newer than that for the rest of the run (a 30-minute run kept every
   * snapshot and every file it ever wrote). A point whose check finds a foreign write or an expired
   * history stays where it is: the next insert-only rows of that shard meet what it found, as
   * before.
   *
   * @return per round of shards (one point each) the checks that held and the snapshot they held up
   *     to, for {@link PendingCheckpoints#advanceVerifiedPoints}
   */
  List<Map.Entry<SortedMap<Integer, Long>, Long>> checkIdle(PendingCheckpoint staged) {
    Map<Integer, Set<Long>> idle = points.pointsByShard();
    idle.keySet().removeAll(staged.insertOnlyScans().keySet());
    idle.keySet().removeAll(stuck);
    if (idle.isEmpty()) {
      return List.of();
    }
    table.refresh();
    if (table.currentSnapshot() == null) {
      return List.of();
    }
    long now = table.currentSnapshot().snapshotId();
    List<Map.Entry<SortedMap<Integer, Long>, Long>> held = new java.util.ArrayList<>();
    Map<Integer, java.util.Iterator<Long>> rounds = new TreeMap<>();
    idle.forEach((shard, shardPoints) -> rounds.put(shard, shardPoints.iterator()));
    while (true) {
      SortedMap<Integer, Long> round = new TreeMap<>();
      rounds.forEach(
          (shard, next) -> {
            while (next.hasNext() && !round.containsKey(shard)) {
              long point = next.next();
              if (point != now) {
                round.put(shard, point);
              }
            }
          });
      if (round.isEmpty()) {
        return held;
      }
      if (InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), round).isEmpty()) {
        held.add(Map.entry(round, now));
        continue;
      }
      // something in the round: the shards one by one, and the one that met it is not walked again
      round.forEach(
          (shard, point) -> {
            SortedMap<Integer, Long> alone = new TreeMap<>(Map.of(shard, point));
            if (InsertOnlyCheck.foreignWrite(table, shardColumn, options.pipelineId(), alone)
                .isEmpty()) {
              held.add(Map.entry(alone, now));
            } else {
              stuck.add(shard);
            }
          });
    }
  }

  /** The check of {@code checked} (as resolved) held up to snapshot {@code upTo}. */
  void advance(SortedMap<Integer, Long> checked, long upTo) {
    points.advance(checked, upTo);
    latest = points.resolve(latest);
  }

  /** {@code staged} is the newest staged checkpoint. */
  void staged(PendingCheckpoint staged) {
    latest = staged.insertOnlyScans();
  }

  /** The snapshots whose history insert-only checks still walk ({@code -1}: the whole history). */
  Set<Long> inUse(Collection<PendingCheckpoint> pending) {
    Set<Long> scans = new HashSet<>(latest.values());
    scans.addAll(points.newest());
    for (PendingCheckpoint checkpoint : pending) {
      scans.addAll(checkpoint.insertOnlyScans().values());
    }
    return scans;
  }

  /**
   * Publishes, with the commit of {@code committing}, the oldest snapshot the insert-only checks of
   * this pipeline will still read history from once it lands ({@link
   * TableMaintainer#INSERT_ONLY_FROM_PREFIX}), so that snapshot expiry — this pipeline's or
   * another's on the same table — keeps it; removes it once no insert-only rows are pending or
   * coming.
   */
  void publishHistoryNeeded(
      UpdateProperties properties,
      TableMetadata base,
      Collection<PendingCheckpoint> pending,
      PendingCheckpoint committing,
      SortedMap<Integer, Long> committingScans,
      long committingSnapshot) {
    Set<Long> needed = new HashSet<>();
    java.util.function.BiConsumer<Integer, Long> need =
        (shard, scan) ->
            needed.add(
                Objects.equals(committingScans.get(shard), scan) ? committingSnapshot : scan);
    for (PendingCheckpoint entry : pending) {
      if (entry.checkpointId() != committing.checkpointId()) {
        points.resolve(entry.insertOnlyScans()).forEach(need);
      }
    }
    points.resolve(latest).forEach(need);
    if (!committingScans.isEmpty()) {
      needed.add(committingSnapshot);
    }
    String key = TableMaintainer.INSERT_ONLY_FROM_PREFIX + options.pipelineId();
    if (needed.isEmpty()) {
      if (base.properties().containsKey(key)) {
        properties.remove(key);
      }
      return;
    }
    long oldest = committingSnapshot;
    for (long id : needed) {
      if (id == PendingCheckpoint.NO_SNAPSHOT) {
        oldest = id;
        break;
      }
      var snapshot = base.snapshot(id);
      var current = base.snapshot(oldest);
      if (snapshot != null
          && (current == null || snapshot.sequenceNumber() < current.sequenceNumber())) {
        oldest = id;
      }
    }
    if (!Long.toString(oldest).equals(base.properties().get(key))) {
      properties.set(key, Long.toString(oldest));
    }
  }
}
