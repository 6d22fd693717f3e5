package dev.shardberg.coordinator;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.io.FileIO;

/**
 * Verifies the promise behind insert-only rows: no committer other than this pipeline added rows to
 * their shard after the writer found the shard empty.
 *
 * <p>Walks the current snapshot's ancestry back to each shard's scanned snapshot and looks at the
 * files added by every snapshot that is not this pipeline's own commit and not a {@code replace}
 * (compaction rewrites rows that exist, it adds none). Iceberg's own conflict detection ({@code
 * validateFromSnapshot} + {@code validateNoConflictingDataFiles}) cannot be used as is: it would
 * also count this pipeline's own insert-only commits since the scan, which are the initial load.
 *
 * <p>The coordinator does not walk back to the writers' scan at every check: once a check has held
 * up to a snapshot, the next one starts from there ({@link VerifiedPoints}), so expiry of the
 * history before it (by another pipeline's maintenance, or any expiry tool) never matters.
 */
final class InsertOnlyCheck {
  private InsertOnlyCheck() {}

  /**
   * Why insert-only rows cannot be committed as they are.
   *
   * @param historyGone true when the history since the last verified point cannot be read (a
   *     snapshot expired, or the table was rolled back past it): nothing is known to be wrong, but
   *     nothing can be told either; false for a foreign write found
   * @param description what was found, naming the snapshot, file and shard
   */
  record Finding(boolean historyGone, String description) {
    @Override
    public String toString() {
      return description;
    }
  }

  /**
   * A description of the first foreign write into one of {@code scans}' shards since its scan, or
   * of why the history cannot tell (a scanned snapshot expired); empty when the rows are safe.
   */
  static Optional<Finding> foreignWrite(
      Table table, String shardColumn, String pipelineId, SortedMap<Integer, Long> scans) {
    return foreignWrite(
        ((HasTableOperations) table).operations().current(),
        table.io(),
        shardColumn,
        pipelineId,
        scans);
  }

  /** The same, on given table metadata (a base the coordinator's commit might swap from). */
  static Optional<Finding> foreignWrite(
      TableMetadata metadata,
      FileIO io,
      String shardColumn,
      String pipelineId,
      SortedMap<Integer, Long> scans) {
    return walk(
        metadata,
        shardColumn,
        pipelineId,
        scans,
        (snapshot, positionBySpec, open) -> {
          if (DataOperations.REPLACE.equals(snapshot.operation())) {
            return Optional.empty(); // compaction rewrites rows that exist, it adds none
          }
          return firstHit(
              snapshot,
              "added",
              "after the writers' scan",
              positionBySpec,
              open,
              snapshot.addedDataFiles(io),
              snapshot.addedDeleteFiles(io));
        });
  }

  /**
   * For the owners of partitions ({@code target.delete-mode: position}): a description of the first
   * commit not made by this pipeline that changed a file of one of {@code verified}'s shards since
   * the snapshot each was verified at — any data or delete file added or removed, a {@code replace}
   * (someone else's compaction) included, since it moves rows the owners' index points at — or of
   * why the history cannot tell; empty when the owners' knowledge still holds.
   */
  static Optional<Finding> foreignChange(
      TableMetadata metadata,
      FileIO io,
      String shardColumn,
      String pipelineId,
      SortedMap<Integer, Long> verified) {
    return walk(
        metadata,
        shardColumn,
        pipelineId,
        verified,
        (snapshot, positionBySpec, open) -> {
          if (movesNoFile(snapshot)) {
            return Optional.empty(); // a manifest rewrite: nothing to read
          }
          Optional<Finding> added =
              firstHit(
                  snapshot,
                  "added",
                  "after the partition owners read it",
                  positionBySpec,
                  open,
                  snapshot.addedDataFiles(io),
                  snapshot.addedDeleteFiles(io));
          return added.isPresent()
              ? added
              : firstHit(
                  snapshot,
                  "removed",
                  "after the partition owners read it",
                  positionBySpec,
                  open,
                  snapshot.removedDataFiles(io),
                  snapshot.removedDeleteFiles(io));
        });
  }

  /** The summary's file counters, each present only when the snapshot changed such files. */
  private static final List<String> FILE_CHANGES =
      List.of(
          "added-data-files", "deleted-data-files", "added-delete-files", "removed-delete-files");

  /**
   * A {@code replace} whose summary counts no file added or removed (a manifest rewrite, such as
   * the job's own maintenance makes): it moves no row, and its manifests need not be read.
   */
  private static boolean movesNoFile(Snapshot snapshot) {
    Map<String, String> summary = snapshot.summary();
    return DataOperations.REPLACE.equals(snapshot.operation())
        && summary != null
        && summary.containsKey("total-data-files")
        && FILE_CHANGES.stream().noneMatch(summary::containsKey);
  }

  /** What one snapshot not made by this pipeline did to the shards still open. */
  private interface Look {
    Optional<Finding> at(
        Snapshot snapshot, Map<Integer, Integer> positionBySpec, SortedMap<Integer, Long> open);
  }

  /**
   * Walks back from the current snapshot until every shard's starting snapshot is reached, asking
   * {@code look} about each snapshot not made by this pipeline.
   */
  private static Optional<Finding> walk(
      TableMetadata metadata,
      String shardColumn,
      String pipelineId,
      SortedMap<Integer, Long> scans,
      Look look) {
    if (scans.isEmpty()) {
      return Optional.empty();
    }
    SortedMap<Integer, Long> open = new TreeMap<>(scans);
    int shardFieldId = metadata.schema().findField(shardColumn).fieldId();
    Map<Integer, Integer> positionBySpec = new HashMap<>();
    metadata
        .specsById()
        .forEach(
            (id, spec) ->
                positionBySpec.put(id, ShardsWithData.identityPosition(spec, shardFieldId)));
    Snapshot snapshot = metadata.currentSnapshot();
    while (snapshot != null) {
      long id = snapshot.snapshotId();
      open.values().removeIf(scan -> scan == id);
      if (open.isEmpty()) {
        return Optional.empty();
      }
      if (!isOwn(snapshot, pipelineId)) {
        Optional<Finding> hit = look.at(snapshot, positionBySpec, open);
        if (hit.isPresent()) {
          return hit;
        }
      }
      Long parent = snapshot.parentId();
      if (parent == null) {
        open.values().removeIf(scan -> scan == PendingCheckpoint.NO_SNAPSHOT);
        return open.isEmpty()
            ? Optional.empty()
            : Optional.of(
                new Finding(
                    true,
                    "snapshot(s) "
                        + open.values()
                        + " verified last for shard(s) "
                        + open.keySet()
                        + " are not in the table's current history (expired, or the table was rolled back)"));
      }
      snapshot = metadata.snapshot(parent);
      if (snapshot == null) {
        return Optional.of(
            new Finding(
                true,
                String.format(
                    "the table's history since the last check of shard(s) %s (snapshot(s) %s) cannot"
                        + " be read: snapshot %d has expired",
                    open.keySet(), open.values(), parent)));
      }
    }
    return Optional.empty();
  }

  @SafeVarargs
  private static Optional<Finding> firstHit(
      Snapshot snapshot,
      String verb,
      String when,
      Map<Integer, Integer> positionBySpec,
      SortedMap<Integer, Long> open,
      Iterable<? extends ContentFile<?>>... files) {
    for (Iterable<? extends ContentFile<?>> group : files) {
      for (ContentFile<?> file : group) {
        Optional<Finding> hit = hit(snapshot, verb, when, file, positionBySpec, open);
        if (hit.isPresent()) {
          return hit;
        }
      }
    }
    return Optional.empty();
  }

  private static boolean isOwn(Snapshot snapshot, String pipelineId) {
    return snapshot.summary() != null
        && pipelineId.equals(snapshot.summary().get(SnapshotSummaryKeys.PIPELINE_ID));
  }

  private static Optional<Finding> hit(
      Snapshot snapshot,
      String verb,
      String when,
      ContentFile<?> file,
      Map<Integer, Integer> positionBySpec,
      SortedMap<Integer, Long> open) {
    int position = positionBySpec.getOrDefault(file.specId(), -1);
    Integer shard = position < 0 ? null : file.partition().get(position, Integer.class);
    if (shard != null && !open.containsKey(shard)) {
      return Optional.empty();
    }
    return Optional.of(
        new Finding(
            false,
            String.format(
                "snapshot %d (operation %s%s) %s %s %s %s %s",
                snapshot.snapshotId(),
                snapshot.operation(),
                pipelineOf(snapshot),
                verb,
                file.location(),
                verb.equals("added") ? "to" : "of",
                shard == null ? "a file whose shard cannot be told" : "shard " + shard,
                when)));
  }

  private static String pipelineOf(Snapshot snapshot) {
    String other =
        snapshot.summary() == null ? null : snapshot.summary().get(SnapshotSummaryKeys.PIPELINE_ID);
    return other == null ? ", not a Shardberg commit" : ", pipeline " + other;
  }
}
