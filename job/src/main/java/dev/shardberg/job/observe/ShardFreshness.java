package dev.shardberg.job.observe;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.ShardCounts;
import java.time.Instant;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Per shard, what the pipeline's commits say about it: rows added and deleted in total, and when
 * the newest commit holding a change of that shard landed. A shard whose last change is much older
 * than the others' is a shard whose host may be stalled (the host lines of {@code status} say why).
 *
 * @param lastChangeCommitted commit time of the newest commit with a change of this shard
 */
public record ShardFreshness(
    int shard,
    long addedRecords,
    long deletedRecords,
    Instant lastChangeCommitted,
    long commitsWithChanges) {

  /** From the pipeline's commits, newest first (as {@code PipelineStatus.commits()}). */
  public static List<ShardFreshness> of(List<CommitRecord> commitsNewestFirst) {
    SortedMap<Integer, ShardFreshness> byShard = new TreeMap<>();
    for (CommitRecord commit : commitsNewestFirst) {
      commit
          .shardCounts()
          .forEach(
              (shard, counts) -> {
                boolean changed = counts.addedRecords() + counts.deletedRecords() > 0;
                ShardFreshness seen = byShard.get(shard);
                if (seen == null) {
                  byShard.put(
                      shard,
                      new ShardFreshness(
                          shard,
                          counts.addedRecords(),
                          counts.deletedRecords(),
                          changed ? Instant.ofEpochMilli(commit.timestampMillis()) : null,
                          changed ? 1 : 0));
                } else {
                  byShard.put(shard, seen.plus(counts, commit.timestampMillis(), changed));
                }
              });
    }
    return List.copyOf(byShard.values());
  }

  private ShardFreshness plus(ShardCounts counts, long commitMillis, boolean changed) {
    Instant last = lastChangeCommitted;
    if (changed && (last == null || last.toEpochMilli() < commitMillis)) {
      last = Instant.ofEpochMilli(commitMillis);
    }
    return new ShardFreshness(
        shard,
        addedRecords + counts.addedRecords(),
        deletedRecords + counts.deletedRecords(),
        last,
        commitsWithChanges + (changed ? 1 : 0));
  }
}
