package dev.shardberg.coordinator.maintenance;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshot expiry of a maintenance cycle: a metadata-only commit on the committer's thread, then
 * the files only the expired snapshots held (from the metadata before and after) deleted on the
 * maintenance thread. It keeps the history insert-only checks still walk, and skips entirely while
 * one reads the whole history.
 */
final class SnapshotExpiry {
  /** Maintenance's logger: every maintenance line goes under {@link TableMaintainer}'s name. */
  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private final String tableName;
  private final MaintenanceSettings settings;
  private final ExecutorService executor;
  private final MaintenanceMetrics metrics;

  /** The maintenance thread's own table instance (only called on that thread). */
  private final Supplier<Table> backgroundTable;

  SnapshotExpiry(
      String tableName,
      MaintenanceSettings settings,
      ExecutorService executor,
      MaintenanceMetrics metrics,
      Supplier<Table> backgroundTable) {
    this.tableName = tableName;
    this.settings = settings;
    this.executor = executor;
    this.metrics = metrics;
    this.backgroundTable = backgroundTable;
  }

  /**
   * Expires, under the guard's lock, the snapshots older than the maximum age that no insert-only
   * check still reads ({@code insertOnlyScans} and every pipeline's published mark), keeping the
   * last ones; their files are deleted on the maintenance thread. Throws only what must stop the
   * job: {@link CommitFencedException}, and {@link InterruptedException} when interrupted.
   */
  void expire(
      Table table, CommitGuard guard, Duration lockTimeout, Set<Long> insertOnlyScans, long now)
      throws Exception {
    if (insertOnlyScans.contains(-1L)) {
      LOG.debug(
          "Snapshot expiry of {} skipped: insert-only rows of a scan of the empty table are pending",
          tableName);
      return;
    }
    TableMetadata[] beforeAfter = new TableMetadata[2];
    int expired;
    try {
      expired =
          guard.runExclusive(
              lockTimeout,
              () -> {
                TableOperations ops = ((HasTableOperations) table).operations();
                TableMetadata before = ops.refresh();
                long olderThan = now - settings.snapshotMaxAge().toMillis();
                Set<Long> needed = new java.util.HashSet<>(insertOnlyScans);
                before
                    .properties()
                    .forEach(
                        (key, value) -> {
                          if (key.startsWith(TableMaintainer.INSERT_ONLY_FROM_PREFIX)) {
                            needed.add(parseSnapshotId(key, value));
                          }
                        });
                if (needed.contains(-1L)) {
                  LOG.debug(
                      "Snapshot expiry of {} skipped: a pipeline's insert-only check reads the whole history",
                      tableName);
                  return 0;
                }
                for (Long scanned : needed) {
                  Snapshot s = before.snapshot(scanned);
                  if (s != null) {
                    olderThan = Math.min(olderThan, s.timestampMillis());
                  }
                }
                ExpireSnapshots expire =
                    table
                        .expireSnapshots()
                        .expireOlderThan(olderThan)
                        .retainLast(settings.retainLastSnapshots())
                        .cleanExpiredFiles(false);
                List<Snapshot> removed = expire.apply();
                if (removed.isEmpty()) {
                  return 0;
                }
                expire.commit();
                beforeAfter[0] = before;
                beforeAfter[1] = ops.refresh();
                return removed.size();
              });
    } catch (CommitDeferredException e) {
      return;
    } catch (CommitFencedException e) {
      throw e;
    } catch (RuntimeException e) {
      if (Interruptions.isInterruption(e)) {
        throw Interruptions.stopped("Snapshot expiry", tableName, e);
      }
      LOG.warn("Snapshot expiry of table {} failed; tried again next cycle", tableName, e);
      return;
    }
    if (expired > 0) {
      metrics.expired(expired);
      TableMetadata before = beforeAfter[0];
      TableMetadata after = beforeAfter[1];
      LOG.info("Expired {} snapshots of table {}", expired, tableName);
      executor.submit(
          () -> {
            try {
              int deleted = FileCleanup.deleteExpired(backgroundTable.get().io(), before, after);
              metrics.expiredFilesDeleted(deleted);
              LOG.info("Deleted {} files of the expired snapshots of table {}", deleted, tableName);
            } catch (RuntimeException e) {
              if (Interruptions.isInterruption(e)) {
                LOG.info(
                    "Deleting the files of expired snapshots of table {} stopped with maintenance",
                    tableName);
                return;
              }
              LOG.warn(
                  "Could not delete the files of expired snapshots of table {}; orphan-file"
                      + " removal finds them",
                  tableName,
                  e);
            }
          });
    }
  }

  private long parseSnapshotId(String key, String value) {
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      LOG.warn(
          "Table {} has property {} = '{}', not a snapshot id; ignored by snapshot expiry",
          tableName,
          key,
          value);
      return Long.MAX_VALUE;
    }
  }
}
