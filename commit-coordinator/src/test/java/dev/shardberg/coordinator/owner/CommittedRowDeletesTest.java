package dev.shardberg.coordinator.owner;

import static dev.shardberg.coordinator.owner.CommittedRowsTest.commit;
import static dev.shardberg.coordinator.owner.OwnerTables.append;
import static dev.shardberg.coordinator.owner.OwnerTables.partition;
import static dev.shardberg.coordinator.owner.OwnerTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.util.ContentFileUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deletes by position of rows in committed files, as two checkpoints of one owner would write them,
 * committed and read back by Iceberg's generic reader: deletion vectors on v3 (one per data file,
 * the second merged with the first, which the commit removes), file-scoped position-delete files on
 * v2 (the same way), and a table upgraded from v2 to v3.
 */
class CommittedRowDeletesTest {
  @TempDir Path warehouse;

  @Test
  void onFormatV3EachDataFileKeepsOneDeletionVectorMergedWithItsPreviousOne() throws Exception {
    Table table = OwnerTables.create(warehouse, 3);
    DataFile a = append(table, 1, rows(1, "a", 0, 1, 2, 3, 4));
    DataFile b = append(table, 2, rows(2, "b", 0, 1, 2));

    CommittedRowDeletes first = new CommittedRowDeletes(table);
    first.delete(new FilePosition(a.location(), 1), table.spec(), partition(table, 1));
    first.delete(new FilePosition(a.location(), 3), table.spec(), partition(table, 1));
    first.delete(new FilePosition(b.location(), 0), table.spec(), partition(table, 2));
    DeleteWriteResult one = first.write(OwnerTables.files(table), Map.of());
    assertThat(one.deleteFiles()).hasSize(2).allMatch(ContentFileUtil::isDV);
    assertThat(one.deleteFiles()).extracting(DeleteFile::format).containsOnly(FileFormat.PUFFIN);
    assertThat(one.deleteFiles()).extracting(DeleteFile::location).containsOnly(location(one, 0));
    assertThat(one.rewrittenDeleteFiles()).isEmpty();
    assertThat(first.isEmpty()).isTrue();
    commit(table, one, table.currentSnapshot().snapshotId());
    assertThat(OwnerTables.read(table))
        .containsExactlyInAnyOrder("1/0/a", "1/2/a", "1/4/a", "2/1/b", "2/2/b");

    DeleteFile aVector = vectorOf(one, a);
    CommittedRowDeletes second = new CommittedRowDeletes(table);
    second.delete(new FilePosition(a.location(), 4), table.spec(), partition(table, 1));
    DeleteWriteResult two =
        second.write(OwnerTables.files(table), Map.of(a.location(), List.of(aVector)));
    assertThat(two.rewrittenDeleteFiles()).containsExactly(aVector);
    assertThat(vectorOf(two, a).recordCount()).isEqualTo(3); // positions 1, 3 and 4
    commit(table, two, table.currentSnapshot().snapshotId());

    assertThat(OwnerTables.read(table))
        .containsExactlyInAnyOrder("1/0/a", "1/2/a", "2/1/b", "2/2/b");
    assertThat(deletesOf(table, a)).containsExactly(vectorOf(two, a).location());
    assertThat(deletesOf(table, b)).containsExactly(vectorOf(one, b).location());
  }

  /**
   * On v2 each data file gets one position-delete file that names it alone (its path bounds say
   * so), merged with the file's previous one, which the commit removes: as a deletion vector, so
   * the owner's compaction can remove it with its data file.
   */
  @Test
  void onFormatV2EachDataFileKeepsOneFileScopedPositionDeleteFileMergedWithItsPreviousOne()
      throws Exception {
    Table table = OwnerTables.create(warehouse, 2);
    DataFile a = append(table, 1, rows(1, "a", 0, 1, 2, 3));
    DataFile b = append(table, 2, rows(2, "b", 0, 1));

    CommittedRowDeletes first = new CommittedRowDeletes(table);
    first.delete(new FilePosition(a.location(), 2), table.spec(), partition(table, 1));
    first.delete(new FilePosition(a.location(), 0), table.spec(), partition(table, 1));
    first.delete(new FilePosition(b.location(), 1), table.spec(), partition(table, 2));
    DeleteWriteResult one = first.write(OwnerTables.files(table), Map.of());
    assertThat(one.deleteFiles()).hasSize(2).noneMatch(ContentFileUtil::isDV);
    assertThat(one.deleteFiles()).allMatch(ContentFileUtil::isFileScoped);
    assertThat(one.referencedDataFiles()).hasSize(2);
    assertThat(one.rewrittenDeleteFiles()).isEmpty();
    commit(table, one, table.currentSnapshot().snapshotId());

    DeleteFile aPositions = vectorOf(one, a);
    CommittedRowDeletes second = new CommittedRowDeletes(table);
    second.delete(new FilePosition(a.location(), 3), table.spec(), partition(table, 1));
    DeleteWriteResult two =
        second.write(OwnerTables.files(table), Map.of(a.location(), List.of(aPositions)));
    assertThat(two.rewrittenDeleteFiles()).containsExactly(aPositions);
    assertThat(vectorOf(two, a).recordCount()).isEqualTo(3); // positions 0, 2 and 3
    commit(table, two, table.currentSnapshot().snapshotId());

    assertThat(OwnerTables.read(table)).containsExactlyInAnyOrder("1/1/a", "2/0/b");
    assertThat(deletesOf(table, a)).containsExactly(vectorOf(two, a).location());
    assertThat(deletesOf(table, b)).containsExactly(vectorOf(one, b).location());
  }

  /**
   * A table written as v2 and upgraded to v3: a reader that finds a deletion vector for a data file
   * ignores the position-delete files that apply to it, so the owner's first vector of the file
   * merges all of them — the one naming that file alone is removed, the one naming another file too
   * stays (it still deletes that file's row). No deleted row comes back.
   */
  @Test
  void aDeletionVectorOnATableUpgradedFromV2HoldsWhatItsPositionDeleteFilesDeleted()
      throws Exception {
    Table table = OwnerTables.create(warehouse, 2);
    DataFile a = append(table, 1, rows(1, "a", 0, 1, 2, 3, 4));
    DataFile c = append(table, 1, rows(1, "c", 5, 6));
    java.util.SortedMap<String, long[]> both = new java.util.TreeMap<>();
    both.put(a.location(), new long[] {0});
    both.put(c.location(), new long[] {0});
    DeleteFile partitionScoped = OwnerTables.deleteByPosition(table, 1, both);
    CommittedRowDeletes v2 = new CommittedRowDeletes(table);
    v2.delete(new FilePosition(a.location(), 1), table.spec(), partition(table, 1));
    DeleteWriteResult fileScoped = v2.write(OwnerTables.files(table), Map.of());
    commit(table, fileScoped, table.currentSnapshot().snapshotId());
    assertThat(OwnerTables.read(table))
        .containsExactlyInAnyOrder("1/2/a", "1/3/a", "1/4/a", "1/6/c");
    table.updateProperties().set(org.apache.iceberg.TableProperties.FORMAT_VERSION, "3").commit();

    CommittedRows.Partition learned =
        CommittedRows.read(
            table,
            table.currentSnapshot().snapshotId(),
            partition(table, 1),
            OwnerTables.KEY,
            org.apache.iceberg.expressions.Expressions.alwaysTrue());
    assertThat(learned.positionDeletes().get(a.location()))
        .extracting(DeleteFile::location)
        .containsExactlyInAnyOrder(partitionScoped.location(), vectorOf(fileScoped, a).location());
    CommittedRowDeletes owner = new CommittedRowDeletes(table);
    owner.delete(new FilePosition(a.location(), 2), table.spec(), partition(table, 1));
    DeleteWriteResult vector =
        owner.write(
            OwnerTables.files(table),
            Map.of(a.location(), learned.positionDeletes().get(a.location())));
    assertThat(vector.deleteFiles()).singleElement().matches(ContentFileUtil::isDV);
    assertThat(vectorOf(vector, a).recordCount()).isEqualTo(3); // positions 0, 1 and 2
    assertThat(vector.rewrittenDeleteFiles())
        .extracting(DeleteFile::location)
        .containsExactly(vectorOf(fileScoped, a).location());
    commit(table, vector, table.currentSnapshot().snapshotId());

    assertThat(OwnerTables.read(table)).containsExactlyInAnyOrder("1/3/a", "1/4/a", "1/6/c");
  }

  /**
   * Another committer put a deletion vector on a data file after the owner read the table: the
   * owner's vector, merged with what it knew, would drop the other's deletes, so the commit is
   * refused (the owner must learn the partition again) and the table keeps the other's deletes.
   */
  @Test
  void aDeletionVectorAddedByAnotherCommitterSinceTheOwnerReadRefusesTheCommit() {
    Table table = OwnerTables.create(warehouse, 3);
    DataFile a = append(table, 1, rows(1, "a", 0, 1, 2));
    long ownerRead = table.currentSnapshot().snapshotId();
    CommittedRowDeletes foreign = new CommittedRowDeletes(table);
    foreign.delete(new FilePosition(a.location(), 0), table.spec(), partition(table, 1));
    commit(table, foreign.write(OwnerTables.files(table), Map.of()), ownerRead);

    CommittedRowDeletes owner = new CommittedRowDeletes(table);
    owner.delete(new FilePosition(a.location(), 2), table.spec(), partition(table, 1));
    DeleteWriteResult stale = owner.write(OwnerTables.files(table), Map.of());
    assertThatThrownBy(() -> commit(table, stale, ownerRead))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("Found concurrently added DV for " + a.location());
    assertThat(OwnerTables.read(table)).containsExactlyInAnyOrder("1/1/a", "1/2/a");
  }

  @Test
  void nothingDeletedWritesNothing() {
    Table table = OwnerTables.create(warehouse, 3);
    assertThat(
            new CommittedRowDeletes(table).write(OwnerTables.files(table), Map.of()).deleteFiles())
        .isEmpty();
  }

  private static org.apache.iceberg.data.Record[] rows(int shard, String name, long... ids) {
    org.apache.iceberg.data.Record[] rows = new org.apache.iceberg.data.Record[ids.length];
    for (int i = 0; i < ids.length; i++) {
      rows[i] = row(shard, ids[i], name);
    }
    return rows;
  }

  private static String location(DeleteWriteResult result, int index) {
    return result.deleteFiles().get(index).location();
  }

  private static DeleteFile vectorOf(DeleteWriteResult result, DataFile file) {
    return result.deleteFiles().stream()
        .filter(d -> file.location().equals(ContentFileUtil.referencedDataFileLocation(d)))
        .findFirst()
        .orElseThrow();
  }

  /** The delete files a reader applies to {@code file} now. */
  private static List<String> deletesOf(Table table, DataFile file) throws IOException {
    table.refresh();
    List<String> deletes = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.file().location().equals(file.location())) {
          task.deletes().forEach(d -> deletes.add(d.location()));
        }
      }
    }
    return deletes;
  }
}
