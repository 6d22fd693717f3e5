package dev.shardberg.coordinator;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * What the writers assume about the table, checked where it can change under a running job: when
 * the sink is built, when each writer opens, and before every commit.
 */
final class WriterTableCheck {
  private WriterTableCheck() {}

  /** Checks the row type alone: its first field is the shard column, {@code INT NOT NULL}. */
  static String shardColumn(RowType rowType) {
    if (rowType.getFieldCount() == 0) {
      throw new IllegalArgumentException("Cannot write to Iceberg: the row type has no fields");
    }
    RowType.RowField first = rowType.getFields().get(0);
    LogicalType type = first.getType();
    if (!(type instanceof IntType) || type.isNullable()) {
      throw new IllegalArgumentException(
          String.format(
              "Cannot write to Iceberg: the first field of the row type must be the shard column,"
                  + " INT NOT NULL, but it is '%s' %s. Put shard_number first in the row type.",
              first.getName(), type));
    }
    return first.getName();
  }

  /**
   * Validates that the writers' rows and equality columns fit the table, and returns the equality
   * field ids.
   *
   * @throws IllegalStateException naming the table, column and fix when they do not
   */
  static Set<Integer> validate(
      Table table, String tableName, RowType rowType, List<String> equalityColumns) {
    return validate(table, tableName, rowType, equalityColumns, DeleteMode.EQUALITY);
  }

  /**
   * {@link #validate(Table, String, RowType, List)} for a delete mode: equality deletes need format
   * 2; deletes by position take format 2 (position-delete files) or 3 (deletion vectors).
   */
  static Set<Integer> validate(
      Table table,
      String tableName,
      RowType rowType,
      List<String> equalityColumns,
      DeleteMode deleteMode) {
    String shardColumn = shardColumn(rowType);
    Schema schema = table.schema();
    int formatVersion = TableUtil.formatVersion(table);
    if (deleteMode == DeleteMode.POSITION) {
      check(
          formatVersion == 2 || formatVersion == 3,
          "Cannot write to table %s by position (%s: position): format version is %s; Shardberg"
              + " writes deletion vectors to format 3 and position-delete files to format 2.",
          tableName,
          CoordinatorConfigOptions.DELETE_MODE.key(),
          formatVersion);
    } else {
      check(
          formatVersion == 2,
          "Cannot write upserts to table %s: format version is %s, Shardberg writes format 2"
              + " (equality deletes). Create the table with 'format-version'='2', or write by"
              + " position (%s: position).",
          tableName,
          formatVersion,
          CoordinatorConfigOptions.DELETE_MODE.key());
    }
    validateSchema(schema, tableName, rowType);

    check(
        equalityColumns.contains(shardColumn),
        "Cannot write upserts to table %s: equality columns %s must include the shard column '%s'"
            + " (a key is unique only within its shard)",
        tableName,
        equalityColumns,
        shardColumn);
    Set<Integer> ids = new TreeSet<>();
    for (String column : equalityColumns) {
      Types.NestedField field = schema.findField(column);
      check(
          field != null,
          "Cannot write upserts to table %s: equality column '%s' is not in the table schema %s",
          tableName,
          column,
          schema.columns().stream().map(Types.NestedField::name).toList());
      ids.add(field.fieldId());
    }
    List<String> outside = new ArrayList<>();
    for (PartitionField partitionField : table.spec().fields()) {
      if (!ids.contains(partitionField.sourceId())) {
        outside.add(schema.findColumnName(partitionField.sourceId()));
      }
    }
    check(
        outside.isEmpty(),
        "Cannot write upserts to table %s: partition source columns %s are not equality columns %s;"
            + " a key could then live in two partitions and its delete would miss. Partition by"
            + " the shard column and the key only.",
        tableName,
        outside,
        equalityColumns);
    return ids;
  }

  /**
   * The table must still accept what the writers write (no dropped, retyped or new required
   * columns).
   */
  static void validateSchema(Schema tableSchema, String tableName, RowType rowType) {
    Schema writeSchema;
    try {
      writeSchema = FlinkSchemaUtil.convert(tableSchema, FlinkSchemaUtil.toResolvedSchema(rowType));
      TypeUtil.validateWriteSchema(tableSchema, writeSchema, true, true);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot write to table %s: the table layout no longer matches what the writers write"
                  + " (%s). Writers write %s; the table is %s. Restart the job with a row type that"
                  + " matches the table, or restore the table's schema.",
              tableName, e.getMessage(), rowType, tableSchema.asStruct()),
          e);
    }
  }

  private static void check(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalStateException(String.format(template, args));
    }
  }
}
