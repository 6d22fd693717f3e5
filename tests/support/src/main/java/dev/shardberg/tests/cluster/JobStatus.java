package dev.shardberg.tests.cluster;

/**
 * A job as the JobManager's REST API reports it ({@code GET /jobs/:id} and {@code
 * /jobs/:id/checkpoints}).
 *
 * @param jobId the Flink job id (hex)
 * @param state the job state: CREATED, RUNNING, RESTARTING, FINISHED, FAILED, CANCELED, ...
 * @param tasksTotal the number of subtasks over all vertices
 * @param tasksRunning how many of them are RUNNING
 * @param checkpointsCompleted completed checkpoints (and savepoints) of this job id
 * @param latestCompletedCheckpointId the id of the latest completed checkpoint, -1 if none
 * @param restoredCheckpointId the checkpoint or savepoint the latest (re)start restored, -1 if none
 * @param restoredFromSavepoint whether that restore was from a savepoint
 * @param restoreCount how many times this job id restored state (failovers, and a start from -s)
 */
public record JobStatus(
    String jobId,
    String state,
    int tasksTotal,
    int tasksRunning,
    long checkpointsCompleted,
    long latestCompletedCheckpointId,
    long restoredCheckpointId,
    boolean restoredFromSavepoint,
    long restoreCount) {

  /** RUNNING with every subtask running (a job is RUNNING while its tasks are still deploying). */
  public boolean fullyRunning() {
    return "RUNNING".equals(state) && tasksTotal > 0 && tasksRunning == tasksTotal;
  }

  public boolean isTerminal() {
    return switch (state) {
      case "FINISHED", "FAILED", "CANCELED", "SUSPENDED" -> true;
      default -> false;
    };
  }
}
