package dev.shardberg.router.tagging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.types.MySqlColumn;
import io.debezium.data.Bits;
import io.debezium.time.MicroTimestamp;
import io.debezium.time.ZonedTimestamp;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Decimal;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.source.SourceRecord;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/** Pure conversion logic on hand-built Debezium records; the real CDC path is covered in tests/. */
class ShardTaggingDeserializerTest {

  static final ShardSchema SCHEMA =
      new ShardSchema(
          List.of(
              MySqlColumn.of("id", "bigint unsigned", false),
              MySqlColumn.of("amount", "decimal(10,2)", true),
              MySqlColumn.of("flags", "bit(10)", true),
              MySqlColumn.of("created", "datetime(6)", true),
              MySqlColumn.of("ts", "timestamp(6)", true)),
          List.of("id"));
  static final TableLayout LAYOUT = TableLayout.derive(SCHEMA);
  static final ShardPlan PLAN =
      new ShardPlan(
          Map.of(
              "a",
                  List.of(
                      new ShardTable("a", "shop", "orders_1", 1),
                      new ShardTable("a", "shop", "orders_7", 7)),
              "b", List.of(new ShardTable("b", "shop", "orders_2", 2))),
          SCHEMA);

  static final Schema ROW =
      SchemaBuilder.struct()
          .name("srv.shop.orders.Value")
          .optional()
          .field("id", Schema.INT64_SCHEMA)
          .field("amount", Decimal.builder(2).optional().build())
          .field("flags", Bits.builder(10).optional().build())
          .field("created", MicroTimestamp.builder().optional().build())
          .field("ts", ZonedTimestamp.builder().optional().build())
          .build();
  static final Schema SOURCE =
      SchemaBuilder.struct()
          .name("io.debezium.connector.mysql.Source")
          .field("db", Schema.STRING_SCHEMA)
          .field("table", Schema.OPTIONAL_STRING_SCHEMA)
          .build();
  static final Schema ENVELOPE =
      SchemaBuilder.struct()
          .name("srv.shop.orders.Envelope")
          .field("before", ROW)
          .field("after", ROW)
          .field("source", SOURCE)
          .field("op", Schema.STRING_SCHEMA)
          .build();

  static Struct row(long id, String amount) {
    return new Struct(ROW)
        .put("id", id)
        .put("amount", amount == null ? null : new BigDecimal(amount))
        .put("flags", new byte[] {0x01, 0x02}) // little-endian: 0x0201
        .put("created", 1_700_000_000_123_456L)
        .put("ts", "2023-11-14T22:13:20.654321Z");
  }

  static SourceRecord record(String table, String op, Struct before, Struct after) {
    Struct value =
        new Struct(ENVELOPE)
            .put("before", before)
            .put("after", after)
            .put("source", new Struct(SOURCE).put("db", "shop").put("table", table))
            .put("op", op);
    return new SourceRecord(
        Map.of(), Map.of(), "srv.shop." + table, null, null, null, ENVELOPE, value);
  }

  static List<RowData> run(ShardTaggingDeserializer d, SourceRecord r) {
    List<RowData> out = new ArrayList<>();
    d.deserialize(
        r,
        new Collector<>() {
          @Override
          public void collect(RowData record) {
            out.add(record);
          }

          @Override
          public void close() {}
        });
    return out;
  }

  @Test
  void tagsShardAndMarksOnlySnapshotReadsAsInserts() {
    ShardTaggingDeserializer d = ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT);
    List<RowData> read = run(d, record("orders_7", "r", null, row(1, "1.50")));
    List<RowData> insert = run(d, record("orders_1", "c", null, row(2, "2.00")));
    List<RowData> update = run(d, record("orders_1", "u", row(2, "2.00"), row(2, "3.00")));
    List<RowData> delete = run(d, record("orders_1", "d", row(2, "3.00"), null));
    assertThat(read).extracting(RowData::getRowKind).containsExactly(RowKind.INSERT);
    assertThat(read.get(0).getInt(0)).isEqualTo(7);
    assertThat(insert).extracting(RowData::getRowKind).containsExactly(RowKind.UPDATE_AFTER);
    assertThat(insert.get(0).getInt(0)).isEqualTo(1);
    assertThat(update)
        .extracting(RowData::getRowKind)
        .containsExactly(RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER);
    assertThat(update.get(0).getDecimal(2, 10, 2))
        .isEqualTo(DecimalData.fromBigDecimal(new BigDecimal("2.00"), 10, 2));
    assertThat(update.get(1).getDecimal(2, 10, 2))
        .isEqualTo(DecimalData.fromBigDecimal(new BigDecimal("3.00"), 10, 2));
    assertThat(delete).extracting(RowData::getRowKind).containsExactly(RowKind.DELETE);
  }

  @Test
  void anUpdateThatChangesTheKeyDeletesTheOldKey() {
    ShardTaggingDeserializer d = ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT);
    List<RowData> rekeyed = run(d, record("orders_1", "u", row(2, "2.00"), row(5, "2.00")));
    assertThat(rekeyed)
        .extracting(RowData::getRowKind)
        .containsExactly(RowKind.DELETE, RowKind.UPDATE_AFTER);
    assertThat(rekeyed).extracting(r -> r.getInt(0)).containsExactly(1, 1);
    assertThat(rekeyed)
        .extracting(r -> r.getDecimal(1, 20, 0).toBigDecimal().longValueExact())
        .containsExactly(2L, 5L);
    // the same key, other values: -U (dropped by the writers), no extra delete
    List<RowData> sameKey = run(d, record("orders_1", "u", row(5, "2.00"), row(5, "9.00")));
    assertThat(sameKey)
        .extracting(RowData::getRowKind)
        .containsExactly(RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER);
  }

  @Test
  void aKeyOfBytesIsComparedByValue() {
    ShardSchema schema =
        new ShardSchema(
            List.of(
                MySqlColumn.of("code", "varbinary(8)", false),
                MySqlColumn.of("note", "varchar(10)", true)),
            List.of("code"));
    TableLayout layout = TableLayout.derive(schema);
    ShardPlan plan =
        new ShardPlan(Map.of("a", List.of(new ShardTable("a", "shop", "codes_1", 1))), schema);
    Schema rowSchema =
        SchemaBuilder.struct()
            .name("srv.shop.codes.Value")
            .optional()
            .field("code", Schema.BYTES_SCHEMA)
            .field("note", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    Schema envelope =
        SchemaBuilder.struct()
            .name("srv.shop.codes.Envelope")
            .field("before", rowSchema)
            .field("after", rowSchema)
            .field("source", SOURCE)
            .field("op", Schema.STRING_SCHEMA)
            .build();
    java.util.function.BiFunction<byte[], String, Struct> row =
        (code, note) ->
            new Struct(rowSchema).put("code", java.nio.ByteBuffer.wrap(code)).put("note", note);
    java.util.function.BiFunction<Struct, Struct, SourceRecord> update =
        (before, after) ->
            new SourceRecord(
                Map.of(),
                Map.of(),
                "srv.shop.codes_1",
                null,
                null,
                null,
                envelope,
                new Struct(envelope)
                    .put("before", before)
                    .put("after", after)
                    .put("source", new Struct(SOURCE).put("db", "shop").put("table", "codes_1"))
                    .put("op", "u"));
    ShardTaggingDeserializer d = ShardTaggingDeserializer.forHost(plan, "a", layout);
    assertThat(
            run(
                d,
                update.apply(row.apply(new byte[] {1, 2}, "x"), row.apply(new byte[] {1, 2}, "y"))))
        .extracting(RowData::getRowKind)
        .containsExactly(RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER);
    assertThat(
            run(
                d,
                update.apply(row.apply(new byte[] {1, 2}, "y"), row.apply(new byte[] {1, 3}, "y"))))
        .extracting(RowData::getRowKind)
        .containsExactly(RowKind.DELETE, RowKind.UPDATE_AFTER);
  }

  @Test
  void convertsValuesFaithfully() {
    ShardTaggingDeserializer d = ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT);
    RowData r =
        run(d, record("orders_1", "c", null, row(-1L, null))).get(0); // -1L = 2^64-1 unsigned
    assertThat(r.getDecimal(1, 20, 0).toBigDecimal())
        .isEqualTo(new BigDecimal("18446744073709551615"));
    assertThat(r.isNullAt(2)).isTrue();
    assertThat(r.getBinary(3)).containsExactly(0x02, 0x01);
    assertThat(r.getTimestamp(4, 6))
        .isEqualTo(
            TimestampData.fromLocalDateTime(LocalDateTime.parse("2023-11-14T22:13:20.123456")));
    assertThat(r.getTimestamp(5, 6))
        .isEqualTo(TimestampData.fromInstant(Instant.parse("2023-11-14T22:13:20.654321Z")));
  }

  @Test
  void tableOutsideThePlanIsAnError() {
    ShardTaggingDeserializer d = ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT);
    assertThatThrownBy(() -> run(d, record("orders_2", "c", null, row(1, "1"))))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot route a change of table 'shop.orders_2' on host 'a': it is not in the shard plan (this host's shards: [shop.orders_1, shop.orders_7]). The source's table list and the plan disagree; restart the job so discovery runs again");
  }

  @Test
  void schemaChangeRecordStopsWithShardAndDdl() {
    Schema ddlSchema =
        SchemaBuilder.struct()
            .name("io.debezium.connector.mysql.SchemaChangeValue")
            .field("source", SOURCE)
            .field("databaseName", Schema.OPTIONAL_STRING_SCHEMA)
            .field("ddl", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    Struct value =
        new Struct(ddlSchema)
            .put("source", new Struct(SOURCE).put("db", "shop").put("table", "orders_7"))
            .put("databaseName", "shop")
            .put("ddl", "ALTER TABLE orders_7 ADD COLUMN x INT");
    SourceRecord r =
        new SourceRecord(Map.of(), Map.of(), "srv", null, null, null, ddlSchema, value);
    assertThatThrownBy(() -> run(ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT), r))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot apply a schema change on shard 7 ('shop.orders_7' on host 'a'): DDL 'ALTER TABLE orders_7 ADD COLUMN x INT'. schema.change-behavior is 'fail', so the job stops here for good (no restarts); nothing after the last completed checkpoint is lost. To let the table follow the shards, set schema.change-behavior to 'evolve' and restore the job from its latest checkpoint (docs/schema-evolution.md)");
  }

  @Test
  void schemaChangeAsFlinkCdcHistoryRecord() {
    Schema ddlSchema =
        SchemaBuilder.struct()
            .name("io.debezium.connector.mysql.SchemaChangeValue")
            .field("source", SOURCE)
            .field("historyRecord", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    Struct value =
        new Struct(ddlSchema)
            .put("source", new Struct(SOURCE).put("db", "shop").put("table", "orders_1"))
            .put(
                "historyRecord",
                "{\"databaseName\":\"shop\",\"ddl\":\"ALTER TABLE orders_1 DROP COLUMN amount\",\"tableChanges\":[]}");
    SourceRecord r =
        new SourceRecord(Map.of(), Map.of(), "srv", null, null, null, ddlSchema, value);
    assertThatThrownBy(() -> run(ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT), r))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageStartingWith(
            "Cannot apply a schema change on shard 1 ('shop.orders_1' on host 'a'): DDL 'ALTER TABLE orders_1 DROP COLUMN amount'.");
  }

  @Test
  void rowWithOtherColumnsIsASchemaChange() {
    Schema wider =
        SchemaBuilder.struct()
            .name("v")
            .optional()
            .field("id", Schema.INT64_SCHEMA)
            .field("x", Schema.OPTIONAL_INT32_SCHEMA)
            .build();
    Schema env =
        SchemaBuilder.struct()
            .name("e")
            .field("before", wider)
            .field("after", wider)
            .field("source", SOURCE)
            .field("op", Schema.STRING_SCHEMA)
            .build();
    Struct value =
        new Struct(env)
            .put("after", new Struct(wider).put("id", 1L).put("x", 2))
            .put("source", new Struct(SOURCE).put("db", "shop").put("table", "orders_1"))
            .put("op", "c");
    SourceRecord r = new SourceRecord(Map.of(), Map.of(), "t", null, null, null, env, value);
    assertThatThrownBy(() -> run(ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT), r))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageStartingWith(
            "Cannot apply a schema change on shard 1 ('shop.orders_1' on host 'a'): its change records have columns [id, x] but the table layout has [id, amount, flags, created, ts].");
  }

  @Test
  void tableListsEscapeRegexMetacharacters() {
    ShardPlan plan =
        new ShardPlan(
            Map.of(
                "a",
                List.of(
                    new ShardTable("a", "app.v2", "orders$1", 1),
                    new ShardTable("a", "app.v2", "orders_2", 2))),
            SCHEMA);
    assertThat(ShardTaggingDeserializer.tableListOf(plan, "a"))
        .containsExactly("app\\.v2.orders\\$1", "app\\.v2.orders_2");
    assertThat(ShardTaggingDeserializer.databaseListOf(plan, "a")).containsExactly("app\\.v2");
    assertThat(ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT).getProducedType().toString())
        .contains("shard_number");
  }

  @Test
  void theEvolvingCaptureListAddsEachShardsGhOstAndPtOscShadowTables() {
    ShardPlan plan =
        new ShardPlan(
            Map.of(
                "a",
                List.of(
                    new ShardTable("a", "app.v2", "orders$1", 1),
                    new ShardTable("a", "app.v2", "orders_2", 2))),
            SCHEMA);
    String[] list = ShardTaggingDeserializer.captureListOf(plan, "a");
    assertThat(list)
        .containsExactly(
            "app\\.v2.orders\\$1", "app\\.v2.orders_2",
            "app\\.v2._+orders\\$1_gho", "app\\.v2._+orders\\$1_new",
            "app\\.v2._+orders_2_gho", "app\\.v2._+orders_2_new");
    // Flink CDC and Debezium match each entry against the whole "db.table"
    java.util.function.Predicate<String> captured =
        name ->
            java.util.Arrays.stream(list)
                .anyMatch(regex -> java.util.regex.Pattern.matches(regex, name));
    assertThat(
            List.of(
                "app.v2._orders_2_gho",
                "app.v2._orders_2_new",
                "app.v2.__orders_2_new",
                "app.v2._orders$1_gho"))
        .allMatch(captured);
    assertThat(
            List.of(
                "app.v2._orders_2_ghc",
                "app.v2._orders_2_del",
                "app.v2._orders_2_old",
                "app.v2._orders_20_gho",
                "app.v2.orders_2_new"))
        .noneMatch(captured);
  }

  @Test
  void rowsOfAShadowTableAreDroppedWhenEvolvingAndRefusedOtherwise() {
    TableSchemaEvolver evolver =
        new TableSchemaEvolver(
            org.apache.iceberg.flink.TableLoader.fromHadoopTable("file:/nonexistent"), "t");
    ShardTaggingDeserializer evolving =
        ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT, evolver);
    assertThat(run(evolving, record("_orders_7_gho", "c", null, row(1, "1.50")))).isEmpty();
    assertThat(run(evolving, record("__orders_1_new", "r", null, row(1, "1.50")))).isEmpty();
    assertThatThrownBy(() -> run(evolving, record("_orders_2_gho", "c", null, row(1, "1.50"))))
        .as("shard 2 is on host b")
        .isInstanceOf(ShardRouterException.class)
        .hasMessageStartingWith(
            "Cannot route a change of table 'shop._orders_2_gho' on host 'a': it is not in the shard plan");
    assertThatThrownBy(
            () ->
                run(
                    ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT),
                    record("_orders_7_gho", "c", null, row(1, "1.50"))))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageStartingWith(
            "Cannot route a change of table 'shop._orders_7_gho' on host 'a': it is not in the shard plan");
  }

  // tables.new-shards: capture

  /**
   * Database and table patterns that both name their group {@code shard} (as one config may for
   * shards spread over databases and tables): the capture regex names none, and still matches the
   * same tables (a regex naming two groups alike does not compile: every source failed at start).
   */
  @Test
  void theCapturePatternOfPatternsThatBothNameAShardGroupCompilesAndMatchesTheSameTables() {
    String regex =
        ShardTaggingDeserializer.capturePatternOf(
            "shop|shop_(?<shard>\\d+)", "orders|orders_(?<shard>\\d+)");
    assertThat(regex).isEqualTo("(?:shop|shop_(?:\\d+))\\.(?:orders|orders_(?:\\d+))");
    java.util.regex.Pattern pattern = java.util.regex.Pattern.compile(regex);
    assertThat(pattern.matcher("shop_3.orders").matches()).isTrue();
    assertThat(pattern.matcher("shop.orders_12").matches()).isTrue();
    assertThat(pattern.matcher("shop.orders_x").matches()).isFalse();
    // anchored patterns (discovery matches whole names either way) match inside the joined regex
    java.util.regex.Pattern anchored =
        java.util.regex.Pattern.compile(
            ShardTaggingDeserializer.capturePatternOf("^shop$", "^orders_(?<shard>\\d+)$"));
    assertThat(anchored.matcher("shop.orders_7").matches()).isTrue();
    assertThat(ShardTaggingDeserializer.unanchored("orders_\\$")).isEqualTo("orders_\\$");
    // lookarounds, escaped parentheses and classes are left alone
    assertThat(ShardTaggingDeserializer.withoutGroupNames("a(?<=b)\\(?<c>[(?<d>](?<n>x)"))
        .isEqualTo("a(?<=b)\\(?<c>[(?<d>](?:x)");
  }

  static ShardTaggingDeserializer capturing(Integer... excluded) {
    dev.shardberg.router.discovery.MySqlHost a =
        new dev.shardberg.router.discovery.MySqlHost(
            "a", "db-a.example", 3306, "cdc", dev.shardberg.router.Secret.of("pw"), Map.of());
    dev.shardberg.router.discovery.LogicalTableSpec spec =
        new dev.shardberg.router.discovery.LogicalTableSpec(
            List.of(a),
            "shop",
            "orders_(?<shard>\\d+)",
            Map.of(),
            List.of(),
            java.util.Set.of(excluded));
    return ShardTaggingDeserializer.forHost(PLAN, "a", LAYOUT)
        .capturing(new NewShardCapture(spec, PLAN, java.util.UUID.randomUUID().toString()));
  }

  static SourceRecord created(String table) {
    Schema ddlSchema =
        SchemaBuilder.struct()
            .name("io.debezium.connector.mysql.SchemaChangeValue")
            .field("source", SOURCE)
            .field("historyRecord", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    Struct value =
        new Struct(ddlSchema)
            .put("source", new Struct(SOURCE).put("db", "shop").put("table", table))
            .put(
                "historyRecord",
                "{\"databaseName\":\"shop\",\"ddl\":\"CREATE TABLE "
                    + table
                    + " LIKE orders_1\",\"tableChanges\":[{\"type\":\"CREATE\",\"id\":\"\\\"shop\\\".\\\""
                    + table
                    + "\\\"\",\"table\":{\"columns\":[]}}]}");
    return new SourceRecord(Map.of(), Map.of(), "srv", null, null, null, ddlSchema, value);
  }

  @Test
  void aShardTableCreatedWhileTheJobRunsIsReadFromItsCreateTableOn() {
    ShardTaggingDeserializer d = capturing();
    // before its CREATE TABLE was read: a table the job does not read (dropped, no error)
    assertThat(run(d, record("orders_9", "c", null, row(1, "1")))).isEmpty();
    assertThat(run(d, created("orders_9"))).isEmpty();
    List<RowData> rows = run(d, record("orders_9", "c", null, row(2, "2.50")));
    assertThat(rows).singleElement().satisfies(r -> assertThat(r.getInt(0)).isEqualTo(9));
    assertThat(rows.get(0).getRowKind()).isEqualTo(RowKind.UPDATE_AFTER);
    // a table matching the patterns that was never seen created (renamed into them): not read
    assertThat(run(d, record("orders_3", "u", row(1, "1"), row(1, "2")))).isEmpty();
    // the planned shards as before
    assertThat(run(d, record("orders_1", "c", null, row(3, "1"))))
        .singleElement()
        .satisfies(r -> assertThat(r.getInt(0)).isEqualTo(1));
  }

  @Test
  void aCreatedTableWhoseNumberIsTakenStopsTheJobNamingBothTables() {
    assertThatThrownBy(() -> run(capturing(), created("orders_01")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageContaining(
            "shard number 1 is taken by 'shop.orders_1' on host 'a' and 'shop.orders_01' on host 'a'"
                + " (created while the job runs)");
    // a number another host's shard has
    assertThatThrownBy(() -> run(capturing(), created("orders_02")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageContaining("shard number 2 is taken by 'shop.orders_2' on host 'b'");
    // two tables created with one number
    ShardTaggingDeserializer d = capturing();
    run(d, created("orders_9"));
    assertThatThrownBy(() -> run(d, created("orders_09")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageContaining("shard number 9 is taken by 'shop.orders_9' on host 'a'");
  }

  @Test
  void anExcludedNumberIsNotCaptured() {
    ShardTaggingDeserializer d = capturing(9);
    assertThat(run(d, created("orders_9"))).isEmpty();
    assertThat(run(d, record("orders_9", "c", null, row(1, "1")))).isEmpty();
  }

  @Test
  void binlogRowsOfAPlannedTableWaitForItsSnapshotWhileItsSnapshotRowsPass() {
    ShardTaggingDeserializer d = capturing();
    java.util.Set<String> waiting = new java.util.HashSet<>(java.util.Set.of("shop.orders_7"));
    d.onRestoredBinlogSplit(waiting::contains, List.of(), (table, shard) -> {});
    assertThat(run(d, record("orders_7", "c", null, row(1, "1")))).isEmpty();
    assertThat(run(d, record("orders_7", "d", row(1, "1"), null))).isEmpty();
    assertThat(run(d, record("orders_7", "r", null, row(2, "1")))).hasSize(1);
    assertThat(run(d, record("orders_1", "c", null, row(3, "1")))).hasSize(1);
    waiting.clear(); // the binlog split holds its snapshot now
    assertThat(run(d, record("orders_7", "c", null, row(4, "1")))).hasSize(1);
  }

  @Test
  void aTableCapturedBeforeARestoreIsReadOnAndItsReplayedCreateTableChangesNothing() {
    ShardTaggingDeserializer d = capturing();
    List<String> said = new ArrayList<>();
    d.onRestoredBinlogSplit(
        table -> false, List.of("shop.orders_9"), (table, shard) -> said.add(table + "=" + shard));
    assertThat(said).containsExactly("shop.orders_9=9");
    assertThat(run(d, record("orders_9", "c", null, row(1, "1"))))
        .singleElement()
        .satisfies(r -> assertThat(r.getInt(0)).isEqualTo(9));
    // its CREATE TABLE, read again from before the checkpoint: no schema change
    assertThat(run(d, created("orders_9"))).isEmpty();
    assertThat(run(d, record("orders_9", "c", null, row(2, "1")))).hasSize(1);
  }
}
