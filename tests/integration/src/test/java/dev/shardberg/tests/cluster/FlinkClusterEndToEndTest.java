package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shaded job jar ({@code job/target/shardberg-job-<version>-flink.jar}, system property {@code
 * shardberg.job.jar}) on a real multi-process Flink session cluster, submitted with the real {@code
 * flink run}: two embedded MariaDB servers with four shards of {@code shop.orders_<n>} each, into
 * an Iceberg table in a Hadoop catalog on disk. One cluster and one pair of servers for the class.
 *
 * <p>The jar is read from disk: in a reactor {@code mvn verify} the job module's package phase runs
 * before this module's tests; with {@code mvn test} alone, package the job module first (a stale
 * jar is used as is).
 */
class FlinkClusterEndToEndTest {

  private static final String PIPELINE_ID = "cluster-e2e-orders";
  private static final String CDC_USER = "shardberg_cdc";
  private static final int SHARDS_PER_HOST = 4;
  private static final int ROWS_PER_SHARD = 250;
  private static final Duration CATCH_UP = Duration.ofMinutes(4);
  private static final PipelineCommits COMMITS =
      new PipelineCommits(FlinkClusterEndToEndTest::table, PIPELINE_ID, CATCH_UP, "Iceberg table");

  private static Path jobJar;
  private static FlinkSessionCluster cluster;
  private static final List<EmbeddedMariaDb> servers = new ArrayList<>();
  private static OrdersWorkload orders;
  private static Path workDir;
  private static Path warehouse;
  private static Path passwordFile;

  @BeforeAll
  static void startEverything() throws Exception {
    jobJar = ShadedJob.jar();

    workDir =
        Path.of("target", "flink-cluster", "FlinkClusterEndToEndTest-" + System.currentTimeMillis())
            .toAbsolutePath();
    warehouse = Files.createDirectories(workDir.resolve("warehouse"));
    servers.add(EmbeddedMariaDb.start("cluster-e2e-a", 101));
    servers.add(EmbeddedMariaDb.start("cluster-e2e-b", 102));
    String password = "e2e-" + Long.toHexString(System.nanoTime());
    for (EmbeddedMariaDb server : servers) {
      server.createCdcUser(CDC_USER, password);
    }
    passwordFile = workDir.resolve("mysql.password");
    Files.writeString(passwordFile, password + "\n");
    orders = new OrdersWorkload(servers, SHARDS_PER_HOST, 8);
    orders.createAndLoad(ROWS_PER_SHARD);

    cluster =
        FlinkSessionCluster.builder()
            .workDir(workDir.resolve("flink"))
            .taskManagers(1)
            .slotsPerTaskManager(2)
            .start();
    System.out.printf(
        "Flink session cluster (1 JobManager, 1 TaskManager) started in %d ms%n",
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
    for (EmbeddedMariaDb server : servers) {
      server.close();
    }
  }

  @Test
  void snapshotBinlogTaskManagerKillSavepointResumeAndRescale() throws Exception {
    // 1. flink run of the shaded jar with the YAML config: snapshot, then binlog changes
    Path config = writeConfig("orders-p1.yaml", 1);
    long submitted = System.nanoTime();
    String jobId = cluster.submit(JobSubmission.of(jobJar, "--config", config.toString()));
    Set<String> loaded = orders.rows();
    assertThat(loaded).hasSize(orders.shards() * ROWS_PER_SHARD);
    COMMITS.awaitRowsEqual(loaded, "snapshot of " + loaded.size() + " rows");
    System.out.printf(
        "flink run -> snapshot of %d rows committed: %d ms%n",
        loaded.size(), millisSince(submitted));

    orders.startChanges(40);
    long checkpointWithChanges = COMMITS.awaitNewCommit(COMMITS.lastCommittedCheckpoint());

    // 2. kill -9 of the TaskManager while changes keep coming; a new TaskManager takes over
    FlinkSessionCluster.TaskManager victim = cluster.taskManagers().get(0);
    long killedAt = System.nanoTime();
    cluster.killTaskManager(victim);
    FlinkSessionCluster.TaskManager replacement = cluster.startTaskManager();
    await("job " + jobId + " restored on " + replacement.resourceId())
        .atMost(CATCH_UP)
        .until(() -> cluster.jobStatus(jobId), s -> s.fullyRunning() && s.restoreCount() == 1);
    long runningAgain = millisSince(killedAt);
    COMMITS.awaitNewCommit(checkpointWithChanges);
    System.out.printf(
        "TaskManager kill -> job running again on a new TaskManager: %d ms, first commit after: %d ms%n",
        runningAgain, millisSince(killedAt));
    orders.stopChanges();
    COMMITS.awaitRowsEqual(
        orders.rows(), "after the TaskManager kill, " + orders.changesApplied() + " changes");
    assertVerifyPasses(config);
    COMMITS.assertEachCheckpointCommittedOnce();

    // 3. stop with a savepoint, change the shards while the job is down, resume from the savepoint
    String savepoint = cluster.stopWithSavepoint(jobId);
    assertThat(cluster.jobStatus(jobId).state()).isEqualTo("FINISHED");
    orders.applyChanges(200);
    // without -s on the table this pipeline wrote: refused in the client, nothing submitted
    CliResult stateless =
        cluster.flink("run", "-d", jobJar.toString(), "--config", config.toString());
    assertThat(stateless.exitCode()).as(stateless.describe()).isNotZero();
    assertThat(stateless.output())
        .as(stateless.describe())
        .contains("without state: table ")
        .contains(
            "Resume from the job's last retained checkpoint or a savepoint: use `flink run -s <retained checkpoint or savepoint> ");
    assertThat(cluster.runningJobIds()).isEmpty();
    String resumedId =
        cluster.submit(
            JobSubmission.of(jobJar, "--config", config.toString()).fromSavepoint(savepoint));
    assertThat(resumedId).isNotEqualTo(jobId);
    JobStatus resumed =
        await("job resumed from " + savepoint)
            .atMost(CATCH_UP)
            .until(() -> cluster.jobStatus(resumedId), JobStatus::fullyRunning);
    assertThat(resumed.restoredFromSavepoint()).isTrue();
    COMMITS.awaitRowsEqual(orders.rows(), "after the resume from " + savepoint);
    assertVerifyPasses(config);
    COMMITS.assertEachCheckpointCommittedOnce();

    // 4. upgrade path: the same kind of savepoint, resumed with parallelism 2 (sources and writers)
    String savepoint2 = cluster.stopWithSavepoint(resumedId);
    orders.applyChanges(200);
    Path config2 = writeConfig("orders-p2.yaml", 2);
    String rescaledId =
        cluster.submit(
            JobSubmission.of(jobJar, "--config", config2.toString())
                .withParallelism(2)
                .fromSavepoint(savepoint2));
    JobStatus rescaled =
        await("job resumed from " + savepoint2 + " at parallelism 2")
            .atMost(CATCH_UP)
            .until(() -> cluster.jobStatus(rescaledId), JobStatus::fullyRunning);
    assertThat(rescaled.restoredFromSavepoint()).isTrue();
    assertThat(rescaled.tasksTotal()).isGreaterThan(resumed.tasksTotal());
    orders.applyChanges(200);
    COMMITS.awaitRowsEqual(orders.rows(), "after the resume at parallelism 2");
    assertVerifyPasses(config2);
    assertShadedJarVerifyPasses(config2);
    COMMITS.assertEachCheckpointCommittedOnce();
    assertThat(cluster.runningJobIds()).containsExactly(rescaledId);
    assertThat(cluster.flink("cancel", rescaledId).succeeded()).isTrue();
    await("job " + rescaledId + " cancelled")
        .atMost(CATCH_UP)
        .until(() -> cluster.jobStatus(rescaledId).state().equals("CANCELED"));
    assertNoMisleadingClassLoadingErrors();
  }

  /**
   * Every client run and both job stops above ended without a class-loading stack trace in any log
   * or console output: Hadoop's shutdown hook at client exit (issue 16), Connector/J's pool closer
   * after the job's class loader was released.
   */
  private static void assertNoMisleadingClassLoadingErrors() throws IOException {
    List<Path> files;
    try (var listing = Files.list(cluster.logDir())) {
      files = listing.filter(Files::isRegularFile).sorted().toList();
    }
    assertThat(files)
        .anyMatch(f -> f.getFileName().toString().startsWith("client-"))
        .anyMatch(f -> f.getFileName().toString().equals("jobmanager.log"));
    for (Path file : files) {
      List<String> errors =
          new String(Files.readAllBytes(file), StandardCharsets.UTF_8)
              .lines()
              .filter(
                  l ->
                      l.contains("NoClassDefFoundError")
                          || l.contains("Trying to access closed classloader"))
              // Flink's own INFO at start-up: the cluster has no Hadoop of its own (ours is in the
              // job's jar)
              .filter(
                  l ->
                      !l.contains(
                          "Hadoop FS is not available (not packaged with this application)"))
              .toList();
      assertThat(errors).as("class-loading errors in %s", file).isEmpty();
    }
  }

  @Test
  void jarWithoutConfigIsRefusedWithAClearError() {
    CliResult result = cluster.flink("run", "-d", jobJar.toString());

    assertThat(result.exitCode()).as(result.describe()).isNotZero();
    assertThat(result.output())
        .as(result.describe())
        .contains("Missing required option: '--config=FILE'")
        .contains("Usage: flink run shardberg-job-<version>-flink.jar --config FILE");
  }

  @Test
  void shadedJarCarriesNoClassTheFlinkDistributionProvides() throws IOException {
    Set<String> distClasses = new HashSet<>();
    try (Stream<Path> jars =
        Files.list(Path.of(System.getProperty(FlinkSessionCluster.DIST_PROPERTY)))) {
      for (Path jar : jars.toList()) {
        distClasses.addAll(entries(jar));
      }
    }
    Set<String> jobEntries = entries(jobJar);

    Set<String> flinkDuplicates = new TreeSet<>();
    for (String entry : jobEntries) {
      if (entry.startsWith("org/apache/flink/")
          && entry.endsWith(".class")
          && distClasses.contains(entry)) {
        flinkDuplicates.add(entry);
      }
    }
    assertThat(flinkDuplicates)
        .as("Flink classes inside the job jar that the cluster provides")
        .isEmpty();
    assertThat(jobEntries)
        .as("logging and relocated libraries")
        .noneMatch(e -> e.startsWith("org/apache/logging/log4j/") || e.startsWith("org/slf4j/"))
        .noneMatch(
            e -> e.startsWith("com/google/common/") || e.startsWith("com/fasterxml/jackson/"))
        .anyMatch(e -> e.startsWith("dev/shardberg/shaded/com/google/common/"))
        .anyMatch(e -> e.startsWith("dev/shardberg/shaded/com/fasterxml/jackson/databind/"))
        .contains("dev/shardberg/job/ShardbergJob.class");
  }

  // ---------------------------------------------------------------- helpers

  private static Path writeConfig(String name, int parallelism) throws IOException {
    TestConfig config =
        TestConfig.pipeline(PIPELINE_ID)
            .checkpointInterval("2s")
            .parallelism(parallelism)
            .writerParallelism(parallelism)
            .restart(20, "1s");
    int firstId = 5400;
    for (EmbeddedMariaDb server : servers) {
      config.source(
          new TestConfig.Source(server.name(), server.host(), server.port())
              .user(CDC_USER)
              .passwordFile(passwordFile)
              .serverIds(firstId + "-" + (firstId + 3))
              .withoutTls());
      firstId += 4;
    }
    return config
        .tables(OrdersWorkload.DATABASE, OrdersWorkload.TABLE_PATTERN)
        .startupMode("initial")
        .serverTimeZone("UTC")
        .hadoopCatalog(warehouse.toUri())
        .catalogName("e2e")
        .table("shop", "orders")
        .buckets(2)
        .write(workDir.resolve(name));
  }

  private static Table table() {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toUri().toString());
    return catalog.loadTable(TableIdentifier.of("shop", "orders"));
  }

  /** The job's verify (per-shard counts and checksums), in this JVM. */
  private static void assertVerifyPasses(Path config) {
    VerifyReport report = Reconciliation.verify(ShardbergConfig.load(config), 10);
    assertThat(report.matches()).as("verify of %s:%n%s", config, report.render()).isTrue();
  }

  /**
   * The same verify through the shaded jar's entry point, in a JVM with only the jar and Flink's
   * lib/.
   */
  private static void assertShadedJarVerifyPasses(Path config) throws Exception {
    ShadedJob.assertVerifyPasses(jobJar, config, workDir, Map.of());
  }

  private static Set<String> entries(Path jar) throws IOException {
    Set<String> names = new HashSet<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      Enumeration<JarEntry> e = file.entries();
      while (e.hasMoreElements()) {
        names.add(e.nextElement().getName());
      }
    }
    return names;
  }

  private static long millisSince(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }
}
