package dev.shardberg.coordinator;

import java.io.IOException;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.util.InstantiationUtil;

/**
 * Network type of {@link WriterResult}. Iceberg's content files are Java-serializable (that is how
 * engines ship them between tasks); we use that instead of Kryo's field reflection, which breaks on
 * records and JDK collections under Java 17. Only used on the wire between writers and coordinator,
 * never in checkpointed state.
 */
final class WriterResultTypeInfo extends TypeInformation<WriterResult> {
  private static final long serialVersionUID = 1L;

  static final WriterResultTypeInfo INSTANCE = new WriterResultTypeInfo();

  @Override
  public boolean isBasicType() {
    return false;
  }

  @Override
  public boolean isTupleType() {
    return false;
  }

  @Override
  public int getArity() {
    return 1;
  }

  @Override
  public int getTotalFields() {
    return 1;
  }

  @Override
  public Class<WriterResult> getTypeClass() {
    return WriterResult.class;
  }

  @Override
  public boolean isKeyType() {
    return false;
  }

  @Override
  public TypeSerializer<WriterResult> createSerializer(SerializerConfig config) {
    return WireSerializer.INSTANCE;
  }

  @Override
  @Deprecated
  public TypeSerializer<WriterResult> createSerializer(ExecutionConfig config) {
    return WireSerializer.INSTANCE;
  }

  @Override
  public String toString() {
    return "WriterResultTypeInfo";
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof WriterResultTypeInfo;
  }

  @Override
  public int hashCode() {
    return WriterResultTypeInfo.class.hashCode();
  }

  @Override
  public boolean canEqual(Object obj) {
    return obj instanceof WriterResultTypeInfo;
  }

  static final class WireSerializer extends TypeSerializerSingleton<WriterResult> {
    private static final long serialVersionUID = 1L;
    static final WireSerializer INSTANCE = new WireSerializer();

    @Override
    public boolean isImmutableType() {
      return true; // never mutated after the writer emits it
    }

    @Override
    public WriterResult createInstance() {
      return null;
    }

    @Override
    public WriterResult copy(WriterResult from) {
      return from;
    }

    @Override
    public WriterResult copy(WriterResult from, WriterResult reuse) {
      return from;
    }

    @Override
    public int getLength() {
      return -1;
    }

    @Override
    public void serialize(WriterResult record, DataOutputView target) throws IOException {
      byte[] bytes = InstantiationUtil.serializeObject(record);
      target.writeInt(bytes.length);
      target.write(bytes);
    }

    @Override
    public WriterResult deserialize(DataInputView source) throws IOException {
      byte[] bytes = new byte[source.readInt()];
      source.readFully(bytes);
      try {
        return InstantiationUtil.deserializeObject(
            bytes, Thread.currentThread().getContextClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IOException("Cannot read a writer result: class not found", e);
      }
    }

    @Override
    public WriterResult deserialize(WriterResult reuse, DataInputView source) throws IOException {
      return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
      int length = source.readInt();
      target.writeInt(length);
      target.write(source, length);
    }

    @Override
    public TypeSerializerSnapshot<WriterResult> snapshotConfiguration() {
      return new WireSerializerSnapshot();
    }
  }

  /** Public no-arg constructor: Flink instantiates snapshots reflectively. */
  public static final class WireSerializerSnapshot
      extends SimpleTypeSerializerSnapshot<WriterResult> {
    public WireSerializerSnapshot() {
      super(() -> WireSerializer.INSTANCE);
    }
  }
}
