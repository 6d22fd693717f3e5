package dev.shardberg.coordinator.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

class CompactionPlannerTest {
  private static final int SPEC = 0;

  /**
   * A partition of shard s: files, small files, eq/pos delete files, bytes, data/delete records.
   */
  private static PartitionHealth partition(
      int shard,
      int bucket,
      int files,
      int small,
      int eq,
      int pos,
      long bytes,
      long rows,
      long deletes) {
    return new PartitionHealth(
        SPEC,
        "shard_number=" + shard + "/id_bucket=" + bucket,
        shard,
        files,
        small,
        bytes,
        rows,
        eq,
        pos,
        0,
        deletes);
  }

  @Test
  void aPartitionWithAnyDeleteFileIsACandidateWhateverItsFileSizes() {
    CompactionPlanner planner = new CompactionPlanner(SPEC, 5, 10, Long.MAX_VALUE);
    // one big file with a single equality delete file: the rewrite-all lesson
    PartitionHealth bigWithOneDelete = partition(1, 0, 1, 0, 1, 0, 1 << 30, 1000, 1);
    PartitionHealth bigWithOnePositionDelete = partition(1, 1, 1, 0, 0, 1, 1 << 30, 1000, 1);
    PartitionHealth clean = partition(1, 2, 3, 0, 0, 0, 1 << 30, 1000, 0);
    assertThat(planner.choose(List.of(bigWithOneDelete, bigWithOnePositionDelete, clean)))
        .containsExactlyInAnyOrder(bigWithOneDelete, bigWithOnePositionDelete);
  }

  @Test
  void smallFilesMakeACandidateFromTheThresholdOn() {
    CompactionPlanner planner = new CompactionPlanner(SPEC, 5, 10, Long.MAX_VALUE);
    PartitionHealth four = partition(1, 0, 4, 4, 0, 0, 400, 40, 0);
    PartitionHealth five = partition(1, 1, 5, 5, 0, 0, 500, 50, 0);
    PartitionHealth oneCompactedFile = partition(1, 2, 1, 1, 0, 0, 100, 10, 0);
    assertThat(planner.choose(List.of(four, five, oneCompactedFile))).containsExactly(five);
  }

  @Test
  void partitionsOfAnOlderSpecAreNotRewritten() {
    CompactionPlanner planner = new CompactionPlanner(1, 2, 10, Long.MAX_VALUE);
    assertThat(planner.choose(List.of(partition(1, 0, 9, 9, 9, 0, 100, 10, 5)))).isEmpty();
  }

  @Test
  void highestPressureFirstThenTheBudgetInPartitions() {
    CompactionPlanner planner = new CompactionPlanner(SPEC, 2, 2, Long.MAX_VALUE);
    PartitionHealth low = partition(1, 0, 2, 2, 1, 0, 100, 100, 1); // 3 x ~1.02
    PartitionHealth manyDeletes = partition(2, 0, 2, 2, 10, 0, 100, 100, 10); // 12 x 1.22
    PartitionHealth mostlyDeleted = partition(3, 0, 2, 2, 2, 0, 100, 100, 90); // 4 x 19
    assertThat(planner.choose(List.of(low, manyDeletes, mostlyDeleted)))
        .containsExactly(mostlyDeleted, manyDeletes);
  }

  @Test
  void theByteBudgetPassesOverLargePartitionsButAlwaysTakesTheFirst() {
    CompactionPlanner planner = new CompactionPlanner(SPEC, 2, 10, 1000);
    PartitionHealth huge = partition(1, 0, 2, 2, 50, 0, 5000, 100, 50);
    PartitionHealth large = partition(2, 0, 2, 2, 20, 0, 900, 100, 20);
    PartitionHealth small = partition(3, 0, 2, 2, 10, 0, 400, 100, 10);
    PartitionHealth tiny = partition(4, 0, 2, 2, 5, 0, 300, 100, 5);
    assertThat(planner.choose(List.of(small, large, tiny, huge))).containsExactly(huge);
    assertThat(planner.choose(List.of(small, large, tiny))).containsExactly(large);
    CompactionPlanner roomier = new CompactionPlanner(SPEC, 2, 10, 800);
    assertThat(roomier.choose(List.of(small, tiny))).containsExactly(small, tiny);
  }

  @Test
  void readPerLiveRowCountsDeletesAgainstTheLiveRows() {
    assertThat(partition(1, 0, 1, 1, 1, 0, 1, 100, 50).readPerLiveRow()).isEqualTo(3.0);
    assertThat(partition(1, 0, 1, 1, 0, 0, 1, 100, 0).readPerLiveRow()).isEqualTo(1.0);
    assertThat(partition(1, 0, 0, 0, 1, 0, 1, 0, 7).readPerLiveRow()).isEqualTo(7.0);
  }

  @Test
  void settingsNameTheKeyOfABadValue() {
    Configuration config = new Configuration();
    config.set(MaintenanceOptions.COMPACTION_MIN_SMALL_FILES, 1);
    assertThatThrownBy(() -> MaintenanceSettings.from(config))
        .hasMessageContaining("maintenance.compaction.min-small-files")
        .hasMessageContaining("got 1");
    assertThat(MaintenanceSettings.defaults().enabled()).isTrue();
    assertThat(MaintenanceSettings.disabled().enabled()).isFalse();
  }
}
