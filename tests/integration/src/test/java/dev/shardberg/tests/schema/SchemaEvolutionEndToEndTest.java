package dev.shardberg.tests.schema;

import static dev.shardberg.tests.cli.CliRun.cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.tests.cli.CliRun;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.SmallOrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema changes on real MariaDB shards while the job runs ({@code schema.change-behavior=evolve},
 * docs/schema-evolution.md), with inserts, updates and deletes going on on every shard; after each
 * step the Iceberg table holds exactly the expected rows, a shard without a column reading NULL.
 *
 * <p>Three shards {@code shop.orders_0..2} (id BIGINT key, qty INT NOT NULL, note VARCHAR(20)
 * NULL). The rollout of {@code discount DECIMAL(8,2)} arrives shard by shard over several
 * checkpoints, at different positions; DDL that changes no column is ignored; qty is widened to
 * BIGINT; note is dropped on one shard; an incompatible change stops the job at once naming shard,
 * column and DDL.
 */
class SchemaEvolutionEndToEndTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(3);
  private static final String USER = "schema_cdc";
  private static final String PASSWORD = "schema-pw";
  private static final int SHARDS = 3;

  /** The columns the test reads back, in order; a column the table lacks reads "null". */
  private static final List<String> COLUMNS = List.of("qty", "note", "discount");

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () ->
              new MiniClusterResourceConfiguration.Builder()
                  .setNumberTaskManagers(1)
                  .setNumberSlotsPerTaskManager(4)
                  .build());

  @TempDir static Path dir;
  static EmbeddedMariaDb server;
  static Path passwordFile;

  /** shard → id → [qty, note, discount] as the table must render them. */
  static final Map<Integer, TreeMap<Long, String[]>> expected = new TreeMap<>();

  @BeforeAll
  static void start() throws Exception {
    server = EmbeddedMariaDb.start("schema", 41);
    server.createCdcUser(USER, PASSWORD);
    passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
    SmallOrdersShards.create(server, "shop", SHARDS);
    for (int s = 0; s < SHARDS; s++) {
      expected.put(s, new TreeMap<>());
      for (long id = 1; id <= 10; id++) {
        insert(s, id, (int) id, "n" + id);
      }
    }
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  static void insert(int shard, long id, int qty, String note) {
    server.execute(
        "INSERT INTO shop.orders_"
            + shard
            + " (id, qty, note) VALUES ("
            + id
            + ", "
            + qty
            + ", "
            + sql(note)
            + ")");
    expected.get(shard).put(id, new String[] {Integer.toString(qty), String.valueOf(note), "null"});
  }

  static void insertWithDiscount(int shard, long id, int qty, String discount) {
    server.execute(
        "INSERT INTO shop.orders_"
            + shard
            + " (id, qty, discount) VALUES ("
            + id
            + ", "
            + qty
            + ", "
            + discount
            + ")");
    expected
        .get(shard)
        .put(id, new String[] {Integer.toString(qty), "null", new BigDecimal(discount).toString()});
  }

  static void setQty(int shard, long id, long qty) {
    server.execute("UPDATE shop.orders_" + shard + " SET qty = " + qty + " WHERE id = " + id);
    expected.get(shard).get(id)[0] = Long.toString(qty);
  }

  static void setDiscount(int shard, long id, String discount) {
    server.execute(
        "UPDATE shop.orders_" + shard + " SET discount = " + discount + " WHERE id = " + id);
    expected.get(shard).get(id)[2] = new BigDecimal(discount).toString();
  }

  static void delete(int shard, long id) {
    server.execute("DELETE FROM shop.orders_" + shard + " WHERE id = " + id);
    expected.get(shard).remove(id);
  }

  static String sql(String v) {
    return v == null ? "NULL" : "'" + v + "'";
  }

  static List<String> expectedRows() {
    List<String> rows = new ArrayList<>();
    expected.forEach(
        (shard, byId) ->
            byId.forEach((id, v) -> rows.add(shard + "|" + id + "|" + String.join("|", v))));
    rows.sort(null);
    return rows;
  }

  static List<String> actualRows(Table table) {
    return TableRows.of(table, COLUMNS.toArray(String[]::new));
  }

  static void awaitRows(Table table) {
    List<String> rows = expectedRows();
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .ignoreExceptions()
        .until(() -> actualRows(table).equals(rows));
  }

  /**
   * The config of a job on the shards {@code <database>.orders_N}, into table {@code shop.<table>}.
   */
  static TestConfig config(String database, String pipelineId, String table) {
    return TestConfig.pipeline(pipelineId)
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(2)
        .restart(5, "1s")
        .source(
            new TestConfig.Source("schema", server.host(), server.port())
                .user(USER)
                .passwordFile(passwordFile)
                .serverIds("5700-5701")
                .withoutTls())
        .tables(database, "orders_(?<shard>\\d+)")
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table("shop", table);
  }

  @Test
  void aRolloutHalfDoneAtStartUpIsTheUnionAndValidatePrintsEachShardsDifferences()
      throws Exception {
    server.execute(
        "CREATE DATABASE half",
        SmallOrdersShards.createTable("half", 0),
        "CREATE TABLE half.orders_1 (id BIGINT NOT NULL PRIMARY KEY, qty BIGINT NOT NULL, note VARCHAR(40) NULL, discount DECIMAL(8,2) NULL)",
        "INSERT INTO half.orders_0 VALUES (1, 1, 'a'), (2, 2, NULL)",
        "INSERT INTO half.orders_1 VALUES (1, 5000000000, 'b', 1.25), (3, 3, 'c', NULL)");
    Path file = config("half", "schema-half", "half_orders").write(dir.resolve("half.yaml"));
    CliRun validate = cli("validate", "--config", file.toString());
    assertThat(validate.exit()).as(validate.err()).isZero();
    assertThat(validate.out())
        .contains(
            "Shards that differ from the table schema (evolvable; schema.change-behavior=evolve):")
        .contains("  shard 0: column 'qty' is int")
        .contains("  shard 0: lacks column 'discount' (reads NULL)")
        .contains("  shard 1: column 'note' is varchar(40) NULL");

    ShardbergConfig config = ShardbergConfig.load(file);
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    try {
      Table table = Catalogs.loadTable(config.target());
      assertThat(table.schema().findField("qty").type()).isEqualTo(Types.LongType.get());
      assertThat(table.schema().findField("discount").isOptional()).isTrue();
      List<String> rows =
          List.of("0|1|1|a|null", "0|2|2|null|null", "1|1|5000000000|b|1.25", "1|3|3|c|null");
      await()
          .atMost(CAUGHT_UP)
          .pollInterval(Duration.ofMillis(300))
          .ignoreExceptions()
          .until(() -> actualRows(table).equals(rows));
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.toString()).isTrue();
    } finally {
      job.cancel().get();
      await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
    }
  }

  @Test
  void aRestoreFromASavepointTakenBeforeTheDdlReplaysItIdempotently() throws Exception {
    server.execute(
        "CREATE DATABASE replay",
        "CREATE TABLE replay.orders_0 (id BIGINT NOT NULL PRIMARY KEY, qty INT NOT NULL)",
        "CREATE TABLE replay.orders_1 (id BIGINT NOT NULL PRIMARY KEY, qty INT NOT NULL)",
        "INSERT INTO replay.orders_0 VALUES (1, 1), (2, 2)",
        "INSERT INTO replay.orders_1 VALUES (1, 10)");
    Path file =
        config("replay", "schema-replay", "replay_orders").write(dir.resolve("replay.yaml"));
    ShardbergConfig config = ShardbergConfig.load(file);
    JobClient first =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table = Catalogs.loadTable(config.target());
    String savepoint;
    try {
      awaitExactly(table, List.of("0|1|1|null", "0|2|2|null", "1|1|10|null"));
      savepoint =
          first
              .triggerSavepoint(
                  dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
              .get();
      // after the savepoint: the DDL and rows that need it, committed by the first job
      server.execute(
          "INSERT INTO replay.orders_0 VALUES (3, 3)",
          "ALTER TABLE replay.orders_0 ADD COLUMN tag VARCHAR(10) NULL",
          "INSERT INTO replay.orders_0 VALUES (4, 4, 'four')",
          "UPDATE replay.orders_0 SET tag = 'one', qty = 11 WHERE id = 1",
          "DELETE FROM replay.orders_0 WHERE id = 2",
          "UPDATE replay.orders_1 SET qty = 100 WHERE id = 1");
      awaitExactly(table, List.of("0|1|11|one", "0|3|3|null", "0|4|4|four", "1|1|100|null"));
    } finally {
      first.cancel().get();
      await().atMost(CAUGHT_UP).until(() -> first.getJobStatus().get().isGloballyTerminalState());
    }
    int schemaAfterDdl = table.schema().schemaId();
    server.execute("INSERT INTO replay.orders_1 VALUES (2, 20)"); // while the job is down

    // restored from before the DDL: the rows and the DDL replay onto the evolved table
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    JobClient second =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
    try {
      awaitExactly(
          table, List.of("0|1|11|one", "0|3|3|null", "0|4|4|four", "1|1|100|null", "1|2|20|null"));
      table.refresh();
      assertThat(table.schema().schemaId())
          .as("the replayed DDL changed nothing")
          .isEqualTo(schemaAfterDdl);
      server.execute("INSERT INTO replay.orders_0 VALUES (5, 5, 'five')");
      awaitExactly(
          table,
          List.of(
              "0|1|11|one",
              "0|3|3|null",
              "0|4|4|four",
              "0|5|5|five",
              "1|1|100|null",
              "1|2|20|null"));
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.toString()).isTrue();
    } finally {
      second.cancel().get();
      await().atMost(CAUGHT_UP).until(() -> second.getJobStatus().get().isGloballyTerminalState());
    }
  }

  /**
   * A failover after the shard's schema change was committed to the table and before the rows that
   * use it were: checkpoints are taken only on demand here (the interval is an hour), so the DDL's
   * schema commit lands at once and its rows stay uncommitted when the job dies. The job restored
   * from the checkpoint taken before the DDL replays the DDL (nothing left to change) and the rows,
   * each once.
   */
  @Test
  void aFailoverBetweenTheSchemaCommitAndTheCommitOfItsRowsNeitherLosesNorDuplicates(
      @InjectClusterClient ClusterClient<?> client) throws Exception {
    server.execute(
        "CREATE DATABASE failover",
        "CREATE TABLE failover.orders_0 (id BIGINT NOT NULL PRIMARY KEY, qty INT NOT NULL)",
        "CREATE TABLE failover.orders_1 (id BIGINT NOT NULL PRIMARY KEY, qty INT NOT NULL)",
        "INSERT INTO failover.orders_0 VALUES (1, 1), (2, 2), (3, 3)",
        "INSERT INTO failover.orders_1 VALUES (1, 10)");
    Path file =
        config("failover", "schema-failover", "failover_orders")
            .checkpointInterval("1h")
            .checkpointDir(dir.resolve("failover-checkpoints").toUri())
            .write(dir.resolve("failover.yaml"));
    ShardbergConfig config = ShardbergConfig.load(file);
    PrintWriter console = new PrintWriter(new StringWriter(), true);
    JobClient first =
        ShardbergPipeline.start(LocalCheckpoints.environment(config, false, console), config);
    Table table = Catalogs.loadTable(config.target());
    List<String> before = List.of("0|1|1|null", "0|2|2|null", "0|3|3|null", "1|1|10|null");
    int schemaBefore;
    try {
      // a checkpoint on demand commits what was read so far
      // (ignoring the refusals while the tasks are still starting)
      await()
          .atMost(CAUGHT_UP)
          .pollInterval(Duration.ofSeconds(1))
          .ignoreExceptions()
          .until(
              () -> {
                client.triggerCheckpoint(first.getJobID(), CheckpointType.FULL).get();
                return exactly(table, before);
              });
      schemaBefore = table.schema().schemaId();
      server.execute(
          "ALTER TABLE failover.orders_0 ADD COLUMN tag VARCHAR(10) NULL",
          "INSERT INTO failover.orders_0 VALUES (4, 4, 'four')",
          "UPDATE failover.orders_0 SET tag = 'one', qty = 11 WHERE id = 1",
          "DELETE FROM failover.orders_0 WHERE id = 2",
          "UPDATE failover.orders_1 SET qty = 100 WHERE id = 1");
      await()
          .atMost(CAUGHT_UP)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                table.refresh();
                return table.schema().findField("tag") != null;
              });
    } finally {
      first.cancel().get(); // dies before any checkpoint after the DDL
      await().atMost(CAUGHT_UP).until(() -> first.getJobStatus().get().isGloballyTerminalState());
    }
    assertThat(table.schema().schemaId())
        .as("the schema change is committed")
        .isGreaterThan(schemaBefore);
    assertThat(exactly(table, before)).as("its rows are not").isTrue();

    // resumed from the newest retained checkpoint, as a local run does
    JobClient second =
        ShardbergPipeline.start(LocalCheckpoints.environment(config, false, console), config);
    try {
      int evolved = table.schema().schemaId();
      List<String> after = List.of("0|1|11|one", "0|3|3|null", "0|4|4|four", "1|1|100|null");
      await()
          .atMost(CAUGHT_UP)
          .pollInterval(Duration.ofSeconds(1))
          .ignoreExceptions()
          .until(
              () -> {
                client.triggerCheckpoint(second.getJobID(), CheckpointType.FULL).get();
                return exactly(table, after);
              });
      table.refresh();
      assertThat(table.schema().schemaId())
          .as("the replayed DDL changed nothing")
          .isEqualTo(evolved);
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.toString()).isTrue();
    } finally {
      second.cancel().get();
      await().atMost(CAUGHT_UP).until(() -> second.getJobStatus().get().isGloballyTerminalState());
    }
  }

  /** True when the table holds exactly {@code rows} (shard|id|qty|tag), no key twice. */
  static boolean exactly(Table table, List<String> rows) {
    return TableRows.of(table, "qty", "tag").equals(rows);
  }

  /**
   * The rollout in flight on the Hive catalog (a real metastore over Thrift, with {@code
   * hive.metastore.disallow.incompatible.col.type.changes} on): an added column, a widening and a
   * dropped column reach the table through Iceberg's schema API while rows keep changing.
   */
  @Test
  void aRolloutInFlightOnTheHiveCatalog() throws Exception {
    org.apache.hadoop.hive.conf.HiveConf hiveConf = new org.apache.hadoop.hive.conf.HiveConf();
    hiveConf.set(
        "hive.metastore.expression.proxy",
        "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy");
    hiveConf.set("hive.metastore.disallow.incompatible.col.type.changes", "true");
    org.apache.iceberg.hive.TestHiveMetastore metastore =
        new org.apache.iceberg.hive.TestHiveMetastore();
    metastore.start(hiveConf);
    try {
      server.execute(
          "CREATE DATABASE hived",
          SmallOrdersShards.createTable("hived", 0),
          SmallOrdersShards.createTable("hived", 1),
          "INSERT INTO hived.orders_0 VALUES (1, 1, 'a'), (2, 2, 'b')",
          "INSERT INTO hived.orders_1 VALUES (1, 10, 'c')");
      String uri =
          metastore
              .hiveConf()
              .get(org.apache.hadoop.hive.conf.HiveConf.ConfVars.METASTOREURIS.varname);
      // the same job on a hive catalog instead of the hadoop one
      Path file =
          config("hived", "schema-hive", "orders")
              .hiveCatalog(uri, dir.resolve("hive-warehouse").toUri())
              .catalogName("hms")
              .table("hived", "orders")
              .write(dir.resolve("hive.yaml"));
      ShardbergConfig config = ShardbergConfig.load(file);
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      try {
        Table table = Catalogs.loadTable(config.target());
        assertThat(table.name()).isEqualTo("hms.hived.orders");
        await()
            .atMost(CAUGHT_UP)
            .pollInterval(Duration.ofMillis(300))
            .ignoreExceptions()
            .until(
                () ->
                    hiveRows(table)
                        .equals(List.of("0|1|1|a|null", "0|2|2|b|null", "1|1|10|c|null")));
        server.execute(
            "ALTER TABLE hived.orders_0 ADD COLUMN tag VARCHAR(10) NULL",
            "INSERT INTO hived.orders_0 (id, qty, note, tag) VALUES (3, 3, 'x', 'three')",
            "UPDATE hived.orders_1 SET qty = 11 WHERE id = 1",
            "ALTER TABLE hived.orders_1 MODIFY qty BIGINT NOT NULL",
            "UPDATE hived.orders_1 SET qty = 5000000000 WHERE id = 1",
            "ALTER TABLE hived.orders_0 DROP COLUMN note",
            "UPDATE hived.orders_0 SET qty = 22 WHERE id = 2",
            "DELETE FROM hived.orders_0 WHERE id = 1");
        await()
            .atMost(CAUGHT_UP)
            .pollInterval(Duration.ofMillis(300))
            .ignoreExceptions()
            .until(
                () ->
                    hiveRows(table)
                        .equals(
                            List.of("0|2|22|null|null", "0|3|3|x|three", "1|1|5000000000|c|null")));
        table.refresh();
        assertThat(table.schema().findField("qty").type()).isEqualTo(Types.LongType.get());
        assertThat(table.schema().findField("note").isOptional()).isTrue();
        // the metastore's own view of the columns follows (engine.hive.enabled keeps its schema in
        // sync)
        assertThat(
                metastore.getTable("hived", "orders").getSd().getCols().stream()
                    .map(c -> c.getName() + ":" + c.getType()))
            .contains("qty:bigint", "tag:string");
        VerifyReport report = Reconciliation.verify(config, 5);
        assertThat(report.matches()).as(report.toString()).isTrue();
      } finally {
        job.cancel().get();
        await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
      }
    } finally {
      metastore.stop();
    }
  }

  /** shard|id|qty|note|tag of the table, "null" for a column it lacks. */
  static List<String> hiveRows(Table table) {
    return TableRows.of(table, "qty", "note", "tag");
  }

  /** shard|id|qty|tag, "null" for a column the table lacks. */
  static void awaitExactly(Table table, List<String> rows) {
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .ignoreExceptions()
        .until(() -> exactly(table, rows));
  }

  @Test
  void aRolloutAcrossTheShardsEvolvesTheTableInFlightAndAnIncompatibleChangeStopsAtOnce()
      throws Exception {
    ShardbergConfig config =
        ShardbergConfig.load(
            config("shop", "schema-evolve", "orders").write(dir.resolve("evolve.yaml")));
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    try {
      Table table = Catalogs.loadTable(config.target());
      awaitRows(table);
      int firstSchema = table.schema().schemaId();

      // DDL that changes no column: ignored, the job goes on
      server.execute(
          "ALTER TABLE shop.orders_1 ADD INDEX ix_qty (qty)",
          "ALTER TABLE shop.orders_1 ENGINE=InnoDB",
          "ALTER TABLE shop.orders_2 COMMENT = 'orders of shard 2'",
          "OPTIMIZE TABLE shop.orders_2");
      // the rollout's first shard, in the middle of changes on every shard
      insert(1, 11, 11, "before");
      setQty(2, 3, 33);
      server.execute("ALTER TABLE shop.orders_0 ADD COLUMN discount DECIMAL(8,2) NULL AFTER qty");
      insertWithDiscount(0, 11, 11, "1.50");
      setDiscount(0, 2, "2.25");
      delete(0, 3);
      insert(2, 11, 11, "other shard");
      delete(1, 4);
      awaitRows(table);
      Types.NestedField discount = table.schema().findField("discount");
      assertThat(discount.isOptional()).isTrue();
      assertThat(discount.type()).isEqualTo(Types.DecimalType.of(8, 2));
      assertThat(discount.doc()).isEqualTo("decimal(8,2)");
      assertThat(table.schemas().keySet())
          .as("one schema change for the new column, none for the other DDL")
          .containsExactlyInAnyOrder(firstSchema, firstSchema + 1);
      // verify: the shards at two schema versions against the one table; shards 1 and 2 read
      // discount as NULL
      VerifyReport report = Reconciliation.verify(config, 5);
      assertThat(report.matches()).as(report.toString()).isTrue();

      // the rest of the rollout, one shard per checkpoint or so, at another position; the same
      // column
      // arriving again changes nothing; qty widened on one shard; note dropped on another
      server.execute("ALTER TABLE shop.orders_1 ADD COLUMN discount DECIMAL(8,2) NULL");
      insertWithDiscount(1, 12, 12, "3.00");
      setQty(0, 5, 55);
      awaitRows(table);
      server.execute(
          "ALTER TABLE shop.orders_2 ADD COLUMN discount DECIMAL(8,2) NULL FIRST, MODIFY qty BIGINT NOT NULL");
      setQty(2, 6, 5_000_000_000L);
      setDiscount(2, 6, "6.60");
      server.execute("ALTER TABLE shop.orders_1 DROP COLUMN note");
      setQty(1, 5, 500); // its note is gone on the shard: NULL from now on
      expected.get(1).get(5L)[1] = "null";
      insertWithDiscount(1, 13, 13, "4.40");
      delete(2, 7);
      awaitRows(table);
      assertThat(table.schema().findField("qty").type()).isEqualTo(Types.LongType.get());
      assertThat(table.schema().findField("note").isOptional()).isTrue();
      assertThat(table.schema().columns().stream().map(Types.NestedField::name))
          .containsExactly("shard_number", "id", "qty", "note", "discount");
      // shard 1's older rows keep their note in the table, which MySQL dropped: verify leaves that
      // column
      // out for shard 1 (and still compares it for the others)
      assertThat(table.properties()).containsEntry("shardberg.dropped-columns.1", "note");
      VerifyReport afterDrop = Reconciliation.verify(config, 5);
      assertThat(afterDrop.matches()).as(afterDrop.toString()).isTrue();

      // not evolvable: the job stops at once (no restarts), naming shard, column and DDL
      server.execute("ALTER TABLE shop.orders_2 MODIFY qty VARCHAR(30) NOT NULL");
      Throwable failure =
          catchThrowable(() -> job.getJobExecutionResult().get(2, TimeUnit.MINUTES));
      assertThat(ExceptionUtils.findThrowable(failure, ShardRouterException.class))
          .as("failure %s", failure)
          .get()
          .extracting(Throwable::getMessage)
          .asString()
          .startsWith(
              "Cannot evolve the table for a schema change on shard 2 ('shop.orders_2' on host 'schema'), column 'qty':"
                  + " column 'qty' changes from bigint NOT NULL (Iceberg long) to varchar(30) NOT NULL (Iceberg string): a"
                  + " narrowing or incompatible change")
          .contains("DDL: 'ALTER TABLE shop.orders_2 MODIFY qty VARCHAR(30) NOT NULL'")
          .contains("docs/schema-evolution.md");
      awaitRows(table); // everything before the DDL is in the table, nothing after it
    } finally {
      if (!job.getJobExecutionResult().isDone()) {
        job.cancel().get();
      }
      await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
    }
  }
}
