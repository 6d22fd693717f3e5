package dev.shardberg.coordinator;

import dev.shardberg.coordinator.owner.CommittedRowDeletes;
import dev.shardberg.coordinator.owner.CommittedRows;
import dev.shardberg.coordinator.owner.FilePosition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * Carries one checkpoint's deletes by position over another committer's change to their shards
 * ("rebase by key", {@code target.delete-mode: position}).
 *
 * <p>The partitions' owners wrote the checkpoint's deletes as positions in the files they knew.
 * When another committer (an external compaction, a Spark {@code DELETE}, another pipeline) changed
 * a shard after the owners' check, those positions may name rows that moved or files that left the
 * table. For each such shard the checkpoint's deletes of committed rows become keys again — the
 * rows at the positions each delete file adds to what its data file had before (the owners' earlier
 * deletes of the file, and what the table deleted of it at the owners' check, are not this
 * checkpoint's), the rows an owner's compaction in this checkpoint carried deletes to, and every
 * row of the checkpoint's new data files (an upsert replaces any copy of its key) — and those keys
 * are found in the table as the commit sees it ({@link CommittedRows}) and deleted there by
 * position, merged with each data file's current deletes. The checkpoint's new files and their own
 * deletes stay as written; an owner compaction of such a shard in this checkpoint is dropped (its
 * files may have left the table or changed under it; the owner compacts again later).
 */
final class CheckpointRebase {
  private CheckpointRebase() {}

  /** A checkpoint that cannot be carried over: the reason, for the refusal's message. */
  static final class Impossible extends Exception {
    Impossible(String message) {
      super(message);
    }
  }

  /** The files to commit instead, and what the rebase did (for the log). */
  record Result(TempManifests.Files files, String summary) {}

  /**
   * @param files the checkpoint's files as its writers staged them
   * @param checks the shards to carry over, each with the snapshot up to which its owners' check
   *     held (their knowledge of the shard's deletes before this checkpoint)
   */
  static Result rebase(
      Table table, String shardColumn, TempManifests.Files files, SortedMap<Integer, Long> checks)
      throws Impossible, IOException {
    Set<Integer> keyFieldIds = table.schema().identifierFieldIds();
    if (keyFieldIds.isEmpty()) {
      throw new Impossible("the table has no identifier fields to find rows by");
    }
    PartitionSpec spec = table.spec();
    org.apache.iceberg.types.Types.NestedField column = table.schema().findField(shardColumn);
    int shardPosition =
        column == null ? -1 : ShardsWithData.identityPosition(spec, column.fieldId());
    if (shardPosition < 0) {
      throw new Impossible(
          "the table's partition spec has no identity partition of column " + shardColumn);
    }
    Function<ContentFile<?>, Integer> shardOf =
        file -> {
          if (file.specId() != spec.specId()) {
            return null;
          }
          Object value = file.partition().get(shardPosition, Object.class);
          return value instanceof Integer shard ? shard : null;
        };
    Set<Integer> shards = checks.keySet();
    Function<ContentFile<?>, Boolean> carried =
        file -> {
          Integer shard = shardOf.apply(file);
          if (shard == null) {
            return file.specId() != spec.specId(); // an older spec's file: refused below
          }
          return shards.contains(shard);
        };

    // What the checkpoint adds in those shards: new rows, and an owner compaction's output.
    List<DataFile> keptData = new ArrayList<>();
    Map<String, DataFile> newData = new HashMap<>();
    Map<String, DataFile> compacted = new HashMap<>();
    for (DataFile file : files.dataFiles()) {
      if (!carried.apply(file)) {
        keptData.add(file);
      } else if (file.specId() != spec.specId()) {
        throw new Impossible("data file " + file.location() + " is of an older partition spec");
      } else if (isCompactionOutput(file)) {
        compacted.put(file.location(), file);
      } else {
        newData.put(file.location(), file);
        keptData.add(file);
      }
    }
    // Each data file's position deletes as this checkpoint's owners knew them before it.
    Map<String, List<DeleteFile>> replaced = new HashMap<>();
    List<DeleteFile> keptRemovedDeletes = new ArrayList<>();
    for (DeleteFile delete : files.removedDeletes()) {
      if (!carried.apply(delete)) {
        keptRemovedDeletes.add(delete);
        continue;
      }
      String dataFile = ContentFileUtil.referencedDataFileLocation(delete);
      if (dataFile != null) {
        replaced.computeIfAbsent(dataFile, f -> new ArrayList<>()).add(delete);
      }
    }
    Set<String> compactedPartitions = new HashSet<>();
    compacted.values().forEach(f -> compactedPartitions.add(spec.partitionToPath(f.partition())));
    List<DataFile> keptRemovedData = new ArrayList<>();
    int droppedCompactions = 0;
    // shards whose files leave the table with this checkpoint (read again, or removed): the files
    // its writers listed are the shard's as of their check; what the shard has now is listed below
    Set<Integer> removedShards = new TreeSet<>();
    for (DataFile file : files.removedData()) {
      if (!carried.apply(file)) {
        keptRemovedData.add(file);
      } else if (file.specId() == spec.specId()
          && compactedPartitions.contains(spec.partitionToPath(file.partition()))) {
        droppedCompactions++; // a source of an owner's compaction in this checkpoint
      } else if (shardOf.apply(file) == null) {
        throw new Impossible(
            "it removes " + file.location() + ", of an older partition spec, of a changed shard");
      } else {
        removedShards.add(shardOf.apply(file));
      }
    }
    // the writers' listing of their deletes does not apply to a removed shard either
    for (Integer shard : removedShards) {
      keptRemovedDeletes.removeIf(d -> shard.equals(shardOf.apply(d)));
      replaced.values().forEach(deletes -> deletes.removeIf(d -> shard.equals(shardOf.apply(d))));
    }
    int removedNow = 0;
    if (!removedShards.isEmpty()) {
      // every live file of those shards in the table the commit is built on leaves with it, as a
      // delete by shard would remove every committed row (another committer's files included),
      // with the delete files that apply to them; the checkpoint's own new files stay
      Set<String> listed = new HashSet<>();
      org.apache.iceberg.TableScan scan = table.newScan();
      if (table.currentSnapshot() != null) {
        try (CloseableIterable<FileScanTask> tasks =
            scan.filter(Expressions.in(shardColumn, removedShards.toArray())).planFiles()) {
          for (FileScanTask task : tasks) {
            if (!removedShards.contains(shardOf.apply(task.file()))) {
              continue;
            }
            if (listed.add(task.file().location())) {
              keptRemovedData.add(task.file());
              removedNow++;
            }
            for (DeleteFile delete : task.deletes()) {
              if (removedShards.contains(shardOf.apply(delete)) && listed.add(delete.location())) {
                keptRemovedDeletes.add(delete);
              }
            }
          }
        }
      }
    }

    Map<Integer, Map<String, List<DeleteFile>>> atCheck = new HashMap<>();
    BaseDeleteLoader loader = new BaseDeleteLoader(delete -> table.io().newInputFile(delete));
    // partition path → (partition, keys this checkpoint changed)
    Map<String, StructLike> partitions = new LinkedHashMap<>();
    Map<String, List<Record>> keys = new HashMap<>();
    List<DeleteFile> keptDeletes = new ArrayList<>();
    int deletedPositions = 0;
    for (DeleteFile delete : files.deleteFiles()) {
      if (!carried.apply(delete)) {
        keptDeletes.add(delete);
        continue;
      }
      if (delete.content() != FileContent.POSITION_DELETES) {
        throw new Impossible("delete file " + delete.location() + " is not a delete by position");
      }
      String dataFile = ContentFileUtil.referencedDataFileLocation(delete);
      if (dataFile == null) {
        throw new Impossible("delete file " + delete.location() + " does not name its data file");
      }
      if (newData.containsKey(dataFile)) {
        keptDeletes.add(delete); // rows of this checkpoint's own new file
        continue;
      }
      if (removedShards.contains(shardOf.apply(delete))) {
        continue; // a delete of a committed row of a removed shard: its file leaves
      }
      NavigableSet<Long> positions = positions(loader, List.of(delete), dataFile);
      if (!compacted.containsKey(dataFile)) {
        List<DeleteFile> before = new ArrayList<>(replaced.getOrDefault(dataFile, List.of()));
        int shard = shardOf.apply(delete);
        before.addAll(
            atCheck
                .computeIfAbsent(shard, s -> deletesAt(table, shardColumn, s, checks.get(s)))
                .getOrDefault(dataFile, List.of()));
        if (!before.isEmpty()) {
          positions.removeAll(positions(loader, before, dataFile));
        }
      }
      deletedPositions += positions.size();
      String path = spec.partitionToPath(delete.partition());
      partitions.putIfAbsent(path, delete.partition());
      keys.computeIfAbsent(path, p -> new ArrayList<>())
          .addAll(CommittedRows.keysAt(table, dataFile, positions, keyFieldIds));
    }
    for (DataFile file : newData.values()) {
      if (removedShards.contains(shardOf.apply(file))) {
        continue; // no committed row of a removed shard stays for its rows to replace
      }
      String path = spec.partitionToPath(file.partition());
      partitions.putIfAbsent(path, file.partition());
      NavigableSet<Long> all = new TreeSet<>();
      for (long i = 0; i < file.recordCount(); i++) {
        all.add(i);
      }
      keys.computeIfAbsent(path, p -> new ArrayList<>())
          .addAll(CommittedRows.keysAt(table, file.location(), all, keyFieldIds));
    }

    // Where those keys live in the table the commit is built on, deleted there.
    Long current = table.currentSnapshot() == null ? null : table.currentSnapshot().snapshotId();
    CommittedRowDeletes deletes = new CommittedRowDeletes(table);
    Map<String, List<DeleteFile>> previous = new HashMap<>();
    int found = 0;
    for (Map.Entry<String, StructLike> partition : partitions.entrySet()) {
      List<Record> changed = keys.getOrDefault(partition.getKey(), List.of());
      if (changed.isEmpty()) {
        continue;
      }
      Integer shard = partition.getValue().get(shardPosition, Integer.class);
      CommittedRows.Partition live =
          CommittedRows.read(
              table,
              current,
              partition.getValue(),
              keyFieldIds,
              Expressions.equal(shardColumn, shard));
      Set<String> touched = new HashSet<>();
      for (Record key : changed) {
        FilePosition at = live.rows().get(key);
        if (at != null && touched.add(at.file() + "#" + at.position())) {
          deletes.delete(at, spec, partition.getValue());
          previous.putIfAbsent(
              at.file(), live.positionDeletes().getOrDefault(at.file(), List.of()));
          found++;
        }
      }
    }
    DeleteWriteResult written =
        deletes.write(
            format ->
                OutputFileFactory.builderFor(table, 0, 0).format(format).suffix("rebased").build(),
            previous);
    keptDeletes.addAll(written.deleteFiles());
    keptRemovedDeletes.addAll(written.rewrittenDeleteFiles());
    String summary =
        String.format(
                "%d deleted row(s) and %d new data file(s) of shard(s) %s found by key: %d committed"
                    + " row(s) deleted where they are now, in %d delete file(s)%s",
                deletedPositions,
                newData.size(),
                shards,
                found,
                written.deleteFiles().size(),
                droppedCompactions == 0
                    ? ""
                    : String.format(
                        "; the owners' compaction of %d data file(s) in it is dropped",
                        droppedCompactions))
            + (removedShards.isEmpty()
                ? ""
                : String.format(
                    "; shard(s) %s removed: the %d data file(s) they have now leave the table",
                    removedShards, removedNow));
    return new Result(
        new TempManifests.Files(keptData, keptDeletes, keptRemovedDeletes, keptRemovedData),
        summary);
  }

  /** A data file an owner's compaction wrote ({@link PartitionOwner}'s file name suffix). */
  static boolean isCompactionOutput(DataFile file) {
    String name = file.location().substring(file.location().lastIndexOf('/') + 1);
    int dot = name.lastIndexOf('.');
    return (dot < 0 ? name : name.substring(0, dot))
        .endsWith("-" + PartitionOwner.COMPACTED_SUFFIX);
  }

  private static NavigableSet<Long> positions(
      BaseDeleteLoader loader, List<DeleteFile> deletes, String dataFile) {
    NavigableSet<Long> positions = new TreeSet<>();
    Set<String> read = new HashSet<>();
    for (DeleteFile delete : deletes) {
      if (read.add(delete.location())) { // one at a time: a deletion vector is read alone
        PositionDeleteIndex index = loader.loadPositionDeletes(List.of(delete), dataFile);
        index.forEach(positions::add);
      }
    }
    return positions;
  }

  /** The position deletes of each data file of {@code shard} at snapshot {@code snapshotId}. */
  private static Map<String, List<DeleteFile>> deletesAt(
      Table table, String shardColumn, int shard, Long snapshotId) {
    Map<String, List<DeleteFile>> deletes = new TreeMap<>();
    if (snapshotId == null || snapshotId == PendingCheckpoint.NO_SNAPSHOT) {
      return deletes;
    }
    if (table.snapshot(snapshotId) == null) {
      throw new IllegalStateException(
          String.format(
              "Cannot carry deletes of shard %d of table %s over: snapshot %d, where its owners"
                  + " checked it, has expired",
              shard, table.name(), snapshotId));
    }
    try (CloseableIterable<FileScanTask> tasks =
        table
            .newScan()
            .useSnapshot(snapshotId)
            .filter(Expressions.equal(shardColumn, shard))
            .planFiles()) {
      for (FileScanTask task : tasks) {
        List<DeleteFile> positions = new ArrayList<>();
        for (DeleteFile delete : task.deletes()) {
          if (delete.content() == FileContent.POSITION_DELETES) {
            positions.add(delete);
          }
        }
        if (!positions.isEmpty()) {
          deletes.put(task.file().location(), positions);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return deletes;
  }
}
