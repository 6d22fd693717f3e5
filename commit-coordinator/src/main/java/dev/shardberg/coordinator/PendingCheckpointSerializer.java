package dev.shardberg.coordinator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * State format of {@link PendingCheckpoint}. Version 1 layout, in order: checkpoint id (long),
 * Flink checkpoint id (long), data manifests (int count, then int length + bytes each), delete
 * manifests (same), referenced data files (int count, then UTF each), shard counts (int count, then
 * int shard, long added, long deleted each). Version 2 appends: staging Flink job id (UTF, empty
 * when unknown), insert-only scans (int count, then int shard, long snapshot id each). Version 3
 * appends the manifests of the delete files the commit removes (as the data manifests). Version 4
 * appends the owners' checks (int count, then int shard, long snapshot id each), the manifests of
 * the data files the commit removes (as the data manifests) and the shards the checkpoint removes
 * as a whole (int count, then int shard each; see {@link ShardCounts#removed}). Version 1 entries
 * restore with no staging job (lineage unknown) and no insert-only rows; versions 1 and 2 remove no
 * delete file; versions 1 to 3 carry no owner check, remove no data file and remove no shard.
 */
final class PendingCheckpointSerializer implements SimpleVersionedSerializer<PendingCheckpoint> {
  static final int VERSION = 4;
  static final PendingCheckpointSerializer INSTANCE = new PendingCheckpointSerializer();

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(PendingCheckpoint pending) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    out.writeLong(pending.checkpointId());
    out.writeLong(pending.flinkCheckpointId());
    writeBlobs(out, pending.dataManifests());
    writeBlobs(out, pending.deleteManifests());
    out.writeInt(pending.referencedDataFiles().size());
    for (String path : pending.referencedDataFiles()) {
      out.writeUTF(path);
    }
    out.writeInt(pending.shardCounts().size());
    for (var entry : pending.shardCounts().entrySet()) {
      out.writeInt(entry.getKey());
      out.writeLong(entry.getValue().addedRecords());
      out.writeLong(entry.getValue().deletedRecords());
    }
    out.writeUTF(pending.stagedBy() == null ? "" : pending.stagedBy()); // "": unknown (v1)
    out.writeInt(pending.insertOnlyScans().size());
    for (var entry : pending.insertOnlyScans().entrySet()) {
      out.writeInt(entry.getKey());
      out.writeLong(entry.getValue());
    }
    writeBlobs(out, pending.removedDeleteManifests());
    out.writeInt(pending.ownerChecks().size());
    for (var entry : pending.ownerChecks().entrySet()) {
      out.writeInt(entry.getKey());
      out.writeLong(entry.getValue());
    }
    writeBlobs(out, pending.removedDataManifests());
    // the shards whose rows this checkpoint removes as a whole (their MySQL table is gone)
    List<Integer> removed = new ArrayList<>();
    pending
        .shardCounts()
        .forEach(
            (shard, c) -> {
              if (c.removed()) {
                removed.add(shard);
              }
            });
    out.writeInt(removed.size());
    for (int shard : removed) {
      out.writeInt(shard);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public PendingCheckpoint deserialize(int version, byte[] serialized) throws IOException {
    if (version < 1 || version > VERSION) {
      throw new IOException(
          String.format(
              "Cannot restore a pending Shardberg checkpoint: state version %d is not supported by"
                  + " this release (it reads versions 1 to %d). Restore with the release that wrote the"
                  + " checkpoint, or start the pipeline without state.",
              version, VERSION));
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    long checkpointId = in.readLong();
    long flinkCheckpointId = in.readLong();
    List<byte[]> dataManifests = readBlobs(in);
    List<byte[]> deleteManifests = readBlobs(in);
    int referencedCount = in.readInt();
    List<String> referenced = new ArrayList<>(referencedCount);
    for (int i = 0; i < referencedCount; i++) {
      referenced.add(in.readUTF());
    }
    int shardCount = in.readInt();
    SortedMap<Integer, ShardCounts> counts = new TreeMap<>();
    for (int i = 0; i < shardCount; i++) {
      counts.put(in.readInt(), new ShardCounts(in.readLong(), in.readLong()));
    }
    String stagedBy = null;
    SortedMap<Integer, Long> scans = new TreeMap<>();
    if (version >= 2) {
      String job = in.readUTF();
      stagedBy = job.isEmpty() ? null : job;
      int scanCount = in.readInt();
      for (int i = 0; i < scanCount; i++) {
        scans.put(in.readInt(), in.readLong());
      }
    }
    List<byte[]> removedDeleteManifests = version >= 3 ? readBlobs(in) : List.of();
    SortedMap<Integer, Long> ownerChecks = new TreeMap<>();
    List<byte[]> removedDataManifests = List.of();
    if (version >= 4) {
      int checkCount = in.readInt();
      for (int i = 0; i < checkCount; i++) {
        ownerChecks.put(in.readInt(), in.readLong());
      }
      removedDataManifests = readBlobs(in);
      int removedCount = in.readInt();
      for (int i = 0; i < removedCount; i++) {
        counts.merge(in.readInt(), ShardCounts.REMOVED, ShardCounts::plus);
      }
    }
    return new PendingCheckpoint(
        checkpointId,
        flinkCheckpointId,
        dataManifests,
        deleteManifests,
        referenced,
        counts,
        stagedBy,
        scans,
        removedDeleteManifests,
        ownerChecks,
        removedDataManifests);
  }

  private static void writeBlobs(DataOutputSerializer out, List<byte[]> blobs) throws IOException {
    out.writeInt(blobs.size());
    for (byte[] blob : blobs) {
      out.writeInt(blob.length);
      out.write(blob);
    }
  }

  private static List<byte[]> readBlobs(DataInputDeserializer in) throws IOException {
    int count = in.readInt();
    List<byte[]> blobs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      byte[] blob = new byte[in.readInt()];
      in.readFully(blob);
      blobs.add(blob);
    }
    return blobs;
  }
}
