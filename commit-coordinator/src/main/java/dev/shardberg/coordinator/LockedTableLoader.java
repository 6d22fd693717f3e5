package dev.shardberg.coordinator;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkNotNull;

import java.time.Duration;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.TableLoader;

/**
 * A {@link TableLoader} whose tables swap their metadata only while holding the table's {@link
 * TableCommitLock}: for committers that use Iceberg's own update APIs and know nothing of locks
 * (the router's schema changes). The same shape as Iceberg's Hive catalog, which takes the
 * metastore's lock around its swap: the commit is serialised with every other commit on the table,
 * and a lock that cannot be taken is a {@link CommitFailedException} (nothing committed, the
 * committer refreshes and tries again), as Iceberg reports a lock timeout.
 *
 * <p>A swap that meets a changed base fails as it would without the lock, so planning outside the
 * lock is safe: the update is planned again on the fresh metadata.
 */
public final class LockedTableLoader extends ForwardingTableLoader {
  private static final long serialVersionUID = 1L;

  private final TableCommitLock.Opener lock;
  private final Duration lockTimeout;

  /**
   * @param lock opened for every commit and closed after it (commits through this loader are rare)
   * @param lockTimeout how long one commit waits for the lock
   */
  public LockedTableLoader(
      TableLoader delegate, TableCommitLock.Opener lock, Duration lockTimeout) {
    super(checkNotNull(delegate, "Cannot lock a null table loader"));
    this.lock = checkNotNull(lock, "Cannot lock table commits without a lock");
    checkArgument(
        lockTimeout != null && lockTimeout.toMillis() > 0,
        "Cannot lock table commits with lock timeout %s: pass a positive duration",
        lockTimeout);
    this.lockTimeout = lockTimeout;
  }

  @Override
  TableOperations wrap(TableOperations operations, String tableName) {
    return new LockedOperations(operations, tableName);
  }

  @Override
  TableLoader cloneWith(TableLoader clonedDelegate) {
    return new LockedTableLoader(clonedDelegate, lock, lockTimeout);
  }

  @Override
  public String toString() {
    return delegate() + ", commits under " + lock;
  }

  /** The table's operations with every metadata swap inside the commit lock. */
  private final class LockedOperations extends ForwardingTableOperations {
    private final String tableName;

    LockedOperations(TableOperations delegate, String tableName) {
      super(delegate);
      this.tableName = tableName;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      try (TableCommitLock held = lock.open()) {
        held.runExclusive(
            lockTimeout,
            () -> {
              held.checkStillHeld();
              delegate().commit(base, metadata);
              return null;
            });
      } catch (CommitDeferredException e) {
        throw new CommitFailedException(
            e, "Cannot commit to table %s now: %s", tableName, e.getMessage());
      } catch (RuntimeException e) {
        throw e; // Iceberg's own outcome (failed, state unknown) passes on unchanged
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CommitFailedException(
            e, "Interrupted while waiting for the commit lock of table %s", tableName);
      } catch (Exception e) {
        throw new IllegalStateException(
            String.format("Cannot commit to table %s: %s", tableName, e.getMessage()), e);
      }
    }
  }
}
