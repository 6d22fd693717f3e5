package dev.shardberg.coordinator.zk;

import java.time.Duration;
import java.util.Arrays;

/**
 * How long commits waited for a table lock. Counts cover every attempt since the lock was opened;
 * percentiles and the maximum cover the most recent {@value #WINDOW} attempts (granted and timed out
 * alike; attempts that failed on a ZooKeeper error are only counted).
 *
 * <p>Thread-safe; {@link #snapshot()} is cheap enough for a metrics gauge.
 */
public final class LockWaitStats {
  static final int WINDOW = 4096;

  /**
   * @param granted attempts that got the lock
   * @param timedOut attempts that gave up after the lock timeout
   * @param failed attempts that failed on a ZooKeeper error (connection loss, session expiry)
   * @param last wait of the latest granted or timed-out attempt
   * @param p50 median wait over the window
   * @param p99 99th percentile wait over the window
   * @param max longest wait over the window
   */
  public record Snapshot(
      long granted, long timedOut, long failed, Duration last, Duration p50, Duration p99,
      Duration max) {

    public long attempts() {
      return granted + timedOut + failed;
    }
  }

  private final long[] window = new long[WINDOW];
  private int size;
  private int next;
  private long granted;
  private long timedOut;
  private long failed;
  private long lastNanos;

  synchronized void recordGranted(long waitNanos) {
    granted++;
    addToWindow(waitNanos);
  }

  synchronized void recordTimedOut(long waitNanos) {
    timedOut++;
    addToWindow(waitNanos);
  }

  synchronized void recordFailed() {
    failed++;
  }

  private void addToWindow(long waitNanos) {
    lastNanos = waitNanos;
    window[next] = waitNanos;
    next = (next + 1) % WINDOW;
    size = Math.min(size + 1, WINDOW);
  }

  public synchronized Snapshot snapshot() {
    long[] sorted = Arrays.copyOf(window, size);
    Arrays.sort(sorted);
    return new Snapshot(
        granted,
        timedOut,
        failed,
        Duration.ofNanos(lastNanos),
        Duration.ofNanos(percentile(sorted, 0.50)),
        Duration.ofNanos(percentile(sorted, 0.99)),
        Duration.ofNanos(size == 0 ? 0 : sorted[size - 1]));
  }

  /** Nearest-rank percentile; 0 when nothing was recorded. */
  private static long percentile(long[] sorted, double quantile) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(quantile * sorted.length);
    return sorted[Math.max(0, rank - 1)];
  }
}
