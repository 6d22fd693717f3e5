package dev.shardberg.coordinator.maintenance;

import java.io.Serializable;
import java.time.Duration;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.util.Preconditions;

/**
 * Resolved maintenance settings, validated; read from {@link MaintenanceOptions}.
 *
 * @param maxManifests 0 = manifest rewrite off
 * @param mergeMinFiles 0 = merging of recent files off
 */
public record MaintenanceSettings(
    boolean enabled,
    Duration interval,
    boolean compaction,
    long targetFileSizeBytes,
    int minSmallFiles,
    int maxPartitionsPerCycle,
    long maxBytesPerCycle,
    int mergeMinFiles,
    boolean expireSnapshots,
    Duration snapshotMaxAge,
    int retainLastSnapshots,
    boolean orphanFiles,
    Duration orphanInterval,
    Duration orphanMinAge,
    int maxManifests)
    implements Serializable {

  public MaintenanceSettings {
    Preconditions.checkArgument(
        !interval.isNegative() && !interval.isZero(),
        "Invalid %s: must be > 0, got %s",
        MaintenanceOptions.INTERVAL.key(),
        interval);
    Preconditions.checkArgument(
        targetFileSizeBytes > 0,
        "Invalid %s: must be > 0, got %s bytes",
        MaintenanceOptions.COMPACTION_TARGET_FILE_SIZE.key(),
        targetFileSizeBytes);
    Preconditions.checkArgument(
        minSmallFiles >= 2,
        "Invalid %s: must be >= 2 (one small file has nothing to merge with), got %s",
        MaintenanceOptions.COMPACTION_MIN_SMALL_FILES.key(),
        minSmallFiles);
    Preconditions.checkArgument(
        maxPartitionsPerCycle > 0,
        "Invalid %s: must be > 0, got %s; turn compaction off with %s: false",
        MaintenanceOptions.COMPACTION_MAX_PARTITIONS_PER_CYCLE.key(),
        maxPartitionsPerCycle,
        MaintenanceOptions.COMPACTION_ENABLED.key());
    Preconditions.checkArgument(
        maxBytesPerCycle > 0,
        "Invalid %s: must be > 0, got %s bytes",
        MaintenanceOptions.COMPACTION_MAX_BYTES_PER_CYCLE.key(),
        maxBytesPerCycle);
    Preconditions.checkArgument(
        mergeMinFiles == 0 || mergeMinFiles >= 3,
        "Invalid %s: must be 0 (off) or >= 3 (a merge leaves 2: the merged data and delete"
            + " files), got %s",
        MaintenanceOptions.COMPACTION_MERGE_MIN_FILES.key(),
        mergeMinFiles);
    Preconditions.checkArgument(
        !snapshotMaxAge.isNegative(),
        "Invalid %s: must be >= 0, got %s",
        MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE.key(),
        snapshotMaxAge);
    Preconditions.checkArgument(
        retainLastSnapshots >= 1,
        "Invalid %s: must be >= 1 (the current snapshot is always kept), got %s",
        MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST.key(),
        retainLastSnapshots);
    Preconditions.checkArgument(
        !orphanInterval.isNegative() && !orphanInterval.isZero(),
        "Invalid %s: must be > 0, got %s",
        MaintenanceOptions.ORPHAN_FILES_INTERVAL.key(),
        orphanInterval);
    Preconditions.checkArgument(
        !orphanMinAge.isNegative(),
        "Invalid %s: must be >= 0, got %s",
        MaintenanceOptions.ORPHAN_FILES_MIN_AGE.key(),
        orphanMinAge);
    Preconditions.checkArgument(
        maxManifests >= 0,
        "Invalid %s: must be >= 0 (0 = off), got %s",
        MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS.key(),
        maxManifests);
  }

  /** Every option at its default: maintenance on. */
  /**
   * These settings without compaction and recent-files merges (they move rows, which the writers of
   * {@code target.delete-mode: position} know the places of); expiry, orphan removal and manifest
   * rewrites stay.
   */
  public MaintenanceSettings withoutCompaction() {
    return new MaintenanceSettings(
        enabled,
        interval,
        false,
        targetFileSizeBytes,
        minSmallFiles,
        maxPartitionsPerCycle,
        maxBytesPerCycle,
        mergeMinFiles,
        expireSnapshots,
        snapshotMaxAge,
        retainLastSnapshots,
        orphanFiles,
        orphanInterval,
        orphanMinAge,
        maxManifests);
  }

  public static MaintenanceSettings defaults() {
    return from(new Configuration());
  }

  /** Maintenance off (the sink builder's default; the job turns it on from its config). */
  public static MaintenanceSettings disabled() {
    Configuration off = new Configuration();
    off.set(MaintenanceOptions.ENABLED, false);
    return from(off);
  }

  public static MaintenanceSettings from(ReadableConfig config) {
    return new MaintenanceSettings(
        config.get(MaintenanceOptions.ENABLED),
        config.get(MaintenanceOptions.INTERVAL),
        config.get(MaintenanceOptions.COMPACTION_ENABLED),
        config.get(MaintenanceOptions.COMPACTION_TARGET_FILE_SIZE).getBytes(),
        config.get(MaintenanceOptions.COMPACTION_MIN_SMALL_FILES),
        config.get(MaintenanceOptions.COMPACTION_MAX_PARTITIONS_PER_CYCLE),
        config.get(MaintenanceOptions.COMPACTION_MAX_BYTES_PER_CYCLE).getBytes(),
        config.get(MaintenanceOptions.COMPACTION_MERGE_MIN_FILES),
        config.get(MaintenanceOptions.EXPIRE_SNAPSHOTS_ENABLED),
        config.get(MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE),
        config.get(MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST),
        config.get(MaintenanceOptions.ORPHAN_FILES_ENABLED),
        config.get(MaintenanceOptions.ORPHAN_FILES_INTERVAL),
        config.get(MaintenanceOptions.ORPHAN_FILES_MIN_AGE),
        config.get(MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS));
  }

  /** A data file under this size is small. */
  public long smallFileBytes() {
    return targetFileSizeBytes * 3 / 4;
  }
}
