package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.types.RowKind;
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
 * A writer that moves to a newer schema of the table in the middle of a checkpoint (schema
 * evolution, docs/schema-evolution.md): keys written before the switch are still deleted by
 * position when they change after it, files of both schemas commit in one snapshot, and the table
 * reads exactly the last version of each key, the new column NULL in rows written before it
 * existed.
 */
class DeltaTaskWriterSchemaChangeTest {
  @TempDir Path warehouse;

  @Test
  void aKeyWrittenBeforeTheSwitchAndChangedAfterItIsReplacedNotDuplicated() throws Exception {
    Table table = TestTables.create(warehouse, 2);
    DeltaTaskWriter.Factory factory =
        DeltaTaskWriter.factory(table, TestTables.ROW_TYPE, Set.of(1, 2), 0, 0);
    factory = factory.forSchema(table.schema(), FlinkSchemaUtil.convert(table.schema()));
    DeltaTaskWriter writer = factory.create();
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 1, "a"));
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 1, 2, "b"));
    writer.upsert(TestTables.row(RowKind.UPDATE_AFTER, 2, 5, "e"));

    table.updateSchema().addColumn("extra", Types.IntegerType.get()).commit();
    table.refresh();
    Schema evolved = table.schema();
    writer.evolve(factory.forSchema(evolved, FlinkSchemaUtil.convert(evolved)));
    writer.upsert(
        row(1, 1, "a2", 7)); // written before the switch: a position delete of the old row
    writer.deleteKey(row(1, 2, null, null));
    writer.upsert(row(1, 3, "c", 9));
    WriteResult files = writer.complete();

    assertThat(files.dataFiles()).as("files of both schemas").hasSizeGreaterThanOrEqualTo(2);
    RowDelta delta = table.newRowDelta();
    List.of(files.dataFiles()).forEach(delta::addRows);
    List.of(files.deleteFiles()).forEach(delta::addDeletes);
    delta.commit();

    assertThat(read(table)).containsExactlyInAnyOrder("1|1|a2|7", "1|3|c|9", "2|5|e|null");
  }

  private static GenericRowData row(int shard, long id, String name, Integer extra) {
    return GenericRowData.ofKind(
        RowKind.UPDATE_AFTER, shard, id, name == null ? null : StringData.fromString(name), extra);
  }

  private static List<String> read(Table table) throws Exception {
    table.refresh();
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(
            r.getField("shard_number")
                + "|"
                + r.getField("id")
                + "|"
                + r.getField("name")
                + "|"
                + r.getField("extra"));
      }
    }
    return rows;
  }
}
