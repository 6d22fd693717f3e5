package dev.shardberg.coordinator;

import java.util.function.Predicate;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The table's operations, with a commit that only swaps from metadata on which the coordinator's
 * checks hold.
 *
 * <p>Iceberg's transaction retry loop, on a conflict, refreshes and re-applies the updates to the
 * new base. Blindly, that would be wrong for a coordinator commit: the idempotency, lineage and
 * epoch checks ran on the old base, and a newer instance of the pipeline may have committed the
 * same checkpoint meanwhile. So {@link #commit} accepts a base other than {@code checked} only when
 * {@code sameInputs} says every input of those checks is unchanged in it (the pipeline's progress
 * record, which every commit of the pipeline rewrites; the schema; for insert-only rows, no foreign
 * write into their shards in the new history) — a foreign commit such as maintenance — and refuses
 * any other with {@link BaseChangedException} (not a {@code CommitFailedException}, so Iceberg does
 * not retry it); the coordinator then starts over from a fresh refresh. The catalog's
 * compare-and-swap of the metadata pointer is the fencing token: a commit checked on a base where
 * another instance of the pipeline has committed since never lands.
 *
 * <p>A conflict the catalog reports for a swap that landed (a REST catalog's retried request that
 * meets its own first one) is taken as the success it is: Iceberg would otherwise delete the files
 * of the snapshot the table now points to.
 */
final class PinnedBaseOperations extends ForwardingTableOperations {
  private static final Logger LOG = LoggerFactory.getLogger(PinnedBaseOperations.class);
  private final TableMetadata checked;
  private final Predicate<TableMetadata> sameInputs;

  PinnedBaseOperations(
      TableOperations delegate, TableMetadata checked, Predicate<TableMetadata> sameInputs) {
    super(delegate);
    this.checked = checked;
    this.sameInputs = sameInputs;
  }

  /**
   * For one checkpoint's commit: swaps from {@code base}, or from a newer base where the pipeline's
   * progress record and the schema are unchanged and no foreign write reached the insert-only
   * shards since the checked snapshot, nor any foreign change to the shards whose owners delete by
   * position (on a moved base only the snapshots after it need the check).
   */
  static PinnedBaseOperations forCheckpoint(
      TableOperations ops,
      TableMetadata base,
      org.apache.iceberg.io.FileIO io,
      String pipelineId,
      String shardColumn,
      java.util.SortedMap<Integer, Long> insertOnlyScans,
      java.util.Set<Integer> ownedShards) {
    String progressKey = PipelineProgress.propertyKey(pipelineId);
    String checkedProgress = base.properties().get(progressKey);
    int checkedSchema = base.currentSchemaId();
    java.util.SortedMap<Integer, Long> sinceChecked = new java.util.TreeMap<>();
    long checkedSnapshot =
        base.currentSnapshot() == null
            ? PendingCheckpoint.NO_SNAPSHOT
            : base.currentSnapshot().snapshotId();
    insertOnlyScans.keySet().forEach(shard -> sinceChecked.put(shard, checkedSnapshot));
    java.util.SortedMap<Integer, Long> ownedSinceChecked = new java.util.TreeMap<>();
    ownedShards.forEach(shard -> ownedSinceChecked.put(shard, checkedSnapshot));
    return new PinnedBaseOperations(
        ops,
        base,
        moved ->
            moved.currentSchemaId() == checkedSchema
                && java.util.Objects.equals(moved.properties().get(progressKey), checkedProgress)
                && InsertOnlyCheck.foreignWrite(moved, io, shardColumn, pipelineId, sinceChecked)
                    .isEmpty()
                && InsertOnlyCheck.foreignChange(
                        moved, io, shardColumn, pipelineId, ownedSinceChecked)
                    .isEmpty());
  }

  /** The table changed after the coordinator's checks: nothing was committed, check again. */
  static final class BaseChangedException extends RuntimeException {
    BaseChangedException(String message) {
      super(message);
    }
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    if (base == null || (!sameVersion(base, checked) && !sameInputs.test(base))) {
      throw new BaseChangedException(
          String.format(
              "the table's metadata moved from %s to %s after the checks, and the pipeline's"
                  + " progress record or the schema changed with it, or another committer wrote"
                  + " shards of insert-only rows; nothing was committed",
              checked.metadataFileLocation(), base == null ? null : base.metadataFileLocation()));
    }
    // The catalog's compare-and-swap: fails with CommitFailedException if the pointer moved since
    // `base`; Iceberg's retry then calls back here with the new base, judged above.
    try {
      super.commit(base, metadata);
    } catch (CommitFailedException e) {
      if (!landed(base, metadata)) {
        throw e;
      }
      // A conflict reported for a swap that landed (a catalog whose retried request met its own
      // first one): passing the exception on would make Iceberg delete the files of the snapshot
      // now current, as a failed commit's. It landed: report success.
      LOG.warn(
          "The catalog reported a conflict for the commit of snapshot {}, yet the table holds it:"
              + " taken as committed ({})",
          metadata.currentSnapshot().snapshotId(),
          e.getMessage());
    }
  }

  /** Whether the table, read again, holds the new snapshot of {@code metadata}. */
  private boolean landed(TableMetadata base, TableMetadata metadata) {
    Snapshot ours = metadata.currentSnapshot();
    if (ours == null || (base != null && base.snapshot(ours.snapshotId()) != null)) {
      return false; // no new snapshot to look for
    }
    try {
      TableMetadata now = delegate().refresh();
      return now != null && now.snapshot(ours.snapshotId()) != null;
    } catch (RuntimeException e) {
      return false; // cannot tell: the conflict stands
    }
  }

  private static boolean sameVersion(TableMetadata a, TableMetadata b) {
    return a == b
        || (a.metadataFileLocation() != null
            && a.metadataFileLocation().equals(b.metadataFileLocation()));
  }

  @Override
  public TableOperations temp(TableMetadata uncommittedMetadata) {
    return delegate().temp(uncommittedMetadata);
  }

  /**
   * Strict: when the swap is refused after the catalog reported a conflict, Iceberg must not delete
   * the files of the earlier attempt (a catalog may report a conflict for a swap that landed); the
   * coordinator decides from a fresh refresh, and unreferenced files are orphans at worst.
   */
  @Override
  public boolean requireStrictCleanup() {
    return true;
  }
}
