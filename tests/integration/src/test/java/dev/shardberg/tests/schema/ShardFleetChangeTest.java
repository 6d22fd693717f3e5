package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.PipelineStatus;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.tests.job.CapturedLog;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.SmallOrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 30, the shard fleet changing under a pipeline, on two real MariaDB hosts with the real job
 * (docs/shard-fleet.md): a shard dropped while the job is stopped, a host removed from the config,
 * a host added to it. (A shard dropped while the job runs keeps its rows in that run; the next
 * resume is the case "dropped while stopped": ShardTableLifeTest covers the running part.) Each
 * case checks the table by content against the remaining shards (row for row, with the shard
 * number), and that the other shards were not read again (the rows each resumed run's commits
 * added, from the snapshot summaries).
 */
class ShardFleetChangeTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(3);
  private static final String USER = "fleet_cdc";
  private static final String PASSWORD = "fleet-pw";

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () ->
              new MiniClusterResourceConfiguration.Builder()
                  .setNumberTaskManagers(1)
                  .setNumberSlotsPerTaskManager(4)
                  .build());

  @TempDir static Path dir;
  static EmbeddedMariaDb hostA;
  static EmbeddedMariaDb hostB;
  static Path passwordFile;

  @BeforeAll
  static void start() throws Exception {
    hostA = EmbeddedMariaDb.start("fleet-a", 61);
    hostA.createCdcUser(USER, PASSWORD);
    hostB = EmbeddedMariaDb.start("fleet-b", 62);
    hostB.createCdcUser(USER, PASSWORD);
    passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
  }

  @AfterAll
  static void stop() {
    if (hostA != null) {
      hostA.close();
    }
    if (hostB != null) {
      hostB.close();
    }
  }

  /**
   * Shards 0 and 1 on host a, 2 and 3 on host b, all {@code <db>.orders_N}, and what the table must
   * hold: shard → id → qty.
   */
  static final class Fleet {
    final String db;
    final Map<Integer, TreeMap<Long, Integer>> expected = new TreeMap<>();

    Fleet(String db, int rows) {
      this.db = db;
      hostA.execute(
          "CREATE DATABASE " + db,
          SmallOrdersShards.createTable(db, 0),
          SmallOrdersShards.createTable(db, 1));
      hostB.execute(
          "CREATE DATABASE " + db,
          SmallOrdersShards.createTable(db, 2),
          SmallOrdersShards.createTable(db, 3));
      for (int shard = 0; shard < 4; shard++) {
        expected.put(shard, new TreeMap<>());
        for (long id = 1; id <= rows; id++) {
          upsert(shard, id, (int) (shard * 1000 + id));
        }
      }
    }

    static EmbeddedMariaDb host(int shard) {
      return shard < 2 ? hostA : hostB;
    }

    void upsert(int shard, long id, int qty) {
      host(shard)
          .execute(
              "INSERT INTO "
                  + SmallOrdersShards.table(db, shard)
                  + " (id, qty) VALUES ("
                  + id
                  + ", "
                  + qty
                  + ") ON DUPLICATE KEY UPDATE qty = "
                  + qty);
      expected.get(shard).put(id, qty);
    }

    void delete(int shard, long id) {
      host(shard)
          .execute("DELETE FROM " + SmallOrdersShards.table(db, shard) + " WHERE id = " + id);
      expected.get(shard).remove(id);
    }

    /** DROP TABLE of the shard on MySQL; the table's expected rows are the caller's to decide. */
    void drop(int shard) {
      host(shard).execute("DROP TABLE " + SmallOrdersShards.table(db, shard));
    }

    int size(int shard) {
      return expected.get(shard).size();
    }

    /** shard|id|qty of the given shards, sorted. */
    List<String> rows(Integer... shards) {
      List<String> rows = new ArrayList<>();
      for (int shard : shards) {
        expected.get(shard).forEach((id, qty) -> rows.add(shard + "|" + id + "|" + qty));
      }
      rows.sort(null);
      return rows;
    }
  }

  static TestConfig.Source source(String name, EmbeddedMariaDb server, String serverIds)
      throws Exception {
    return new TestConfig.Source(name, server.host(), server.port())
        .user(USER)
        .passwordFile(passwordFile)
        .serverIds(serverIds)
        .withoutTls();
  }

  /** A job on {@code <db>.orders_N} of the given hosts (a, b) into table {@code <db>.orders}. */
  static TestConfig config(String db, boolean withA, boolean withB) throws Exception {
    TestConfig config =
        TestConfig.pipeline(db + "-pipeline")
            .checkpointInterval("1s")
            .parallelism(1)
            .writerParallelism(2)
            .restart(3, "1s");
    if (withA) {
      config.source(source("a", hostA, "5720-5721"));
    }
    if (withB) {
      config.source(source("b", hostB, "5722-5723"));
    }
    return config
        .tables(db, "orders_(?<shard>\\d+)")
        .buckets(3)
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table(db, "orders");
  }

  static ShardbergConfig load(TestConfig config, String file) throws Exception {
    return ShardbergConfig.load(config.write(dir.resolve(file)));
  }

  static List<String> tableRows(Table table) {
    return TableRows.of(table, "qty");
  }

  static void awaitRows(Table table, List<String> rows) {
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .ignoreExceptions()
        .until(() -> tableRows(table).equals(rows));
  }

  /** A second engine: a real Spark reads {@code <db>.orders} as the shards hold it. */
  static void assertSparkReads(String db, List<String> rows) {
    assertThat(
            dev.shardberg.tests.job.SparkReader.rows(
                Map.of("type", "hadoop", "warehouse", dir.resolve("warehouse").toUri().toString()),
                "SELECT shard_number, id, qty FROM t." + db + ".orders",
                r -> r.getInt(0) + "|" + r.getLong(1) + "|" + r.getInt(2)))
        .as("Spark's rows of %s.orders", db)
        .isEqualTo(rows);
  }

  static JobClient start(ShardbergConfig config, String savepoint) throws Exception {
    if (savepoint == null) {
      return ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    }
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    return ShardbergPipeline.start(
        StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
  }

  static String savepoint(JobClient job, String name) throws Exception {
    return job.triggerSavepoint(dir.resolve(name).toUri().toString(), SavepointFormatType.CANONICAL)
        .get();
  }

  static void cancel(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
  }

  /** The commits of {@code job}, oldest first. */
  static List<CommitRecord> commitsOf(Table table, String pipelineId, JobClient job) {
    table.refresh();
    List<CommitRecord> commits = new ArrayList<>();
    for (CommitRecord c : CommittedCheckpoints.history(table, pipelineId, Integer.MAX_VALUE)) {
      if (c.flinkJobId().equals(job.getJobID().toString())) {
        commits.add(0, c);
      }
    }
    return commits;
  }

  /** Per shard, the rows the commits of {@code job} added (snapshot summaries). */
  static Map<Integer, Long> addedRows(Table table, String pipelineId, JobClient job) {
    Map<Integer, Long> added = new TreeMap<>();
    for (CommitRecord c : commitsOf(table, pipelineId, job)) {
      c.shardCounts()
          .forEach(
              (shard, counts) -> {
                if (counts.addedRecords() > 0) {
                  added.merge(shard, counts.addedRecords(), Long::sum);
                }
              });
    }
    return added;
  }

  /** The commits of {@code job} that removed shards, each as its checkpoint → removed shards. */
  static Map<Long, List<Integer>> removals(Table table, String pipelineId, JobClient job) {
    Map<Long, List<Integer>> removals = new TreeMap<>();
    for (CommitRecord c : commitsOf(table, pipelineId, job)) {
      c.shardCounts()
          .forEach(
              (shard, counts) -> {
                if (counts.removed()) {
                  removals.computeIfAbsent(c.checkpointId(), id -> new ArrayList<>()).add(shard);
                }
              });
    }
    return removals;
  }

  /**
   * {@code tables.dropped-shards: delete}, resumed from a savepoint after a shard was dropped while
   * the job was stopped and with host b removed from the config: the dropped shard's rows and host
   * b's shards' rows leave the table in one commit, and shard 0 goes on from its binlog position.
   */
  @ParameterizedTest(name = "target.delete-mode: {0}")
  @ValueSource(strings = {"equality", "position"})
  void aShardDroppedWhileStoppedAndARemovedHostLoseTheirRowsInOneCommitAtTheResume(String mode)
      throws Exception {
    // by key: a delete by shard_number; by position: the shards' files leave the table instead
    boolean byPosition = mode.equals("position");
    String db = byPosition ? "dropstopped_pos" : "dropstopped";
    String pipelineId = db + "-pipeline";
    Fleet fleet = new Fleet(db, 10);
    TestConfig both =
        config(db, true, true)
            .droppedShards("delete")
            .deleteMode(mode)
            .checkpointDir(dir.resolve(db + "-checkpoints").toUri());
    JobClient first = start(load(both, db + "-1.yaml"), null);
    ShardbergConfig onlyA =
        load(
            config(db, true, false)
                .droppedShards("delete")
                .deleteMode(mode)
                .checkpointDir(dir.resolve(db + "-checkpoints").toUri()),
            db + "-2.yaml");
    Table table = Catalogs.loadTable(onlyA.target());
    String savepoint;
    try {
      awaitRows(table, fleet.rows(0, 1, 2, 3));
      savepoint = savepoint(first, db + "-savepoints");
    } finally {
      cancel(first);
    }
    // while the job is stopped: shard 1 dropped, a change on shard 0
    fleet.drop(1);
    fleet.upsert(0, 11, 11);
    try (CapturedLog log = new CapturedLog("dev.shardberg", Level.INFO)) {
      JobClient second = start(onlyA, savepoint);
      try {
        fleet.upsert(0, 12, 12);
        awaitRows(table, fleet.rows(0));
        assertThat(removals(table, pipelineId, second))
            .as("one commit removes shards 1, 2 and 3")
            .hasSize(1)
            .allSatisfy((checkpoint, shards) -> assertThat(shards).containsExactly(1, 2, 3));
        assertThat(addedRows(table, pipelineId, second))
            .as("shard 0 goes on from its position: only its two new rows")
            .isEqualTo(Map.of(0, 2L));
        assertThat(
                log.has(
                    Level.INFO,
                    "no longer finds shard(s) [1, 2, 3]",
                    "every row of them leaves the table"))
            .isTrue();
        assertThat(PipelineStatus.of(table, pipelineId, Clock.systemUTC()).removedShards())
            .containsOnlyKeys(1, 2, 3);
        if (byPosition) {
          ShardTableLifeTest.assertNoEqualityDelete(table);
        }
      } finally {
        cancel(second);
      }
    }
    assertSparkReads(db, fleet.rows(0));
  }

  /**
   * A host added to the config and resumed from the last savepoint: only its shards are read from a
   * snapshot, the others go on from their position. Then that host removed again with {@code
   * tables.dropped-shards: keep} (the default): the resume goes on, its shards' rows stay, one INFO
   * line names them.
   */
  @Test
  void aHostAddedIsReadAloneAndAHostRemovedKeepsItsRows() throws Exception {
    Fleet fleet = new Fleet("hosts", 10);
    ShardbergConfig onlyA = load(config("hosts", true, false), "hosts-a.yaml");
    ShardbergConfig both = load(config("hosts", true, true), "hosts-ab.yaml");
    Table table;
    String savepoint;
    JobClient first = start(onlyA, null);
    try {
      table = Catalogs.loadTable(onlyA.target());
      awaitRows(table, fleet.rows(0, 1));
      savepoint = savepoint(first, "hosts-savepoints-1");
    } finally {
      cancel(first);
    }
    fleet.upsert(1, 11, 11); // while stopped

    // host b added: its shards read from a snapshot, host a's go on from their position
    JobClient second = start(both, savepoint);
    try {
      fleet.upsert(0, 11, 11);
      awaitRows(table, fleet.rows(0, 1, 2, 3));
      assertThat(addedRows(table, "hosts-pipeline", second))
          .as("only host b's shards are read from a snapshot")
          .isEqualTo(Map.of(0, 1L, 1, 1L, 2, (long) fleet.size(2), 3, (long) fleet.size(3)));
      fleet.upsert(3, 11, 11); // and from host b's binlog afterwards
      awaitRows(table, fleet.rows(0, 1, 2, 3));
      savepoint = savepoint(second, "hosts-savepoints-2");
    } finally {
      cancel(second);
    }
    fleet.upsert(0, 12, 12); // while stopped
    List<String> hostBRows = fleet.rows(2, 3);

    // host b removed, keep: its shards' rows stay, the job goes on with host a
    try (CapturedLog log = new CapturedLog("dev.shardberg", Level.INFO)) {
      JobClient third = start(onlyA, savepoint);
      try {
        fleet.upsert(1, 12, 12);
        fleet.upsert(2, 99, 99); // on the removed host: not read
        fleet.expected.get(2).remove(99L);
        List<String> expected = new ArrayList<>(fleet.rows(0, 1));
        expected.addAll(hostBRows);
        expected.sort(null);
        awaitRows(table, expected);
        assertThat(addedRows(table, "hosts-pipeline", third))
            .as("host a goes on from its position")
            .isEqualTo(Map.of(0, 1L, 1, 1L));
        assertThat(removals(table, "hosts-pipeline", third)).isEmpty();
        assertThat(
                log.has(
                    Level.INFO,
                    "no longer finds shard(s) [2, 3]",
                    "their rows stay in the table (tables.dropped-shards: keep)"))
            .isTrue();
      } finally {
        cancel(third);
      }
    }
    List<String> expected = new ArrayList<>(fleet.rows(0, 1));
    expected.addAll(hostBRows);
    expected.sort(null);
    assertSparkReads("hosts", expected);
  }
}
