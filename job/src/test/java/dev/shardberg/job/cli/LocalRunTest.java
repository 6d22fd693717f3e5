package dev.shardberg.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.ShardCounts;
import dev.shardberg.job.PipelineStatus;
import java.time.Instant;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class LocalRunTest {
  private static final String EARLIER_RUN = "0000000000000000000000000000000a";
  private static final String THIS_RUN = "0000000000000000000000000000000b";

  private static CommitRecord commit(long checkpoint, String flinkJob, int shard, long added) {
    SortedMap<Integer, ShardCounts> counts = new TreeMap<>();
    counts.put(shard, new ShardCounts(added, 0));
    return new CommitRecord(
        100 + checkpoint, checkpoint, 1, 1_000 * checkpoint, flinkJob, false, counts);
  }

  /** {@code commits} newest first, as the table's history gives them. */
  private static PipelineStatus status(CommitRecord... commits) {
    SortedMap<Integer, ShardCounts> totals = new TreeMap<>();
    for (CommitRecord c : commits) {
      c.shardCounts().forEach((shard, counts) -> totals.merge(shard, counts, ShardCounts::plus));
    }
    return new PipelineStatus("p", "t", List.of(commits), totals, null, Instant.ofEpochSecond(100));
  }

  @Test
  void theFirstCommitIsTheOldestOfThisRunEvenWhenSeveralLandedBetweenTwoLines() {
    // checkpoints 1 and 2 committed before the progress line looked
    assertThat(
            LocalRun.firstCommitLine(
                status(commit(2, THIS_RUN, 1, 30), commit(1, THIS_RUN, 0, 20)), THIS_RUN))
        .isEqualTo("First commit: checkpoint 1, 20 rows in 1 shards");
  }

  @Test
  void aResumedRunNamesItsOwnFirstCommitNotTheEarlierRunsLast() {
    assertThat(
            LocalRun.firstCommitLine(
                status(commit(15, EARLIER_RUN, 0, 20), commit(14, EARLIER_RUN, 0, 5)), THIS_RUN))
        .as("nothing committed by this run yet")
        .isNull();
    assertThat(
            LocalRun.firstCommitLine(
                status(
                    commit(17, THIS_RUN, 1, 7),
                    commit(16, THIS_RUN, 0, 3),
                    commit(15, EARLIER_RUN, 0, 20)),
                THIS_RUN))
        .isEqualTo("First commit: checkpoint 16, 3 rows in 1 shards");
  }

  @Test
  void aResumedRunSnapshotsOnlyTheShardsItReadsAgain() {
    assertThat(LocalRun.snapshotting(java.util.Set.of(0, 1, 2), false, java.util.Set.of()))
        .containsExactlyInAnyOrder(0, 1, 2);
    assertThat(LocalRun.snapshotting(java.util.Set.of(0, 1, 2), true, java.util.Set.of(1, 9)))
        .containsExactly(1);
    assertThat(LocalRun.snapshotting(java.util.Set.of(0, 1, 2), true, java.util.Set.of()))
        .isEmpty();
  }
}
