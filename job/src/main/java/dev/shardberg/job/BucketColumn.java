package dev.shardberg.job;

import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.schema.ShardSchema;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The key column the table is bucketed by, and why (what {@code validate} prints). In order: {@code
 * target.key-column} when set; else, for an existing table, the column of its partition spec (a
 * table created under an older default keeps validating); else the key column with the most
 * distinct values in discovery's sample ({@link ShardSchema#defaultBucketColumn()}).
 */
public record BucketColumn(String column, String reason) {

  static BucketColumn resolve(
      String configured, ShardSchema schema, Optional<String> existingTableColumn) {
    if (configured != null) {
      return new BucketColumn(configured, "from " + RouterOptions.TARGET_KEY_COLUMN.key());
    }
    if (existingTableColumn.isPresent()) {
      return new BucketColumn(
          existingTableColumn.get(), "from the existing table's partition spec");
    }
    if (schema.primaryKey().size() == 1) {
      return new BucketColumn(schema.primaryKey().get(0), "the only key column");
    }
    String column = schema.defaultBucketColumn();
    if (schema.keySample().isEmpty()) {
      return new BucketColumn(column, "the first key column (not sampled)");
    }
    return new BucketColumn(
        column,
        "the key column with the most distinct values in a sample ("
            + schema.primaryKey().stream()
                .map(k -> k + " " + schema.keySample().get(k))
                .collect(Collectors.joining(", "))
            + "); set "
            + RouterOptions.TARGET_KEY_COLUMN.key()
            + " to choose another");
  }
}
