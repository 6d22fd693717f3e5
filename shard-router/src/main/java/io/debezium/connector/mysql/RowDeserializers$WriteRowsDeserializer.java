package io.debezium.connector.mysql;

import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.deserialization.WriteRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import dev.shardberg.router.types.BinlogTime2;
import java.io.IOException;
import java.io.Serializable;
import java.util.Map;

/**
 * Shardberg's stand-in for Debezium's {@code RowDeserializers.WriteRowsDeserializer} (same binary
 * name, so Debezium's binlog reader creates this one when shard-router comes first on the class
 * path): every value is decoded by Debezium's {@link RowDeserializers}, as in Debezium's class,
 * except TIME2, which {@link BinlogTime2} decodes exactly (Debezium's decoding reads a negative
 * TIME with a zero fraction as another value). {@link BinlogTime2#requireInstalled} checks that
 * this class is the one in use.
 */
public class RowDeserializers$WriteRowsDeserializer extends WriteRowsEventDataDeserializer
    implements BinlogTime2.Installed {

  public RowDeserializers$WriteRowsDeserializer(
      Map<Long, TableMapEventData> tableMapEventByTableId) {
    super(tableMapEventByTableId);
  }

  @Override
  protected Serializable deserializeTimeV2(int meta, ByteArrayInputStream inputStream)
      throws IOException {
    return BinlogTime2.read(meta, inputStream);
  }

  // ----------------------------------------------------------------- as Debezium's class:
  // Debezium's decoding

  @Override
  protected Serializable deserializeString(int length, ByteArrayInputStream inputStream)
      throws IOException {
    return RowDeserializers.deserializeString(length, inputStream);
  }

  @Override
  protected Serializable deserializeVarString(int meta, ByteArrayInputStream inputStream)
      throws IOException {
    return RowDeserializers.deserializeVarString(meta, inputStream);
  }

  @Override
  protected Serializable deserializeDate(ByteArrayInputStream inputStream) throws IOException {
    return RowDeserializers.deserializeDate(inputStream);
  }

  @Override
  protected Serializable deserializeDatetime(ByteArrayInputStream inputStream) throws IOException {
    return RowDeserializers.deserializeDatetime(inputStream);
  }

  @Override
  protected Serializable deserializeDatetimeV2(int meta, ByteArrayInputStream inputStream)
      throws IOException {
    return RowDeserializers.deserializeDatetimeV2(meta, inputStream);
  }

  @Override
  protected Serializable deserializeTime(ByteArrayInputStream inputStream) throws IOException {
    return RowDeserializers.deserializeTime(inputStream);
  }

  @Override
  protected Serializable deserializeTimestamp(ByteArrayInputStream inputStream) throws IOException {
    return RowDeserializers.deserializeTimestamp(inputStream);
  }

  @Override
  protected Serializable deserializeTimestampV2(int meta, ByteArrayInputStream inputStream)
      throws IOException {
    return RowDeserializers.deserializeTimestampV2(meta, inputStream);
  }

  @Override
  protected Serializable deserializeYear(ByteArrayInputStream inputStream) throws IOException {
    return RowDeserializers.deserializeYear(inputStream);
  }
}
