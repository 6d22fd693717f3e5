package dev.shardberg.coordinator.maintenance;

import java.nio.channels.ClosedByInterruptException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a maintenance task's interruption (the job stopping) from its failure, and turns the
 * interruption into the {@link InterruptedException} {@link TableMaintainer}'s callers propagate.
 */
final class Interruptions {
  /** Maintenance's logger: every maintenance line goes under {@link TableMaintainer}'s name. */
  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private Interruptions() {}

  /**
   * True when {@code failure} is the current thread being interrupted rather than a failure of the
   * work: Flink interrupts a task's thread when its job is cancelled or stopped. Iceberg restores
   * the interrupt status before it wraps the {@link InterruptedException} of its retry wait or of
   * its worker pool's wait ({@code Tasks}) in a {@link RuntimeException}; NIO channels keep it with
   * {@link ClosedByInterruptException}.
   */
  static boolean isInterruption(Throwable failure) {
    if (Thread.currentThread().isInterrupted()) {
      return true;
    }
    int depth = 0;
    for (Throwable t = failure; t != null && depth < 32; t = t.getCause(), depth++) {
      if (t instanceof InterruptedException || t instanceof ClosedByInterruptException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The interruption of {@code what} on table {@code tableName}, as the {@link
   * InterruptedException} the caller propagates (the job is stopping; nothing failed); the thread's
   * interrupt status stays set for the code after.
   */
  static InterruptedException stopped(String what, String tableName, Exception interrupted) {
    LOG.info("{} of table {} was interrupted: the job is stopping; not a failure", what, tableName);
    Thread.currentThread().interrupt();
    InterruptedException e =
        new InterruptedException(
            what + " of table " + tableName + " was interrupted (the job is stopping)");
    e.initCause(interrupted);
    return e;
  }
}
