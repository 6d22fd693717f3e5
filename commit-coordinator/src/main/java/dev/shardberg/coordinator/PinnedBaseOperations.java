package dev.shardberg.coordinator;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * The table's operations, with a commit that only swaps from the metadata the coordinator checked.
 *
 * <p>Iceberg's transaction retry loop, on a conflict, refreshes and re-applies the updates to the
 * new base. For a coordinator commit that would be wrong: the idempotency, lineage and epoch checks
 * ran on the old base, and a newer instance of the pipeline may have committed the same checkpoint
 * meanwhile. So {@link #commit} refuses any base other than {@code checked} with {@link
 * BaseChangedException} (not a {@code CommitFailedException}, so Iceberg does not retry it), and the
 * coordinator starts over from a fresh refresh. The catalog's compare-and-swap of the metadata
 * pointer is then the fencing token: a commit prepared on a base that is no longer current never
 * lands.
 */
final class PinnedBaseOperations implements TableOperations {
  private final TableOperations delegate;
  private final TableMetadata checked;

  PinnedBaseOperations(TableOperations delegate, TableMetadata checked) {
    this.delegate = delegate;
    this.checked = checked;
  }

  /** The table changed after the coordinator's checks: nothing was committed, check again. */
  static final class BaseChangedException extends RuntimeException {
    BaseChangedException(String message) {
      super(message);
    }
  }

  @Override
  public TableMetadata current() {
    return delegate.current();
  }

  @Override
  public TableMetadata refresh() {
    return delegate.refresh();
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    if (base == null || !sameVersion(base, checked)) {
      throw new BaseChangedException(
          String.format(
              "the table's metadata moved from %s to %s after the checks; nothing was committed",
              checked.metadataFileLocation(), base == null ? null : base.metadataFileLocation()));
    }
    // The catalog's compare-and-swap: fails with CommitFailedException if the pointer moved since
    // `checked`; Iceberg's retry then calls back here with the new base, which is refused above.
    delegate.commit(base, metadata);
  }

  private static boolean sameVersion(TableMetadata a, TableMetadata b) {
    return a == b
        || (a.metadataFileLocation() != null
            && a.metadataFileLocation().equals(b.metadataFileLocation()));
  }

  @Override
  public FileIO io() {
    return delegate.io();
  }

  @Override
  public EncryptionManager encryption() {
    return delegate.encryption();
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return delegate.metadataFileLocation(fileName);
  }

  @Override
  public LocationProvider locationProvider() {
    return delegate.locationProvider();
  }

  @Override
  public TableOperations temp(TableMetadata uncommittedMetadata) {
    return delegate.temp(uncommittedMetadata);
  }

  @Override
  public long newSnapshotId() {
    return delegate.newSnapshotId();
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
