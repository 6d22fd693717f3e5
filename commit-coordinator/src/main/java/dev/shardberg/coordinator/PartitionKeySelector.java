package dev.shardberg.coordinator;

import java.util.List;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.transforms.PartitionSpecVisitor;

/**
 * Keys a change by the Iceberg partition it lands in ({@code shard_number}, bucket of the key).
 * Since the partition is a function of the equality columns, every change to one key reaches one
 * writer, in order, and each writer only ever opens files for the partitions hashed to it. A
 * truncate marker ({@link ShardbergSink#TRUNCATE_MARKER}) names its partition itself and goes to
 * the same writer, in order with the partition's rows.
 */
final class PartitionKeySelector implements KeySelector<RowData, String> {
  private static final long serialVersionUID = 1L;

  private final Schema schema;
  private final PartitionSpec spec;
  private final RowType rowType;
  private final boolean versionedRows;

  private transient PartitionKey partitionKey;
  private transient RowDataWrapper wrapper;

  /**
   * Per partition field, its escaped name and '=' as {@link PartitionSpec#partitionToPath} writes
   * them, when every field's value is an int (identity of the shard column, the key's bucket: every
   * Shardberg table); null otherwise. The key is then built from them without partitionToPath's
   * per-row formatting and URL encoding, which took ~6 % of the job's CPU in the snapshot phase (a
   * profile of the bench), into the very same string.
   */
  private transient String[] intFieldPrefixes;

  private transient boolean prefixesChecked;

  PartitionKeySelector(Schema schema, PartitionSpec spec, RowType rowType, boolean versionedRows) {
    this.schema = schema;
    this.spec = spec;
    this.rowType = rowType;
    this.versionedRows = versionedRows;
  }

  @Override
  public String getKey(RowData row) {
    if (versionedRows && isTruncateMarker(row)) {
      return spec.partitionToPath(partitionOf(spec, schema, row.getInt(0), row.getInt(1)));
    }
    if (partitionKey == null) {
      partitionKey = new PartitionKey(spec, schema);
      wrapper = new RowDataWrapper(rowType, schema.asStruct());
    }
    partitionKey.partition(wrapper.wrap(row));
    return path(partitionKey);
  }

  /** {@link PartitionSpec#partitionToPath} of {@code key}, built directly for int fields. */
  String path(PartitionKey key) {
    if (!prefixesChecked) {
      intFieldPrefixes = intFieldPrefixes(spec);
      prefixesChecked = true;
    }
    if (intFieldPrefixes == null) {
      return spec.partitionToPath(key);
    }
    StringBuilder path = new StringBuilder(32);
    for (int i = 0; i < intFieldPrefixes.length; i++) {
      if (i > 0) {
        path.append('/');
      }
      Integer value = key.get(i, Integer.class);
      path.append(intFieldPrefixes[i]).append(value == null ? "null" : value.toString());
    }
    return path.toString();
  }

  private static String[] intFieldPrefixes(PartitionSpec spec) {
    List<org.apache.iceberg.types.Types.NestedField> fields = spec.partitionType().fields();
    String[] prefixes = new String[fields.size()];
    for (int i = 0; i < prefixes.length; i++) {
      if (fields.get(i).type().typeId() != org.apache.iceberg.types.Type.TypeID.INTEGER) {
        return null;
      }
      // the name escaped as partitionToPath escapes it: its own path of a one-field key
      prefixes[i] =
          java.net.URLEncoder.encode(fields.get(i).name(), java.nio.charset.StandardCharsets.UTF_8)
              + "=";
    }
    return prefixes;
  }

  /** True for a versioned row that is a truncate marker ({@link ShardbergSink#TRUNCATE_MARKER}). */
  static boolean isTruncateMarker(RowData row) {
    return row.getArity() == 3 && row.getInt(2) == ShardbergSink.TRUNCATE_MARKER;
  }

  /**
   * Partition (shard, bucket) of a spec {@code identity(shard column), bucket(B, key column)}, the
   * layout of every Shardberg table (the shard column is field 0 of the row type).
   */
  static PartitionKey partitionOf(PartitionSpec spec, Schema schema, int shard, int bucket) {
    List<Integer> buckets =
        PartitionSpecVisitor.visit(
            spec,
            new PartitionSpecVisitor<Integer>() {
              @Override
              public Integer identity(String sourceName, int sourceId) {
                return 0;
              }

              @Override
              public Integer bucket(String sourceName, int sourceId, int numBuckets) {
                return numBuckets;
              }

              @Override
              public Integer unknown(
                  int fieldId, String sourceName, int sourceId, String transform) {
                return -1;
              }
            });
    PartitionKey key = new PartitionKey(spec, schema);
    for (int i = 0; i < buckets.size(); i++) {
      int n = buckets.get(i);
      if (n == 0) {
        key.set(i, shard);
      } else if (n > 0 && bucket >= 0 && bucket < n) {
        key.set(i, bucket);
      } else {
        throw new IllegalArgumentException(
            String.format(
                "Cannot truncate bucket %d of shard %d: the table's spec %s is not identity(shard), bucket(B, key)"
                    + " with that bucket",
                bucket, shard, spec));
      }
    }
    return key;
  }
}
