package dev.shardberg.tests.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher against a real JobManager JVM and TaskManager JVMs, driven by the real {@code flink}
 * client, with a tiny job ({@link CountingJob}) packed at test time. One cluster for the class.
 */
class FlinkSessionClusterTest {

  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);

  private static FlinkSessionCluster cluster;
  private static Path jobJar;

  @BeforeAll
  static void startCluster() throws Exception {
    Path workDir = Path.of("target", "flink-cluster", "FlinkSessionClusterTest-" + System.currentTimeMillis());
    cluster = FlinkSessionCluster.builder().workDir(workDir).taskManagers(1).slotsPerTaskManager(2).start();
    System.out.printf("Flink session cluster (1 JobManager, 1 TaskManager) started in %d ms%n",
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
        .containsAll(cluster.taskManagers().stream().map(FlinkSessionCluster.TaskManager::resourceId).toList());
    assertThat(Files.isExecutable(cluster.workDir().resolve("bin/flink"))).isTrue();
  }

  @Test
  void boundedJobSubmittedWithFlinkRunFinishes() {
    String jobId = cluster.submit(JobSubmission.of(jobJar, "bounded"));

    await("bounded job " + jobId + " finishes").atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(jobId).state(), state -> state.equals("FINISHED"));
    assertThat(cluster.runningJobIds()).doesNotContain(jobId);
  }

  @Test
  void badProgramArgumentsFailTheClientWithTheJobsMessage() {
    CliResult result = cluster.flink("run", "-d", jobJar.toString(), "nonsense");

    assertThat(result.exitCode()).as(result.describe()).isNotZero();
    assertThat(result.output()).contains("Cannot run CountingJob with arguments 'nonsense': pass bounded or unbounded");
  }

  @Test
  void killedTaskManagerIsReplacedAndTheJobResumesFromCheckpointThenFromSavepoint() {
    String jobId = cluster.submit(JobSubmission.of(jobJar, "unbounded").withParallelism(2));
    await("job " + jobId + " running with two completed checkpoints").atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(jobId), s -> s.fullyRunning() && s.checkpointsCompleted() >= 2);
    long checkpointBeforeKill = cluster.jobStatus(jobId).latestCompletedCheckpointId();

    List<FlinkSessionCluster.TaskManager> before = cluster.taskManagers();
    assertThat(before).hasSize(1);
    long killedAt = System.nanoTime();
    cluster.killTaskManager(before.get(0));
    assertThat(cluster.taskManagers()).isEmpty();
    FlinkSessionCluster.TaskManager replacement = cluster.startTaskManager();
    JobStatus recovered = await("job " + jobId + " restored and running again on " + replacement.resourceId())
        .atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(jobId), s -> s.fullyRunning() && s.restoreCount() == 1);
    System.out.printf("TaskManager kill -> job fully running again on a new TaskManager: %d ms%n",
        Duration.ofNanos(System.nanoTime() - killedAt).toMillis());

    assertThat(cluster.taskManagers()).containsExactly(replacement);
    assertThat(recovered.restoreCount()).isEqualTo(1);
    assertThat(recovered.restoredFromSavepoint()).isFalse();
    assertThat(recovered.restoredCheckpointId()).isGreaterThanOrEqualTo(checkpointBeforeKill);

    String savepoint = cluster.stopWithSavepoint(jobId);
    assertThat(cluster.jobStatus(jobId).state()).isEqualTo("FINISHED");
    assertThat(cluster.runningJobIds()).doesNotContain(jobId);

    String resumedId = cluster.submit(JobSubmission.of(jobJar, "unbounded").withParallelism(2).fromSavepoint(savepoint));
    JobStatus resumed = await("job resumed from " + savepoint).atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(resumedId), JobStatus::fullyRunning);
    assertThat(resumedId).isNotEqualTo(jobId);
    assertThat(resumed.restoredFromSavepoint()).isTrue();
    assertThat(resumed.restoreCount()).isEqualTo(1);
    assertThat(cluster.runningJobIds()).containsExactly(resumedId);
    assertThat(cluster.flink("cancel", resumedId).succeeded()).isTrue();
    await("resumed job canceled").atMost(JOB_TIMEOUT)
        .until(() -> cluster.jobStatus(resumedId).state(), state -> state.equals("CANCELED"));
  }

  @Test
  void missingJarDirectoryIsAClearError(@TempDir Path tmp) {
    Path missing = tmp.resolve("no-such-lib");

    assertThatThrownBy(() -> FlinkSessionCluster.builder().distDir(missing).workDir(tmp.resolve("work")).start())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Cannot start a Flink cluster: the jar directory '" + missing.toAbsolutePath() + "' does not "
            + "exist. Build it with `mvn -pl tests -am test-compile` (it copies Flink's jars to "
            + "tests/target/flink-dist/lib)");
  }

  @Test
  void failedStartReportsTheFlinkOutput(@TempDir Path tmp) {
    assertThatThrownBy(() -> FlinkSessionCluster.builder()
            .workDir(tmp)
            .config("taskmanager.memory.process.size", "1m")
            .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("Cannot compute the Flink memory settings with BashJavaUtils GET_TM_RESOURCE_PARAMS")
        .hasMessageContaining("exceed configured Total Process Memory (1024.000kb (1048576 bytes))");
  }
}
