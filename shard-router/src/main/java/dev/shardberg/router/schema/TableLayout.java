package dev.shardberg.router.schema;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.TypeMapping;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg table every shard flows into: {@code shard_number} (required int) first, then the
 * source columns; identifier fields {@code shard_number} + key; spec {@code
 * identity(shard_number)}, {@code bucket(B, keyColumn)}; the table properties of DESIGN decision 3
 * merged with overrides. {@code rowType} is the Flink row the tagger emits and the writers consume
 * (same field order).
 */
public record TableLayout(
    Schema icebergSchema,
    RowType rowType,
    PartitionSpec spec,
    List<String> equalityColumns,
    String keyColumn,
    int buckets,
    Map<String, String> properties)
    implements Serializable {

  public static final String SHARD_COLUMN = "shard_number";
  public static final int DEFAULT_BUCKETS = RouterOptions.TARGET_BUCKETS.defaultValue();
  public static final int FORMAT_VERSION = 2;

  /**
   * DESIGN decision 3; every key can be overridden from config. {@code
   * write.parquet.page-size-bytes} = 64 KiB bounds writer heap with many open partitions: each
   * compressed Parquet column keeps a page-sized buffer, measured ≈ 4.3 MiB per open partition at
   * Parquet's 1 MiB default vs ≈ 394 KiB at 64 KiB (docs/commit-coordinator.md).
   */
  public static final Map<String, String> DEFAULT_PROPERTIES =
      Collections.unmodifiableMap(
          new LinkedHashMap<>(
              Map.of(
                  "write.upsert.enabled", "true",
                  "write.format.default", "parquet",
                  "write.parquet.compression-codec", "zstd",
                  "write.parquet.page-size-bytes", "65536",
                  "commit.retry.num-retries", "60",
                  "commit.retry.total-timeout-ms", "300000",
                  "write.metadata.delete-after-commit.enabled", "true",
                  "engine.hive.enabled", "true")));

  public TableLayout {
    equalityColumns = List.copyOf(equalityColumns);
    properties = Collections.unmodifiableMap(new LinkedHashMap<>(properties));
  }

  /**
   * Derives the layout from the shared shard schema.
   *
   * @param buckets the bucket count B (> 0), usually {@link #DEFAULT_BUCKETS}
   * @param keyColumnOrNull the bucketed key column; null = {@link
   *     ShardSchema#defaultBucketColumn()} (the key column with the most distinct values in
   *     discovery's sample). For an existing table the caller passes the column of its partition
   *     spec ({@link TableCreator#bucketColumn}).
   * @param propertyOverrides table properties that replace or add to {@link #DEFAULT_PROPERTIES}
   */
  public static TableLayout derive(
      ShardSchema schema,
      int buckets,
      String keyColumnOrNull,
      Map<String, String> propertyOverrides) {
    Preconditions.checkArgument(
        buckets > 0, "Cannot use %s buckets: the bucket count must be > 0", buckets);
    Preconditions.checkArgument(
        !schema.primaryKey().isEmpty(),
        "Cannot derive a table layout: the schema has no key columns");
    Set<String> names = new HashSet<>(schema.columnNames());
    Preconditions.checkArgument(
        !names.contains(SHARD_COLUMN),
        "Cannot add column '%s': the source table already has a column of that name; rename it in MySQL",
        SHARD_COLUMN);
    String keyColumn = keyColumnOrNull == null ? schema.defaultBucketColumn() : keyColumnOrNull;
    Preconditions.checkArgument(
        schema.primaryKey().contains(keyColumn),
        "Cannot bucket by column '%s': it is not a key column (key columns: %s); choose one of them",
        keyColumn,
        schema.primaryKey());

    List<Types.NestedField> fields = new ArrayList<>();
    List<RowType.RowField> rowFields = new ArrayList<>();
    fields.add(Types.NestedField.required(1, SHARD_COLUMN, Types.IntegerType.get()));
    rowFields.add(new RowType.RowField(SHARD_COLUMN, new IntType(false)));
    int id = 2;
    for (MySqlColumn c : schema.columns()) {
      TypeMapping.Mapped mapped = TypeMapping.map(c);
      Type type = mapped.icebergType();
      fields.add(
          c.nullable()
              ? Types.NestedField.optional(id, c.name(), type)
              : Types.NestedField.required(id, c.name(), type));
      rowFields.add(new RowType.RowField(c.name(), mapped.flinkType()));
      id++;
    }
    Set<Integer> identifierIds = new HashSet<>();
    identifierIds.add(1);
    List<String> equalityColumns = new ArrayList<>();
    equalityColumns.add(SHARD_COLUMN);
    for (String k : schema.primaryKey()) {
      int fieldId = 2 + schema.columnNames().indexOf(k);
      Types.NestedField f = fields.get(fieldId - 1);
      Preconditions.checkArgument(
          f.isRequired(),
          "Cannot use column '%s' as a key column: it is nullable; Iceberg identifier fields must be NOT NULL",
          k);
      Preconditions.checkArgument(
          f.type().typeId() != Type.TypeID.FLOAT && f.type().typeId() != Type.TypeID.DOUBLE,
          "Cannot use column '%s' as a key column: its type %s cannot be an Iceberg identifier field",
          k,
          f.type());
      identifierIds.add(fieldId);
      equalityColumns.add(k);
    }
    Schema iceberg = new Schema(fields, identifierIds);
    Type keyType = iceberg.findType(keyColumn);
    Preconditions.checkArgument(
        keyType.typeId() != Type.TypeID.BOOLEAN,
        "Cannot bucket by column '%s' of type %s: Iceberg cannot bucket booleans; choose another key column",
        keyColumn,
        keyType);
    PartitionSpec spec =
        PartitionSpec.builderFor(iceberg).identity(SHARD_COLUMN).bucket(keyColumn, buckets).build();
    Map<String, String> props = new LinkedHashMap<>(DEFAULT_PROPERTIES);
    if (propertyOverrides != null) {
      props.putAll(propertyOverrides);
    }
    RowType rowType = new RowType(false, rowFields);
    return new TableLayout(iceberg, rowType, spec, equalityColumns, keyColumn, buckets, props);
  }

  /** Derives the layout with B = 5, the default bucket column and default properties. */
  public static TableLayout derive(ShardSchema schema) {
    return derive(schema, DEFAULT_BUCKETS, null, Map.of());
  }

  /** Flink type of a column by name. */
  public LogicalType flinkType(String column) {
    int i = rowType.getFieldIndex(column);
    Preconditions.checkArgument(i >= 0, "Cannot find column '%s' in the layout", column);
    return rowType.getTypeAt(i);
  }

  /** Properties to create the table with: {@link #properties()} plus format-version. */
  public Map<String, String> createProperties() {
    Map<String, String> props = new LinkedHashMap<>(properties);
    props.putIfAbsent("format-version", String.valueOf(FORMAT_VERSION));
    return props;
  }
}
