package dev.shardberg.coordinator;

import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.RowDataWrapper;

/**
 * Keys a change by the Iceberg partition it lands in ({@code shard_number}, bucket of the key). Since
 * the partition is a function of the equality columns, every change to one key reaches one writer,
 * in order, and each writer only ever opens files for the partitions hashed to it.
 */
final class PartitionKeySelector implements KeySelector<RowData, String> {
  private static final long serialVersionUID = 1L;

  private final Schema schema;
  private final PartitionSpec spec;
  private final RowType rowType;

  private transient PartitionKey partitionKey;
  private transient RowDataWrapper wrapper;

  PartitionKeySelector(Schema schema, PartitionSpec spec, RowType rowType) {
    this.schema = schema;
    this.spec = spec;
    this.rowType = rowType;
  }

  @Override
  public String getKey(RowData row) {
    if (partitionKey == null) {
      partitionKey = new PartitionKey(spec, schema);
      wrapper = new RowDataWrapper(rowType, schema.asStruct());
    }
    partitionKey.partition(wrapper.wrap(row));
    return spec.partitionToPath(partitionKey);
  }
}
