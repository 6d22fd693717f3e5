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
 * the second merged with the first, which the commit removes), position-delete files on v2.
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
    DeleteWriteResult two = second.write(OwnerTables.files(table), Map.of(a.location(), aVector));
    assertThat(two.rewrittenDeleteFiles()).containsExactly(aVector);
    assertThat(vectorOf(two, a).recordCount()).isEqualTo(3); // positions 1, 3 and 4
    commit(table, two, table.currentSnapshot().snapshotId());

    assertThat(OwnerTables.read(table))
        .containsExactlyInAnyOrder("1/0/a", "1/2/a", "2/1/b", "2/2/b");
    assertThat(deletesOf(table, a)).containsExactly(vectorOf(two, a).location());
    assertThat(deletesOf(table, b)).containsExactly(vectorOf(one, b).location());
  }

  @Test
  void onFormatV2TheyArePositionDeleteFilesOnePerPartition() throws Exception {
    Table table = OwnerTables.create(warehouse, 2);
    DataFile a = append(table, 1, rows(1, "a", 0, 1, 2, 3));
    DataFile b = append(table, 2, rows(2, "b", 0, 1));

    CommittedRowDeletes first = new CommittedRowDeletes(table);
    first.delete(new FilePosition(a.location(), 2), table.spec(), partition(table, 1));
    first.delete(new FilePosition(a.location(), 0), table.spec(), partition(table, 1));
    first.delete(new FilePosition(b.location(), 1), table.spec(), partition(table, 2));
    DeleteWriteResult one = first.write(OwnerTables.files(table), Map.of());
    assertThat(one.deleteFiles()).hasSize(2).noneMatch(ContentFileUtil::isDV);
    assertThat(one.referencedDataFiles()).hasSize(2);
    commit(table, one, table.currentSnapshot().snapshotId());

    CommittedRowDeletes second = new CommittedRowDeletes(table);
    second.delete(new FilePosition(a.location(), 3), table.spec(), partition(table, 1));
    DeleteWriteResult two = second.write(OwnerTables.files(table), Map.of());
    assertThat(two.rewrittenDeleteFiles()).isEmpty();
    commit(table, two, table.currentSnapshot().snapshotId());

    assertThat(OwnerTables.read(table)).containsExactlyInAnyOrder("1/1/a", "2/0/b");
    assertThat(deletesOf(table, a)).hasSize(2);
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
