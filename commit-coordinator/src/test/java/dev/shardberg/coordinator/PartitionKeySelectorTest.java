package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * The writers' key is the partition's path: a restored state and a restored checkpoint's routing
 * depend on it being exactly {@link PartitionSpec#partitionToPath}, however it is built.
 */
class PartitionKeySelectorTest {
  @Test
  void theKeyOfEveryShardAndBucketIsThePartitionsPath() {
    // the layout of every Shardberg table (TestTables.create)
    PartitionSpec spec =
        PartitionSpec.builderFor(TestTables.SCHEMA)
            .identity("shard_number")
            .bucket("id", 7)
            .build();
    PartitionKeySelector selector =
        new PartitionKeySelector(TestTables.SCHEMA, spec, TestTables.ROW_TYPE, false);
    int[] shards = {0, 1, 9, 10, 127, 4_095, -3, Integer.MAX_VALUE, Integer.MIN_VALUE};
    for (int shard : shards) {
      for (long id = -50; id < 50; id++) {
        RowData row = TestTables.row(RowKind.INSERT, shard, id, "n");
        String key = selector.getKey(row);
        PartitionKey expected = new PartitionKey(spec, TestTables.SCHEMA);
        expected.partition(
            new org.apache.iceberg.flink.RowDataWrapper(
                    TestTables.ROW_TYPE, TestTables.SCHEMA.asStruct())
                .wrap(row));
        assertThat(key).as("shard %d, id %d", shard, id).isEqualTo(spec.partitionToPath(expected));
      }
    }
  }

  @Test
  void namesThatNeedEscapingAndNullValuesGiveThePartitionsPathToo() {
    Schema schema =
        new Schema(
            Types.NestedField.optional(1, "shard nº/x", Types.IntegerType.get()),
            Types.NestedField.required(2, "id", Types.LongType.get()));
    PartitionSpec spec =
        PartitionSpec.builderFor(schema).identity("shard nº/x").bucket("id", 3).build();
    RowType rowType = FlinkSchemaUtil.convert(schema);
    PartitionKeySelector selector = new PartitionKeySelector(schema, spec, rowType, false);
    for (Integer shard : new Integer[] {null, 5, -5}) {
      for (long id = 0; id < 10; id++) {
        PartitionKey key = new PartitionKey(spec, schema);
        key.set(0, shard);
        key.set(1, (int) (id % 3));
        assertThat(selector.path(key)).isEqualTo(spec.partitionToPath(key));
      }
    }
  }

  @Test
  void aSpecWithAFieldThatIsNotAnIntIsKeyedByPartitionToPathItself() {
    Schema schema =
        new Schema(
            Types.NestedField.required(1, "region", Types.StringType.get()),
            Types.NestedField.required(2, "id", Types.LongType.get()));
    PartitionSpec spec = PartitionSpec.builderFor(schema).identity("region").build();
    PartitionKeySelector selector =
        new PartitionKeySelector(schema, spec, FlinkSchemaUtil.convert(schema), false);
    RowData row = GenericRowData.ofKind(RowKind.INSERT, StringData.fromString("eu west/1"), 5L);
    assertThat(selector.getKey(row)).isEqualTo("region=eu+west%2F1");
  }
}
