package dev.shardberg.router;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A discovery, schema or routing problem that stops the job from starting (or running).
 *
 * <p>Marked non-recoverable: a DDL the job cannot apply, a value it cannot convert, a change of a
 * table outside the plan, a binlog that stopped being row-based — a restart from the last
 * checkpoint would meet the same record (or the same server setting) again, so Flink fails the job
 * at once instead of burning its restart attempts. Flink finds the annotation anywhere in the cause
 * chain, so it holds when the source reader wraps the exception.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class ShardRouterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ShardRouterException(String message) {
    super(message);
  }

  public ShardRouterException(String message, Throwable cause) {
    super(message, cause);
  }
}
