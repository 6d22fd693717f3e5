package dev.shardberg.coordinator.maintenance;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import java.time.Duration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manifest rewrite of a maintenance cycle: when a snapshot has too many data manifests, they
 * are rewritten clustered by shard (partition spec and shard), on the committer's thread.
 */
final class ManifestRewrite {
  /** Maintenance's logger: every maintenance line goes under {@link TableMaintainer}'s name. */
  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private final String tableName;
  private final MaintenanceSettings settings;
  private final MaintenanceMetrics metrics;

  ManifestRewrite(String tableName, MaintenanceSettings settings, MaintenanceMetrics metrics) {
    this.tableName = tableName;
    this.settings = settings;
    this.metrics = metrics;
  }

  /**
   * Rewrites the data manifests, clustered by shard, under the guard's lock when the current
   * snapshot has more than the maximum. Throws only what must stop the job: {@link
   * CommitFencedException}, and {@link InterruptedException} when interrupted.
   */
  void rewriteIfMany(Table table, CommitGuard guard, Duration lockTimeout) throws Exception {
    Snapshot current = table.currentSnapshot();
    if (current == null || current.dataManifests(table.io()).size() <= settings.maxManifests()) {
      return;
    }
    int shardFieldId = table.schema().columns().get(0).fieldId();
    try {
      guard.runExclusive(
          lockTimeout,
          () -> {
            table.refresh();
            table
                .rewriteManifests()
                .rewriteIf(m -> m.content() == ManifestContent.DATA)
                .clusterBy(file -> clusterKey(table, file, shardFieldId))
                .set(TableHealth.MAINTENANCE, "rewrite-manifests")
                .commit();
            return null;
          });
      metrics.manifestsRewritten();
      LOG.info("Rewrote the data manifests of table {} clustered by shard", tableName);
    } catch (CommitDeferredException e) {
      // next cycle
    } catch (CommitFencedException e) {
      throw e;
    } catch (RuntimeException e) {
      if (Interruptions.isInterruption(e)) {
        throw Interruptions.stopped("Manifest rewrite", tableName, e);
      }
      LOG.warn("Manifest rewrite of table {} failed; tried again next cycle", tableName, e);
    }
  }

  private static String clusterKey(Table table, DataFile file, int shardFieldId) {
    int position = TableHealth.shardPosition(table.specs().get(file.specId()), shardFieldId);
    Object shard = position < 0 ? null : file.partition().get(position, Integer.class);
    return file.specId() + "/" + shard;
  }
}
