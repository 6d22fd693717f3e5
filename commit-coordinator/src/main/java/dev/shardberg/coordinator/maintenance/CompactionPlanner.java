package dev.shardberg.coordinator.maintenance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Chooses the partitions one compaction cycle rewrites, by pressure, within a budget. Pure logic.
 *
 * <p>Candidates: every partition of the current spec that has any delete file (a partition
 * rewritten whole drops all its delete files; a size-only rule leaves files near the target size
 * out forever, and the deletes written against them pile up), and every partition with at least
 * {@code minSmallFiles} small data files.
 *
 * <p>Pressure = (delete files + small data files) x rows read per live row: what a reader pays in
 * files to open and in rows to skip. The highest pressure goes first; partitions that would exceed
 * the byte budget are passed over for smaller ones, but the first choice is always taken (a
 * partition larger than the budget must still be compacted some day).
 */
public final class CompactionPlanner {
  private final int currentSpecId;
  private final int minSmallFiles;
  private final int maxPartitions;
  private final long maxBytes;

  public CompactionPlanner(int currentSpecId, int minSmallFiles, int maxPartitions, long maxBytes) {
    this.currentSpecId = currentSpecId;
    this.minSmallFiles = minSmallFiles;
    this.maxPartitions = maxPartitions;
    this.maxBytes = maxBytes;
  }

  static CompactionPlanner of(int currentSpecId, MaintenanceSettings settings) {
    return new CompactionPlanner(
        currentSpecId,
        settings.minSmallFiles(),
        settings.maxPartitionsPerCycle(),
        settings.maxBytesPerCycle());
  }

  public boolean isCandidate(PartitionHealth partition) {
    return partition.specId() == currentSpecId
        && (partition.deleteFiles() > 0 || partition.smallDataFiles() >= minSmallFiles);
  }

  public static double pressure(PartitionHealth partition) {
    double read = Math.max(1.0, partition.readPerLiveRow());
    return (partition.deleteFiles() + partition.smallDataFiles()) * read;
  }

  /** The partitions to rewrite this cycle, highest pressure first. */
  public List<PartitionHealth> choose(List<PartitionHealth> partitions) {
    List<PartitionHealth> candidates = new ArrayList<>();
    for (PartitionHealth partition : partitions) {
      if (isCandidate(partition)) {
        candidates.add(partition);
      }
    }
    candidates.sort(
        Comparator.comparingDouble(CompactionPlanner::pressure)
            .reversed()
            .thenComparingLong(PartitionHealth::bytes)
            .thenComparing(PartitionHealth::path));
    List<PartitionHealth> chosen = new ArrayList<>();
    long bytes = 0;
    for (PartitionHealth candidate : candidates) {
      if (chosen.size() >= maxPartitions) {
        break;
      }
      if (!chosen.isEmpty() && bytes + candidate.bytes() > maxBytes) {
        continue;
      }
      chosen.add(candidate);
      bytes += candidate.bytes();
    }
    return chosen;
  }
}
