package dev.shardberg.coordinator.owner;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

/**
 * A row's key as one string, the same whoever read it: the key columns' values in Iceberg's
 * internal representation (as {@code RowDataWrapper} and {@code InternalRecordWrapper} give them),
 * each as Iceberg's single-value binary form, length-prefixed, then kept byte for byte in a string
 * (ISO-8859-1 maps each byte to one char). Strings compare by value in every Flink state backend,
 * which byte arrays do not.
 */
public final class KeyCodec {
  private final List<Types.NestedField> fields;

  public KeyCodec(Types.StructType keyType) {
    this.fields = keyType.fields();
  }

  /** {@code key}: the key columns, in the key type's order, in internal representation. */
  public String encode(StructLike key) {
    ByteBuffer[] values = new ByteBuffer[fields.size()];
    int size = 0;
    for (int i = 0; i < values.length; i++) {
      Object value = key.get(i, Object.class);
      values[i] = value == null ? null : Conversions.toByteBuffer(fields.get(i).type(), value);
      size += 4 + (values[i] == null ? 0 : values[i].remaining());
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    for (ByteBuffer value : values) {
      if (value == null) {
        out.putInt(-1);
      } else {
        out.putInt(value.remaining());
        out.put(value.duplicate());
      }
    }
    return new String(out.array(), StandardCharsets.ISO_8859_1);
  }
}
