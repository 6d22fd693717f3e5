package dev.shardberg.coordinator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * Failure injection for MiniCluster tests, through public seams only: the table loader the sink is
 * given (its table's {@link TableOperations} and {@link FileIO}) and an extra sink in the job. The
 * plan is static because MiniCluster tasks run in the test's JVM; each fault fires once, at the
 * n-th occurrence of its point, counted across restarts.
 */
final class FaultInjection {
  enum Point {
    /** A writer creates a data or delete file. */
    WRITER_FILE,
    /** A checkpoint fails after the coordinator staged its manifests, before completion. */
    BETWEEN_SNAPSHOT_AND_COMPLETION,
    /** The coordinator's Iceberg commit fails before reaching the catalog. */
    BEFORE_COMMIT,
    /** The commit lands, but its answer is lost (CommitStateUnknownException). */
    AFTER_COMMIT,
    /** The catalog rejects the commit on a stale base (CommitFailedException); nothing landed. */
    COMMIT_CONFLICT,
    /**
     * As {@link #COMMIT_CONFLICT}, and the committing thread is interrupted while Iceberg waits to
     * retry, as Flink interrupts a task's thread when the job is cancelled ({@link
     * #interruptedInRetryWait} says the interrupt found the thread waiting).
     */
    COMMIT_CONFLICT_THEN_INTERRUPTED,
    /** The commit lands, yet the catalog reports a conflict (CommitFailedException). */
    LANDED_BUT_REPORTED_CONFLICT,
    /**
     * Between the coordinator's checks and its metadata swap, {@link #atSwap} runs (by default
     * another committer changes the table; a test may instead let a second coordinator commit).
     */
    AT_SWAP
  }

  /** What {@link Point#AT_SWAP} does: gets the table's real operations. */
  @FunctionalInterface
  interface SwapAction {
    void run(TableOperations operations) throws Exception;
  }

  /** A foreign commit (a table property, as maintenance or another tool would write). */
  static final SwapAction FOREIGN_COMMIT =
      operations -> {
        TableMetadata current = operations.refresh();
        Map<String, String> properties = new java.util.HashMap<>(current.properties());
        properties.put("test.foreign-commit", Long.toString(System.nanoTime()));
        operations.commit(
            current, TableMetadata.buildFrom(current).setProperties(properties).build());
      };

  private static volatile SwapAction atSwap = FOREIGN_COMMIT;
  private static final java.util.concurrent.atomic.AtomicBoolean INTERRUPTED_WAITING =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** Sets what {@link Point#AT_SWAP} does until the next {@link #arm}. */
  static void atSwap(SwapAction action) {
    atSwap = action;
  }

  record Fault(Point point, int occurrence) {}

  private static final Map<Point, AtomicInteger> COUNTS = new EnumMap<>(Point.class);
  private static final AtomicInteger STAGED_MANIFESTS = new AtomicInteger();
  private static volatile List<Fault> plan = List.of();
  private static final List<Fault> FIRED = Collections.synchronizedList(new ArrayList<>());

  private FaultInjection() {}

  /**
   * Milliseconds each commit of a pipeline's rows waits before its swap (0: none), so another
   * tool's commit can land while the pipeline's changes are in flight. Reset by {@link #arm}.
   */
  private static volatile long dataCommitDelayMillis;

  static void delayDataCommits(long millis) {
    dataCommitDelayMillis = millis;
  }

  static synchronized void arm(List<Fault> faults) {
    plan = List.copyOf(faults);
    atSwap = FOREIGN_COMMIT;
    dataCommitDelayMillis = 0;
    FIRED.clear();
    INTERRUPTED_WAITING.set(false);
    STAGED_MANIFESTS.set(0);
    for (Point point : Point.values()) {
      COUNTS.put(point, new AtomicInteger());
    }
  }

  static List<Fault> fired() {
    return List.copyOf(FIRED);
  }

  /**
   * True once {@link Point#COMMIT_CONFLICT_THEN_INTERRUPTED} interrupted a thread in a timed wait.
   */
  static boolean interruptedInRetryWait() {
    return INTERRUPTED_WAITING.get();
  }

  /**
   * Interrupts {@code committer} as soon as it sleeps (Iceberg's retry wait after the conflict just
   * thrown), from another thread, as Flink's task canceller does; gives up after a minute.
   */
  private static void interruptWhenWaiting(Thread committer) {
    Thread interrupter =
        new Thread(
            () -> {
              long deadline = System.nanoTime() + 60_000_000_000L;
              while (System.nanoTime() < deadline) {
                if (committer.getState() == Thread.State.TIMED_WAITING) {
                  INTERRUPTED_WAITING.set(true);
                  committer.interrupt();
                  return;
                }
                try {
                  Thread.sleep(1);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "fault-injection interrupter");
    interrupter.setDaemon(true);
    interrupter.start();
  }

  static void maybeFail(Point point, String where) {
    int count = COUNTS.get(point).incrementAndGet();
    for (Fault fault : plan) {
      if (fault.point() == point && fault.occurrence() == count) {
        FIRED.add(fault);
        throw new InjectedFault("Injected " + fault + " at " + where);
      }
    }
  }

  static boolean shouldFail(Point point) {
    int count = COUNTS.get(point).incrementAndGet();
    for (Fault fault : plan) {
      if (fault.point() == point && fault.occurrence() == count) {
        FIRED.add(fault);
        return true;
      }
    }
    return false;
  }

  static final class InjectedFault extends RuntimeException {
    InjectedFault(String message) {
      super(message);
    }
  }

  /** Wraps a real loader; the tables it loads go through the faulty operations and file IO. */
  static final class FaultyTableLoader extends ForwardingTableLoader {
    private static final long serialVersionUID = 1L;

    FaultyTableLoader(TableLoader delegate) {
      super(delegate);
    }

    @Override
    TableOperations wrap(TableOperations operations, String tableName) {
      return new FaultyOperations(operations);
    }

    @Override
    TableLoader cloneWith(TableLoader clonedDelegate) {
      return new FaultyTableLoader(clonedDelegate);
    }
  }

  private static final class FaultyOperations extends ForwardingTableOperations {
    FaultyOperations(TableOperations delegate) {
      super(delegate, new FaultyFileIO(delegate.io()));
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      long delay = dataCommitDelayMillis;
      org.apache.iceberg.Snapshot added = metadata.currentSnapshot();
      if (delay > 0
          && added != null
          && (base == null || base.snapshot(added.snapshotId()) == null)
          && added.summary().containsKey(SnapshotSummaryKeys.PIPELINE_ID)
          && Long.parseLong(added.summary().getOrDefault("added-data-files", "0")) > 0) {
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InjectedFault("Interrupted while the commit was delayed");
        }
      }
      if (shouldFail(Point.BEFORE_COMMIT)) {
        throw new InjectedFault("Injected failure before the Iceberg commit");
      }
      if (shouldFail(Point.COMMIT_CONFLICT)) {
        throw new CommitFailedException("Injected conflict: base metadata is stale");
      }
      if (shouldFail(Point.COMMIT_CONFLICT_THEN_INTERRUPTED)) {
        interruptWhenWaiting(Thread.currentThread());
        throw new CommitFailedException(
            "Injected conflict: base metadata is stale; interrupted while waiting to retry");
      }
      if (shouldFail(Point.AT_SWAP)) {
        try {
          atSwap.run(delegate());
        } catch (Exception e) {
          throw new IllegalStateException("The action at the swap failed", e);
        }
      }
      super.commit(base, metadata);
      if (shouldFail(Point.LANDED_BUT_REPORTED_CONFLICT)) {
        throw new CommitFailedException("Injected conflict reported after the commit landed");
      }
      if (shouldFail(Point.AFTER_COMMIT)) {
        throw new CommitStateUnknownException(
            new InjectedFault("Injected loss of the commit's answer after it landed"));
      }
    }
  }

  private static final class FaultyFileIO implements FileIO {
    private final FileIO delegate;

    FaultyFileIO(FileIO delegate) {
      this.delegate = delegate;
    }

    @Override
    public InputFile newInputFile(String path) {
      return delegate.newInputFile(path);
    }

    @Override
    public InputFile newInputFile(String path, long length) {
      return delegate.newInputFile(path, length);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      if (path.contains("/data/")) {
        maybeFail(Point.WRITER_FILE, path);
      } else if (path.contains("/metadata/shardberg-")) {
        STAGED_MANIFESTS.incrementAndGet();
      }
      return delegate.newOutputFile(path);
    }

    @Override
    public void deleteFile(String path) {
      delegate.deleteFile(path);
    }

    @Override
    public Map<String, String> properties() {
      return delegate.properties();
    }
  }

  /**
   * A side sink on the source's stream. When its fault is due it fails its own snapshot of a
   * checkpoint after the coordinator staged manifests (or after 2 s for a checkpoint without
   * files), so the checkpoint never completes although the coordinator already snapshotted it.
   */
  static final class SnapshotFailingSink implements SinkFunction<RowData>, CheckpointedFunction {
    private static final long serialVersionUID = 1L;

    @Override
    public void invoke(RowData value, Context context) {}

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      if (!shouldFail(Point.BETWEEN_SNAPSHOT_AND_COMPLETION)) {
        return;
      }
      int staged = STAGED_MANIFESTS.get();
      long deadline = System.nanoTime() + 2_000_000_000L;
      Object monitor = new Object();
      synchronized (monitor) {
        while (STAGED_MANIFESTS.get() == staged && System.nanoTime() < deadline) {
          monitor.wait(10);
        }
      }
      throw new InjectedFault(
          "Injected failure of checkpoint "
              + context.getCheckpointId()
              + " after the coordinator's snapshot");
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}
  }
}
