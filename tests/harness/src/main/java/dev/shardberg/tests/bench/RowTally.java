package dev.shardberg.tests.bench;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.table.data.RowData;

/**
 * The {@code source-only} mode's counter: every row the sources emit passes through a {@link
 * Counting} map and is added to the tally of its run, with the wall-clock time of the first row and
 * of the row that reached the expected total.
 *
 * <p>The job runs in a MiniCluster inside this JVM, so the parallel subtasks and the harness share
 * one static registry keyed by run id. One {@link AtomicLong} per run: exactly one increment
 * returns 1 and exactly one returns the expected total, whatever the number of subtasks.
 */
final class RowTally {
  private static final Map<String, RowTally> RUNS = new ConcurrentHashMap<>();

  private final long expected;
  private final AtomicLong rows = new AtomicLong();
  private final AtomicLong firstRowMillis = new AtomicLong(-1);
  private final AtomicLong expectedReachedMillis = new AtomicLong(-1);

  private RowTally(long expected) {
    this.expected = expected;
  }

  /** Opens the tally of {@code runId}; {@link #close} it when the run is over. */
  static RowTally open(String runId, long expected) {
    RowTally tally = new RowTally(expected);
    if (RUNS.putIfAbsent(runId, tally) != null) {
      throw new IllegalStateException(
          "Cannot count rows of run '" + runId + "': a tally with that id is already open");
    }
    return tally;
  }

  static void close(String runId) {
    RUNS.remove(runId);
  }

  private void add() {
    long n = rows.incrementAndGet();
    if (n == 1) {
      firstRowMillis.set(System.currentTimeMillis());
    }
    if (n == expected) {
      expectedReachedMillis.set(System.currentTimeMillis());
    }
  }

  long rows() {
    return rows.get();
  }

  /** When the first row was counted; -1 before. */
  long firstRowMillis() {
    return firstRowMillis.get();
  }

  /** When the count reached the expected total; -1 before. */
  long expectedReachedMillis() {
    return expectedReachedMillis.get();
  }

  /** Counts each row into the tally of its run and passes it on. */
  static final class Counting implements MapFunction<RowData, RowData> {
    private static final long serialVersionUID = 1L;
    private final String runId;
    private transient RowTally tally;

    Counting(String runId) {
      this.runId = runId;
    }

    @Override
    public RowData map(RowData row) {
      if (tally == null) {
        tally = RUNS.get(runId);
        if (tally == null) {
          throw new IllegalStateException(
              "Cannot count a row of run '" + runId + "': its tally is closed");
        }
      }
      tally.add();
      return row;
    }
  }
}
