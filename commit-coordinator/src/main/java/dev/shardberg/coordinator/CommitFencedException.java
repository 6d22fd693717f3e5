package dev.shardberg.coordinator;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A newer instance of the same pipeline holds a newer epoch: this instance must never commit again.
 *
 * <p>Marked non-recoverable so Flink fails the job instead of restarting it: a restarted
 * coordinator would open a newer epoch and fence the instance that rightly took over (fencing
 * ping-pong).
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class CommitFencedException extends RuntimeException {
  public CommitFencedException(String message) {
    super(message);
  }
}
