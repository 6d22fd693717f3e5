package dev.shardberg.router.tagging;

import java.io.IOException;
import java.util.Arrays;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.types.RowKind;

/**
 * Rows whose layout follows the Iceberg table's schema as it evolves: a row of schema version
 * {@code v} holds the columns of Iceberg schema {@code v} in order (shard column first) and then
 * {@code v} itself as a last INT field. Iceberg only appends columns (a dropped MySQL column stays
 * in the table), so a column keeps its position in every later version and a reader pads an older
 * row with NULLs.
 *
 * <p>Flink's {@code RowDataSerializer} has a fixed arity and fixed field types, so rows that change
 * shape in a running job travel with {@link #TYPE_INFO}: every field is written with a tag of its
 * internal class (the classes Shardberg's type mapping produces).
 */
public final class VersionedRows {
  private VersionedRows() {}

  /** The type of versioned rows between the shard tagger and the writers. */
  public static final TypeInformation<RowData> TYPE_INFO = new Info();

  /** The schema version of a versioned row (its last field). */
  public static int schemaId(RowData row) {
    return row.getInt(row.getArity() - 1);
  }

  /**
   * The "schema version" of a truncate marker: {@code [shard, bucket, TRUNCATE_MARKER]}, kind
   * DELETE. It removes every row of partition (shard, bucket) written before it, committed or not;
   * the rows after it stay. The commit coordinator's sink reads the same value ({@code
   * ShardbergSink.TRUNCATE_MARKER}; the job checks that both agree).
   */
  public static final int TRUNCATE_MARKER = -1;

  /**
   * A truncate marker for bucket {@code bucket} of {@code shard} (see {@link #TRUNCATE_MARKER}).
   */
  public static RowData truncateMarker(int shard, int bucket) {
    return GenericRowData.ofKind(RowKind.DELETE, shard, bucket, TRUNCATE_MARKER);
  }

  private static final byte NULL = 0;
  private static final byte INT = 1;
  private static final byte LONG = 2;
  private static final byte FLOAT = 3;
  private static final byte DOUBLE = 4;
  private static final byte BOOLEAN = 5;
  private static final byte STRING = 6;
  private static final byte DECIMAL = 7;
  private static final byte TIMESTAMP = 8;
  private static final byte BYTES = 9;
  private static final byte SHORT = 10;
  private static final byte BYTE = 11;

  /**
   * Writes rows field by field with a tag per value; stateless, so one instance serves every
   * thread.
   */
  public static final class Serializer extends TypeSerializer<RowData> {
    private static final long serialVersionUID = 1L;
    static final Serializer INSTANCE = new Serializer();

    @Override
    public boolean isImmutableType() {
      return false;
    }

    @Override
    public TypeSerializer<RowData> duplicate() {
      return this;
    }

    @Override
    public RowData createInstance() {
      return new GenericRowData(0);
    }

    @Override
    public RowData copy(RowData from) {
      GenericRowData source = (GenericRowData) from;
      GenericRowData copy = new GenericRowData(source.getRowKind(), source.getArity());
      for (int i = 0; i < source.getArity(); i++) {
        Object v = source.getField(i);
        copy.setField(i, v instanceof byte[] b ? Arrays.copyOf(b, b.length) : v);
      }
      return copy;
    }

    @Override
    public RowData copy(RowData from, RowData reuse) {
      return copy(from);
    }

    @Override
    public int getLength() {
      return -1;
    }

    @Override
    public void serialize(RowData record, DataOutputView out) throws IOException {
      GenericRowData row = (GenericRowData) record;
      out.writeByte(row.getRowKind().toByteValue());
      out.writeInt(row.getArity());
      for (int i = 0; i < row.getArity(); i++) {
        Object v = row.getField(i);
        if (v == null) {
          out.writeByte(NULL);
        } else if (v instanceof Integer x) {
          out.writeByte(INT);
          out.writeInt(x);
        } else if (v instanceof Long x) {
          out.writeByte(LONG);
          out.writeLong(x);
        } else if (v instanceof Float x) {
          out.writeByte(FLOAT);
          out.writeInt(Float.floatToRawIntBits(x));
        } else if (v instanceof Double x) {
          out.writeByte(DOUBLE);
          out.writeLong(Double.doubleToRawLongBits(x));
        } else if (v instanceof Boolean x) {
          out.writeByte(BOOLEAN);
          out.writeBoolean(x);
        } else if (v instanceof StringData x) {
          out.writeByte(STRING);
          writeBytes(out, x.toBytes());
        } else if (v instanceof DecimalData x) {
          out.writeByte(DECIMAL);
          out.writeInt(x.precision());
          out.writeInt(x.scale());
          writeBytes(out, x.toUnscaledBytes());
        } else if (v instanceof TimestampData x) {
          out.writeByte(TIMESTAMP);
          out.writeLong(x.getMillisecond());
          out.writeInt(x.getNanoOfMillisecond());
        } else if (v instanceof byte[] x) {
          out.writeByte(BYTES);
          writeBytes(out, x);
        } else if (v instanceof Short x) {
          out.writeByte(SHORT);
          out.writeShort(x);
        } else if (v instanceof Byte x) {
          out.writeByte(BYTE);
          out.writeByte(x);
        } else {
          throw new IOException(
              "Cannot serialize a value of "
                  + v.getClass().getName()
                  + " at field "
                  + i
                  + " of a versioned row");
        }
      }
    }

    private static void writeBytes(DataOutputView out, byte[] bytes) throws IOException {
      out.writeInt(bytes.length);
      out.write(bytes);
    }

    private static byte[] readBytes(DataInputView in) throws IOException {
      byte[] bytes = new byte[in.readInt()];
      in.readFully(bytes);
      return bytes;
    }

    @Override
    public RowData deserialize(DataInputView in) throws IOException {
      RowKind kind = RowKind.fromByteValue(in.readByte());
      int arity = in.readInt();
      GenericRowData row = new GenericRowData(kind, arity);
      for (int i = 0; i < arity; i++) {
        byte tag = in.readByte();
        Object v =
            switch (tag) {
              case NULL -> null;
              case INT -> in.readInt();
              case LONG -> in.readLong();
              case FLOAT -> Float.intBitsToFloat(in.readInt());
              case DOUBLE -> Double.longBitsToDouble(in.readLong());
              case BOOLEAN -> in.readBoolean();
              case STRING -> BinaryStringData.fromBytes(readBytes(in));
              case DECIMAL -> {
                int precision = in.readInt();
                int scale = in.readInt();
                yield DecimalData.fromUnscaledBytes(readBytes(in), precision, scale);
              }
              case TIMESTAMP -> {
                long millis = in.readLong();
                yield TimestampData.fromEpochMillis(millis, in.readInt());
              }
              case BYTES -> readBytes(in);
              case SHORT -> in.readShort();
              case BYTE -> in.readByte();
              default ->
                  throw new IOException(
                      "Unknown value tag " + tag + " at field " + i + " of a versioned row");
            };
        row.setField(i, v);
      }
      return row;
    }

    @Override
    public RowData deserialize(RowData reuse, DataInputView source) throws IOException {
      return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
      serialize(deserialize(source), target);
    }

    @Override
    public boolean equals(Object obj) {
      return obj instanceof Serializer;
    }

    @Override
    public int hashCode() {
      return Serializer.class.hashCode();
    }

    @Override
    public TypeSerializerSnapshot<RowData> snapshotConfiguration() {
      return new Snapshot();
    }
  }

  /** Version 1 of the (configuration-free) serializer. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<RowData> {
    public Snapshot() {
      super(() -> Serializer.INSTANCE);
    }
  }

  private static final class Info extends TypeInformation<RowData> {
    private static final long serialVersionUID = 1L;

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
    public Class<RowData> getTypeClass() {
      return RowData.class;
    }

    @Override
    public boolean isKeyType() {
      return false;
    }

    @Override
    public TypeSerializer<RowData> createSerializer(SerializerConfig config) {
      return Serializer.INSTANCE;
    }

    @Override
    @Deprecated
    public TypeSerializer<RowData> createSerializer(ExecutionConfig config) {
      return Serializer.INSTANCE;
    }

    @Override
    public String toString() {
      return "VersionedRow";
    }

    @Override
    public boolean equals(Object obj) {
      return obj instanceof Info;
    }

    @Override
    public int hashCode() {
      return Info.class.hashCode();
    }

    @Override
    public boolean canEqual(Object obj) {
      return obj instanceof Info;
    }
  }
}
