package dev.shardberg.router.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.types.MySqlColumn;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionField;
import org.junit.jupiter.api.Test;

class TableLayoutTest {

  static final ShardSchema SCHEMA =
      new ShardSchema(
          List.of(
              MySqlColumn.of("tenant", "int", false),
              MySqlColumn.of("id", "bigint unsigned", false),
              MySqlColumn.of("amount", "decimal(10,2)", true),
              MySqlColumn.of("created", "datetime(3)", false)),
          List.of("tenant", "id"));

  @Test
  void shardNumberFirstIdentifierFieldsSpecAndDefaults() {
    TableLayout layout = TableLayout.derive(SCHEMA);
    assertThat(layout.icebergSchema().toString())
        .isEqualTo(
            "table {\n"
                + "  1: shard_number: required int (id)\n"
                + "  2: tenant: required int (id)\n"
                + "  3: id: required decimal(20, 0) (id)\n"
                + "  4: amount: optional decimal(10, 2)\n"
                + "  5: created: required timestamp\n"
                + "}");
    assertThat(layout.icebergSchema().identifierFieldNames())
        .containsExactlyInAnyOrder("shard_number", "tenant", "id");
    assertThat(layout.equalityColumns()).containsExactly("shard_number", "tenant", "id");
    assertThat(layout.keyColumn()).isEqualTo("tenant");
    assertThat(layout.buckets()).isEqualTo(5);
    assertThat(layout.spec().fields().stream().map(PartitionField::toString).toList())
        .containsExactly("1000: shard_number: identity(1)", "1001: tenant_bucket: bucket[5](2)");
    assertThat(layout.rowType().asSummaryString())
        .isEqualTo(
            "ROW<`shard_number` INT NOT NULL, `tenant` INT NOT NULL, `id` DECIMAL(20, 0) NOT NULL, `amount` DECIMAL(10, 2), `created` TIMESTAMP(6) NOT NULL> NOT NULL");
    assertThat(layout.properties())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "write.upsert.enabled", "true",
                "write.format.default", "parquet",
                "write.parquet.compression-codec", "zstd",
                "write.parquet.page-size-bytes", "65536",
                "commit.retry.num-retries", "60",
                "commit.retry.total-timeout-ms", "300000",
                "write.metadata.delete-after-commit.enabled", "true",
                "engine.hive.enabled", "true"));
    assertThat(layout.createProperties()).containsEntry("format-version", "2");
  }

  @Test
  void theDefaultBucketColumnIsTheKeyColumnWithTheMostSampledDistinctValues() {
    assertThat(
            TableLayout.derive(SCHEMA.withKeySample(Map.of("tenant", 8L, "id", 10_000L)))
                .keyColumn())
        .isEqualTo("id");
    assertThat(
            TableLayout.derive(SCHEMA.withKeySample(Map.of("tenant", 30L, "id", 30L))).keyColumn())
        .as("a tie goes to the earlier key column")
        .isEqualTo("tenant");
    assertThat(TableLayout.derive(SCHEMA.withKeySample(Map.of("tenant", 0L, "id", 0L))).keyColumn())
        .as("empty shards: the first key column")
        .isEqualTo("tenant");
    assertThat(
            TableLayout.derive(
                    SCHEMA.withKeySample(Map.of("tenant", 8L, "id", 10_000L)),
                    5,
                    "tenant",
                    Map.of())
                .keyColumn())
        .as("target.key-column overrides the sample")
        .isEqualTo("tenant");
  }

  @Test
  void bucketsKeyColumnAndPropertiesAreConfigurable() {
    TableLayout layout =
        TableLayout.derive(
            SCHEMA, 16, "id", Map.of("write.parquet.compression-codec", "snappy", "x.y", "z"));
    assertThat(layout.spec().fields().get(1).toString())
        .isEqualTo("1001: id_bucket: bucket[16](3)");
    assertThat(layout.properties())
        .containsEntry("write.parquet.compression-codec", "snappy")
        .containsEntry("x.y", "z");
  }

  @Test
  void badChoicesAreNamed() {
    assertThatThrownBy(() -> TableLayout.derive(SCHEMA, 5, "amount", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot bucket by column 'amount': it is not a key column (key columns: [tenant, id]); choose one of them");
    assertThatThrownBy(() -> TableLayout.derive(SCHEMA, 0, null, Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Cannot use 0 buckets: the bucket count must be > 0");
    ShardSchema clash =
        new ShardSchema(
            List.of(MySqlColumn.of("shard_number", "int", false)), List.of("shard_number"));
    assertThatThrownBy(() -> TableLayout.derive(clash))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot add column 'shard_number': the source table already has a column of that name; rename it in MySQL");
  }

  @Test
  void layoutIsSerializable() throws Exception {
    TableLayout layout =
        TableLayout.derive(
            SCHEMA.withKeySample(Map.of("tenant", 8L, "id", 10_000L)), 7, null, Map.of("x.y", "z"));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(layout);
    }
    TableLayout copy;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = (TableLayout) in.readObject();
    }
    // The copy describes the same table (Iceberg's Schema has no equals: compared as the layout
    // test does).
    assertThat(copy.icebergSchema().toString()).isEqualTo(layout.icebergSchema().toString());
    assertThat(copy.icebergSchema().identifierFieldIds()).containsExactlyInAnyOrder(1, 2, 3);
    assertThat(copy.icebergSchema().sameSchema(layout.icebergSchema())).isTrue();
    assertThat(copy.spec()).isEqualTo(layout.spec());
    assertThat(copy.spec().fields().get(1).toString()).isEqualTo("1001: id_bucket: bucket[7](3)");
    assertThat(copy.rowType()).isEqualTo(layout.rowType());
    assertThat(copy.equalityColumns()).containsExactly("shard_number", "tenant", "id");
    assertThat(copy.keyColumn()).isEqualTo("id");
    assertThat(copy.buckets()).isEqualTo(7);
    assertThat(copy.properties())
        .containsExactlyEntriesOf(layout.properties())
        .containsEntry("x.y", "z");
    assertThat(copy.createProperties()).isEqualTo(layout.createProperties());
  }
}
