package dev.shardberg.router.tagging;

import static dev.shardberg.router.tagging.ShardTaggingDeserializerTest.LAYOUT;
import static dev.shardberg.router.tagging.ShardTaggingDeserializerTest.PLAN;
import static dev.shardberg.router.tagging.ShardTaggingDeserializerTest.SOURCE;
import static dev.shardberg.router.tagging.ShardTaggingDeserializerTest.record;
import static dev.shardberg.router.tagging.ShardTaggingDeserializerTest.row;
import static dev.shardberg.router.tagging.ShardTaggingDeserializerTest.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.schema.TableSchemaEvolver;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.source.SourceRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopTables;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code TRUNCATE TABLE} of a shard in {@code schema.change-behavior=evolve}: one truncate marker
 * per bucket, in the stream where the DDL was; a TRUNCATE that cannot be told apart from the
 * shard's snapshot stops the job, naming the shard (hand-built records as Flink CDC 3.5.0 delivers
 * them: a DDL record with the table in {@code source} and no table changes).
 */
class TruncateMarkerTest {
  static final Schema DDL =
      SchemaBuilder.struct()
          .name("io.debezium.connector.mysql.SchemaChangeValue")
          .field("source", SOURCE)
          .field("historyRecord", Schema.OPTIONAL_STRING_SCHEMA)
          .build();

  @TempDir Path dir;
  ShardTaggingDeserializer tagger;

  @BeforeEach
  void table() {
    String location = dir.resolve("orders").toString();
    Configuration conf = new Configuration();
    new HadoopTables(conf)
        .create(LAYOUT.icebergSchema(), LAYOUT.spec(), LAYOUT.properties(), location);
    tagger =
        ShardTaggingDeserializer.forHost(
            PLAN,
            "a",
            LAYOUT,
            new TableSchemaEvolver(
                TableLoader.fromHadoopTable(location, conf), "hadoop.shop.orders"));
  }

  static SourceRecord truncate(String table, long binlogMillis) {
    Struct value =
        new Struct(DDL)
            .put("source", new Struct(SOURCE).put("db", "shop").put("table", table))
            .put(
                "historyRecord",
                "{\"databaseName\":\"shop\",\"ddl\":\"TRUNCATE TABLE shop."
                    + table
                    + "\",\"tableChanges\":[]}");
    return new SourceRecord(
        Map.of(),
        Map.of("file", "mariadb-bin.000001", "pos", 1936L, "ts_sec", binlogMillis / 1000),
        "srv",
        null,
        null,
        null,
        DDL,
        value);
  }

  @Test
  void aTruncateBecomesOneMarkerPerBucketOfTheShard() {
    List<RowData> out = run(tagger, truncate("orders_7", System.currentTimeMillis()));
    assertThat(out).hasSize(LAYOUT.buckets());
    for (int bucket = 0; bucket < LAYOUT.buckets(); bucket++) {
      RowData marker = out.get(bucket);
      assertThat(marker.getRowKind()).isEqualTo(RowKind.DELETE);
      assertThat(marker.getArity()).isEqualTo(3);
      assertThat(marker.getInt(0)).isEqualTo(7);
      assertThat(marker.getInt(1)).isEqualTo(bucket);
      assertThat(VersionedRows.schemaId(marker)).isEqualTo(VersionedRows.TRUNCATE_MARKER);
    }
    assertThat(run(tagger, truncate("audit_log", System.currentTimeMillis())))
        .as("not a shard")
        .isEmpty();
  }

  @Test
  void aTruncateRightAfterTheShardsSnapshotRowsStopsTheJobNamingTheShard() {
    assertThat(run(tagger, record("orders_7", "r", null, row(1, "1.00")))).hasSize(1);
    long now = System.currentTimeMillis();
    assertThatThrownBy(() -> run(tagger, truncate("orders_7", now)))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageStartingWith(
            "Cannot replicate 'TRUNCATE TABLE shop.orders_7' on shard 7 ('shop.orders_7' on host 'a'): the TRUNCATE happened while"
                + " this job was reading the shard's snapshot")
        .hasMessageContaining("Re-read this shard alone");
    // another shard, and a TRUNCATE clearly after the snapshot rows, are replicated
    assertThat(run(tagger, truncate("orders_1", now))).hasSize(LAYOUT.buckets());
    assertThat(run(tagger, truncate("orders_7", now + 10_000))).hasSize(LAYOUT.buckets());
  }
}
