package dev.shardberg.tests.job;

import static dev.shardberg.tests.cli.CliRun.cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.coordinator.maintenance.TableHealth;
import dev.shardberg.job.Catalogs;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.ShardbergPipeline;
import dev.shardberg.job.TablePlan;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.cli.CliRun;
import dev.shardberg.tests.lakehouse.RestCatalogServer;
import dev.shardberg.tests.lakehouse.S3Server;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hive.TestHiveMetastore;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real job end to end: two MariaDB servers × 4 shards (numbers from table names on one, from
 * database names on the other), a Flink MiniCluster, an Iceberg table on disk (Hadoop catalog, then
 * a real Hive Metastore, then a jdbc catalog on MariaDB, then a REST catalog with the table on an
 * S3-compatible store). Snapshot, binlog inserts/updates/deletes, a TaskManager killed and the job
 * restarted from its last checkpoint, more changes: after each phase the table equals the union of
 * the shards, checked with {@code verify} and, independently, row by row with Iceberg's generic
 * reader against the changes the test applied.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShardbergEndToEndTest {
  private static final Duration CAUGHT_UP = Duration.ofMinutes(4);
  private static final String S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO";

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () -> {
            Configuration conf = new Configuration();
            conf.setString("heartbeat.interval", "1000");
            conf.setString("heartbeat.timeout", "5000");
            return new MiniClusterResourceConfiguration.Builder()
                .setNumberTaskManagers(1)
                .setNumberSlotsPerTaskManager(4)
                .setConfiguration(conf)
                .build();
          });

  @TempDir static Path dir;
  static TwoHostShards shards;

  @BeforeAll
  static void startShards() throws Exception {
    shards = new TwoHostShards(dir);
    for (int s = 0; s < 8; s++) {
      shards.insert(s, 40);
    }
  }

  @AfterAll
  static void stopShards() {
    if (shards != null) {
      shards.close();
    }
  }

  /** The config of pipeline {@code pipelineId} on these shards, without its target. */
  private static TestConfig config(String pipelineId) {
    return TestConfig.pipeline(pipelineId)
        .checkpointInterval("1s")
        .parallelism(2)
        .writerParallelism(2)
        .restart(10, "1s")
        .with(shards::sources)
        // the job's own maintenance, every 2 s instead of every minute: compaction runs in the test
        .maintenanceInterval("2s")
        .compactionMinSmallFiles(2);
  }

  @Test
  @Order(1)
  void snapshotBinlogTaskManagerFailureAndMoreChanges(@InjectMiniCluster MiniCluster miniCluster)
      throws Exception {
    Path configFile =
        config("e2e-hadoop")
            .hadoopCatalog(dir.resolve("warehouse").toUri())
            .table("shop", "orders")
            .buckets(3)
            .write(dir.resolve("hadoop.yaml"));
    ShardbergConfig config = ShardbergConfig.load(configFile);
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table = Catalogs.loadTable(config.target());
    try {
      // snapshot of the existing rows: a fresh table takes it insert-only, no equality delete
      awaitCaughtUp(table, config);
      assertThat(addedEqualityDeletes(table))
          .as("equality deletes committed by the snapshot phase")
          .isZero();

      // binlog: inserts, updates, deletes
      shards.changeRound(1);
      shards.changeRound(2);
      awaitCaughtUp(table, config);
      // maintenance inside the job compacts partitions with deletes; everything after runs on
      // compacted data, and every check against the shards below holds with it
      await().atMost(CAUGHT_UP).until(() -> compactions(table) > 0);

      // changes in flight while the TaskManager dies; the job restarts from its last checkpoint
      shards.changeRound(3);
      long committedBefore = lastCheckpoint(table, "e2e-hadoop");
      miniCluster.terminateTaskManager(0).get();
      miniCluster.startTaskManager();
      shards.changeRound(4);
      awaitCaughtUp(table, config);
      assertThat(lastCheckpoint(table, "e2e-hadoop")).isGreaterThan(committedBefore);
      await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get() == JobStatus.RUNNING);

      // more changes after the restart
      shards.changeRound(5);
      awaitCaughtUp(table, config);
      stop(job); // nothing commits from here on: the checks below read a stable table

      // the change phase (and everything after the restart) upserts
      assertThat(addedEqualityDeletes(table)).isPositive();

      // exactly once: every checkpoint id committed at most once, in increasing order
      table.refresh();
      List<CommitRecord> commits =
          CommittedCheckpoints.history(table, "e2e-hadoop", Integer.MAX_VALUE);
      Set<Long> ids = new HashSet<>();
      for (CommitRecord c : commits) {
        assertThat(ids.add(c.checkpointId()))
            .as("checkpoint %s committed twice", c.checkpointId())
            .isTrue();
      }
      assertThat(commits)
          .extracting(CommitRecord::checkpointId)
          .isSortedAccordingTo((x, y) -> Long.compare(y, x));

      // the CLI sees the same
      CliRun status = cli("status", "--config", configFile.toString());
      assertThat(status.exit()).isZero();
      assertThat(status.out())
          .contains("last committed checkpoint: " + commits.get(0).checkpointId())
          .contains("commits of this pipeline:  " + commits.size());
      CliRun verify = cli("verify", "--config", configFile.toString());
      assertThat(verify.exit()).as(verify.out()).isZero();
      assertThat(verify.out()).contains("MATCH: " + shards.expectedCount() + " rows in 8 shards");
      CliRun validate = cli("validate", "--config", configFile.toString());
      assertThat(validate.exit()).as(validate.err()).isZero();
      assertThat(validate.out())
          .contains(
              "e2e-a        shardberg_cdc@127.0.0.1:"
                  + shards.a.port()
                  + "  server ids 5500-5503  4 shard tables")
          .contains(
              "e2e-b        shardberg_cdc@127.0.0.1:"
                  + shards.b.port()
                  + "  server ids 5504-5507  4 shard tables")
          .contains("Shards (8)")
          .contains("state: exists and matches the derived layout")
          .contains("OK: the config is valid");
    } finally {
      stop(job);
    }
  }

  @Test
  @Order(2)
  void hiveMetastoreCatalog() throws Exception {
    HiveConf hiveConf = new HiveConf();
    hiveConf.set(
        "hive.metastore.expression.proxy",
        "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy");
    TestHiveMetastore metastore = new TestHiveMetastore();
    metastore.start(hiveConf);
    try {
      String uri = metastore.hiveConf().get(HiveConf.ConfVars.METASTOREURIS.varname);
      Path configFile =
          config("e2e-hive")
              .hiveCatalog(uri, dir.resolve("hive-warehouse").toUri())
              .catalogName("hms")
              .table("shop_hive", "orders")
              .write(dir.resolve("hive.yaml"));
      ShardbergConfig config = ShardbergConfig.load(configFile);
      JobClient job =
          ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
      try {
        Table table = Catalogs.loadTable(config.target());
        assertThat(table.name()).isEqualTo("hms.shop_hive.orders");
        awaitCaughtUp(table, config);
        shards.changeRound(6);
        awaitCaughtUp(table, config);
        assertThat(metastore.getTable("shop_hive", "orders").getParameters())
            .containsEntry("table_type", "ICEBERG");
      } finally {
        stop(job);
      }
    } finally {
      metastore.stop();
    }
  }

  /**
   * A jdbc catalog whose database is a MariaDB server (one of the shards' hosts, as teams with a
   * MySQL fleet would): the job creates the namespace and the table through it, commits every
   * checkpoint through its compare-and-swap of the metadata location, and the catalog's own row
   * names the metadata the table reads.
   */
  @Test
  @Order(3)
  void jdbcCatalogOnMariaDb() throws Exception {
    shards.a.execute(
        "CREATE DATABASE iceberg_catalog",
        "CREATE USER 'iceberg'@'%' IDENTIFIED BY 'catalog-pw-\u00e9'",
        "GRANT ALL ON iceberg_catalog.* TO 'iceberg'@'%'");
    Path password = Files.writeString(dir.resolve("catalog.password"), "catalog-pw-\u00e9\n");
    Path configFile =
        config("e2e-jdbc")
            .jdbcCatalog(
                shards.a.jdbcUrl("iceberg_catalog"),
                dir.resolve("jdbc-warehouse").toUri(),
                "iceberg",
                password)
            .catalogName("jdbc_cat")
            .table("shop_jdbc", "orders")
            .write(dir.resolve("jdbc.yaml"));
    ShardbergConfig config = ShardbergConfig.load(configFile);
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table;
    try {
      table = Catalogs.loadTable(config.target());
      assertThat(table.name()).isEqualTo("jdbc_cat.shop_jdbc.orders");
      awaitCaughtUp(table, config);
      shards.changeRound(7);
      awaitCaughtUp(table, config);
    } finally {
      stop(job);
    }
    table.refresh();
    List<CommitRecord> commits = CommittedCheckpoints.history(table, "e2e-jdbc", Integer.MAX_VALUE);
    assertThat(commits).isNotEmpty();
    assertThat(commits.stream().map(CommitRecord::checkpointId).distinct().count())
        .as("each checkpoint committed once")
        .isEqualTo(commits.size());
    try (Connection c = shards.a.connect("iceberg_catalog");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'jdbc_cat'"
                    + " AND table_namespace = 'shop_jdbc' AND table_name = 'orders'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1))
          .isEqualTo(((HasTableOperations) table).operations().current().metadataFileLocation());
    }
    CliRun verify = cli("verify", "--config", configFile.toString());
    assertThat(verify.exit()).as(verify.out()).isZero();
    assertThat(verify.out()).contains("MATCH: " + shards.expectedCount() + " rows in 8 shards");
    assertThat(verify.out() + verify.err()).doesNotContain("catalog-pw");
  }

  /**
   * Deletes by position (issue 28) through the real job, as the default for a table the job creates
   * ({@code target.delete-mode} unset): a new table is created as format v3 and records the mode,
   * the snapshot and binlog changes land, and no snapshot adds an equality delete; each data file
   * carries at most one deletion vector; verify matches the shards, and so do a real Spark and
   * Flink's batch source.
   */
  @Test
  @Order(4)
  void deletesByPositionAsPartitionOwners() throws Exception {
    runDeletesByPosition(3, 8, 9);
  }

  /**
   * The same on a format v2 table ({@code target.table-properties: {format-version: 2}}): the
   * owners' deletes are position-delete files, never an equality delete, and Spark and Flink's
   * batch source read the shards' rows.
   */
  @Test
  @Order(6)
  void deletesByPositionOnAFormatV2Table() throws Exception {
    runDeletesByPosition(2, 11, 12);
  }

  private void runDeletesByPosition(int formatVersion, int round, int nextRound) throws Exception {
    String name = "orders_by_position_v" + formatVersion;
    String warehouseDir = "position-warehouse-v" + formatVersion;
    TestConfig testConfig =
        config("e2e-position-v" + formatVersion)
            .hadoopCatalog(dir.resolve(warehouseDir).toUri())
            .table("shop", name);
    if (formatVersion == 2) {
      testConfig.deleteMode("position").tableProperty("format-version", "2");
    } else {
      testConfig.deleteModeUnset(); // the job's default for a table it creates
    }
    // the writers' index lives in Flink state: without a checkpoint directory (the JobManager's
    // memory, 5 MiB a state) the start is refused before anything runs
    ShardbergConfig withoutDirectory =
        ShardbergConfig.load(
            testConfig.copy().write(dir.resolve("position-no-dir-v" + formatVersion + ".yaml")));
    assertThatThrownBy(
            () ->
                ShardbergPipeline.start(
                    StreamExecutionEnvironment.getExecutionEnvironment(), withoutDirectory))
        .hasMessageContaining("with target.delete-mode = position without a checkpoint directory")
        .hasMessageContaining("Set pipeline.checkpoint-dir");
    testConfig.checkpointDir(dir.resolve("position-checkpoints-v" + formatVersion).toUri());
    ShardbergConfig config =
        ShardbergConfig.load(testConfig.write(dir.resolve("position-v" + formatVersion + ".yaml")));
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table;
    try {
      table = Catalogs.loadTable(config.target());
      assertThat(((HasTableOperations) table).operations().current().formatVersion())
          .isEqualTo(formatVersion);
      assertThat(table.properties()).containsEntry("shardberg.delete-mode", "position");
      awaitCaughtUp(table, config);
      shards.changeRound(round);
      shards.changeRound(nextRound);
      awaitCaughtUp(table, config);
    } finally {
      stop(job);
    }
    table.refresh();
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.summary().getOrDefault("added-equality-deletes", "0"))
          .as("equality deletes added by snapshot %s", snapshot.snapshotId())
          .isEqualTo("0");
    }
    long deletes = 0;
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        assertThat(task.deletes())
            .allMatch(d -> d.content() == org.apache.iceberg.FileContent.POSITION_DELETES);
        if (formatVersion == 3) {
          assertThat(task.deletes()).hasSizeLessThanOrEqualTo(1);
          assertThat(task.deletes()).allMatch(org.apache.iceberg.util.ContentFileUtil::isDV);
        } else {
          assertThat(task.deletes()).noneMatch(org.apache.iceberg.util.ContentFileUtil::isDV);
          assertThat(task.deletes()) // one file of the owner's, naming this data file alone
              .hasSizeLessThanOrEqualTo(1)
              .allMatch(
                  d ->
                      task.file()
                          .location()
                          .equals(
                              org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(
                                  d)));
        }
        deletes += task.deletes().size();
      }
    }
    assertThat(deletes).as("position deletes in the table").isPositive();
    assertThat(TwoHostShards.sparkRows(dir.resolve(warehouseDir).toUri(), "shop", name))
        .as("the table as Spark reads it, position deletes applied")
        .isEqualTo(shards.expectedRows());
    assertThat(flinkBatchRows(config, table))
        .as("the table as Flink's batch source reads it, position deletes applied")
        .isEqualTo(shards.expectedRows());
  }

  /** The table as Flink's (bounded) Iceberg source reads it, rendered like the shards' rows. */
  private static List<String> flinkBatchRows(ShardbergConfig config, Table table) throws Exception {
    org.apache.iceberg.Schema schema = table.schema();
    int shard = schema.columns().indexOf(schema.findField("shard_number"));
    int id = schema.columns().indexOf(schema.findField("order_id"));
    int customer = schema.columns().indexOf(schema.findField("customer_id"));
    int status = schema.columns().indexOf(schema.findField("status"));
    int amount = schema.columns().indexOf(schema.findField("amount"));
    int note = schema.columns().indexOf(schema.findField("note"));
    int created = schema.columns().indexOf(schema.findField("created_at"));
    org.apache.iceberg.types.Types.DecimalType decimal =
        (org.apache.iceberg.types.Types.DecimalType) schema.findField("amount").type();
    // a MiniCluster of its own, as a reader's job: it does not compete for the test class's slots
    List<String> rows = new ArrayList<>();
    try (org.apache.flink.runtime.minicluster.MiniCluster reader =
        new org.apache.flink.runtime.minicluster.MiniCluster(
            new org.apache.flink.runtime.minicluster.MiniClusterConfiguration.Builder()
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(1)
                .build())) {
      reader.start();
      StreamExecutionEnvironment env =
          new org.apache.flink.streaming.util.TestStreamEnvironment(reader, 1);
      collectRows(env, config, shard, id, customer, status, amount, note, created, decimal, rows);
    }
    rows.sort(null);
    return rows;
  }

  private static void collectRows(
      StreamExecutionEnvironment env,
      ShardbergConfig config,
      int shard,
      int id,
      int customer,
      int status,
      int amount,
      int note,
      int created,
      org.apache.iceberg.types.Types.DecimalType decimal,
      List<String> rows)
      throws Exception {
    try (org.apache.flink.util.CloseableIterator<org.apache.flink.table.data.RowData> it =
        org.apache.iceberg.flink.source.FlinkSource.forRowData()
            .env(env)
            .tableLoader(Catalogs.tableLoader(config.target()))
            .streaming(false)
            // one reader: by default the source's parallelism follows the table's splits, more
            // than the reader cluster's one slot (the job then waits for slots that never come)
            .flinkConf(
                new org.apache.flink.configuration.Configuration()
                    .set(
                        org.apache.iceberg.flink.FlinkConfigOptions
                            .TABLE_EXEC_ICEBERG_INFER_SOURCE_PARALLELISM,
                        false))
            .build()
            .executeAndCollect("flink batch read")) {
      while (it.hasNext()) {
        org.apache.flink.table.data.RowData r = it.next();
        rows.add(
            TwoHostShards.render(
                r.getInt(shard),
                r.getLong(id),
                r.getInt(customer),
                r.getString(status).toString(),
                r.getDecimal(amount, decimal.precision(), decimal.scale()).toBigDecimal(),
                r.isNullAt(note) ? null : r.getString(note).toString(),
                r.getTimestamp(created, 6).toLocalDateTime()));
      }
    }
  }

  private static long compactions(Table table) {
    table.refresh();
    long count = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      if ("compaction".equals(snapshot.summary().get(TableHealth.MAINTENANCE))) {
        count++;
      }
    }
    return count;
  }

  /**
   * A REST catalog in front of an S3-compatible object store (issue 29), both real servers in this
   * JVM: Iceberg's REST servlet over a jdbc backend on MariaDB, warehouse {@code s3://lake/…} on
   * S3Proxy. The job reaches the store through Iceberg's S3FileIO configured by pass-through
   * catalog properties, with no secret in the config file (the AWS SDK's default credential chain,
   * here its system properties); every checkpoint commits once through the REST server, the table
   * equals the shards, and its files are objects in the bucket, listed over the S3 protocol and by
   * the server itself. After the job stops, a real Spark reads the table through the same REST
   * server and S3 endpoint and sees exactly the shards' rows.
   */
  @Test
  @Order(5)
  void restCatalogOnS3CompatibleStore() throws Exception {
    shards.a.execute(
        "CREATE DATABASE rest_catalog",
        "CREATE USER 'rest_backend'@'%' IDENTIFIED BY 'rest-backend-pw'",
        "GRANT ALL ON rest_catalog.* TO 'rest_backend'@'%'");
    String secretKey = "s3-secret-key-e2e";
    try (S3Server s3 = S3Server.start("shardberg-e2e", secretKey)) {
      s3.createBucket("lake");
      Map<String, String> fileIo = new LinkedHashMap<>();
      fileIo.put("io-impl", S3_FILE_IO);
      fileIo.put("s3.endpoint", s3.endpoint());
      fileIo.put("s3.path-style-access", "true");
      fileIo.put("client.region", S3Server.REGION);
      // S3Proxy does not read the AWS SDK's aws-chunked uploads with checksum trailers (its
      // payload hash check fails): whole-body uploads, as some S3-compatible stores need
      fileIo.put("s3.chunked-encoding-enabled", "false");
      // the JDK's HTTP client, not Apache's: Iceberg's static worker pool is shared by every job of
      // this JVM, its threads keep the (closed) class loader of the job that started them as their
      // context class loader, and Apache's client looks up commons-logging through it. A
      // TaskManager
      // loads Iceberg per job, so the default (apache) has no such problem there.
      fileIo.put("http-client.type", "urlconnection");
      Map<String, String> backend = new HashMap<>(fileIo);
      backend.put("catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
      backend.put("uri", shards.a.jdbcUrl("rest_catalog"));
      backend.put("jdbc.user", "rest_backend");
      backend.put("jdbc.password", "rest-backend-pw");
      backend.put("warehouse", "s3://lake/warehouse");
      backend.put("s3.access-key-id", s3.accessKey());
      backend.put("s3.secret-access-key", secretKey);
      try (RestCatalogServer rest = RestCatalogServer.start(backend)) {
        TestConfig testConfig =
            config("e2e-rest")
                .restCatalog(rest.uri(), "s3://lake/warehouse")
                .catalogName("rest_cat")
                .table("shop_rest", "orders");
        fileIo.forEach(testConfig::catalogProperty);
        Path configFile = testConfig.write(dir.resolve("rest.yaml"));
        // a Spark reader's catalog: the same REST server, warehouse and S3 endpoint as the job's
        Map<String, String> sparkCatalog = new HashMap<>(fileIo);
        sparkCatalog.put("type", "rest");
        sparkCatalog.put("uri", rest.uri());
        sparkCatalog.put("warehouse", "s3://lake/warehouse");
        assertThat(Files.readString(configFile)).doesNotContain(secretKey);
        // the job's credentials: the SDK's default chain (system properties first, then the
        // AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY environment, profiles, instance roles)
        System.setProperty("aws.accessKeyId", s3.accessKey());
        System.setProperty("aws.secretAccessKey", secretKey);
        try {
          assertValidateReachesTheStore(rest, fileIo, configFile, secretKey);
          runOnRestCatalog(configFile, s3, rest, secretKey, sparkCatalog);
        } finally {
          System.clearProperty("aws.accessKeyId");
          System.clearProperty("aws.secretAccessKey");
        }
      }
    }
  }

  /**
   * {@code validate} reaches the store before anything is written: a wrong endpoint and a missing
   * bucket each fail with one message naming the location and the key to check (and no secret); the
   * right config passes.
   */
  private void assertValidateReachesTheStore(
      RestCatalogServer rest, Map<String, String> fileIo, Path good, String secretKey)
      throws Exception {
    TestConfig wrongEndpoint =
        config("e2e-rest")
            .restCatalog(rest.uri(), "s3://lake/warehouse")
            .catalogName("rest_cat")
            .table("shop_rest", "orders");
    fileIo.forEach(wrongEndpoint::catalogProperty);
    wrongEndpoint.catalogProperty("s3.endpoint", "http://127.0.0.1:1");
    assertThatThrownBy(
            () ->
                TablePlan.of(
                    ShardbergConfig.load(wrongEndpoint.write(dir.resolve("bad-endpoint.yaml")))))
        .hasMessageContaining(
            "Cannot reach the store of table files at 's3://lake/warehouse' (target.catalog.warehouse)")
        .hasMessageContaining("target.catalog.properties.s3.endpoint = 'http://127.0.0.1:1'")
        .hasMessageNotContaining(secretKey);

    TestConfig noBucket =
        config("e2e-rest")
            .restCatalog(rest.uri(), "s3://no-such-bucket/warehouse")
            .catalogName("rest_cat")
            .table("shop_rest", "orders");
    fileIo.forEach(noBucket::catalogProperty);
    assertThatThrownBy(
            () -> TablePlan.of(ShardbergConfig.load(noBucket.write(dir.resolve("no-bucket.yaml")))))
        .hasMessageContaining("at 's3://no-such-bucket/warehouse' (target.catalog.warehouse)")
        .hasMessageContaining("NoSuchBucket")
        .hasMessageNotContaining(secretKey);

    assertThat(TablePlan.of(ShardbergConfig.load(good)).render())
        .contains("shop_rest")
        .contains("store: reached s3://lake/warehouse (target.catalog.warehouse)");

    // without a warehouse the service chooses the location: validate learns it from a create it
    // never commits, and probes it through that table's file IO
    TableIdentifier chosen = TableIdentifier.of("shop_chosen", "orders");
    TestConfig noWarehouse =
        config("e2e-rest")
            .restCatalog(rest.uri())
            .catalogName("rest_cat")
            .table("shop_chosen", "orders");
    fileIo.forEach(noWarehouse::catalogProperty);
    Path noWarehouseFile = noWarehouse.write(dir.resolve("no-warehouse.yaml"));
    assertThat(TablePlan.of(ShardbergConfig.load(noWarehouseFile)).render())
        .contains("store: not probed")
        .contains("namespace 'shop_chosen' does not exist yet");
    ((SupportsNamespaces) rest.backend()).createNamespace(chosen.namespace());
    noWarehouse.catalogProperty("s3.endpoint", "http://127.0.0.1:1");
    assertThatThrownBy(
            () ->
                TablePlan.of(
                    ShardbergConfig.load(
                        noWarehouse.write(dir.resolve("no-warehouse-bad-endpoint.yaml")))))
        .hasMessageContaining(
            "Cannot reach the store of table files at 's3://lake/warehouse/shop_chosen/orders' (the"
                + " location the catalog gives the new table; target.catalog.warehouse is unset)")
        .hasMessageContaining("target.catalog.properties.s3.endpoint = 'http://127.0.0.1:1'")
        .hasMessageNotContaining(secretKey);
    assertThat(TablePlan.of(ShardbergConfig.load(noWarehouseFile)).render())
        .contains(
            "store: reached s3://lake/warehouse/shop_chosen/orders (the location the catalog gives"
                + " the new table)");
    assertThat(rest.backend().tableExists(chosen)).as("validate created no table").isFalse();
  }

  private static void runOnRestCatalog(
      Path configFile,
      S3Server s3,
      RestCatalogServer rest,
      String secretKey,
      Map<String, String> sparkCatalog)
      throws Exception {
    ShardbergConfig config = ShardbergConfig.load(configFile);
    JobClient job =
        ShardbergPipeline.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    Table table;
    try {
      table = Catalogs.loadTable(config.target());
      assertThat(table.name()).isEqualTo("rest_cat.shop_rest.orders");
      assertThat(table.location()).startsWith("s3://lake/warehouse/");
      awaitCaughtUp(table, config);
      shards.changeRound(10);
      awaitCaughtUp(table, config);
    } finally {
      stop(job);
    }
    table.refresh();
    List<CommitRecord> commits = CommittedCheckpoints.history(table, "e2e-rest", Integer.MAX_VALUE);
    assertThat(commits).isNotEmpty();
    assertThat(commits.stream().map(CommitRecord::checkpointId).distinct().count())
        .as("each checkpoint committed once")
        .isEqualTo(commits.size());
    // the REST server's backend holds the metadata the job committed last
    assertThat(
            ((HasTableOperations) rest.backend().loadTable(Catalogs.identifier(config.target())))
                .operations()
                .current()
                .metadataFileLocation())
        .isEqualTo(((HasTableOperations) table).operations().current().metadataFileLocation());

    // every file the table reads is an object in the bucket: listed over the S3 protocol through
    // the table's own S3FileIO, and by the server from its blob store
    Set<String> tableFiles = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        tableFiles.add(task.file().location());
        task.deletes().forEach(delete -> tableFiles.add(delete.location()));
      }
    }
    tableFiles.add(((HasTableOperations) table).operations().current().metadataFileLocation());
    assertThat(tableFiles).isNotEmpty().allMatch(location -> location.startsWith("s3://lake/"));
    assertThat(table.io()).isInstanceOf(SupportsPrefixOperations.class);
    Set<String> listedOverS3 = new HashSet<>();
    ((SupportsPrefixOperations) table.io())
        .listPrefix("s3://lake/")
        .forEach(file -> listedOverS3.add(file.location()));
    assertThat(listedOverS3).containsAll(tableFiles);
    Set<String> onServer = new HashSet<>();
    s3.keys("lake").forEach(key -> onServer.add("s3://lake/" + key));
    assertThat(onServer).containsAll(tableFiles);

    CliRun verify = cli("verify", "--config", configFile.toString());
    assertThat(verify.exit()).as(verify.out() + verify.err()).isZero();
    assertThat(verify.out()).contains("MATCH: " + shards.expectedCount() + " rows in 8 shards");
    assertThat(verify.out() + verify.err()).doesNotContain(secretKey);

    // a second engine on the same catalog and store: a real Spark through the REST server, its
    // S3FileIO on the same endpoint, credentials from the same default chain
    assertThat(TwoHostShards.sparkRows(sparkCatalog, "shop_rest", "orders"))
        .as("the table as Spark reads it through the REST catalog and the S3 endpoint")
        .isEqualTo(shards.expectedRows());
  }

  private static long addedEqualityDeletes(Table table) {
    table.refresh();
    long total = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      total += Long.parseLong(snapshot.summary().getOrDefault("added-equality-deletes", "0"));
    }
    return total;
  }

  /** Waits until the generic reader sees exactly the expected rows, then checks verify agrees. */
  private static void awaitCaughtUp(Table table, ShardbergConfig config) {
    List<String> expected = shards.expectedRows();
    await()
        .atMost(CAUGHT_UP)
        .pollInterval(Duration.ofSeconds(1))
        .ignoreExceptions()
        .until(() -> TwoHostShards.actualRows(table).equals(expected));
    VerifyReport report = Reconciliation.verify(config, 5);
    assertThat(report.matches()).as(report.render()).isTrue();
    assertThat(report.mysqlRows()).isEqualTo(expected.size());
    assertThat(report.shards())
        .extracting(VerifyReport.ShardResult::shard)
        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
  }

  private static void stop(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    await().atMost(CAUGHT_UP).until(() -> job.getJobStatus().get().isGloballyTerminalState());
  }

  private static long lastCheckpoint(Table table, String pipelineId) {
    table.refresh();
    return CommittedCheckpoints.maxCommittedCheckpoint(table, pipelineId).orElse(-1);
  }
}
