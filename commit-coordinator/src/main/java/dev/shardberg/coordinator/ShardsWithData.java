package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Which shards already hold data files: what makes an INSERT row insert-only or an upsert, and
 * whether a shard new to a restored state has rows to replace.
 */
public final class ShardsWithData {
  private ShardsWithData() {}

  /**
   * The shards (values of the identity-partitioned shard column, field 0 of the row type) that have
   * at least one data file in the current snapshot; null when the spec has no identity partition on
   * the shard column, in which case nothing is written insert-only.
   */
  static Set<Integer> in(Table table, String tableName, String shardColumn) {
    int shardFieldId = table.schema().findField(shardColumn).fieldId();
    Set<Integer> shards = new HashSet<>();
    if (table.currentSnapshot() == null) {
      return identityPosition(table.spec(), shardFieldId) < 0 ? null : shards;
    }
    Map<Integer, Integer> positionBySpec = new HashMap<>();
    table
        .specs()
        .forEach((id, spec) -> positionBySpec.put(id, identityPosition(spec, shardFieldId)));
    if (positionBySpec.get(table.spec().specId()) < 0) {
      return null;
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().ignoreResiduals().planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        int position = positionBySpec.getOrDefault(file.specId(), -1);
        if (position < 0) {
          return null; // a file of a spec without the shard partition: cannot tell its shard
        }
        shards.add(file.partition().get(position, Integer.class));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of table " + tableName, e);
    }
    return shards;
  }

  static int identityPosition(PartitionSpec spec, int sourceId) {
    List<PartitionField> fields = spec.fields();
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).sourceId() == sourceId && fields.get(i).transform().isIdentity()) {
        return i;
      }
    }
    return -1;
  }
}
