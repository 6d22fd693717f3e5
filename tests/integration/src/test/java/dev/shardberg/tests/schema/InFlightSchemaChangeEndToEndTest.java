package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.job.CapturedLog;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.SmallOrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema changes the binlog reader does not see as a plain {@code ALTER} of a shard, on real
 * MariaDB shards while the job runs ({@code schema.change-behavior=evolve},
 * docs/schema-evolution.md), with inserts, updates and deletes going on on the other shards:
 *
 * <ul>
 *   <li>online schema-change tools: gh-ost and pt-online-schema-change build a shadow table that
 *       does not match the shard pattern, copy the rows into it while the shard's writes go on, and
 *       swap it in with one atomic {@code RENAME TABLE}; the job running through the whole
 *       migration, restored from a savepoint taken in the middle of it, or started in the middle of
 *       it;
 *   <li>a column added to a shard during the snapshot phase, before the source read that shard.
 * </ul>
 *
 * <p>Each job runs with no restart allowed, so "the job keeps running" means no failure at all.
 * After each step the Iceberg table holds exactly the expected rows and {@code verify} passes.
 */
class InFlightSchemaChangeEndToEndTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(3);
  private static final String USER = "osc_cdc";
  private static final String PASSWORD = "osc-pw";
  private static final int SHARDS = 3;
  private static final int ROWS = 20;

  /** The columns the test reads back, in order; a column the table lacks reads "null". */
  private static final List<String> COLUMNS = List.of("qty", "note", "tag");

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

  @BeforeAll
  static void start() throws Exception {
    server = EmbeddedMariaDb.start("osc", 43);
    server.createCdcUser(USER, PASSWORD);
    passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  /** The shards of one database and the rows the table must hold: shard → id → [qty, note, tag]. */
  static final class Shards {
    final String db;
    final Map<Integer, TreeMap<Long, String[]>> expected = new TreeMap<>();

    Shards(String db, int rows) {
      this.db = db;
      SmallOrdersShards.create(server, db, SHARDS);
      for (int s = 0; s < SHARDS; s++) {
        server.execute(
            "INSERT INTO "
                + table(s)
                + " (id, qty, note) SELECT seq, seq, CONCAT('n', seq) FROM "
                + db
                + ".seq_1_to_"
                + rows);
        expected.put(s, new TreeMap<>());
        for (long id = 1; id <= rows; id++) {
          expected.get(s).put(id, new String[] {Long.toString(id), "n" + id, "null"});
        }
      }
    }

    String table(int shard) {
      return SmallOrdersShards.table(db, shard);
    }

    void insert(int shard, long id, int qty, String note) {
      server.execute(
          "INSERT INTO "
              + table(shard)
              + " (id, qty, note) VALUES ("
              + id
              + ", "
              + qty
              + ", "
              + sql(note)
              + ")");
      expected
          .get(shard)
          .put(id, new String[] {Integer.toString(qty), String.valueOf(note), "null"});
    }

    void insertTagged(int shard, long id, int qty, String tag) {
      server.execute(
          "INSERT INTO "
              + table(shard)
              + " (id, qty, tag) VALUES ("
              + id
              + ", "
              + qty
              + ", "
              + sql(tag)
              + ")");
      expected.get(shard).put(id, new String[] {Integer.toString(qty), "null", tag});
    }

    void setQty(int shard, long id, int qty) {
      server.execute("UPDATE " + table(shard) + " SET qty = " + qty + " WHERE id = " + id);
      expected.get(shard).get(id)[0] = Integer.toString(qty);
    }

    void setTag(int shard, long id, String tag) {
      server.execute("UPDATE " + table(shard) + " SET tag = " + sql(tag) + " WHERE id = " + id);
      expected.get(shard).get(id)[2] = tag;
    }

    void delete(int shard, long id) {
      server.execute("DELETE FROM " + table(shard) + " WHERE id = " + id);
      expected.get(shard).remove(id);
    }

    /** The id {@link #changeOthers} inserted last, deleted by its next round. */
    long lastOther = -1;

    /** An insert, an update and a delete on every shard but {@code skip}. */
    void changeOthers(int skip, long id) {
      for (int s = 0; s < SHARDS; s++) {
        if (s != skip) {
          insert(s, id, (int) id, "x" + id);
          long updated = 1 + id % ROWS;
          if (expected.get(s).containsKey(updated)) {
            setQty(s, updated, (int) (1000 + id));
          }
          if (lastOther > 0) {
            delete(s, lastOther);
          }
        }
      }
      lastOther = id;
    }

    List<String> expectedRows() {
      List<String> rows = new ArrayList<>();
      expected.forEach(
          (shard, byId) ->
              byId.forEach((id, v) -> rows.add(shard + "|" + id + "|" + String.join("|", v))));
      rows.sort(null);
      return rows;
    }

    /** The config of a job on these shards, pipeline and namespace named after the database. */
    TestConfig config() {
      return TestConfig.pipeline(db)
          .checkpointInterval("1s")
          .parallelism(1)
          .writerParallelism(2)
          .restart(0, "1s")
          .source(
              new TestConfig.Source("osc", server.host(), server.port())
                  .user(USER)
                  .passwordFile(passwordFile)
                  .serverIds("5800-5801")
                  .withoutTls())
          .tables(db, "orders_(?<shard>\\d+)")
          .hadoopCatalog(dir.resolve("warehouse").toUri())
          .table(db, "orders");
    }

    ShardbergConfig load(TestConfig config) throws Exception {
      return ShardbergConfig.load(config.write(dir.resolve(db + ".yaml")));
    }
  }

  /**
   * gh-ost on one shard, step by step as the tool does it: the ghost table {@code _T_gho} created
   * like the shard and altered, its changelog table {@code _T_ghc} beside it, the rows copied in
   * chunks ({@code INSERT IGNORE … SELECT}) while the shard's own writes go on and are applied to
   * the ghost table too (gh-ost reads them from the binlog), the cut-over swapping both tables in
   * one {@code RENAME TABLE}, the old table dropped.
   */
  static final class GhOst {
    final Shards shards;
    final int shard;
    final String ghost;
    final String changelog;
    long next = ROWS + 1;

    GhOst(Shards shards, int shard) {
      this.shards = shards;
      this.shard = shard;
      this.ghost = shards.db + "._orders_" + shard + "_gho";
      this.changelog = shards.db + "._orders_" + shard + "_ghc";
    }

    void createAndAlterGhost() {
      server.execute(
          "CREATE TABLE "
              + changelog
              + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, last_update TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
              + " hint VARCHAR(64) NOT NULL, value TEXT, UNIQUE KEY hint_uidx (hint))",
          "CREATE TABLE " + ghost + " LIKE " + shards.table(shard),
          "ALTER TABLE " + ghost + " ADD COLUMN tag VARCHAR(16) NULL",
          "INSERT INTO " + changelog + " (hint, value) VALUES ('state', 'GhostTableMigrated')");
    }

    /**
     * Copies the rows with ids {@code from..from+4}, then one round of the shard's writes, applied
     * to the ghost too.
     */
    void copyChunk(long from) {
      server.execute(
          "INSERT IGNORE INTO "
              + ghost
              + " (id, qty, note) SELECT id, qty, note FROM "
              + shards.table(shard)
              + " FORCE INDEX (PRIMARY) WHERE id BETWEEN "
              + from
              + " AND "
              + (from + 4)
              + " LOCK IN SHARE MODE",
          "REPLACE INTO " + changelog + " (hint, value) VALUES ('heartbeat', NOW(6))");
      shards.insert(shard, next, (int) next, "live" + next);
      server.execute(
          "REPLACE INTO "
              + ghost
              + " (id, qty, note) VALUES ("
              + next
              + ", "
              + next
              + ", 'live"
              + next
              + "')");
      shards.setQty(shard, from, 500 + (int) from); // a row copied just now
      server.execute("UPDATE " + ghost + " SET qty = " + (500 + from) + " WHERE id = " + from);
      shards.delete(shard, from + 7); // a row a later chunk copies, or one copied already
      server.execute("DELETE FROM " + ghost + " WHERE id = " + (from + 7));
      next++;
    }

    void cutOver() {
      String old = shards.db + "._orders_" + shard + "_del";
      server.execute(
          "RENAME TABLE "
              + shards.table(shard)
              + " TO "
              + old
              + ", "
              + ghost
              + " TO "
              + shards.table(shard));
    }

    void dropOldAndChangelog() {
      server.execute(
          "DROP TABLE " + shards.db + "._orders_" + shard + "_del", "DROP TABLE " + changelog);
    }
  }

  static String sql(String v) {
    return v == null ? "NULL" : "'" + v + "'";
  }

  static List<String> actualRows(Table table) {
    return TableRows.of(table, COLUMNS.toArray(String[]::new));
  }

  /**
   * Waits until the table holds exactly the expected rows (a duplicate or a lost row never
   * matches).
   */
  static void awaitRows(Table table, Shards shards) {
    List<String> rows = shards.expectedRows();
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .ignoreExceptions()
        .until(() -> actualRows(table).equals(rows));
  }

  static long count(String table) throws Exception {
    try (Connection c = server.connect(null);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The added column reached the table once, optional, of the shadow table's type. */
  static void assertTagAddedOnce(Table table, int schemaBefore) {
    table.refresh();
    Types.NestedField tag = table.schema().findField("tag");
    assertThat(tag).as("the shadow table's new column reaches the table").isNotNull();
    assertThat(tag.isOptional()).isTrue();
    assertThat(tag.type()).isEqualTo(Types.StringType.get());
    assertThat(tag.doc()).isEqualTo("varchar(16)");
    assertThat(table.schemas().keySet())
        .as("one schema change: the new column")
        .containsExactlyInAnyOrder(schemaBefore, schemaBefore + 1);
  }

  static void assertVerifyAndRunning(ShardbergConfig config, JobClient job) throws Exception {
    VerifyReport report = Reconciliation.verify(config, 5);
    assertThat(report.matches()).as(report.toString()).isTrue();
    assertThat(job.getJobStatus().get())
        .as("the job keeps running (no restart is allowed)")
        .isEqualTo(JobStatus.RUNNING);
  }

  static void stopJob(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
  }

  static JobClient startJob(ShardbergConfig config, String savepoint) throws Exception {
    Configuration conf = new Configuration();
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    return ShardbergPipeline.start(
        StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
  }

  @Test
  void aGhOstCutOverBringsTheNewColumnWithNoLossNoDuplicatesAndDroppingTheOldTableRemovesNothing()
      throws Exception {
    Shards shards = new Shards("ghost", ROWS);
    ShardbergConfig config = shards.load(shards.config());
    JobClient job = startJob(config, null);
    try {
      Table table = Catalogs.loadTable(config.target());
      awaitRows(table, shards);
      int firstSchema = table.schema().schemaId();

      GhOst ghOst = new GhOst(shards, 1);
      ghOst.createAndAlterGhost();
      for (long from = 1; from <= ROWS; from += 5) {
        ghOst.copyChunk(from);
        shards.changeOthers(1, 100 + from);
      }
      assertThat(count(ghOst.ghost))
          .as("the ghost table holds every row of the shard")
          .isEqualTo(shards.expected.get(1).size());
      awaitRows(table, shards);
      assertThat(table.schema().findField("tag"))
          .as("the ghost table's column is not the shard's yet")
          .isNull();

      ghOst.cutOver();
      // after the cut-over the shard's rows carry the new column
      shards.insertTagged(1, 50, 50, "after");
      shards.setTag(1, 2, "copied-row");
      shards.setQty(1, 4, 4000); // its tag stays NULL, on the shard as in the table
      shards.delete(1, 6);
      shards.changeOthers(1, 200);
      awaitRows(table, shards);
      assertTagAddedOnce(table, firstSchema);

      ghOst.dropOldAndChangelog();
      shards.setTag(1, 3, "after-drop");
      shards.insertTagged(1, 51, 51, "after-drop");
      shards.changeOthers(1, 300);
      awaitRows(table, shards);
      assertVerifyAndRunning(config, job);
    } finally {
      stopJob(job);
    }
  }

  /**
   * The case that lost changes silently before the shadow tables were captured: restored from a
   * savepoint taken after the ghost table was created, the binlog reader did not know the ghost
   * table, the cut-over reached nobody and every later change of the shard was skipped as a change
   * of an unknown table.
   */
  @Test
  void aGhOstMigrationSurvivesARestoreFromASavepointTakenInTheMiddleOfIt() throws Exception {
    Shards shards = new Shards("ghostrestore", ROWS);
    ShardbergConfig config = shards.load(shards.config());
    GhOst ghOst = new GhOst(shards, 1);
    Table table;
    int firstSchema;
    String savepoint;
    JobClient first = startJob(config, null);
    try {
      table = Catalogs.loadTable(config.target());
      awaitRows(table, shards);
      firstSchema = table.schema().schemaId();
      ghOst.createAndAlterGhost();
      ghOst.copyChunk(1);
      shards.changeOthers(1, 101);
      ghOst.copyChunk(6);
      awaitRows(table, shards);
      savepoint =
          first
              .triggerSavepoint(
                  dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
              .get();
    } finally {
      stopJob(first);
    }
    ghOst.copyChunk(11); // while the job is down

    JobClient second = startJob(config, savepoint);
    try {
      shards.changeOthers(1, 111);
      ghOst.copyChunk(16);
      assertThat(count(ghOst.ghost))
          .as("the ghost table holds every row of the shard")
          .isEqualTo(shards.expected.get(1).size());
      ghOst.cutOver();
      shards.insertTagged(1, 50, 50, "after");
      shards.setTag(1, 2, "copied-row");
      shards.delete(1, 3);
      shards.changeOthers(1, 200);
      ghOst.dropOldAndChangelog();
      shards.setTag(1, 4, "after-drop");
      awaitRows(table, shards);
      assertTagAddedOnce(table, firstSchema);
      assertVerifyAndRunning(config, second);
    } finally {
      stopJob(second);
    }
  }

  /**
   * pt-online-schema-change on shard 2, and the job started in the middle of it: {@code
   * _orders_2_new} created like the shard and altered, triggers on the shard that copy every write
   * into it (in the same transaction), the rows copied in chunks, {@code RENAME TABLE orders_2 TO
   * _orders_2_old, _orders_2_new TO orders_2}, then the triggers and the old table dropped.
   */
  @Test
  void aPtOnlineSchemaChangeSwapPassesThroughAndAJobStartedDuringItIgnoresTheShadowTable()
      throws Exception {
    Shards shards = new Shards("ptosc", ROWS);
    String shard = shards.table(2);
    String shadow = "ptosc._orders_2_new";
    String columns = "id, qty, note";
    String trigger = "ptosc.pt_osc_ptosc_orders_2_";
    server.execute(
        "CREATE TABLE " + shadow + " LIKE " + shard,
        "ALTER TABLE " + shadow + " ADD COLUMN tag VARCHAR(16) NULL",
        "CREATE TRIGGER "
            + trigger
            + "del AFTER DELETE ON "
            + shard
            + " FOR EACH ROW BEGIN DECLARE CONTINUE HANDLER FOR 1146"
            + " BEGIN END; DELETE IGNORE FROM "
            + shadow
            + " WHERE "
            + shadow
            + ".id <=> OLD.id; END",
        "CREATE TRIGGER "
            + trigger
            + "upd AFTER UPDATE ON "
            + shard
            + " FOR EACH ROW BEGIN DECLARE CONTINUE HANDLER FOR 1146"
            + " BEGIN END; DELETE IGNORE FROM "
            + shadow
            + " WHERE !(OLD.id <=> NEW.id) AND "
            + shadow
            + ".id <=> OLD.id;"
            + " REPLACE INTO "
            + shadow
            + " ("
            + columns
            + ") VALUES (NEW.id, NEW.qty, NEW.note); END",
        "CREATE TRIGGER "
            + trigger
            + "ins AFTER INSERT ON "
            + shard
            + " FOR EACH ROW BEGIN DECLARE CONTINUE HANDLER FOR 1146"
            + " BEGIN END; REPLACE INTO "
            + shadow
            + " ("
            + columns
            + ") VALUES (NEW.id, NEW.qty, NEW.note); END");
    String copy =
        "INSERT LOW_PRIORITY IGNORE INTO "
            + shadow
            + " ("
            + columns
            + ") SELECT "
            + columns
            + " FROM "
            + shard
            + " FORCE INDEX (PRIMARY) WHERE ((id >= %d)) AND ((id <= %d)) LOCK IN SHARE MODE";
    server.execute(String.format(copy, 1, 10));
    shards.insert(2, 30, 30, "before-start");
    shards.setQty(
        2, 12,
        1200); // not copied yet: the trigger's REPLACE copies it now, the chunk copy skips it
    assertThat(count(shadow))
        .as("the shadow table, half copied, when the job starts")
        .isEqualTo(12);

    ShardbergConfig config = shards.load(shards.config());
    JobClient job = startJob(config, null);
    try {
      Table table = Catalogs.loadTable(config.target());
      awaitRows(table, shards); // the shadow table's rows are not the shard's
      int firstSchema = table.schema().schemaId();
      shards.changeOthers(2, 101);
      shards.setQty(2, 3, 300); // copied already: the trigger updates the shadow row
      server.execute(String.format(copy, 11, 20));
      shards.delete(2, 15); // copied just now: the trigger deletes the shadow row
      shards.insert(2, 31, 31, "during-copy");
      server.execute(String.format(copy, 21, 31));
      shards.changeOthers(2, 102);
      assertThat(count(shadow))
          .as("the shadow table holds every row of the shard")
          .isEqualTo(shards.expected.get(2).size());
      awaitRows(table, shards);

      server.execute(
          "RENAME TABLE " + shard + " TO ptosc._orders_2_old, " + shadow + " TO " + shard);
      server.execute(
          "DROP TRIGGER IF EXISTS " + trigger + "del",
          "DROP TRIGGER IF EXISTS " + trigger + "upd",
          "DROP TRIGGER IF EXISTS " + trigger + "ins",
          "DROP TABLE IF EXISTS ptosc._orders_2_old");
      shards.insertTagged(2, 50, 50, "after");
      shards.setTag(2, 12, "copied-row");
      shards.setQty(2, 5, 5000);
      shards.delete(2, 7);
      shards.changeOthers(2, 200);
      awaitRows(table, shards);
      assertTagAddedOnce(table, firstSchema);
      assertVerifyAndRunning(config, job);
    } finally {
      stopJob(job);
    }
  }

  /** The server's statements right now: "user | state | statement". */
  static List<String> processList() throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = server.connect(null);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT USER, STATE, INFO FROM information_schema.PROCESSLIST WHERE INFO IS NOT NULL")) {
      while (rs.next()) {
        out.add(rs.getString(1) + " | " + rs.getString(2) + " | " + rs.getString(3));
      }
    }
    return out;
  }

  /**
   * A column added to shard 2 while the source's snapshot is in progress and has not read shard 2
   * yet. The test holds the snapshot up on shard 1 ({@code LOCK TABLES … WRITE}: the source's chunk
   * splitter waits for it, as the process list shows), alters shard 2 meanwhile, then lets the
   * snapshot go on. The source reads shard 2 with its new column, and no DDL record comes before
   * those rows: the tagger reads the shard's columns from MySQL and evolves the table in flight.
   */
  @Test
  void aColumnAddedDuringTheSnapshotPhaseIsReadFromMySqlAndEvolvesTheTableInFlight()
      throws Exception {
    Shards shards = new Shards("snapddl", 300);
    ShardbergConfig config = shards.load(shards.config().snapshotChunkSize(50));
    try (CapturedLog log = new CapturedLog("dev.shardberg.router", Level.INFO);
        Connection lock = server.connect(null);
        Statement locker = lock.createStatement()) {
      locker.execute("LOCK TABLES snapddl.orders_1 WRITE");
      JobClient job = startJob(config, null);
      try {
        Table table = Catalogs.loadTable(config.target());
        String waiting =
            USER
                + " | Waiting for table metadata lock | SELECT MIN(`id`), MAX(`id`) FROM `snapddl`.`orders_1`";
        await()
            .atMost(CAUGHT_UP)
            .pollInterval(Duration.ofMillis(200))
            .until(() -> processList().contains(waiting));
        // the snapshot is under way, held up on shard 1; shard 2 gains a column meanwhile
        shards.insert(0, 1000, 1000, "during-snapshot");
        shards.setQty(0, 5, 55);
        shards.delete(0, 6);
        server.execute("ALTER TABLE snapddl.orders_2 ADD COLUMN tag VARCHAR(16) NULL AFTER qty");
        shards.insertTagged(2, 1000, 1000, "new");
        shards.setTag(2, 7, "seven");
        assertThat(processList())
            .as("the snapshot still waits on shard 1 after the ALTER of shard 2")
            .contains(waiting);
        locker.execute("UNLOCK TABLES");

        shards.setQty(1, 8, 88);
        shards.delete(2, 9);
        shards.changeOthers(2, 2000);
        awaitRows(table, shards);
        assertThat(log.lines().stream().map(CapturedLog.Line::message))
            .as("shard 2's snapshot rows carried the column before any DDL record did")
            .anyMatch(
                m ->
                    m.startsWith(
                        "Read the columns of shard 2 ('snapddl.orders_2' on host 'osc') from MySQL in flight: its snapshot rows"
                            + " have columns [id, qty, tag, note] but table shardberg.snapddl.orders lacks [tag] and no DDL record"
                            + " announced it"));
        assertTagAddedOnce(table, 0);

        shards.setTag(2, 10, "after");
        shards.insert(1, 3000, 3000, "after");
        awaitRows(table, shards);
        assertVerifyAndRunning(config, job);
      } finally {
        stopJob(job);
      }
    }
  }
}
