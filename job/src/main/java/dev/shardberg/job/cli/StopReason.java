package dev.shardberg.job.cli;

import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.flink.runtime.client.JobCancellationException;
import org.apache.flink.util.SerializedThrowable;

/**
 * Why a local run's job stopped, in one line for the console.
 *
 * <p>Flink wraps the cause of a failed job several times ({@code JobExecutionException} "Job
 * execution failed" → {@code JobException} "Recovery is suppressed by …" → the task's failure,
 * often wrapped again by the operator or the source reader), and the cause may arrive as a {@link
 * SerializedThrowable}. The reason is the outermost of our own exceptions in that chain — they name
 * the cause and the fix (schema, binlog format, a refused resume, a host gone for too long) — else
 * the innermost cause, which is the most specific a foreign failure gets.
 *
 * @param message the reason on one line
 * @param ours whether it is one of our exceptions (its message says how to go on)
 * @param cancelled whether the job was cancelled from outside this run (dashboard, REST API)
 */
record StopReason(String message, boolean ours, boolean cancelled) {
  private static final String OUR_PACKAGE = "dev.shardberg.";

  static StopReason of(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    Throwable innermost = failure;
    for (Throwable t = failure; t != null && seen.put(t, true) == null; t = t.getCause()) {
      if (t instanceof JobCancellationException) {
        return new StopReason(
            "the job was cancelled from outside this run (Flink's dashboard or REST API)",
            false,
            true);
      }
      if (className(t).startsWith(OUR_PACKAGE)) {
        return new StopReason(oneLine(message(t)), true, false);
      }
      innermost = t;
    }
    String name = className(innermost);
    return new StopReason(
        name.substring(name.lastIndexOf('.') + 1) + ": " + oneLine(message(innermost)),
        false,
        false);
  }

  private static String className(Throwable t) {
    return t instanceof SerializedThrowable s
        ? s.getOriginalErrorClassName()
        : t.getClass().getName();
  }

  /**
   * The message the exception was made with ({@link SerializedThrowable} puts its class name
   * first).
   */
  private static String message(Throwable t) {
    String message = t.getMessage();
    if (t instanceof SerializedThrowable s && message != null) {
      String name = s.getOriginalErrorClassName();
      return message.equals(name)
          ? null
          : message.startsWith(name + ": ") ? message.substring(name.length() + 2) : message;
    }
    return message;
  }

  /** A message of several lines (a list of shards, …) as one line. */
  static String oneLine(String message) {
    if (message == null) {
      return "(no message)";
    }
    return message.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
