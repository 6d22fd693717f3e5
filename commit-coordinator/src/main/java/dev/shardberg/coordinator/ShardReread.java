package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.util.StructLikeWrapper;

/**
 * Shards read again from a fresh snapshot in a restored job (excluded for a while, then included
 * again: the source snapshots them as newly added tables) replace their rows: the coordinator adds,
 * to the checkpoint that holds the first snapshot rows of such a shard, an equality delete by the
 * shard column alone for every partition of it that holds files. Those deletes carry that
 * checkpoint's sequence number, so they remove every older row of the shard and none that the new
 * snapshot writes (in that checkpoint or later). Triggered by the snapshot rows themselves, not by
 * the restore alone: a source that does not read the shard again (its position survived in the
 * restored state) leaves the rows as they are rather than emptying the shard. (A shard that is empty
 * on MySQL when read again sends no row, so its old rows stay.)
 */
final class ShardReread {
  private ShardReread() {}

  /** The delete files that empty {@code shards} in {@code table} as of now (none for a shard without files). */
  static WriteResult truncations(Table table, SortedSet<Integer> shards, String shardColumn) throws IOException {
    table.refresh();
    if (shards.isEmpty() || table.currentSnapshot() == null) {
      return WriteResult.builder().build();
    }
    Map<Integer, Map<StructLikeWrapper, PartitionKey>> partitions = new HashMap<>();
    int specId = table.spec().specId();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().filter(Expressions.in(shardColumn, shards.toArray())).ignoreResiduals().planFiles()) {
      for (FileScanTask task : tasks) {
        add(partitions, task.file(), specId, table);
        for (DeleteFile delete : task.deletes()) {
          add(partitions, delete, specId, table);
        }
      }
    }
    List<DeleteFile> deletes = new ArrayList<>();
    Set<Integer> identifier = table.schema().identifierFieldIds();
    try (DeltaTaskWriter.Factory factory =
        DeltaTaskWriter.factory(table, FlinkSchemaUtil.convert(table.schema()), identifier, 0, 0)) {
      DeltaTaskWriter writer = factory.create();
      for (Map.Entry<Integer, Map<StructLikeWrapper, PartitionKey>> shard : partitions.entrySet()) {
        for (PartitionKey partition : shard.getValue().values()) {
          writer.truncate(partition, shard.getKey());
        }
      }
      WriteResult written = writer.complete();
      deletes.addAll(List.of(written.deleteFiles()));
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    return WriteResult.builder().addDeleteFiles(deletes).build();
  }

  private static void add(
      Map<Integer, Map<StructLikeWrapper, PartitionKey>> partitions, ContentFile<?> file, int specId, Table table) {
    if (file.specId() != specId) {
      throw new IllegalStateException(
          String.format(
              "Cannot replace the rows of a shard read again in table %s: file %s is of partition spec %d, not the"
                  + " table's spec %d; Shardberg tables keep one spec",
              table.name(), file.location(), file.specId(), specId));
    }
    StructLike partition = file.partition();
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    for (int i = 0; i < table.spec().fields().size(); i++) {
      key.set(i, partition.get(i, Object.class));
    }
    int shard = partition.get(0, Integer.class);
    partitions
        .computeIfAbsent(shard, s -> new HashMap<>())
        .putIfAbsent(StructLikeWrapper.forType(table.spec().partitionType()).set(key), key);
  }
}
