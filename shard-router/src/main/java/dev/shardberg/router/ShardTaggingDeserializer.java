package dev.shardberg.router;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.data.Bits;
import io.debezium.data.geometry.Geometry;
import io.debezium.time.MicroTime;
import io.debezium.time.MicroTimestamp;
import io.debezium.time.NanoTime;
import io.debezium.time.NanoTimestamp;
import io.debezium.time.Time;
import io.debezium.time.Timestamp;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Field;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.source.SourceRecord;
import org.apache.flink.cdc.debezium.DebeziumDeserializationSchema;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * Turns the Debezium change records of ONE host's {@code MySqlSource} into Flink {@link RowData} of
 * {@link TableLayout#rowType()}: {@code shard_number} at position 0 (from the record's database and
 * table, looked up in the {@link ShardPlan}), then the source columns converted per {@link TypeMapping}.
 * Row kinds: a snapshot read ({@code op = r}) is +I, a live insert ({@code op = c}) is +U (an upsert:
 * after a restore the key may already be in the table), an update is -U then +U, a delete -D. Only
 * snapshot reads are +I, which lets the sink write a first load insert-only (see ShardbergSink).
 *
 * <p>An update that changes the key ({@link TableLayout#equalityColumns()}: the before image's key
 * differs from the after image's) is -D of the before image, then +U: the writers drop -U (an upsert
 * +U deletes its own key), so only a -D removes the old key's row. This is the one place that sees
 * both images together; downstream, the -D and the +U may go to different writers (they are keyed by
 * the bucket of their own key), and each is in order with the other changes of its key. Debezium
 * already splits a change of the MySQL primary key into a delete and a create; this covers a key
 * that is a UNIQUE index (tables without a primary key, or {@code tables.key-columns} other than it).
 *
 * <p>Fails, never drops: a record from a table outside the plan, a schema-change (DDL) record, a row whose
 * columns differ from the layout (a DDL that was not delivered as a record) and a value that cannot be
 * represented all throw {@link ShardRouterException}, which fails the job before the next checkpoint, so
 * nothing after the last completed checkpoint is lost.
 *
 * <p>Debezium value representations handled (MySQL connector defaults, and the alternatives where
 * cheap): integers as Short/Integer/Long; BIGINT UNSIGNED as Long (unsigned bits) or BigDecimal
 * (precise mode); DECIMAL as BigDecimal (or String/Double); BIT(1) Boolean; BIT(n) {@code Bits} bytes in
 * little-endian order; DATE {@code io.debezium.time.Date} epoch days; TIME {@code MicroTime} micros;
 * DATETIME {@code Timestamp} millis / {@code MicroTimestamp} micros; TIMESTAMP {@code ZonedTimestamp}
 * ISO-8601 string in UTC; YEAR int; geometry a struct whose {@code wkb} field is the WKB.
 */
public final class ShardTaggingDeserializer implements DebeziumDeserializationSchema<RowData> {
  private static final long serialVersionUID = 1L;

  private static final String SCHEMA_CHANGE_VALUE = "io.debezium.connector.mysql.SchemaChangeValue";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String hostName;
  private final RowType rowType;
  private final Map<String, Integer> shardByTable;
  /** Positions in {@link #rowType} of the key columns (shard_number excluded: one record, one shard). */
  private final int[] keyPositions;

  private transient FieldConverter[] converters;
  private transient RowData.FieldGetter[] keyGetters;
  private transient Map<Schema, Boolean> verifiedSchemas;

  private ShardTaggingDeserializer(
      String hostName, RowType rowType, Map<String, Integer> shardByTable, int[] keyPositions) {
    this.hostName = hostName;
    this.rowType = rowType;
    this.shardByTable = shardByTable;
    this.keyPositions = keyPositions;
  }

  /** The deserializer for the {@code MySqlSource} of {@code hostName}. */
  public static ShardTaggingDeserializer forHost(ShardPlan plan, String hostName, TableLayout layout) {
    Objects.requireNonNull(plan, "plan");
    Objects.requireNonNull(layout, "layout");
    List<ShardTable> tables = plan.tablesOf(hostName);
    Preconditions.checkArgument(
        !tables.isEmpty(), "Cannot read host '%s': it has no shard in the plan (hosts with shards: %s)", hostName, plan.hostNames());
    Preconditions.checkArgument(
        layout.rowType().getFieldNames().get(0).equals(TableLayout.SHARD_COLUMN),
        "Cannot tag rows: the layout's first column is '%s', not '%s'",
        layout.rowType().getFieldNames().get(0),
        TableLayout.SHARD_COLUMN);
    Map<String, Integer> shardByTable = new HashMap<>();
    for (ShardTable t : tables) {
      shardByTable.put(t.qualifiedName(), t.shard());
    }
    int[] keyPositions =
        layout.equalityColumns().stream()
            .filter(c -> !c.equals(TableLayout.SHARD_COLUMN))
            .mapToInt(c -> layout.rowType().getFieldIndex(c))
            .toArray();
    return new ShardTaggingDeserializer(hostName, layout.rowType(), shardByTable, keyPositions);
  }

  /**
   * The {@code tableList} for the host's {@code MySqlSource}: "db.table" per shard, regex metacharacters
   * in the names escaped (Flink CDC treats the entries as anchored regexes).
   */
  public static String[] tableListOf(ShardPlan plan, String hostName) {
    return plan.tablesOf(hostName).stream()
        .map(t -> escapeRegex(t.database()) + "." + escapeRegex(t.table()))
        .toArray(String[]::new);
  }

  /** The {@code databaseList} for the host's {@code MySqlSource} (regex-escaped, distinct). */
  public static String[] databaseListOf(ShardPlan plan, String hostName) {
    Set<String> dbs = new LinkedHashSet<>();
    plan.tablesOf(hostName).forEach(t -> dbs.add(escapeRegex(t.database())));
    return dbs.toArray(String[]::new);
  }

  private static final Pattern REGEX_META = Pattern.compile("([\\\\.\\[\\]{}()<>*+\\-=!?^$|])");

  /** A MySQL name as a Flink CDC table-filter regex that matches exactly it. */
  public static String escapeRegex(String name) {
    return REGEX_META.matcher(name).replaceAll("\\\\$1");
  }

  @Override
  public TypeInformation<RowData> getProducedType() {
    return InternalTypeInfo.of(rowType);
  }

  @Override
  public void deserialize(SourceRecord record, Collector<RowData> out) {
    Schema valueSchema = record.valueSchema();
    if (record.value() == null || valueSchema == null) {
      return; // tombstone
    }
    Struct value = (Struct) record.value();
    if (SCHEMA_CHANGE_VALUE.equals(valueSchema.name())) {
      throw schemaChange(value);
    }
    if (valueSchema.field("op") == null || valueSchema.field("source") == null) {
      return; // heartbeat or transaction metadata: no row
    }
    Struct source = value.getStruct("source");
    String qualifiedName = source.getString("db") + "." + source.getString("table");
    Integer shard = shardByTable.get(qualifiedName);
    if (shard == null) {
      throw new ShardRouterException(
          String.format(
              "Cannot route a change of table '%s' on host '%s': it is not in the shard plan (this host's shards: %s). The source's table list and the plan disagree; restart the job so discovery runs again",
              qualifiedName,
              hostName,
              shardByTable.keySet().stream().sorted().toList()));
    }
    String op = value.getString("op");
    switch (op) {
      case "r":
        out.collect(toRow(RowKind.INSERT, shard, qualifiedName, value.getStruct("after")));
        break;
      case "c":
        out.collect(toRow(RowKind.UPDATE_AFTER, shard, qualifiedName, value.getStruct("after")));
        break;
      case "u":
        RowData before = toRow(RowKind.UPDATE_BEFORE, shard, qualifiedName, value.getStruct("before"));
        RowData after = toRow(RowKind.UPDATE_AFTER, shard, qualifiedName, value.getStruct("after"));
        if (!sameKey(before, after)) {
          before.setRowKind(RowKind.DELETE); // the key changed: the old key's row goes (see class doc)
        }
        out.collect(before);
        out.collect(after);
        break;
      case "d":
        out.collect(toRow(RowKind.DELETE, shard, qualifiedName, value.getStruct("before")));
        break;
      default:
        throw new ShardRouterException(
            String.format(
                "Cannot apply operation '%s' on shard %d ('%s' on host '%s'): only inserts, updates and deletes can be replicated (a TRUNCATE is not); re-snapshot the shard",
                op,
                shard,
                qualifiedName,
                hostName));
    }
  }

  /** True when both rows hold the same key values (byte for byte: Iceberg compares keys exactly). */
  private boolean sameKey(RowData a, RowData b) {
    if (keyGetters == null) {
      keyGetters = new RowData.FieldGetter[keyPositions.length];
      for (int i = 0; i < keyPositions.length; i++) {
        keyGetters[i] = RowData.createFieldGetter(rowType.getTypeAt(keyPositions[i]), keyPositions[i]);
      }
    }
    for (RowData.FieldGetter getter : keyGetters) {
      if (!Objects.deepEquals(getter.getFieldOrNull(a), getter.getFieldOrNull(b))) {
        return false;
      }
    }
    return true;
  }

  private ShardRouterException schemaChange(Struct value) {
    String ddl = value.schema().field("ddl") == null ? null : value.getString("ddl");
    String db = value.schema().field("databaseName") == null ? null : value.getString("databaseName");
    if (ddl == null && value.schema().field("historyRecord") != null) {
      // Flink CDC carries Debezium's schema history record as JSON: {"databaseName":…,"ddl":…,…}
      try {
        JsonNode history = JSON.readTree(value.getString("historyRecord"));
        ddl = history.path("ddl").asText(null);
        if (db == null) {
          db = history.path("databaseName").asText(null);
        }
      } catch (java.io.IOException | RuntimeException e) {
        ddl = null;
      }
    }
    if (ddl == null) {
      ddl = "(statement not in the record)";
    }
    String table = null;
    if (value.schema().field("source") != null && value.getStruct("source") != null) {
      Struct source = value.getStruct("source");
      if (source.schema().field("table") != null) {
        table = source.getString("table");
      }
      if (db == null && source.schema().field("db") != null) {
        db = source.getString("db");
      }
    }
    String where;
    Integer shard = table == null ? null : shardByTable.get(db + "." + table);
    if (shard != null) {
      where = String.format("shard %d ('%s.%s' on host '%s')", shard, db, table, hostName);
    } else {
      List<Integer> shards = new ArrayList<>();
      final String database = db;
      shardByTable.forEach((k, v) -> {
        if (k.startsWith(database + ".")) {
          shards.add(v);
        }
      });
      shards.sort(null);
      where = String.format("database '%s' on host '%s' (shards %s)", db, hostName, shards);
    }
    return new ShardRouterException(
        String.format(
            "Cannot apply a schema change on %s: DDL '%s'. Shardberg does not evolve schemas yet; the job stops here and nothing after the last completed checkpoint is lost. Apply the same change to every shard and to the Iceberg table (or drop the table to let it be re-created), then start the job again from a fresh snapshot",
            where,
            ddl));
  }

  private RowData toRow(RowKind kind, int shard, String qualifiedName, Struct row) {
    if (converters == null) {
      converters = createConverters(rowType);
      verifiedSchemas = new HashMap<>();
    }
    verifyColumns(shard, qualifiedName, row.schema());
    GenericRowData result = new GenericRowData(kind, rowType.getFieldCount());
    result.setField(0, shard);
    List<String> names = rowType.getFieldNames();
    for (int i = 1; i < converters.length; i++) {
      String name = names.get(i);
      Field field = row.schema().field(name);
      Object v = row.get(field);
      if (v == null) {
        continue;
      }
      try {
        result.setField(i, converters[i].convert(v, field.schema()));
      } catch (RuntimeException e) {
        throw new ShardRouterException(
            String.format(
                "Cannot convert column '%s' of shard %d ('%s' on host '%s') to %s: %s",
                name, shard, qualifiedName, hostName, rowType.getTypeAt(i), e.getMessage()),
            e);
      }
    }
    return result;
  }

  /** A row whose columns differ from the layout means a DDL reached the binlog reader without a record. */
  private void verifyColumns(int shard, String qualifiedName, Schema schema) {
    if (verifiedSchemas.containsKey(schema)) {
      return;
    }
    List<String> expected = rowType.getFieldNames().subList(1, rowType.getFieldCount());
    List<String> found = schema.fields().stream().map(Field::name).toList();
    if (!expected.equals(found)) {
      throw new ShardRouterException(
          String.format(
              "Cannot apply a schema change on shard %d ('%s' on host '%s'): its change records have columns %s but the table layout has %s. Shardberg does not evolve schemas yet; apply the same change to every shard and to the Iceberg table, then start the job again from a fresh snapshot",
              shard,
              qualifiedName,
              hostName,
              found,
              expected));
    }
    verifiedSchemas.put(schema, Boolean.TRUE);
  }

  // ---------------------------------------------------------------- value conversion

  @FunctionalInterface
  private interface FieldConverter extends Serializable {
    Object convert(Object value, Schema schema);
  }

  private static FieldConverter[] createConverters(RowType rowType) {
    FieldConverter[] result = new FieldConverter[rowType.getFieldCount()];
    for (int i = 1; i < result.length; i++) {
      result[i] = converter(rowType.getTypeAt(i));
    }
    return result;
  }

  private static FieldConverter converter(LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return (v, s) -> toBoolean(v);
      case INTEGER:
        return (v, s) -> ((Number) v).intValue();
      case BIGINT:
        return ShardTaggingDeserializer::toLong;
      case FLOAT:
        return (v, s) -> ((Number) v).floatValue();
      case DOUBLE:
        return (v, s) -> ((Number) v).doubleValue();
      case DECIMAL:
        {
          DecimalType d = (DecimalType) type;
          return (v, s) -> toDecimal(v, d.getPrecision(), d.getScale());
        }
      case VARCHAR:
      case CHAR:
        return (v, s) -> StringData.fromString(v.toString());
      case VARBINARY:
      case BINARY:
        return ShardTaggingDeserializer::toBytes;
      case DATE:
        return (v, s) -> ((Number) v).intValue();
      case TIME_WITHOUT_TIME_ZONE:
        return ShardTaggingDeserializer::toTimeMillis;
      case TIMESTAMP_WITHOUT_TIME_ZONE:
        return ShardTaggingDeserializer::toTimestamp;
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return ShardTaggingDeserializer::toInstantTimestamp;
      default:
        throw new ShardRouterException("Cannot convert values to Flink type " + type + ": not produced by TypeMapping");
    }
  }

  private static Object toBoolean(Object v) {
    if (v instanceof Boolean b) {
      return b;
    }
    if (v instanceof Number n) {
      return n.longValue() != 0;
    }
    byte[] bytes = rawBytes(v);
    for (byte b : bytes) {
      if (b != 0) {
        return true;
      }
    }
    return false;
  }

  /** BIGINT: longs, and TIME(p > 3) as microseconds of the day. */
  private static Object toLong(Object v, Schema s) {
    String name = s.name();
    long n = ((Number) v).longValue();
    if (Time.SCHEMA_NAME.equals(name)) {
      return n * 1000L;
    }
    if (NanoTime.SCHEMA_NAME.equals(name)) {
      return n / 1000L;
    }
    return n;
  }

  private static Object toDecimal(Object v, int precision, int scale) {
    BigDecimal bd;
    if (v instanceof BigDecimal b) {
      bd = b;
    } else if (v instanceof Long l) {
      bd = new BigDecimal(new BigInteger(Long.toUnsignedString(l))); // BIGINT UNSIGNED in "long" mode
    } else if (v instanceof Number n) {
      bd = new BigDecimal(n.toString());
    } else {
      bd = new BigDecimal(v.toString());
    }
    DecimalData d = DecimalData.fromBigDecimal(bd, precision, scale);
    if (d == null) {
      throw new IllegalArgumentException("value " + bd.toPlainString() + " does not fit decimal(" + precision + "," + scale + ")");
    }
    return d;
  }

  private static Object toBytes(Object v, Schema s) {
    if (v instanceof Struct struct) {
      if (Geometry.LOGICAL_NAME.equals(s.name()) || struct.schema().field(Geometry.WKB_FIELD) != null) {
        return rawBytes(struct.get(Geometry.WKB_FIELD));
      }
      throw new IllegalArgumentException("unexpected struct " + s.name());
    }
    byte[] bytes = rawBytes(v);
    if (Bits.LOGICAL_NAME.equals(s.name())) {
      // Debezium gives BIT(n) little-endian; MySQL (and JDBC) show it big-endian
      int length = bytes.length;
      String param = s.parameters() == null ? null : s.parameters().get(Bits.LENGTH_FIELD);
      if (param != null) {
        length = (Integer.parseInt(param) + 7) / 8;
      }
      byte[] bigEndian = new byte[length];
      for (int i = 0; i < length && i < bytes.length; i++) {
        bigEndian[length - 1 - i] = bytes[i];
      }
      return bigEndian;
    }
    return bytes;
  }

  private static byte[] rawBytes(Object v) {
    if (v instanceof byte[] b) {
      return b;
    }
    if (v instanceof ByteBuffer buffer) {
      ByteBuffer dup = buffer.duplicate();
      byte[] b = new byte[dup.remaining()];
      dup.get(b);
      return b;
    }
    throw new IllegalArgumentException("unexpected value of " + v.getClass().getName() + " for a bytes column");
  }

  private static Object toTimeMillis(Object v, Schema s) {
    long n = ((Number) v).longValue();
    String name = s.name();
    long millis;
    if (MicroTime.SCHEMA_NAME.equals(name)) {
      millis = Math.floorDiv(n, 1000L);
    } else if (NanoTime.SCHEMA_NAME.equals(name)) {
      millis = Math.floorDiv(n, 1_000_000L);
    } else {
      millis = n; // io.debezium.time.Time and Kafka Connect Time are millis
    }
    if (millis < 0 || millis >= 86_400_000L) {
      throw new IllegalArgumentException(
          "time value " + millis + " ms is outside 00:00:00..23:59:59.999; Iceberg time holds a time of day only");
    }
    return (int) millis;
  }

  private static Object toTimestamp(Object v, Schema s) {
    String name = s.name();
    if (v instanceof java.util.Date d) {
      return TimestampData.fromEpochMillis(d.getTime());
    }
    long n = ((Number) v).longValue();
    if (MicroTimestamp.SCHEMA_NAME.equals(name)) {
      return TimestampData.fromEpochMillis(Math.floorDiv(n, 1000L), (int) Math.floorMod(n, 1000L) * 1000);
    }
    if (NanoTimestamp.SCHEMA_NAME.equals(name)) {
      return TimestampData.fromEpochMillis(Math.floorDiv(n, 1_000_000L), (int) Math.floorMod(n, 1_000_000L));
    }
    if (Timestamp.SCHEMA_NAME.equals(name) || name == null || name.endsWith("Timestamp")) {
      return TimestampData.fromEpochMillis(n);
    }
    throw new IllegalArgumentException("unexpected timestamp representation " + name);
  }

  private static Object toInstantTimestamp(Object v, Schema s) {
    if (v instanceof String str) {
      return TimestampData.fromInstant(OffsetDateTime.parse(str).toInstant());
    }
    if (v instanceof java.util.Date d) {
      return TimestampData.fromEpochMillis(d.getTime());
    }
    return TimestampData.fromEpochMillis(((Number) v).longValue());
  }
}
