package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A truncate of a shard's partitions in the middle of a checkpoint (a MySQL TRUNCATE TABLE of the
 * shard): the partition's committed rows and the rows written earlier in the checkpoint go, the rows
 * written after the truncate stay, other shards are untouched — also across a schema switch earlier in
 * the same checkpoint and with keys that come back after the truncate.
 */
class DeltaTaskWriterTruncateTest {
  private static final int BUCKETS = 3;

  @TempDir Path warehouse;

  @Test
  void aTruncatedShardKeepsOnlyTheRowsWrittenAfterTheTruncate() throws Exception {
    Table table = TestTables.create(warehouse, BUCKETS);
    DeltaTaskWriter.Factory factory = DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, Set.of(1, 2), 0, 0);
    DeltaTaskWriter first = factory.create();
    for (long id = 1; id <= 9; id++) {
      first.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, id, "old-" + id));
      first.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, id, "other-" + id));
    }
    commit(table, first.complete());
    first.close();

    DeltaTaskWriter second = factory.create();
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "before-truncate")); // same checkpoint, before
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 20, "before-truncate"));
    second.deleteKey(TestTables.row(RowKind.DELETE, 1, 2, null));
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 1, "other-changed"));
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
      second.truncate(PartitionKeySelector.partitionOf(table.spec(), table.schema(), 1, bucket), 1);
    }
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "after")); // a key that was there before
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 30, "after"));
    second.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 30, "after-again"));
    WriteResult files = second.complete();
    assertThat(List.of(files.deleteFiles()).stream().filter(f -> f.content() == FileContent.EQUALITY_DELETES)
            .filter(f -> f.equalityFieldIds().equals(List.of(1))))
        .as("one shard-only equality delete per truncated partition").hasSize(BUCKETS);
    commit(table, files);
    second.close();

    List<String> expected = new ArrayList<>(List.of("1|1|after|null", "1|30|after-again|null", "2|1|other-changed|null"));
    for (long id = 2; id <= 9; id++) {
      expected.add("2|" + id + "|other-" + id + "|null");
    }
    assertThat(read(table)).containsExactlyInAnyOrderElementsOf(expected);

    // rows written later land normally; the truncate's deletes do not apply to them
    DeltaTaskWriter third = factory.create();
    third.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 40, "later"));
    third.deleteKey(TestTables.row(RowKind.DELETE, 1, 30, null));
    commit(table, third.complete());
    third.close();
    expected.remove("1|30|after-again|null");
    expected.add("1|40|later|null");
    assertThat(read(table)).containsExactlyInAnyOrderElementsOf(expected);
    factory.close();
  }

  @Test
  void filesClosedByASchemaSwitchEarlierInTheCheckpointAreDroppedToo() throws Exception {
    Table table = TestTables.create(warehouse, BUCKETS);
    DeltaTaskWriter.Factory factory = DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, Set.of(1, 2), 0, 0);
    factory = factory.forSchema(table.schema(), FlinkSchemaUtil.convert(table.schema()));
    DeltaTaskWriter writer = factory.create();
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "old-schema"));
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 1, "old-schema"));
    table.updateSchema().addColumn("extra", Types.IntegerType.get()).commit();
    table.refresh();
    Schema evolved = table.schema();
    DeltaTaskWriter.Factory newer = factory.forSchema(evolved, FlinkSchemaUtil.convert(evolved));
    writer.evolve(newer); // closes the data files of schema 0 into the writer's result
    writer.upsert(row(1, 2, "new-schema", 5));
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
      writer.truncate(PartitionKeySelector.partitionOf(table.spec(), evolved, 1, bucket), 1);
    }
    writer.upsert(row(1, 3, "after", 7));
    commit(table, writer.complete());
    writer.close();
    newer.close();

    assertThat(read(table)).containsExactlyInAnyOrder("1|3|after|7", "2|1|old-schema|null");
  }

  private static void commit(Table table, WriteResult files) {
    RowDelta delta = table.newRowDelta();
    List.of(files.dataFiles()).forEach(delta::addRows);
    List.of(files.deleteFiles()).forEach(delta::addDeletes);
    delta.commit();
  }

  private static GenericRowData row(int shard, long id, String name, Integer extra) {
    return GenericRowData.ofKind(RowKind.UPDATE_AFTER, shard, id, StringData.fromString(name), extra);
  }

  private static List<String> read(Table table) throws Exception {
    table.refresh();
    boolean extra = table.schema().findField("extra") != null;
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(r.getField("shard_number") + "|" + r.getField("id") + "|" + r.getField("name") + "|"
            + (extra ? r.getField("extra") : null));
      }
    }
    return rows;
  }
}
