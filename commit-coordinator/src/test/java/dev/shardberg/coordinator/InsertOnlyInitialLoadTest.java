package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.Change.delete;
import static dev.shardberg.coordinator.Change.insert;
import static dev.shardberg.coordinator.Change.updateAfter;
import static dev.shardberg.coordinator.Change.updateBefore;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Insert-only initial load: INSERT rows (snapshot reads) of shards without data files are written
 * without key deletes in the pipeline's first attempt, and as upserts everywhere else. Each test
 * reads the table back (duplicates fail the read) and checks the snapshot summaries for equality
 * deletes.
 */
class InsertOnlyInitialLoadTest {
  static final int WRITERS = 2;

  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(WRITERS)
              .build());

  @TempDir Path warehouse;

  /** The failure of {@link FailOnce} fires only once per test JVM run of that test. */
  static final AtomicBoolean FAILED = new AtomicBoolean();

  @Test
  void emptyTableTakesTheSnapshotWithoutEqualityDeletes() throws Exception {
    Table table = TestTables.create(warehouse, 5);
    List<Change> snapshot = new ArrayList<>();
    for (int shard = 0; shard < 4; shard++) {
      for (long id = 0; id < 50; id++) {
        snapshot.add(insert(shard, id, "v1"));
      }
    }
    List<List<Change>> steps =
        List.of(
            snapshot,
            // the change phase: live inserts arrive as +U, updates as -U/+U, deletes as -D
            List.of(
                updateAfter(0, 1000, "live-insert"),
                updateBefore(1, 3, "v1"),
                updateAfter(1, 3, "v2"),
                delete(2, 4, "v1")));

    run(steps, true, null);

    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    List<Map<String, String>> summaries = TestTables.summaries(table);
    Map<String, String> snapshotCommit = commitOf(summaries, snapshot.size());
    assertThat(snapshotCommit.get("added-records")).isEqualTo("200");
    assertThat(snapshotCommit).doesNotContainKey("added-equality-delete-files");
    assertThat(snapshotCommit).doesNotContainKey("added-position-delete-files");
    // The change phase deletes keys of earlier commits: equality deletes, one per changed key.
    assertThat(totalOf(summaries, "added-equality-deletes")).isEqualTo(3);
  }

  @Test
  void insertThenUpsertOfOneKeyInOneCheckpointLeavesOneRow() throws Exception {
    Table table = TestTables.create(warehouse, 5);
    List<List<Change>> steps =
        List.of(
            List.of(
                insert(1, 1, "read"),
                updateBefore(1, 1, "read"),
                updateAfter(1, 1, "updated"),
                insert(1, 2, "read"),
                delete(1, 2, "read"),
                insert(1, 3, "read"),
                updateAfter(1, 3, "re-read")));

    run(steps, true, null);

    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(1, 1, "updated"), new TestTables.Row(1, 3, "re-read"));
    // Every key was written in this checkpoint: position deletes, never an equality delete.
    List<Map<String, String>> summaries = TestTables.summaries(table);
    assertThat(totalOf(summaries, "added-equality-deletes")).isZero();
    assertThat(totalOf(summaries, "added-position-deletes")).isEqualTo(3);
  }

  @Test
  void shardThatAlreadyHoldsDataTakesUpserts() throws Exception {
    Table table = TestTables.create(warehouse, 5);
    run(
        List.of(List.of(insert(1, 1, "old"), insert(1, 2, "old"), insert(1, 3, "old"))),
        true,
        null);
    assertThat(totalOf(TestTables.summaries(table), "added-equality-deletes")).isZero();

    // A new pipeline run without restored state (e.g. a re-snapshot) over a table that holds shard
    // 1:
    // shard 1's snapshot rows must replace the old ones; shard 2 is still empty, so insert-only.
    List<List<Change>> steps =
        List.of(List.of(insert(1, 1, "new"), insert(1, 2, "new"), insert(2, 1, "first")));
    run(steps, true, null);

    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrder(
            new TestTables.Row(1, 1, "new"),
            new TestTables.Row(1, 2, "new"),
            new TestTables.Row(1, 3, "old"),
            new TestTables.Row(2, 1, "first"));
    List<Map<String, String>> summaries = TestTables.summaries(table);
    assertThat(summaries.get(summaries.size() - 1).get("added-equality-deletes")).isEqualTo("2");
  }

  @Test
  void restoredRunWritesUpsertsSoReReadRowsAreNotDuplicated() throws Exception {
    Table table = TestTables.create(warehouse, 5);
    FAILED.set(false);
    List<Change> firstChunk = new ArrayList<>();
    for (long id = 0; id < 20; id++) {
      firstChunk.add(insert(1, id, "read-1"));
    }
    // Step 2 starts with the poison row: the job fails there after step 1's checkpoint completed
    // and
    // restarts from it. The restored run then gets step 1's keys again as snapshot reads (what a
    // re-read chunk looks like): they must replace the committed rows, not sit next to them.
    List<Change> afterRestore = new ArrayList<>();
    afterRestore.add(insert(2, 999, FailOnce.POISON));
    for (long id = 0; id < 20; id++) {
      afterRestore.add(insert(1, id, "read-2"));
    }
    afterRestore.add(insert(3, 1, "new-shard"));
    List<List<Change>> steps = List.of(firstChunk, afterRestore);

    run(steps, true, new FailOnce());

    assertThat(FAILED).isTrue();
    assertThat(TestTables.read(table))
        .as("summaries: %s", TestTables.summaries(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    List<Map<String, String>> summaries = TestTables.summaries(table);
    assertThat(commitOf(summaries, 20)).doesNotContainKey("added-equality-delete-files");
    // After the restore every row is an upsert: one key delete per row of step 2.
    assertThat(totalOf(summaries, "added-equality-deletes")).isEqualTo(afterRestore.size());
    assertThat(TestTables.committedCheckpoints(table)).doesNotHaveDuplicates();
  }

  @Test
  void turnedOffEveryInsertIsAnUpsert() throws Exception {
    Table table = TestTables.create(warehouse, 5);
    List<List<Change>> steps =
        List.of(List.of(insert(1, 1, "a"), insert(1, 2, "b"), insert(2, 3, "c")));

    run(steps, false, null);

    assertThat(TestTables.read(table))
        .containsExactlyInAnyOrderElementsOf(Change.expectedRows(steps));
    assertThat(totalOf(TestTables.summaries(table), "added-equality-deletes")).isEqualTo(3);
  }

  private void run(
      List<List<Change>> steps, boolean insertOnly, MapFunction<RowData, RowData> fault)
      throws Exception {
    Configuration config = new Configuration();
    if (fault == null) {
      config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    } else {
      config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
      config.set(
          RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY,
          java.time.Duration.ofMillis(100));
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.enableCheckpointing(100);
    DataStream<RowData> changes =
        env.addSource(
                new ScriptedChangelogSource(steps),
                "scripted changelog",
                InternalTypeInfo.of(TestTables.ROW_TYPE))
            .setParallelism(1);
    if (fault != null) {
      changes = changes.map(fault, InternalTypeInfo.of(TestTables.ROW_TYPE)).setParallelism(1);
    }
    ShardbergSink.forRowData(changes)
        .tableLoader(TestTables.loader(warehouse))
        .tableName(TestTables.TABLE_NAME)
        .rowType(TestTables.ROW_TYPE)
        .equalityColumns(TestTables.EQUALITY_COLUMNS)
        .pipelineId("insert-only")
        .writeParallelism(WRITERS)
        .insertOnlyInitialLoad(insertOnly)
        .append();
    env.execute("insert-only initial load");
  }

  /** The summary of the commit that added exactly {@code records} rows (the snapshot step's). */
  private static Map<String, String> commitOf(List<Map<String, String>> summaries, int records) {
    return summaries.stream()
        .filter(s -> String.valueOf(records).equals(s.get("added-records")))
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("No commit added " + records + " rows: " + summaries));
  }

  private static long totalOf(List<Map<String, String>> summaries, String key) {
    return summaries.stream().mapToLong(s -> Long.parseLong(s.getOrDefault(key, "0"))).sum();
  }

  /** Fails the job once, at the poison row; passes every row through otherwise. */
  static final class FailOnce implements MapFunction<RowData, RowData> {
    static final String POISON = "poison";

    @Override
    public RowData map(RowData row) {
      if (POISON.equals(row.getString(2).toString()) && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at the poison row");
      }
      return row;
    }
  }
}
