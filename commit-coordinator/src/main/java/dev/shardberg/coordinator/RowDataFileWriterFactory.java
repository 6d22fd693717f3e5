package dev.shardberg.coordinator;

import java.util.Map;
import java.util.Set;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.RegistryBasedFileWriterFactory;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.TypeUtil;

/**
 * Iceberg file writers (data, key-only equality deletes, position deletes) for Flink {@link
 * RowData}, built on the format registry Iceberg's Flink module registers its Parquet/Avro/ORC
 * models in. Ours because Iceberg's own Flink factory cannot be constructed outside its package.
 */
final class RowDataFileWriterFactory extends RegistryBasedFileWriterFactory<RowData, RowType> {
  private static final long serialVersionUID = 1L;

  private RowDataFileWriterFactory(
      Table table,
      Schema schema,
      FileFormat dataFormat,
      FileFormat deleteFormat,
      RowType rowType,
      int[] equalityFieldIds,
      Schema keySchema,
      Map<String, String> writeProperties) {
    super(
        table,
        dataFormat,
        RowData.class,
        schema,
        null,
        deleteFormat,
        equalityFieldIds,
        keySchema,
        null,
        writeProperties,
        rowType,
        FlinkSchemaUtil.convert(keySchema));
  }

  /** Data files of {@code rowType}; equality deletes hold only the key columns. */
  static RowDataFileWriterFactory create(
      Table table,
      FileFormat dataFormat,
      FileFormat deleteFormat,
      RowType rowType,
      Set<Integer> equalityFieldIds) {
    return create(table, table.schema(), dataFormat, deleteFormat, rowType, equalityFieldIds);
  }

  /**
   * Data files of {@code schema} (one of the table's schemas) written from rows of {@code rowType}.
   */
  static RowDataFileWriterFactory create(
      Table table,
      Schema schema,
      FileFormat dataFormat,
      FileFormat deleteFormat,
      RowType rowType,
      Set<Integer> equalityFieldIds) {
    Schema keySchema = TypeUtil.select(schema, equalityFieldIds);
    int[] ids = equalityFieldIds.stream().mapToInt(Integer::intValue).sorted().toArray();
    return new RowDataFileWriterFactory(
        table, schema, dataFormat, deleteFormat, rowType, ids, keySchema, table.properties());
  }
}
