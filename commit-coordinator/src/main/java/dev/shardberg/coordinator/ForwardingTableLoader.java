package dev.shardberg.coordinator;

import java.io.IOException;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.flink.TableLoader;

/**
 * A table loader whose tables run on wrapped operations ({@link #wrap}): how a seam is put between
 * Iceberg's update APIs and the catalog's metadata swap ({@link LockedTableLoader}, and in tests
 * the fault injection). Everything else is the wrapped loader's.
 */
abstract class ForwardingTableLoader implements TableLoader {
  private static final long serialVersionUID = 1L;

  private final TableLoader delegate;

  ForwardingTableLoader(TableLoader delegate) {
    this.delegate = delegate;
  }

  /** The operations the loaded table runs on, given its own. */
  abstract TableOperations wrap(TableOperations operations, String tableName);

  /** This loader over {@code clonedDelegate}. */
  abstract TableLoader cloneWith(TableLoader clonedDelegate);

  TableLoader delegate() {
    return delegate;
  }

  @Override
  public void open() {
    delegate.open();
  }

  @Override
  public boolean isOpen() {
    return delegate.isOpen();
  }

  @Override
  public Table loadTable() {
    Table table = delegate.loadTable();
    return new BaseTable(
        wrap(((HasTableOperations) table).operations(), table.name()), table.name());
  }

  @Override
  @SuppressWarnings("MethodDoesntCallSuperMethod")
  public TableLoader clone() {
    return cloneWith(delegate.clone());
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
