package dev.shardberg.coordinator.maintenance;

import java.time.Duration;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/**
 * Every key of table maintenance, declared once, under the prefix {@code maintenance.}. Maintenance
 * runs inside the job and commits through the coordinator (see {@link TableMaintainer}).
 */
public final class MaintenanceOptions {
  private MaintenanceOptions() {}

  /** Every maintenance key starts with this. */
  public static final String PREFIX = "maintenance.";

  public static final ConfigOption<Boolean> ENABLED =
      ConfigOptions.key("maintenance.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Table maintenance inside the job: compaction per shard x bucket partition,"
                  + " snapshot expiry, orphan-file removal and manifest rewrite, committed through"
                  + " the coordinator's single commit sequence (or under the same ZooKeeper lock in"
                  + " HA mode). Turn off only when another tool maintains the table.");

  public static final ConfigOption<Duration> INTERVAL =
      ConfigOptions.key("maintenance.interval")
          .durationType()
          .defaultValue(Duration.ofMinutes(1))
          .withDescription(
              "How often a maintenance cycle starts (compaction of the partitions under most"
                  + " pressure, snapshot expiry, manifest rewrite when due). A cycle starts only"
                  + " after the previous one's compaction was committed or dropped.");

  public static final ConfigOption<Boolean> COMPACTION_ENABLED =
      ConfigOptions.key("maintenance.compaction.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Rewrite a partition's data files with its deletes applied into target-size files."
                  + " A partition with any delete file is always a candidate; so is one with"
                  + " maintenance.compaction.min-small-files small files.");

  public static final ConfigOption<MemorySize> COMPACTION_TARGET_FILE_SIZE =
      ConfigOptions.key("maintenance.compaction.target-file-size")
          .memoryType()
          .defaultValue(MemorySize.parse("128mb"))
          .withDescription(
              "Size of the files compaction writes. A data file under 3/4 of it counts as small."
                  + " With target.delete-mode position the writers rewrite only small files and files"
                  + " with at least 30% of their rows deleted; a large file with few deleted rows stays"
                  + " as it is.");

  public static final ConfigOption<Integer> COMPACTION_MIN_SMALL_FILES =
      ConfigOptions.key("maintenance.compaction.min-small-files")
          .intType()
          .defaultValue(5)
          .withDescription(
              "A partition without delete files is a compaction candidate from this many small"
                  + " data files on.");

  public static final ConfigOption<Integer> COMPACTION_MAX_PARTITIONS_PER_CYCLE =
      ConfigOptions.key("maintenance.compaction.max-partitions-per-cycle")
          .intType()
          .defaultValue(8)
          .withDescription(
              "At most this many partitions (shard x bucket) are compacted per cycle, the ones"
                  + " under most pressure first, so a cycle's cost stays flat as shards grow. With"
                  + " target.delete-mode position: the partitions each writer starts rewriting at a"
                  + " checkpoint barrier (the rewrites run beside the writer; the next barrier waits"
                  + " for what is left of them).");

  public static final ConfigOption<MemorySize> COMPACTION_MAX_BYTES_PER_CYCLE =
      ConfigOptions.key("maintenance.compaction.max-bytes-per-cycle")
          .memoryType()
          .defaultValue(MemorySize.parse("2gb"))
          .withDescription(
              "At most this many bytes of data and delete files are read per cycle (the first"
                  + " chosen partition is compacted even if it alone is larger).");

  public static final ConfigOption<Integer> COMPACTION_MERGE_MIN_FILES =
      ConfigOptions.key("maintenance.compaction.merge-min-files")
          .intType()
          .defaultValue(4)
          .withDescription(
              "Between cycles, after each checkpoint commit, a partition's files newer than its last"
                  + " compaction are merged into one data file and one equality-delete file once it"
                  + " has this many of them (data files newer than its base files, their deletes),"
                  + " so a full scan opens a few files per partition at any time, not the"
                  + " checkpoints' since the last cycle. Its cost is in proportion to the changes"
                  + " since the last compaction. 0 turns merging off.");

  public static final ConfigOption<Boolean> EXPIRE_SNAPSHOTS_ENABLED =
      ConfigOptions.key("maintenance.expire-snapshots.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription("Expire old snapshots every cycle and delete the files only they held.");

  public static final ConfigOption<Duration> EXPIRE_SNAPSHOTS_MAX_AGE =
      ConfigOptions.key("maintenance.expire-snapshots.max-age")
          .durationType()
          .defaultValue(Duration.ofHours(1))
          .withDescription(
              "Snapshots older than this are expired (time travel reaches back this far), except"
                  + " the newest maintenance.expire-snapshots.retain-last.");

  public static final ConfigOption<Integer> EXPIRE_SNAPSHOTS_RETAIN_LAST =
      ConfigOptions.key("maintenance.expire-snapshots.retain-last")
          .intType()
          .defaultValue(20)
          .withDescription("The newest this many snapshots are always kept.");

  public static final ConfigOption<Boolean> ORPHAN_FILES_ENABLED =
      ConfigOptions.key("maintenance.orphan-files.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Delete files under the table location that no metadata reaches (temporary manifests"
                  + " of checkpoints that never completed, files of failed writes), never those of"
                  + " the coordinator's pending checkpoints nor the writers' files it holds for the"
                  + " checkpoint in progress. Needs a FileIO that can list"
                  + " (HadoopFileIO, S3FileIO, ...); otherwise skipped with a warning.");

  public static final ConfigOption<Duration> ORPHAN_FILES_INTERVAL =
      ConfigOptions.key("maintenance.orphan-files.interval")
          .durationType()
          .defaultValue(Duration.ofHours(1))
          .withDescription("How often orphan files are looked for (it lists the table location).");

  public static final ConfigOption<Duration> ORPHAN_FILES_MIN_AGE =
      ConfigOptions.key("maintenance.orphan-files.min-age")
          .durationType()
          .defaultValue(Duration.ofDays(1))
          .withDescription(
              "Only files older than this are orphan candidates: files being written, and those of"
                  + " checkpoints in flight, are younger. Keep it well above"
                  + " pipeline.checkpoint-timeout.");

  public static final ConfigOption<Integer> REWRITE_MANIFESTS_MAX_MANIFESTS =
      ConfigOptions.key("maintenance.rewrite-manifests.max-manifests")
          .intType()
          .defaultValue(100)
          .withDescription(
              "When the current snapshot has more data manifests than this, a cycle rewrites them"
                  + " clustered by shard. 0 turns it off.");
}
