package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.TestTables.row;
import static org.apache.flink.types.RowKind.INSERT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.OperatorHarnesses.Coordinator;
import dev.shardberg.coordinator.OperatorHarnesses.Writer;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The coordinator's state as the release before the single versioned state wrote it (six list
 * states and a sentinel), frozen in {@code
 * src/test/resources/coordinator-state/six-list-states.snapshot} with Flink's {@link
 * OperatorSnapshotUtil} by the coordinator of commit d16b238: pipeline orders-pipeline with shards
 * 1 and 2; job A committed checkpoints 1..3; job B started without state (offset 3), committed its
 * Flink checkpoint 1 as 4, and was snapshotted at Flink checkpoint 2 with an empty entry 5 pending.
 * {@code six-list-states.properties} names job B's run.
 */
class CoordinatorStateCompatibilityTest {
  static final Path FROZEN = Path.of("src", "test", "resources", "coordinator-state");
  @TempDir Path warehouse;

  static CoordinatorOptions options(String pipeline, SortedSet<Integer> shards) {
    return new CoordinatorOptions(
        TestTables.TABLE_NAME,
        pipeline,
        10,
        Duration.ofSeconds(5),
        3,
        Duration.ofMillis(10),
        MaintenanceSettings.disabled(),
        shards,
        null);
  }

  private static OperatorSubtaskState frozen() throws Exception {
    return OperatorSnapshotUtil.readStateHandle(
        FROZEN.resolve("six-list-states.snapshot").toString());
  }

  private static Properties about() throws Exception {
    Properties about = new Properties();
    try (var in = Files.newBufferedReader(FROZEN.resolve("six-list-states.properties"))) {
      about.load(in);
    }
    return about;
  }

  /**
   * The frozen state restores: its offset numbers the next checkpoint (Flink 3 + offset 3 = 6), its
   * empty pending entry 5 is dropped, its run goes into the table's progress record as an ancestor
   * at its Flink checkpoint, and its rows are committed exactly.
   */
  @Test
  void theStateOfTheReleaseBeforeRestoresWithItsOffsetLineageAndPendingEntries() throws Exception {
    var table = TestTables.create(warehouse, 4);
    SortedSet<Integer> shards = new TreeSet<>(java.util.List.of(1, 2));
    try (Writer writer = new Writer(TestTables.loader(warehouse));
        Coordinator restored =
            new Coordinator(
                TestTables.loader(warehouse),
                new JobID(),
                CommitGuardFactory.none(),
                options(OperatorHarnesses.PIPELINE, shards))) {
      restored.harness.initializeState(frozen());
      restored.harness.open();
      assertThat(restored.pending()).isEmpty(); // empty entry 5: nothing to place
      restored.add(writer.checkpoint(3, row(INSERT, 2, 7, "after-restore")));
      restored.harness.snapshot(3, 3);
      restored.harness.notifyOfCompletedCheckpoint(3);
    }
    table.refresh();
    assertThat(TestTables.committedCheckpoints(table)).containsExactly(6L);
    assertThat(TestTables.read(table)).containsExactly(new TestTables.Row(2, 7, "after-restore"));
    PipelineProgress progress =
        PipelineProgress.read(table, OperatorHarnesses.PIPELINE).orElseThrow();
    String frozenRun = about().getProperty("run");
    assertThat(progress.covers(frozenRun, 2)).isTrue();
    assertThat(progress.covers(frozenRun, 3)).isFalse();
  }

  /**
   * The frozen state's pipeline id and known shards are read: another id, an unknown shard, each
   * refused by name.
   */
  @Test
  void theStateOfTheReleaseBeforeKeepsItsPipelineIdAndKnownShards() throws Exception {
    TestTables.create(warehouse, 4);
    try (Coordinator other =
        new Coordinator(
            TestTables.loader(warehouse),
            new JobID(),
            CommitGuardFactory.none(),
            options("other-pipeline", null))) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> {
                other.harness.initializeState(frozen());
                other.harness.open();
              })
          .hasMessageContaining("the restored state belongs to pipeline orders-pipeline");
    }
    SortedSet<Integer> more = new TreeSet<>(java.util.List.of(1, 2, 3));
    try (Coordinator wider =
        new Coordinator(
            TestTables.loader(warehouse),
            new JobID(),
            CommitGuardFactory.none(),
            options(OperatorHarnesses.PIPELINE, more))) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> {
                wider.harness.initializeState(frozen());
                wider.harness.open();
              })
          .hasMessageContaining("shard(s) [3] are new to the restored state");
    }
  }
}
