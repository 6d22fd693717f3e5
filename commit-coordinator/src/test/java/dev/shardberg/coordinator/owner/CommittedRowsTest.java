package dev.shardberg.coordinator.owner;

import static dev.shardberg.coordinator.owner.OwnerTables.KEY;
import static dev.shardberg.coordinator.owner.OwnerTables.append;
import static dev.shardberg.coordinator.owner.OwnerTables.deleteByKey;
import static dev.shardberg.coordinator.owner.OwnerTables.partition;
import static dev.shardberg.coordinator.owner.OwnerTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.util.StructLikeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where the live rows of a partition are, read from real tables with every kind of delete a table
 * written by Shardberg can hold: equality deletes (the older write mode), deletion vectors (v3) and
 * position-delete files (v2). Checked against what Iceberg's generic reader sees.
 */
class CommittedRowsTest {
  @TempDir Path warehouse;

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void theLiveRowsOfAPartitionAreTheRowsAReaderSeesWithTheirFileAndPosition(int formatVersion) {
    Table table = OwnerTables.create(warehouse, formatVersion);
    DataFile a = append(table, 1, row(1, 1, "a"), row(1, 2, "a"), row(1, 3, "a"));
    DataFile b = append(table, 1, row(1, 4, "b"), row(1, 5, "b"), row(1, 6, "b"));
    append(table, 2, row(2, 1, "other shard"));
    long beforeDeletes = table.currentSnapshot().snapshotId();
    deleteByKey(table, 1, 2);
    CommittedRowDeletes deletes = new CommittedRowDeletes(table);
    deletes.delete(new FilePosition(b.location(), 1), table.spec(), partition(table, 1));
    long read = table.currentSnapshot().snapshotId();
    commit(table, deletes.write(OwnerTables.files(table), Map.of()), read);

    assertThat(live(table, table.currentSnapshot().snapshotId(), 1))
        .isEqualTo(
            Map.of(
                "1/1", new FilePosition(a.location(), 0),
                "1/3", new FilePosition(a.location(), 2),
                "1/4", new FilePosition(b.location(), 0),
                "1/6", new FilePosition(b.location(), 2)));
    assertThat(OwnerTables.read(table))
        .containsExactlyInAnyOrder("1/1/a", "1/3/a", "1/4/b", "1/6/b", "2/1/other shard");
    // at an older snapshot: what a reader of that snapshot saw
    assertThat(live(table, beforeDeletes, 1).keySet())
        .containsExactly("1/1", "1/2", "1/3", "1/4", "1/5", "1/6");
    assertThat(live(table, beforeDeletes, 2)).containsOnlyKeys("2/1");
  }

  @Test
  void aTableWithoutSnapshotsHasNoLiveRows() {
    Table table = OwnerTables.create(warehouse, 3);
    assertThat(CommittedRows.live(table, null, partition(table, 1), KEY)).isEmpty();
  }

  @Test
  void aKeyLiveTwiceInOnePartitionIsADuplicateNamedWithBothPlaces() {
    Table table = OwnerTables.create(warehouse, 3);
    DataFile a = append(table, 1, row(1, 7, "first"));
    DataFile b = append(table, 1, row(1, 7, "second"));
    assertThatThrownBy(
            () ->
                CommittedRows.live(
                    table, table.currentSnapshot().snapshotId(), partition(table, 1), KEY))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Cannot index partition shard_number=1/id_bucket=0 of table")
        .hasMessageContaining("is live twice")
        .hasMessageContaining(a.location())
        .hasMessageContaining(b.location());
  }

  static Map<String, FilePosition> live(Table table, long snapshotId, int shard) {
    StructLikeMap<FilePosition> live =
        CommittedRows.live(table, snapshotId, partition(table, shard), KEY);
    return live.entrySet().stream()
        .collect(
            Collectors.toMap(
                e -> name(e.getKey()), Map.Entry::getValue, (x, y) -> x, TreeMap::new));
  }

  private static String name(StructLike key) {
    return key.get(0, Integer.class) + "/" + key.get(1, Long.class);
  }

  /**
   * Commits the deletes the way the coordinator will: checked for deletion vectors others added to
   * the same data files since {@code readAt}, the snapshot the deletes were decided on.
   */
  static void commit(Table table, DeleteWriteResult result, long readAt) {
    RowDelta delta = table.newRowDelta().validateFromSnapshot(readAt);
    result.deleteFiles().forEach(delta::addDeletes);
    result.rewrittenDeleteFiles().forEach(delta::removeDeletes);
    delta.commit();
  }
}
