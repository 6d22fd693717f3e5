package dev.shardberg.coordinator.maintenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The health of one snapshot of the table, per partition and per shard, from its manifests: what
 * compaction plans on, what {@code status} and the Flink metrics show.
 *
 * @param snapshotId the snapshot read; -1 for a table without snapshots
 * @param lastCompactionMillis per shard, the time of the newest compaction in the retained history
 */
public record TableHealth(
    long snapshotId,
    List<PartitionHealth> partitions,
    SortedMap<Integer, Long> lastCompactionMillis) {

  /** Summary key of a compaction snapshot: the shards it rewrote, comma separated. */
  public static final String COMPACTED_SHARDS = "shardberg.compacted-shards";

  /** Summary key marking a maintenance commit: {@code compaction}, {@code rewrite-manifests}. */
  public static final String MAINTENANCE = "shardberg.maintenance";

  /** Per shard: the sums over its partitions. */
  public record ShardHealth(
      int shard,
      int partitions,
      int dataFiles,
      int equalityDeleteFiles,
      int positionDeleteFiles,
      long dataBytes,
      long dataRecords,
      long deleteRecords,
      OptionalLong lastCompactionMillis) {

    public long averageDataFileBytes() {
      return dataFiles == 0 ? 0 : dataBytes / dataFiles;
    }

    /** See {@link PartitionHealth#readPerLiveRow()}. */
    public double readPerLiveRow() {
      return PartitionHealth.readPerLiveRow(dataRecords, deleteRecords);
    }
  }

  public static TableHealth of(Table table, long smallFileBytes) {
    Snapshot snapshot = table.currentSnapshot();
    return snapshot == null
        ? new TableHealth(-1, List.of(), new TreeMap<>())
        : of(table, snapshot, smallFileBytes);
  }

  public static TableHealth of(Table table, Snapshot snapshot, long smallFileBytes) {
    Map<Integer, Integer> shardPositionBySpec = new HashMap<>();
    int shardFieldId = table.schema().columns().get(0).fieldId();
    table
        .specs()
        .forEach((id, spec) -> shardPositionBySpec.put(id, shardPosition(spec, shardFieldId)));
    Map<String, PartitionHealth> byPartition = new LinkedHashMap<>();
    try {
      for (ManifestFile manifest : snapshot.dataManifests(table.io())) {
        try (ManifestReader<DataFile> reader =
            ManifestFiles.read(manifest, table.io(), table.specs())) {
          for (DataFile file : reader) {
            add(byPartition, table, shardPositionBySpec, file, smallFileBytes);
          }
        }
      }
      for (ManifestFile manifest : snapshot.deleteManifests(table.io())) {
        try (ManifestReader<DeleteFile> reader =
            ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
          for (DeleteFile file : reader) {
            add(byPartition, table, shardPositionBySpec, file, smallFileBytes);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the manifests of table " + table.name(), e);
    }
    return new TableHealth(
        snapshot.snapshotId(),
        new ArrayList<>(byPartition.values()),
        lastCompactions(table, snapshot));
  }

  /** Newest compaction per shard along the snapshot's retained ancestry. */
  private static SortedMap<Integer, Long> lastCompactions(Table table, Snapshot from) {
    SortedMap<Integer, Long> last = new TreeMap<>();
    for (Snapshot s = from;
        s != null;
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      String shards = s.summary() == null ? null : s.summary().get(COMPACTED_SHARDS);
      if (shards == null || shards.isBlank()) {
        continue;
      }
      for (String shard : shards.split(",")) {
        last.putIfAbsent(Integer.parseInt(shard.trim()), s.timestampMillis());
      }
    }
    return last;
  }

  private static void add(
      Map<String, PartitionHealth> byPartition,
      Table table,
      Map<Integer, Integer> shardPositionBySpec,
      ContentFile<?> file,
      long smallFileBytes) {
    PartitionSpec spec = table.specs().get(file.specId());
    String path = spec.partitionToPath(file.partition());
    int position = shardPositionBySpec.getOrDefault(file.specId(), -1);
    Integer shard = position < 0 ? null : file.partition().get(position, Integer.class);
    boolean data = file.content() == FileContent.DATA;
    PartitionHealth one =
        new PartitionHealth(
            file.specId(),
            path,
            shard,
            data ? 1 : 0,
            data && file.fileSizeInBytes() < smallFileBytes ? 1 : 0,
            data ? file.fileSizeInBytes() : 0,
            data ? file.recordCount() : 0,
            file.content() == FileContent.EQUALITY_DELETES ? 1 : 0,
            file.content() == FileContent.POSITION_DELETES ? 1 : 0,
            data ? 0 : file.fileSizeInBytes(),
            data ? 0 : file.recordCount());
    byPartition.merge(file.specId() + "/" + path, one, PartitionHealth::plus);
  }

  /** Position of the identity field of the shard column in the spec, -1 if it has none. */
  static int shardPosition(PartitionSpec spec, int shardFieldId) {
    List<PartitionField> fields = spec.fields();
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).sourceId() == shardFieldId && fields.get(i).transform().isIdentity()) {
        return i;
      }
    }
    return -1;
  }

  /** Per shard, partitions without a shard left out. */
  public SortedMap<Integer, ShardHealth> byShard() {
    SortedMap<Integer, ShardHealth> shards = new TreeMap<>();
    for (PartitionHealth p : partitions) {
      if (p.shard() == null) {
        continue;
      }
      ShardHealth one =
          new ShardHealth(
              p.shard(),
              1,
              p.dataFiles(),
              p.equalityDeleteFiles(),
              p.positionDeleteFiles(),
              p.dataBytes(),
              p.dataRecords(),
              p.deleteRecords(),
              OptionalLong.empty());
      shards.merge(p.shard(), one, TableHealth::plus);
    }
    lastCompactionMillis.forEach(
        (shard, millis) ->
            shards.computeIfPresent(
                shard,
                (s, h) ->
                    new ShardHealth(
                        h.shard(),
                        h.partitions(),
                        h.dataFiles(),
                        h.equalityDeleteFiles(),
                        h.positionDeleteFiles(),
                        h.dataBytes(),
                        h.dataRecords(),
                        h.deleteRecords(),
                        OptionalLong.of(millis))));
    return shards;
  }

  private static ShardHealth plus(ShardHealth a, ShardHealth b) {
    return new ShardHealth(
        a.shard(),
        a.partitions() + b.partitions(),
        a.dataFiles() + b.dataFiles(),
        a.equalityDeleteFiles() + b.equalityDeleteFiles(),
        a.positionDeleteFiles() + b.positionDeleteFiles(),
        a.dataBytes() + b.dataBytes(),
        a.dataRecords() + b.dataRecords(),
        a.deleteRecords() + b.deleteRecords(),
        OptionalLong.empty());
  }

  public int dataFiles() {
    return partitions.stream().mapToInt(PartitionHealth::dataFiles).sum();
  }

  public int deleteFiles() {
    return partitions.stream().mapToInt(PartitionHealth::deleteFiles).sum();
  }
}
