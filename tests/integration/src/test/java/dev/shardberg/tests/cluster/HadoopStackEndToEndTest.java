package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.shardberg.coordinator.SnapshotSummaryKeys;
import dev.shardberg.job.Reconciliation;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.TestConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.hive.HiveCatalog;
import org.apache.iceberg.hive.TestHiveMetastore;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The production stack of issue 18, end to end: a real HDFS ({@link MiniHdfs}: Hadoop's
 * MiniDFSCluster in its own JVM) holds the Iceberg warehouse and Flink's checkpoints, a real Hive
 * Metastore (Thrift, Derby) is the catalog, ZooKeeper (Curator's TestingServer) is on for the
 * coordinator's lock and fencing, and the shaded jar is submitted with {@code flink run} to a real
 * multi-process session cluster. The cluster gets Hadoop the way a user gives it: {@code
 * HADOOP_CLASSPATH} (Hadoop 3.4.1's shaded client jars) and {@code HADOOP_CONF_DIR} (core-site.xml
 * with {@code fs.defaultFS}, which the checkpoint URI {@code hdfs:///flink/checkpoints} relies on).
 * Snapshot, binlog changes, a TaskManager {@code kill -9}; at the end the table equals the shards
 * (row for row and by the job's verify), and the Hive Metastore's {@code metadata_location} is the
 * newest metadata file on HDFS, holding the last checkpoint the coordinator logged as committed.
 */
class HadoopStackEndToEndTest {
  /**
   * Curator's TestingServer runs ZooKeeper's embedded server, which ends the JVM ({@code
   * System.exit(2)}) on an error in its lifecycle: the tests want the error, not a crashed fork.
   */
  @BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    org.apache.zookeeper.util.ServiceUtils.setSystemExitProcedure(
        org.apache.zookeeper.util.ServiceUtils.LOG_ONLY);
  }

  private static final String PIPELINE_ID = "hadoop-e2e-orders";
  private static final String CDC_USER = "shardberg_cdc";
  private static final int SHARDS = 4;
  private static final int ROWS_PER_SHARD = 200;
  private static final Duration CATCH_UP = Duration.ofMinutes(4);
  private static final PipelineCommits COMMITS =
      new PipelineCommits(
          HadoopStackEndToEndTest::table, PIPELINE_ID, CATCH_UP, "Iceberg table on HDFS");
  private static final String NAMESPACE = "shop";
  private static final String TABLE = "orders";

  /** The coordinator's INFO line per commit (data or heartbeat): its checkpoint id. */
  /**
   * Iceberg's INFO line per commit through the Hive Metastore (HiveTableOperations, in the
   * coordinator's TaskManager).
   */
  private static final Pattern NEW_METADATA_LOCATION =
      Pattern.compile(
          "Committed to table hms\\.shop\\.orders with the new metadata location (\\S+)");

  private static final Pattern COMMITTED =
      Pattern.compile(
          "Committed (?:checkpoint (\\d+) \\(Flink checkpoint|heartbeat for pipeline "
              + PIPELINE_ID
              + " to table \\S+: checkpoint (\\d+) )");

  private static Path jobJar;
  private static Path workDir;
  private static MiniHdfs hdfs;
  private static TestingServer zooKeeper;
  private static TestHiveMetastore metastore;
  private static String metastoreUri;
  private static EmbeddedMariaDb server;
  private static OrdersWorkload orders;
  private static FlinkSessionCluster cluster;
  private static Path passwordFile;

  @BeforeAll
  static void startEverything() throws Exception {
    jobJar = ShadedJob.jar();
    workDir =
        Path.of("target", "flink-cluster", "HadoopStackEndToEndTest-" + System.currentTimeMillis())
            .toAbsolutePath();
    hdfs = MiniHdfs.start(workDir.resolve("hdfs"), 1);
    System.out.printf(
        "HDFS (MiniDFSCluster, 1 DataNode) at %s started in %d ms%n",
        hdfs.uri(), hdfs.startUpTime().toMillis());
    zooKeeper = new TestingServer(true);

    HiveConf hiveConf = new HiveConf();
    hiveConf.set(
        "hive.metastore.expression.proxy",
        "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy");
    metastore = new TestHiveMetastore();
    metastore.start(hiveConf);
    metastoreUri = metastore.hiveConf().get(HiveConf.ConfVars.METASTOREURIS.varname);

    server = EmbeddedMariaDb.start("hadoop-e2e", 111);
    String password = "e2e-" + Long.toHexString(System.nanoTime());
    server.createCdcUser(CDC_USER, password);
    passwordFile = workDir.resolve("mysql.password");
    Files.writeString(passwordFile, password + "\n");
    orders = new OrdersWorkload(List.of(server), SHARDS, 18);
    orders.createAndLoad(ROWS_PER_SHARD);

    cluster =
        FlinkSessionCluster.builder()
            .workDir(workDir.resolve("flink"))
            .taskManagers(1)
            .slotsPerTaskManager(2)
            .hadoopClasspath(MiniHdfs.clientClasspath())
            .hadoopConfDir(hdfs.confDir())
            // no authority: the NameNode comes from fs.defaultFS in HADOOP_CONF_DIR/core-site.xml
            .config("execution.checkpointing.dir", "hdfs:///flink/checkpoints")
            .config("execution.checkpointing.savepoint-dir", "hdfs:///flink/savepoints")
            .start();
    System.out.printf(
        "Flink session cluster (1 JobManager, 1 TaskManager, Hadoop on HADOOP_CLASSPATH) started in %d ms%n",
        cluster.startUpTime().toMillis());
  }

  @AfterAll
  static void stopEverything() throws Exception {
    if (orders != null) {
      orders.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (server != null) {
      server.close();
    }
    if (metastore != null) {
      metastore.stop();
    }
    if (zooKeeper != null) {
      zooKeeper.close();
    }
    if (hdfs != null) {
      hdfs.close();
    }
  }

  @Test
  void snapshotBinlogAndTaskManagerKillOnHdfsWithHiveMetastoreAndZooKeeper() throws Exception {
    Path config = writeConfig();

    // 1. flink run of the shaded jar: the client creates the table in the Hive Metastore, on HDFS
    long submitted = System.nanoTime();
    String jobId = cluster.submit(JobSubmission.of(jobJar, "--config", config.toString()));
    Set<String> loaded = orders.rows();
    assertThat(loaded).hasSize(SHARDS * ROWS_PER_SHARD);
    COMMITS.awaitRowsEqual(loaded, "snapshot of " + loaded.size() + " rows");
    System.out.printf(
        "flink run -> snapshot of %d rows committed on HDFS: %d ms%n",
        loaded.size(), millisSince(submitted));
    Table table = table();
    assertThat(table.location()).startsWith(hdfs.uri() + "/warehouse/shop.db/orders");
    assertThat(table.currentSnapshot().addedDataFiles(table.io()))
        .allSatisfy(f -> assertThat(f.location()).startsWith(hdfs.uri() + "/warehouse/"));

    // 2. binlog changes, then kill -9 of the TaskManager while they keep coming
    orders.startChanges(40);
    long checkpointWithChanges =
        COMMITS.awaitCommitOfBinlogChanges(COMMITS.lastCommittedCheckpoint());
    FlinkSessionCluster.TaskManager victim = cluster.taskManagers().get(0);
    long killedAt = System.nanoTime();
    cluster.killTaskManager(victim);
    FlinkSessionCluster.TaskManager replacement = cluster.startTaskManager();
    JobStatus restored =
        await("job " + jobId + " restored on " + replacement.resourceId())
            .atMost(CATCH_UP)
            .until(() -> cluster.jobStatus(jobId), s -> s.fullyRunning() && s.restoreCount() == 1);
    assertThat(restored.restoredCheckpointId()).isPositive();
    long runningAgain = millisSince(killedAt);
    COMMITS.awaitNewCommit(checkpointWithChanges);
    System.out.printf(
        "TaskManager kill -> job running again from an HDFS checkpoint: %d ms, first commit after: %d ms%n",
        runningAgain, millisSince(killedAt));
    orders.stopChanges();
    COMMITS.awaitRowsEqual(
        orders.rows(), "after the TaskManager kill, " + orders.changesApplied() + " changes");

    // 3. stop the job (nothing commits any more), then check what it left
    assertThat(cluster.flink("cancel", jobId).succeeded()).isTrue();
    await("job " + jobId + " cancelled")
        .atMost(CATCH_UP)
        .until(() -> cluster.jobStatus(jobId).state(), "CANCELED"::equals);
    assertThat(COMMITS.rows()).isEqualTo(orders.rows());
    VerifyReport report = Reconciliation.verify(ShardbergConfig.load(config), 10);
    assertThat(report.matches()).as("verify of %s:%n%s", config, report.render()).isTrue();
    COMMITS.assertEachCheckpointCommittedOnce();
    assertMetastorePointsAtTheLastCommit();
    assertCheckpointsOnHdfs(jobId, restored.restoredCheckpointId());
    assertZooKeeperHeldTheLockAndEpoch();
  }

  // ---------------------------------------------------------------- what the stack holds at the
  // end

  /**
   * The Hive Metastore's {@code metadata_location} is the newest metadata file in the table's
   * metadata directory on HDFS, and that file's current snapshot is the commit of the last
   * checkpoint the coordinator logged (its INFO line per commit, in the TaskManagers' logs).
   */
  private static void assertMetastorePointsAtTheLastCommit() throws Exception {
    Map<String, String> parameters = metastore.getTable(NAMESPACE, TABLE).getParameters();
    String pointer = parameters.get("metadata_location");
    assertThat(parameters).containsEntry("table_type", "ICEBERG");
    assertThat(pointer).startsWith(hdfs.uri() + "/warehouse/shop.db/orders/metadata/");

    org.apache.hadoop.fs.Path metadataDir = new org.apache.hadoop.fs.Path(pointer).getParent();
    FileSystem fs = metadataDir.getFileSystem(hadoopConf());
    String newest = null;
    int newestVersion = -1;
    for (FileStatus file : fs.listStatus(metadataDir)) {
      String name = file.getPath().getName();
      if (name.endsWith(".metadata.json")) {
        int version = Integer.parseInt(name.substring(0, name.indexOf('-')));
        if (version > newestVersion) {
          newestVersion = version;
          newest = file.getPath().toString();
        }
      }
    }
    assertThat(pointer)
        .as("metadata_location in the Hive Metastore vs the newest metadata file on HDFS")
        .isEqualTo(newest);
    assertThat(pointer)
        .as(
            "metadata_location in the Hive Metastore vs the last one the coordinator's commit wrote")
        .isEqualTo(lastLoggedMetadataLocation());

    TableMetadata metadata = TableMetadataParser.read(new HadoopFileIO(hadoopConf()), pointer);
    // The last checkpoint commit, under any maintenance commits (compactions, merges) made after
    // it.
    Snapshot current = metadata.currentSnapshot();
    while (current
        .summary()
        .containsKey(dev.shardberg.coordinator.maintenance.TableHealth.MAINTENANCE)) {
      current = metadata.snapshot(current.parentId());
    }
    long lastLogged = lastCheckpointTheCoordinatorLogged();
    assertThat(current.summary())
        .containsEntry(SnapshotSummaryKeys.PIPELINE_ID, PIPELINE_ID)
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(lastLogged));
    assertThat(lastLogged).isEqualTo(COMMITS.lastCommittedCheckpoint());
    System.out.printf(
        "Hive Metastore metadata_location = newest metadata file on HDFS (v%d), checkpoint %d%n",
        newestVersion, lastLogged);
  }

  /**
   * The newest (by version) metadata location the coordinator's Iceberg commits logged, over every
   * TaskManager.
   */
  private static String lastLoggedMetadataLocation() throws IOException {
    String last = null;
    int lastVersion = -1;
    for (String log : taskManagerLogs()) {
      Matcher m = NEW_METADATA_LOCATION.matcher(log);
      while (m.find()) {
        String name = m.group(1).substring(m.group(1).lastIndexOf('/') + 1);
        int version = Integer.parseInt(name.substring(0, name.indexOf('-')));
        if (version > lastVersion) {
          lastVersion = version;
          last = m.group(1);
        }
      }
    }
    assertThat(last)
        .as(
            "a 'Committed to table ... with the new metadata location' line in %s",
            cluster.logDir())
        .isNotNull();
    return last;
  }

  private static List<String> taskManagerLogs() throws IOException {
    List<String> contents = new ArrayList<>();
    try (Stream<Path> logs = Files.list(cluster.logDir())) {
      for (Path log :
          logs.filter(p -> p.getFileName().toString().matches("taskmanager-\\d+\\.log")).toList()) {
        contents.add(Files.readString(log, StandardCharsets.UTF_8));
      }
    }
    return contents;
  }

  private static long lastCheckpointTheCoordinatorLogged() throws IOException {
    long last = -1;
    for (String log : taskManagerLogs()) {
      Matcher m = COMMITTED.matcher(log);
      while (m.find()) {
        last = Math.max(last, Long.parseLong(m.group(1) != null ? m.group(1) : m.group(2)));
      }
    }
    assertThat(last).as("a commit line of the coordinator in %s", cluster.logDir()).isPositive();
    return last;
  }

  /**
   * Flink wrote its checkpoints to HDFS (hdfs:/// resolved through HADOOP_CONF_DIR) and restored
   * from one.
   */
  private static void assertCheckpointsOnHdfs(String jobId, long restoredCheckpoint)
      throws IOException {
    org.apache.hadoop.fs.Path restoredDir =
        new org.apache.hadoop.fs.Path(
            hdfs.path("/flink/checkpoints/" + jobId + "/chk-" + restoredCheckpoint));
    FileSystem fs = restoredDir.getFileSystem(hadoopConf());
    assertThat(
            fs.exists(
                new org.apache.hadoop.fs.Path(
                    hdfs.path("/flink/checkpoints/" + jobId + "/shared"))))
        .as("checkpoint directory of job %s on HDFS", jobId)
        .isTrue();
    assertThat(
            fs.listStatus(new org.apache.hadoop.fs.Path(hdfs.path("/flink/checkpoints/" + jobId))))
        .as("a retained checkpoint (chk-N/_metadata) of job %s on HDFS", jobId)
        .anySatisfy(
            s -> {
              assertThat(s.getPath().getName()).startsWith("chk-");
              assertThat(fs.exists(new org.apache.hadoop.fs.Path(s.getPath(), "_metadata")))
                  .isTrue();
            });
  }

  /**
   * HA mode was on: the coordinator took the pipeline's fencing epoch and committed through the
   * table's lock (its log line when it took the epoch names the lock), and the epoch node is in
   * ZooKeeper. The lock's znode itself is not checked: Curator creates it as a container node,
   * which ZooKeeper removes once it has been empty for a cleanup interval (every 60 s), as after
   * the job was cancelled.
   */
  private static void assertZooKeeperHeldTheLockAndEpoch() throws Exception {
    assertThat(String.join("\n", taskManagerLogs()))
        .contains("Pipeline " + PIPELINE_ID + " took fencing epoch")
        .contains(
            "commits to table hms.shop.orders go through the lock at /shardberg/locks/hms.shop.orders");
    ZooKeeper zk = new ZooKeeper(zooKeeper.getConnectString(), 30_000, event -> {});
    try {
      await("ZooKeeper connected")
          .atMost(Duration.ofSeconds(30))
          .until(() -> zk.getState().isConnected());
      assertThat(zk.exists("/shardberg/pipelines/" + PIPELINE_ID + "/epoch", false))
          .as("fencing epoch of pipeline %s", PIPELINE_ID)
          .isNotNull();
    } finally {
      zk.close();
    }
  }

  // ---------------------------------------------------------------- helpers

  private static Path writeConfig() throws IOException {
    return TestConfig.pipeline(PIPELINE_ID)
        .checkpointInterval("2s")
        .checkpointDir("hdfs:///flink/checkpoints")
        .parallelism(1)
        .writerParallelism(1)
        .restart(20, "1s")
        .source(
            new TestConfig.Source(server.name(), server.host(), server.port())
                .user(CDC_USER)
                .passwordFile(passwordFile)
                .serverIds("5600-5603")
                .withoutTls())
        .tables(OrdersWorkload.DATABASE, OrdersWorkload.TABLE_PATTERN)
        .startupMode("initial")
        .serverTimeZone("UTC")
        .hiveCatalog(metastoreUri, hdfs.path("/warehouse"))
        .catalogName("hms")
        .hadoopConfDir(hdfs.confDir())
        .table(NAMESPACE, TABLE)
        .buckets(2)
        .zooKeeper(zooKeeper.getConnectString())
        .write(workDir.resolve("orders-hdfs.yaml"));
  }

  private static Configuration hadoopConf() {
    Configuration conf = new Configuration();
    conf.addResource(
        new org.apache.hadoop.fs.Path(hdfs.confDir().resolve("core-site.xml").toUri()));
    conf.addResource(
        new org.apache.hadoop.fs.Path(hdfs.confDir().resolve("hdfs-site.xml").toUri()));
    return conf;
  }

  private static Table table() {
    HiveCatalog catalog =
        (HiveCatalog)
            CatalogUtil.loadCatalog(
                HiveCatalog.class.getName(),
                "hms",
                Map.of(
                    CatalogProperties.URI,
                    metastoreUri,
                    CatalogProperties.WAREHOUSE_LOCATION,
                    hdfs.path("/warehouse")),
                hadoopConf());
    return catalog.loadTable(TableIdentifier.of(NAMESPACE, TABLE));
  }

  private static long millisSince(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }
}
