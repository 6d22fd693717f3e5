package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.tests.job.SparkReader;
import dev.shardberg.tests.lakehouse.RestCatalogServer;
import dev.shardberg.tests.lakehouse.S3Server;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 29's stack end to end, the way a user runs it: the shaded jar submitted with {@code flink
 * run} to a real multi-process session cluster, the warehouse on a real S3-compatible store
 * (S3Proxy), a real Iceberg REST catalog server in front of a JDBC catalog on MariaDB, Iceberg's S3
 * file IO with the AWS SDK's default HTTP client (Apache's, shaded into the job jar) and the
 * credentials from the environment of the Flink processes (never in the config file). Snapshot,
 * binlog changes, a TaskManager {@code kill -9}; at the end the table equals the shards row for
 * row, each checkpoint was committed once, the job's {@code verify} passes, and every file of the
 * table is an object in the bucket. (Flink's checkpoints stay on local disk: the Flink distribution
 * here has no S3 file system plugin. A real Spark reads this stack in {@code
 * ShardbergEndToEndTest.restCatalogOnS3CompatibleStore}.)
 */
class ObjectStoreStackEndToEndTest {
  private static final String PIPELINE_ID = "s3-e2e-orders";
  private static final String CDC_USER = "shardberg_cdc";
  private static final int SHARDS = 4;
  private static final int ROWS_PER_SHARD = 200;
  private static final Duration CATCH_UP = Duration.ofMinutes(4);
  private static final String NAMESPACE = "shop";
  private static final String TABLE = "orders";
  private static final String WAREHOUSE = "s3://lake/warehouse";
  private static final PipelineCommits COMMITS =
      new PipelineCommits(
          ObjectStoreStackEndToEndTest::table, PIPELINE_ID, CATCH_UP, "Iceberg table on S3");

  private static Path jobJar;
  private static Path workDir;
  private static S3Server s3;
  private static String secretKey;
  private static EmbeddedMariaDb server;
  private static RestCatalogServer rest;
  private static OrdersWorkload orders;
  private static FlinkSessionCluster cluster;
  private static Path passwordFile;
  private static Catalog reader;

  /** What the job and every reader set for the store (no credentials). */
  private static Map<String, String> fileIo() {
    Map<String, String> fileIo = new LinkedHashMap<>();
    fileIo.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    fileIo.put("s3.endpoint", s3.endpoint());
    fileIo.put("s3.path-style-access", "true");
    fileIo.put("client.region", S3Server.REGION);
    // S3Proxy does not read the SDK's aws-chunked uploads with checksum trailers
    fileIo.put("s3.chunked-encoding-enabled", "false");
    return fileIo;
  }

  @BeforeAll
  static void startEverything() throws Exception {
    jobJar = ShadedJob.jar();
    workDir =
        Path.of("target", "flink-cluster", "ObjectStoreStackEndToEndTest-" + System.nanoTime())
            .toAbsolutePath();
    Files.createDirectories(workDir);
    secretKey = "s3-secret-" + Long.toHexString(System.nanoTime());
    s3 = S3Server.start("shardberg-s3-e2e", secretKey);
    s3.createBucket("lake");

    server = EmbeddedMariaDb.start("s3-e2e", 121);
    String password = "e2e-" + Long.toHexString(System.nanoTime());
    server.createCdcUser(CDC_USER, password);
    passwordFile = workDir.resolve("mysql.password");
    Files.writeString(passwordFile, password + "\n");
    server.execute(
        "CREATE DATABASE rest_catalog",
        "CREATE USER 'rest_backend'@'%' IDENTIFIED BY 'rest-backend-pw'",
        "GRANT ALL ON rest_catalog.* TO 'rest_backend'@'%'");
    Map<String, String> backend = new HashMap<>(fileIo());
    backend.put("http-client.type", "urlconnection"); // see ShardbergEndToEndTest: this JVM
    backend.put("catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
    backend.put("uri", server.jdbcUrl("rest_catalog"));
    backend.put("jdbc.user", "rest_backend");
    backend.put("jdbc.password", "rest-backend-pw");
    backend.put("warehouse", WAREHOUSE);
    backend.put("s3.access-key-id", s3.accessKey());
    backend.put("s3.secret-access-key", secretKey);
    rest = RestCatalogServer.start(backend);

    Map<String, String> readerProps = new HashMap<>(fileIo());
    readerProps.put("http-client.type", "urlconnection");
    readerProps.put("uri", rest.uri());
    readerProps.put("warehouse", WAREHOUSE);
    readerProps.put("s3.access-key-id", s3.accessKey());
    readerProps.put("s3.secret-access-key", secretKey);
    reader =
        CatalogUtil.loadCatalog(
            "org.apache.iceberg.rest.RESTCatalog", "rest_reader", readerProps, null);

    orders = new OrdersWorkload(List.of(server), SHARDS, 29);
    orders.createAndLoad(ROWS_PER_SHARD);

    cluster =
        FlinkSessionCluster.builder()
            .workDir(workDir.resolve("flink"))
            .taskManagers(1)
            .slotsPerTaskManager(2)
            // the SDK's default credentials chain reads these in the client and every TaskManager
            .environment("AWS_ACCESS_KEY_ID", s3.accessKey())
            .environment("AWS_SECRET_ACCESS_KEY", secretKey)
            .start();
  }

  @AfterAll
  static void stopEverything() throws Exception {
    if (orders != null) {
      orders.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (reader instanceof AutoCloseable c) {
      c.close();
    }
    if (rest != null) {
      rest.close();
    }
    if (server != null) {
      server.close();
    }
    if (s3 != null) {
      s3.close();
    }
  }

  @Test
  void flinkRunOnS3WithRestCatalogSurvivesATaskManagerKillExactlyOnce() throws Exception {
    TestConfig testConfig =
        TestConfig.pipeline(PIPELINE_ID)
            .checkpointInterval("2s")
            .checkpointDir(cluster.checkpointDir().toUri())
            .parallelism(1)
            .writerParallelism(1)
            .restart(20, "1s")
            .source(
                new TestConfig.Source(server.name(), server.host(), server.port())
                    .user(CDC_USER)
                    .passwordFile(passwordFile)
                    .serverIds("5610-5613")
                    .withoutTls())
            .tables(OrdersWorkload.DATABASE, OrdersWorkload.TABLE_PATTERN)
            .startupMode("initial")
            .serverTimeZone("UTC")
            .restCatalog(rest.uri(), WAREHOUSE)
            .catalogName("rest_cat")
            .table(NAMESPACE, TABLE)
            .buckets(2);
    fileIo().forEach(testConfig::catalogProperty);
    Path config = testConfig.write(workDir.resolve("orders-s3.yaml"));
    assertThat(Files.readString(config)).doesNotContain(secretKey);

    // 1. flink run of the shaded jar: the client creates the table through the REST catalog
    String jobId = cluster.submit(JobSubmission.of(jobJar, "--config", config.toString()));
    Set<String> loaded = orders.rows();
    assertThat(loaded).hasSize(SHARDS * ROWS_PER_SHARD);
    COMMITS.awaitRowsEqual(loaded, "snapshot of " + loaded.size() + " rows");
    Table table = table();
    assertThat(table.location()).startsWith(WAREHOUSE + "/");

    // 2. binlog changes, then kill -9 of the TaskManager while they keep coming
    orders.startChanges(40);
    long checkpointWithChanges =
        COMMITS.awaitCommitOfBinlogChanges(COMMITS.lastCommittedCheckpoint());
    cluster.killTaskManager(cluster.taskManagers().get(0));
    FlinkSessionCluster.TaskManager replacement = cluster.startTaskManager();
    JobStatus restored =
        await("job " + jobId + " restored on " + replacement.resourceId())
            .atMost(CATCH_UP)
            .until(() -> cluster.jobStatus(jobId), s -> s.fullyRunning() && s.restoreCount() == 1);
    assertThat(restored.restoredCheckpointId()).isPositive();
    COMMITS.awaitNewCommit(checkpointWithChanges);
    orders.stopChanges();
    COMMITS.awaitRowsEqual(
        orders.rows(), "after the TaskManager kill, " + orders.changesApplied() + " changes");

    // 3. stopped: the table, each checkpoint once, verify, and the files in the bucket
    assertThat(cluster.flink("cancel", jobId).succeeded()).isTrue();
    await("job " + jobId + " cancelled")
        .atMost(CATCH_UP)
        .until(() -> cluster.jobStatus(jobId).state(), "CANCELED"::equals);
    assertThat(COMMITS.rows()).isEqualTo(orders.rows());
    COMMITS.assertEachCheckpointCommittedOnce();
    assertShadedJarVerifyPasses(config);
    // a second engine through the same REST catalog and S3 endpoint: a real Spark
    Map<String, String> spark = new HashMap<>(fileIo());
    spark.put("type", "rest");
    spark.put("uri", rest.uri());
    spark.put("warehouse", WAREHOUSE);
    spark.put("http-client.type", "urlconnection"); // see ShardbergEndToEndTest: this JVM
    spark.put("s3.access-key-id", s3.accessKey());
    spark.put("s3.secret-access-key", secretKey);
    assertThat(
            SparkReader.rows(
                spark,
                "SELECT shard_number, order_id, status, amount, note FROM t."
                    + NAMESPACE
                    + "."
                    + TABLE,
                r ->
                    OrdersWorkload.render(
                        r.getInt(0),
                        r.getLong(1),
                        r.getString(2),
                        r.getDecimal(3),
                        r.getString(4))))
        .as("the table as Spark reads it through the REST catalog and the S3 endpoint")
        .containsExactlyElementsOf(orders.rows());
    table = table();
    List<String> keys = s3.keys("lake");
    String prefix = WAREHOUSE.substring("s3://lake/".length()) + "/";
    table
        .currentSnapshot()
        .addedDataFiles(table.io())
        .forEach(f -> assertThat(keys).contains(f.location().substring("s3://lake/".length())));
    assertThat(keys).allSatisfy(k -> assertThat(k).startsWith(prefix));
    assertThat(cluster.logTails()).doesNotContain(secretKey);
  }

  /**
   * {@code verify} from the shaded jar in its own JVM, as a user runs it, with the credentials in
   * its environment only. (Not in this JVM: Iceberg's shared worker threads here may carry the
   * closed class loader of an earlier test's job, which Apache's HTTP client then looks up
   * commons-logging through.)
   */
  private static void assertShadedJarVerifyPasses(Path config) throws Exception {
    String output =
        ShadedJob.assertVerifyPasses(
            jobJar,
            config,
            workDir,
            Map.of("AWS_ACCESS_KEY_ID", s3.accessKey(), "AWS_SECRET_ACCESS_KEY", secretKey));
    assertThat(output).contains("MATCH: ").doesNotContain("MISMATCH").doesNotContain(secretKey);
  }

  private static Table table() {
    return reader.loadTable(TableIdentifier.of(NAMESPACE, TABLE));
  }
}
