package dev.shardberg.coordinator;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * A table's own operations, forwarded, optionally with another {@link FileIO}. Subclasses intercept
 * {@link #commit}: {@link PinnedBaseOperations} (the coordinator's commit), and in tests the fault
 * injection and the writer benchmark's counting I/O.
 */
class ForwardingTableOperations implements TableOperations {
  private final TableOperations delegate;
  private final FileIO io;

  ForwardingTableOperations(TableOperations delegate) {
    this(delegate, delegate.io());
  }

  ForwardingTableOperations(TableOperations delegate, FileIO io) {
    this.delegate = delegate;
    this.io = io;
  }

  /** The wrapped operations. */
  TableOperations delegate() {
    return delegate;
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
    delegate.commit(base, metadata);
  }

  @Override
  public FileIO io() {
    return io;
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
  public long newSnapshotId() {
    return delegate.newSnapshotId();
  }
}
