package dev.shardberg.coordinator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * State format of {@link CoordinatorState}. Version 1 layout, in order: pipeline id (UTF),
 * checkpoint offset (long), Flink checkpoint id (long), lineage (int count, then UTF run + long
 * Flink checkpoint each, oldest first), known shards (int count, -1 when not known, then int each),
 * pending entries (int count, then each as {@link PendingCheckpointSerializer} writes it with its
 * version: int version, int length, bytes). Version 2 adds, at the end, the Flink job id of the
 * state (UTF, empty when not known) and the captured shards (int count, then int each); version 1
 * is read with neither.
 */
final class CoordinatorStateSerializer implements SimpleVersionedSerializer<CoordinatorState> {
  static final int VERSION = 2;
  static final CoordinatorStateSerializer INSTANCE = new CoordinatorStateSerializer();

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(CoordinatorState state) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(512);
    out.writeUTF(state.pipelineId());
    out.writeLong(state.checkpointOffset());
    out.writeLong(state.flinkCheckpointId());
    out.writeInt(state.lineage().size());
    for (Map.Entry<String, Long> run : state.lineage().entrySet()) {
      out.writeUTF(run.getKey());
      out.writeLong(run.getValue());
    }
    if (state.knownShards() == null) {
      out.writeInt(-1);
    } else {
      out.writeInt(state.knownShards().size());
      for (int shard : state.knownShards()) {
        out.writeInt(shard);
      }
    }
    out.writeInt(state.pending().size());
    for (PendingCheckpoint entry : state.pending()) {
      SimpleVersionedSerialization.writeVersionAndSerialize(
          PendingCheckpointSerializer.INSTANCE, entry, out);
    }
    out.writeUTF(state.planId() == null ? "" : state.planId());
    out.writeInt(state.capturedShards().size());
    for (int shard : state.capturedShards()) {
      out.writeInt(shard);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public CoordinatorState deserialize(int version, byte[] serialized) throws IOException {
    if (version != 1 && version != VERSION) {
      throw new IOException(
          String.format(
              "Cannot restore the Shardberg coordinator: state version %d is not supported by this release (it"
                  + " reads versions 1 to %d). Restore with the Shardberg release that wrote this checkpoint, or start"
                  + " the pipeline without state.",
              version, VERSION));
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    String pipelineId = in.readUTF();
    long offset = in.readLong();
    long flinkCheckpointId = in.readLong();
    Map<String, Long> lineage = new LinkedHashMap<>();
    for (int i = in.readInt(); i > 0; i--) {
      lineage.put(in.readUTF(), in.readLong());
    }
    int known = in.readInt();
    SortedSet<Integer> knownShards = known < 0 ? null : new TreeSet<>();
    for (int i = 0; i < known; i++) {
      knownShards.add(in.readInt());
    }
    List<PendingCheckpoint> pending = new ArrayList<>();
    for (int i = in.readInt(); i > 0; i--) {
      pending.add(
          SimpleVersionedSerialization.readVersionAndDeSerialize(
              PendingCheckpointSerializer.INSTANCE, in));
    }
    SortedSet<Integer> captured = new TreeSet<>();
    String planId = null;
    if (version >= 2) {
      planId = in.readUTF();
      planId = planId.isEmpty() ? null : planId;
      for (int i = in.readInt(); i > 0; i--) {
        captured.add(in.readInt());
      }
    }
    return new CoordinatorState(
        pipelineId, offset, flinkCheckpointId, lineage, knownShards, captured, planId, pending);
  }
}
