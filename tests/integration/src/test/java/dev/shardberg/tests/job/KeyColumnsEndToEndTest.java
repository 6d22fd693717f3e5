package dev.shardberg.tests.job;

import static dev.shardberg.tests.cli.CliRun.cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.job.Catalogs;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.schema.TableCreator;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.tests.cli.CliRun;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.TestConfig;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tables.key-columns} against a real MariaDB, a MiniCluster and an Iceberg table on disk.
 *
 * <ul>
 *   <li>{@code ledger.entries_0/1} have NO primary key, but a UNIQUE index {@code uq_entry
 *       (tenant_id, entry_id)} with NOT NULL columns, and only 3 tenants: the key is that index,
 *       the bucket column (and Flink CDC's chunk key) is {@code entry_id}, the column with the most
 *       distinct values. Debezium treats such an index as the table's primary key, so it already
 *       turns a key change into a delete and a create.
 *   <li>{@code ledger.journal_0/1} have a primary key {@code id} and are keyed by {@code uq_entry}:
 *       an update of {@code entry_id} is one Debezium update whose before and after keys differ,
 *       which the tagger must turn into a delete of the old key.
 * </ul>
 *
 * The snapshot, then binlog changes including updates that change the key, leave the table equal to
 * the shards row for row.
 */
class KeyColumnsEndToEndTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);
  private static final String USER = "keys_cdc";
  private static final String PASSWORD = "keys-pw";
  private static final int SHARDS = 2;

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

  /** table prefix → shard → "tenant|entry" → "[id|]amount|note": what the table must hold. */
  static final Map<String, Map<Integer, TreeMap<String, String>>> expected = new TreeMap<>();

  @BeforeAll
  static void start() throws Exception {
    server = EmbeddedMariaDb.start("keys", 31);
    server.createCdcUser(USER, PASSWORD);
    passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
    server.execute("CREATE DATABASE ledger");
    expected.put("entries", new TreeMap<>());
    expected.put("journal", new TreeMap<>());
    for (int s = 0; s < SHARDS; s++) {
      server.execute(
          "CREATE TABLE ledger.entries_"
              + s
              + " (tenant_id INT NOT NULL, entry_id BIGINT NOT NULL, amount DECIMAL(12,2) NOT NULL, note VARCHAR(40) NULL,"
              + " UNIQUE KEY uq_entry (tenant_id, entry_id), KEY ix_tenant (tenant_id))",
          "CREATE TABLE ledger.journal_"
              + s
              + " (id BIGINT NOT NULL PRIMARY KEY, tenant_id INT NOT NULL, entry_id BIGINT NOT NULL, amount DECIMAL(12,2) NOT NULL,"
              + " note VARCHAR(40) NULL, UNIQUE KEY uq_entry (tenant_id, entry_id))");
      expected.get("entries").put(s, new TreeMap<>());
      expected.get("journal").put(s, new TreeMap<>());
      for (int e = 1; e <= 30; e++) {
        insert("entries", s, e % 3, e, e + ".25", e % 4 == 0 ? null : "n" + e);
        insert("journal", s, e % 3, e, e + ".25", e % 4 == 0 ? null : "n" + e);
      }
    }
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  /** Last journal id per shard. */
  static final Map<Integer, Long> journalIds = new TreeMap<>();

  /** Inserts into {@code <prefix>_<shard>}; a journal row gets the shard's next id. */
  static void insert(String prefix, int shard, int tenant, long entry, String amount, String note) {
    boolean journal = prefix.equals("journal");
    String id = journal ? journalIds.merge(shard, 1L, Long::sum) + "" : null;
    server.execute(
        "INSERT INTO ledger."
            + prefix
            + "_"
            + shard
            + " VALUES ("
            + (journal ? id + ", " : "")
            + tenant
            + ", "
            + entry
            + ", "
            + amount
            + ", "
            + (note == null ? "NULL" : "'" + note + "'")
            + ")");
    expected
        .get(prefix)
        .get(shard)
        .put(tenant + "|" + entry, (journal ? id + "|" : "") + new BigDecimal(amount) + "|" + note);
  }

  static void rekey(
      String prefix, int shard, int tenant, long entry, int newTenant, long newEntry) {
    server.execute(
        "UPDATE ledger."
            + prefix
            + "_"
            + shard
            + " SET tenant_id = "
            + newTenant
            + ", entry_id = "
            + newEntry
            + " WHERE tenant_id = "
            + tenant
            + " AND entry_id = "
            + entry);
    String values = expected.get(prefix).get(shard).remove(tenant + "|" + entry);
    expected.get(prefix).get(shard).put(newTenant + "|" + newEntry, values);
  }

  static void setAmount(String prefix, int shard, int tenant, long entry, String amount) {
    server.execute(
        "UPDATE ledger."
            + prefix
            + "_"
            + shard
            + " SET amount = "
            + amount
            + " WHERE tenant_id = "
            + tenant
            + " AND entry_id = "
            + entry);
    String[] values = expected.get(prefix).get(shard).get(tenant + "|" + entry).split("\\|");
    values[values.length - 2] = new BigDecimal(amount).toString();
    expected.get(prefix).get(shard).put(tenant + "|" + entry, String.join("|", values));
  }

  static void delete(String prefix, int shard, int tenant, long entry) {
    server.execute(
        "DELETE FROM ledger."
            + prefix
            + "_"
            + shard
            + " WHERE tenant_id = "
            + tenant
            + " AND entry_id = "
            + entry);
    expected.get(prefix).get(shard).remove(tenant + "|" + entry);
  }

  static List<String> expectedRows(String prefix) {
    List<String> rows = new ArrayList<>();
    expected
        .get(prefix)
        .forEach(
            (shard, rowsByKey) ->
                rowsByKey.forEach((key, values) -> rows.add(shard + "|" + key + "|" + values)));
    rows.sort(null);
    return rows;
  }

  static List<String> actualRows(Table table) throws Exception {
    table.refresh();
    List<String> rows = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return rows;
    }
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        boolean journal = table.schema().findField("id") != null;
        rows.add(
            r.getField("shard_number")
                + "|"
                + r.getField("tenant_id")
                + "|"
                + r.getField("entry_id")
                + "|"
                + (journal ? r.getField("id") + "|" : "")
                + r.getField("amount")
                + "|"
                + r.getField("note"));
      }
    }
    rows.sort(null);
    return rows;
  }

  static Path config(
      String name, String pipelineId, String prefix, String table, List<String> keyColumns)
      throws Exception {
    return TestConfig.pipeline(pipelineId)
        .checkpointInterval("1s")
        .parallelism(1)
        .writerParallelism(2)
        .restart(3, "1s")
        .source(
            new TestConfig.Source("keys", server.host(), server.port())
                .user(USER)
                .passwordFile(passwordFile)
                .serverIds("5600-5601")
                .withoutTls())
        .tables("ledger", prefix + "_(?<shard>\\d+)")
        .keyColumns(keyColumns)
        .snapshotChunkSize(8)
        .hadoopCatalog(dir.resolve("warehouse").toUri())
        .table("ledger", table)
        .write(dir.resolve(name));
  }

  @Test
  void aTableWithoutPrimaryKeyKeyedByAUniqueIndexSnapshotsAndFollowsKeyChanges() throws Exception {
    Path configFile =
        config(
            "unique.yaml", "keys-unique", "entries", "entries", List.of("tenant_id", "entry_id"));
    CliRun validate = cli("validate", "--config", configFile.toString());
    assertThat(validate.exit()).as(validate.err()).isZero();
    assertThat(validate.out())
        .contains(
            "schema (4 columns, key [tenant_id, entry_id] = UNIQUE INDEX uq_entry (tenant_id, entry_id)):")
        .contains(
            "  key: [tenant_id, entry_id] = UNIQUE INDEX uq_entry (tenant_id, entry_id) on every shard")
        .contains(
            "  bucket column: entry_id (the key column with the most distinct values in a sample (tenant_id 6, entry_id 60);"
                + " set target.key-column to choose another)")
        .contains("  snapshot chunk key: entry_id (the tables have no primary key");

    ShardbergConfig config = ShardbergConfig.load(configFile);
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    try {
      Table table = Catalogs.loadTable(config.target());
      assertThat(TableCreator.bucketColumn(table)).contains("entry_id");
      awaitRows(table, "entries"); // the snapshot, in chunks of 8 rows split by entry_id
      changeKeys("entries");
    } finally {
      job.cancel().get();
      await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
    }
  }

  @Test
  void keyedByAUniqueIndexBesidesThePrimaryKeyAnUpdateOfTheKeyDeletesTheOldKey() throws Exception {
    Path configFile =
        config(
            "journal.yaml", "keys-journal", "journal", "journal", List.of("tenant_id", "entry_id"));
    ShardbergConfig config = ShardbergConfig.load(configFile);
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    try {
      Table table = Catalogs.loadTable(config.target());
      assertThat(table.schema().identifierFieldNames())
          .containsExactlyInAnyOrder("shard_number", "tenant_id", "entry_id");
      awaitRows(table, "journal");
      changeKeys("journal");
    } finally {
      job.cancel().get();
      await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
    }
  }

  /**
   * Binlog changes with updates of the key, in two rounds; after each the table equals the shards.
   */
  private static void changeKeys(String prefix) throws Exception {
    Table table =
        Catalogs.loadTable(
            ShardbergConfig.load(
                    dir.resolve(prefix.equals("journal") ? "journal.yaml" : "unique.yaml"))
                .target());
    setAmount(prefix, 0, 1, 1, "99.99"); // same key: no extra delete
    rekey(prefix, 0, 1, 4, 1, 1004); // entry_id changes
    rekey(prefix, 0, 2, 5, 0, 5); // tenant_id changes
    rekey(prefix, 1, 0, 3, 2, 3003); // both change
    rekey(prefix, 1, 1, 7, 1, 8007);
    insert(
        prefix, 1, 1, 7, "7.77", "re-inserted"); // the old key again, likely in the same checkpoint
    rekey(prefix, 1, 1, 8007, 1, 9007); // a key changed twice
    delete(prefix, 0, 0, 6);
    insert(prefix, 0, 2, 31, "31.00", "new");
    awaitRows(table, prefix);

    rekey(prefix, 0, 1, 1004, 1, 4); // back to the old key, in a later checkpoint
    rekey(prefix, 1, 2, 3003, 0, 3);
    awaitRows(table, prefix);
  }

  @Test
  void keyColumnsThatAreNotUniqueAreRefusedNamingTheIndexes() throws Exception {
    Path configFile =
        config("tenant.yaml", "keys-tenant", "entries", "by_tenant", List.of("tenant_id"));
    CliRun validate = cli("validate", "--config", configFile.toString());
    assertThat(validate.exit()).isNotZero();
    assertThat(validate.err())
        .contains(
            String.join(
                System.lineSeparator(),
                "Cannot use tables.key-columns [tenant_id] as the row key: on 2 of 2 shard(s) no PRIMARY KEY or UNIQUE index has exactly these columns, all NOT NULL, so two different rows could share one key and be merged into one:",
                "  - shard 0 (ledger.entries_0 on host keys): key-columns (tenant_id) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: INDEX ix_tenant(tenant_id), UNIQUE uq_entry(tenant_id, entry_id)",
                "  - shard 1 (ledger.entries_1 on host keys): key-columns (tenant_id) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: INDEX ix_tenant(tenant_id), UNIQUE uq_entry(tenant_id, entry_id)",
                "Name the columns of the primary key or of such a UNIQUE index in tables.key-columns, or add the index on every shard."));
  }

  @Test
  void anExistingTableBucketedByTheOldDefaultKeepsValidating() throws Exception {
    Path configFile =
        config("old.yaml", "keys-old", "entries", "old_default", List.of("tenant_id", "entry_id"));
    ShardbergConfig config = ShardbergConfig.load(configFile);
    // the table as an earlier version created it: bucketed by the first key column
    ShardSchema schema =
        new ShardSchema(
            List.of(
                MySqlColumn.of("tenant_id", "int", false),
                MySqlColumn.of("entry_id", "bigint", false),
                MySqlColumn.of("amount", "decimal(12,2)", false),
                MySqlColumn.of("note", "varchar(40)", true)),
            List.of("tenant_id", "entry_id"));
    Catalog catalog = Catalogs.loader(config.target().catalog()).loadCatalog();
    try {
      TableCreator.createOrValidate(
          catalog,
          TableIdentifier.of("ledger", "old_default"),
          TableLayout.derive(schema, 5, "tenant_id", Map.of()));
    } finally {
      if (catalog instanceof java.io.Closeable closeable) {
        closeable.close();
      }
    }
    CliRun validate = cli("validate", "--config", configFile.toString());
    assertThat(validate.exit()).as(validate.err()).isZero();
    assertThat(validate.out())
        .contains("  bucket column: tenant_id (from the existing table's partition spec)")
        .contains("state: exists and matches the derived layout");
  }

  private static void awaitRows(Table table, String prefix) {
    List<String> rows = expectedRows(prefix);
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .until(() -> actualRows(table).equals(rows));
  }
}
