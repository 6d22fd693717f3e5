package dev.shardberg.tests.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.LocalCheckpoints;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.SmallOrdersShards;
import dev.shardberg.tests.support.TcpForwarder;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30, a primary failover under the job (docs/shard-fleet.md, "A primary failover"): host a is
 * a real MariaDB primary with a real replica ({@code --log-slave-updates}, GTID replication),
 * reached through an address that moves ({@link TcpForwarder}, as a virtual IP does); host b is a
 * plain server. The replica is promoted and the address moved to it while the job reads a's binlog:
 * Flink CDC reads MariaDB by file and position only, and the position belongs to the old primary.
 * The job must stop naming the host and both servers before any change read on the new server is
 * committed (the table keeps exactly the rows of before the failover); a plain restart of it must
 * stop the same way at the restore; and the way on the message gives (host a removed for one
 * resume, then added back) must read only host a's shards again, from the new primary, and end with
 * the table equal to the shards row for row.
 */
class PrimaryFailoverTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(3);
  private static final String USER = "failover_cdc";
  private static final String PASSWORD = "failover-pw";
  private static final String DB = "failover";
  private static final String PIPELINE = "failover-pipeline";

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () ->
              new MiniClusterResourceConfiguration.Builder()
                  .setNumberTaskManagers(1)
                  .setNumberSlotsPerTaskManager(4)
                  .build());

  @TempDir Path dir;

  /** shard → id → qty, what MySQL holds (shards 0 and 1 on host a, 2 on host b). */
  private final Map<Integer, TreeMap<Long, Integer>> shards = new TreeMap<>();

  private EmbeddedMariaDb hostA; // the server host a's writes go to: the primary, then the replica

  private EmbeddedMariaDb hostB;

  @Test
  void aReplicaPromotedUnderTheJobStopsItBeforeAnyChangeReadThereIsCommitted() throws Exception {
    try (EmbeddedMariaDb primary = EmbeddedMariaDb.start("failover-primary", 81);
        EmbeddedMariaDb replica = EmbeddedMariaDb.startReplicaOf(primary, "failover-replica", 82);
        EmbeddedMariaDb other = EmbeddedMariaDb.start("failover-b", 83);
        TcpForwarder address = TcpForwarder.to("host-a", primary.port())) {
      hostA = primary;
      hostB = other;
      primary.createCdcUser(USER, PASSWORD); // replicated: the replica has the user too
      other.createCdcUser(USER, PASSWORD);
      primary.execute(
          "CREATE DATABASE " + DB,
          SmallOrdersShards.createTable(DB, 0),
          SmallOrdersShards.createTable(DB, 1));
      other.execute("CREATE DATABASE " + DB, SmallOrdersShards.createTable(DB, 2));
      for (int shard = 0; shard < 3; shard++) {
        shards.put(shard, new TreeMap<>());
        for (long id = 1; id <= 20; id++) {
          upsert(shard, id, (int) (shard * 1000 + id));
        }
      }
      Path passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
      ShardbergConfig both = config(address, passwordFile, true, "both.yaml");
      ShardbergConfig onlyB = config(address, passwordFile, false, "only-b.yaml");

      // 1. the job reads host a's primary through the address, snapshot then binlog
      JobClient first = start(both, null);
      Table table = Catalogs.loadTable(both.target()); // created before the job is submitted
      awaitRows(table, rows(0, 1, 2));
      upsert(0, 5, 5_005);
      delete(1, 7);
      upsert(1, 21, 1_021);
      awaitRows(table, rows(0, 1, 2));
      replica.awaitReplicated(primary, 60);
      List<String> beforeFailover = rows(0, 1, 2);

      // 2. failover: the replica is promoted, the address moves to it, writes go on there
      replica.promote();
      address.moveTo(replica.port());
      hostA = replica;
      upsert(0, 22, 22);
      upsert(1, 3, 3_333);
      delete(0, 2);
      String failure = failureOf(first);
      assertThat(failure)
          .as("the job stops naming the host, both servers and the way on")
          .contains(
              "Cannot keep reading host 'a' (127.0.0.1:" + address.port() + ")",
              "was read from server_id 81, but the host now answers as server_id 82",
              "Flink CDC reads MariaDB by file and position only",
              "read this host's shards [0, 1] again",
              "remove source 'a' from `sources`");
      assertThat(TableRows.of(table, "qty"))
          .as("no change read on the new primary is committed")
          .isEqualTo(beforeFailover);

      // 3. restarted as it was: stops at the restore, before anything is read
      JobClient restarted = start(both, latestCheckpoint(both));
      assertThat(failureOf(restarted))
          .contains(
              "was read from server_id 81, but the host now answers as server_id 82 (at the restore,"
                  + " before anything was read");
      assertThat(TableRows.of(table, "qty")).isEqualTo(beforeFailover);

      // 4. the way on, step 1: host a removed for one resume; host b goes on
      JobClient withoutA = start(onlyB, latestCheckpoint(both));
      String savepoint;
      try {
        upsert(2, 50, 2_050);
        List<String> expected = new ArrayList<>(rows(2));
        beforeFailover.stream().filter(r -> !r.startsWith("2|")).forEach(expected::add);
        expected.sort(null);
        awaitRows(table, expected);
        savepoint =
            withoutA
                .triggerSavepoint(
                    dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
                .get();
      } finally {
        cancel(withoutA);
      }

      // step 2: host a added back: only its shards are read again, from the new primary
      upsert(2, 51, 2_051); // while stopped: read from b's position
      JobClient withA = start(both, savepoint);
      try {
        awaitRows(table, rows(0, 1, 2));
        assertThat(addedRows(table, withA))
            .as("host a's shards are read from a fresh snapshot, host b goes on from its position")
            .isEqualTo(
                Map.of(0, (long) shards.get(0).size(), 1, (long) shards.get(1).size(), 2, 1L));
        upsert(1, 30, 1_030); // and host a's binlog is read on the new primary from there on
        awaitRows(table, rows(0, 1, 2));
      } finally {
        cancel(withA);
      }
      // a second engine: a real Spark reads the table as the shards hold it
      assertThat(
              dev.shardberg.tests.job.SparkReader.rows(
                  Map.of(
                      "type", "hadoop", "warehouse", dir.resolve("warehouse").toUri().toString()),
                  "SELECT shard_number, id, qty FROM t." + DB + ".orders",
                  r -> r.getInt(0) + "|" + r.getLong(1) + "|" + r.getInt(2)))
          .as("Spark's rows of the table")
          .isEqualTo(rows(0, 1, 2));
    }
  }

  private ShardbergConfig config(
      TcpForwarder address, Path passwordFile, boolean withA, String file) throws Exception {
    TestConfig config =
        TestConfig.pipeline(PIPELINE)
            .checkpointInterval("1s")
            .checkpointDir(dir.resolve("checkpoints").toUri())
            .parallelism(1)
            .writerParallelism(2)
            .restart(3, "1s");
    if (withA) {
      config.source(
          new TestConfig.Source("a", "127.0.0.1", address.port())
              .user(USER)
              .passwordFile(passwordFile)
              .serverIds("5740-5741")
              .withoutTls());
    }
    config.source(
        new TestConfig.Source("b", hostB.host(), hostB.port())
            .user(USER)
            .passwordFile(passwordFile)
            .serverIds("5742-5743")
            .withoutTls());
    return ShardbergConfig.load(
        config
            .tables(DB, "orders_(?<shard>\\d+)")
            .buckets(3)
            .hadoopCatalog(dir.resolve("warehouse").toUri())
            .table(DB, "orders")
            .write(dir.resolve(file)));
  }

  private void upsert(int shard, long id, int qty) {
    (shard < 2 ? hostA : hostB)
        .execute(
            "INSERT INTO "
                + SmallOrdersShards.table(DB, shard)
                + " (id, qty) VALUES ("
                + id
                + ", "
                + qty
                + ") ON DUPLICATE KEY UPDATE qty = "
                + qty);
    shards.get(shard).put(id, qty);
  }

  private void delete(int shard, long id) {
    (shard < 2 ? hostA : hostB)
        .execute("DELETE FROM " + SmallOrdersShards.table(DB, shard) + " WHERE id = " + id);
    shards.get(shard).remove(id);
  }

  /** shard|id|qty of the given shards, sorted. */
  private List<String> rows(Integer... of) {
    List<String> rows = new ArrayList<>();
    for (int shard : of) {
      shards.get(shard).forEach((id, qty) -> rows.add(shard + "|" + id + "|" + qty));
    }
    rows.sort(null);
    return rows;
  }

  private static void awaitRows(Table table, List<String> rows) {
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .ignoreExceptions()
        .until(() -> TableRows.of(table, "qty").equals(rows));
  }

  private static JobClient start(ShardbergConfig config, String restoreFrom) throws Exception {
    if (restoreFrom == null) {
      return ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    }
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restoreFrom);
    return ShardbergPipeline.start(
        StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
  }

  private static String latestCheckpoint(ShardbergConfig config) throws Exception {
    return LocalCheckpoints.latest(LocalCheckpoints.directory(config))
        .orElseThrow()
        .directory()
        .toString();
  }

  /** Waits for {@code job} to fail and returns the messages of its failure's cause chain. */
  private static String failureOf(JobClient job) throws Exception {
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(300))
        .until(() -> job.getJobStatus().get().isGloballyTerminalState());
    assertThat(job.getJobStatus().get()).isEqualTo(JobStatus.FAILED);
    StringBuilder messages = new StringBuilder();
    try {
      job.getJobExecutionResult().get();
    } catch (ExecutionException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        messages.append(t.getMessage()).append('\n');
      }
    }
    return messages.toString();
  }

  private static void cancel(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
  }

  /** Per shard, the rows the commits of {@code job} added (snapshot summaries). */
  private static Map<Integer, Long> addedRows(Table table, JobClient job) {
    table.refresh();
    Map<Integer, Long> added = new TreeMap<>();
    for (CommitRecord c : CommittedCheckpoints.history(table, PIPELINE, Integer.MAX_VALUE)) {
      if (!c.flinkJobId().equals(job.getJobID().toString())) {
        continue;
      }
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
}
