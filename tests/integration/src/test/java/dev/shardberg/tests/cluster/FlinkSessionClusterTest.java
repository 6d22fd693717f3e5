package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher against a real JobManager JVM and TaskManager JVMs, driven by the real {@code flink}
 * client, with a tiny job ({@link CountingJob}) packed at test time. One cluster for the class.
 * TaskManager kill, stop-with-savepoint and resume are exercised with the real job in {@link
 * FlinkClusterEndToEndTest}.
 */
class FlinkSessionClusterTest {

  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);

  private static FlinkSessionCluster cluster;
  private static Path jobJar;

  @BeforeAll
  static void startCluster() throws Exception {
    Path workDir =
        Path.of("target", "flink-cluster", "FlinkSessionClusterTest-" + System.currentTimeMillis());
    cluster =
        FlinkSessionCluster.builder()
            .workDir(workDir)
            .taskManagers(1)
            .slotsPerTaskManager(2)
            .start();
    System.out.printf(
        "Flink session cluster (1 JobManager, 1 TaskManager) started in %d ms%n",
        cluster.startUpTime().toMillis());
    jobJar = TestJars.jobJar(CountingJob.class, cluster.workDir().resolve("jars"));
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void startedClusterHasTheRequestedSlotsAndAClientScript() {
    assertThat(cluster.slotsTotal()).isEqualTo(cluster.taskManagers().size() * 2);
    assertThat(cluster.registeredTaskManagerIds())
        .containsAll(
            cluster.taskManagers().stream()
                .map(FlinkSessionCluster.TaskManager::resourceId)
                .toList());
    assertThat(Files.isExecutable(cluster.workDir().resolve("bin/flink"))).isTrue();
  }

  @Test
  void boundedJobSubmittedWithFlinkRunFinishes() {
    String jobId = cluster.submit(JobSubmission.of(jobJar, "bounded"));

    await("bounded job " + jobId + " finishes")
        .atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(jobId).state(), state -> state.equals("FINISHED"));
    assertThat(cluster.runningJobIds()).doesNotContain(jobId);
  }

  @Test
  void badProgramArgumentsFailTheClientWithTheJobsMessage() {
    CliResult result = cluster.flink("run", "-d", jobJar.toString(), "nonsense");

    assertThat(result.exitCode()).as(result.describe()).isNotZero();
    assertThat(result.output())
        .contains("Cannot run CountingJob with arguments 'nonsense': pass bounded or unbounded");
  }

  @Test
  void unboundedJobRunsCheckpointsAndIsCanceledWithTheClient() {
    String jobId = cluster.submit(JobSubmission.of(jobJar, "unbounded").withParallelism(2));

    JobStatus running =
        await("job " + jobId + " running with a completed checkpoint")
            .atMost(JOB_TIMEOUT)
            .until(
                () -> cluster.jobStatus(jobId),
                s -> s.fullyRunning() && s.checkpointsCompleted() > 0);
    assertThat(running.restoreCount()).isZero();
    assertThat(cluster.runningJobIds()).containsExactly(jobId);
    assertThat(cluster.flink("cancel", jobId).succeeded()).isTrue();
    await("job " + jobId + " canceled")
        .atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(jobId).state(), state -> state.equals("CANCELED"));
  }

  @Test
  void missingJarDirectoryIsAClearError(@TempDir Path tmp) {
    Path missing = tmp.resolve("no-such-lib");

    assertThatThrownBy(
            () ->
                FlinkSessionCluster.builder().distDir(missing).workDir(tmp.resolve("work")).start())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot start a Flink cluster: the jar directory '"
                + missing.toAbsolutePath()
                + "' does not "
                + "exist. Build it with `mvn -pl tests/integration -am test-compile` (it copies Flink's jars to "
                + "tests/integration/target/flink-dist/lib)");
  }

  @Test
  void failedStartReportsTheFlinkOutput(@TempDir Path tmp) {
    assertThatThrownBy(
            () ->
                FlinkSessionCluster.builder()
                    .workDir(tmp)
                    .config("taskmanager.memory.process.size", "1m")
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "Cannot compute the Flink memory settings with BashJavaUtils GET_TM_RESOURCE_PARAMS")
        .hasMessageContaining(
            "exceed configured Total Process Memory (1024.000kb (1048576 bytes))");
  }
}
