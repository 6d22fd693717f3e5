package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * What a restored coordinator does with a shard its state does not know (issue 30): replaced when
 * the source reads it from a fresh snapshot, refused with the way on otherwise.
 */
class ShardRereadTest {

  private static CoordinatorOptions options(
      List<Integer> shards, List<Integer> replaceable, DeleteMode mode) {
    return new CoordinatorOptions(
        "cat.db.orders",
        "orders-pipeline",
        10,
        Duration.ofSeconds(5),
        3,
        Duration.ofMillis(10),
        MaintenanceSettings.disabled(),
        new TreeSet<>(shards),
        new TreeSet<>(replaceable),
        mode);
  }

  private static SortedSet<Integer> known(Integer... shards) {
    return new TreeSet<>(List.of(shards));
  }

  @Test
  void aShardNewToTheStateIsReplacedWhenTheSourceSnapshotsIt() {
    // the job passes every shard when its source snapshots new shards by itself
    ShardReread reread =
        ShardReread.start(
            options(List.of(0, 1, 48), List.of(0, 1, 48), DeleteMode.EQUALITY), known(0, 1));
    assertThat(reread.known()).containsExactly(0, 1);
    List<WriterResult> results =
        List.of(
            new WriterResult(
                7,
                0,
                org.apache.iceberg.io.WriteResult.builder().build(),
                java.util.Map.of(48, new ShardCounts(1958, 0)),
                java.util.Map.of(),
                java.util.Set.of(48)));
    assertThat(reread.replacedBy(7, results)).containsExactly(48);
    reread.replaced(new TreeSet<>(List.of(48)));
    assertThat(reread.known()).containsExactly(0, 1, 48);
  }

  private static CoordinatorOptions gone(
      List<Integer> shards, List<Integer> excluded, boolean remove) {
    CoordinatorOptions o = options(shards, shards, DeleteMode.EQUALITY);
    return new CoordinatorOptions(
        o.tableName(),
        o.pipelineId(),
        o.maxContinuousEmptyCommits(),
        o.lockTimeout(),
        o.commitAttempts(),
        o.retryBackoff(),
        o.maintenance(),
        o.shards(),
        o.rereadShards(),
        o.deleteMode(),
        new TreeSet<>(excluded),
        remove);
  }

  @Test
  void aShardGoneFromThePlanIsRemovedOnceWithDeleteAndNeverWhenExcluded() {
    // state knows 0..3; 1 dropped (or its host removed), 2 excluded, 3 still planned
    ShardReread reread =
        ShardReread.start(gone(List.of(0, 3), List.of(2), true), known(0, 1, 2, 3));
    assertThat(reread.removing()).containsExactly(1);
    assertThat(reread.known())
        .as("known until the checkpoint that removes it is staged")
        .containsExactly(0, 1, 3);
    reread.removed(reread.removing());
    assertThat(reread.removing()).isEmpty();
    assertThat(reread.known()).containsExactly(0, 3);
  }

  /** One writer's result of {@code checkpoint}: 12 rows of {@code shard}, binlog rows. */
  private static WriterResult writes(long checkpoint, int shard) {
    return result(checkpoint, shard, java.util.Set.of());
  }

  /** As {@link #writes}, the rows of the shard's fresh snapshot. */
  private static WriterResult snapshotOf(long checkpoint, int shard) {
    return result(checkpoint, shard, java.util.Set.of(shard));
  }

  private static WriterResult result(
      long checkpoint, int shard, java.util.Set<Integer> snapshotShards) {
    return new WriterResult(
        checkpoint,
        0,
        org.apache.iceberg.io.WriteResult.builder().build(),
        java.util.Map.of(shard, new ShardCounts(12, 0)),
        java.util.Map.of(),
        snapshotShards);
  }

  /**
   * Shards the running job captured ({@code tables.new-shards: capture}) are not in its plan; the
   * state knows them from the checkpoint that writes them, so that the next resume treats them as
   * it treats the plan's: one dropped meanwhile leaves the table with {@code delete}, one still
   * there is read again and its rows replaced.
   */
  @Test
  void aShardCapturedWhileTheJobRanIsKnownToTheNextResume() {
    ShardReread running =
        ShardReread.start(gone(List.of(0, 1), List.of(), true), known(0, 1), known(), false);
    running.written(List.of(writes(4, 0), writes(4, 5), writes(4, 7)));
    assertThat(running.captured()).containsExactly(5, 7);
    assertThat(running.known()).containsExactly(0, 1);

    // resumed: 5 dropped meanwhile (gone from the plan), 7 still there (in the plan now)
    ShardReread resumed =
        ShardReread.start(gone(List.of(0, 1, 7), List.of(), true), known(0, 1), known(5, 7), false);
    assertThat(resumed.removing()).containsExactly(5);
    assertThat(resumed.captured())
        .as("known until the checkpoint that removes it is staged")
        .containsExactly(5);
    assertThat(resumed.replacedBy(9, List.of(snapshotOf(9, 7)))).containsExactly(7);
    resumed.removed(resumed.removing());
    assertThat(resumed.captured()).isEmpty();

    // with keep, the dropped one's rows stay and the state forgets it
    ShardReread kept =
        ShardReread.start(
            gone(List.of(0, 1, 7), List.of(), false), known(0, 1), known(5, 7), false);
    assertThat(kept.removing()).isEmpty();
    assertThat(kept.captured()).isEmpty();

    // a failover restores the same job, with the plan it started with: it goes on capturing both
    ShardReread failover =
        ShardReread.start(gone(List.of(0, 1), List.of(), true), known(0, 1), known(5, 7), true);
    assertThat(failover.removing()).isEmpty();
    assertThat(failover.captured()).containsExactly(5, 7);
    assertThat(failover.replacedBy(9, List.of(writes(9, 5)))).isEmpty();
  }

  @Test
  void aShardGoneFromThePlanKeepsItsRowsWithKeep() {
    ShardReread reread =
        ShardReread.start(gone(List.of(0, 3), List.of(2), false), known(0, 1, 2, 3));
    assertThat(reread.removing()).isEmpty();
    assertThat(reread.known()).containsExactly(0, 3);
  }

  @Test
  void withDeletesByPositionANewShardIsReplacedAsWithDeletesByKeyWhenTheSourceSnapshotsIt() {
    ShardReread reread =
        ShardReread.start(
            options(List.of(0, 1, 48), List.of(0, 1, 48), DeleteMode.POSITION), known(0, 1));
    assertThat(reread.known()).as("known once its first rows are staged").containsExactly(0, 1);
    List<WriterResult> results = List.of(writerResult(0, Set.of(48)), writerResult(1, Set.of(48)));
    assertThat(reread.replacedBy(7, results)).containsExactly(48);
  }

  @Test
  void withDeletesByPositionAShardTheSourceReadsFromTheBinlogAloneIsRefused() {
    assertThatThrownBy(
            () ->
                ShardReread.start(
                    options(List.of(0, 1, 48), List.of(), DeleteMode.POSITION), known(0, 1)))
        .isInstanceOf(PipelineConflictException.class)
        .hasMessageContaining("shard(s) [48] are new to the restored state")
        .hasMessageContaining("tables.reread-shards: [48]");
  }

  @Test
  void aWriterThatStillTakesAReplacedShardsRowsAsLiveRefusesTheCheckpointNamingTheWayOn() {
    CoordinatorOptions options = options(List.of(0, 1, 48), List.of(0, 1, 48), DeleteMode.POSITION);
    SortedSet<Integer> replaced = known(48);
    ShardReread.checkWritersStartEmpty(
        options, 7, replaced, List.of(writerResult(0, Set.of(48)), writerResult(1, Set.of(48))));
    // a writer restored from a release that kept no known shards takes every shard as known
    assertThatThrownBy(
            () ->
                ShardReread.checkWritersStartEmpty(
                    options,
                    7,
                    replaced,
                    List.of(writerResult(0, Set.of(48)), writerResult(1, Set.of()))))
        .isInstanceOf(PipelineConflictException.class)
        .hasMessageContaining("shard(s) [48] are read again")
        .hasMessageContaining("writer 1 still takes their old rows as live")
        .hasMessageContaining("tables.exclude-shards: [48]");
  }

  /** A writer's result with snapshot rows of shard 48, taking {@code fresh} as read again. */
  private static WriterResult writerResult(int subtask, Set<Integer> fresh) {
    return new WriterResult(
        7,
        subtask,
        org.apache.iceberg.io.WriteResult.builder().build(),
        java.util.Map.of(48, new ShardCounts(12, 0)),
        java.util.Map.of(),
        java.util.Set.of(48),
        java.util.Map.of(),
        List.of(),
        fresh);
  }

  @Test
  void aShardNewToTheStateThatTheSourceReadsFromTheBinlogAloneIsRefused() {
    assertThatThrownBy(
            () ->
                ShardReread.start(
                    options(List.of(0, 1, 48), List.of(), DeleteMode.EQUALITY), known(0, 1)))
        .isInstanceOf(PipelineConflictException.class)
        .hasMessageContaining("shard(s) [48] are new to the restored state")
        .hasMessageContaining("source.startup-mode is not initial")
        .hasMessageContaining("tables.reread-shards: [48]");
  }
}
