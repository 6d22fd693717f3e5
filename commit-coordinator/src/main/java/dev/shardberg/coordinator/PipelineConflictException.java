package dev.shardberg.coordinator;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * The table or the restored state shows that this coordinator is not the only owner of its pipeline
 * id: another job with the same {@code pipeline.id} committed checkpoints this one was about to
 * commit, or the restored state belongs to another pipeline. Committing (or skipping) would lose or
 * duplicate data, and a restart cannot fix it.
 *
 * <p>Marked non-recoverable so Flink fails the job instead of restarting it.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class PipelineConflictException extends IllegalStateException {
  public PipelineConflictException(String message) {
    super(message);
  }
}
