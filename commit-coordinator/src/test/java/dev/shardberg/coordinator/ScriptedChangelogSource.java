package dev.shardberg.coordinator;

import java.util.List;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.source.RichSourceFunction;
import org.apache.flink.table.data.RowData;

/**
 * A bounded changelog source (parallelism 1) that emits one scripted step at a time and waits until
 * a checkpoint taken after that step has completed before emitting the next: every step lands in
 * its own checkpoint (or, after a failure, in a later one). Its position is checkpointed, so a
 * restarted job replays exactly the steps after the restored checkpoint.
 */
final class ScriptedChangelogSource extends RichSourceFunction<RowData>
    implements CheckpointedFunction, CheckpointListener {
  private static final long serialVersionUID = 1L;

  private final List<List<Change>> steps;

  /** Before emitting step N, wait until the gate of N holds (steps without one: no wait). */
  private final java.util.Map<Integer, Gate> gates;

  /**
   * A condition the source waits for (polled outside the checkpoint lock, so checkpoints go on).
   */
  interface Gate extends java.io.Serializable {
    boolean open() throws Exception;

    /**
     * As {@link #open()}, told the Flink checkpoint that covers every step before this one (-1: not
     * known).
     */
    default boolean open(long stepsBeforeCheckpoint) throws Exception {
      return open();
    }
  }

  private transient ListState<Integer> positionState;
  private transient int nextStep;
  private transient Object monitor;
  private volatile boolean running = true;

  /** Checkpoint that covers the last emitted step; -1 while none was taken after it. */
  private volatile long coveringCheckpoint = -1;

  private volatile boolean stepConfirmed = true;

  /** Checkpoint that covers every step emitted so far, once confirmed; -1: not known. */
  private volatile long confirmedCheckpoint = -1;

  ScriptedChangelogSource(List<List<Change>> steps) {
    this(steps, -1, () -> true);
  }

  ScriptedChangelogSource(List<List<Change>> steps, int gateBeforeStep, Gate gate) {
    this(steps, gateBeforeStep < 0 ? java.util.Map.of() : java.util.Map.of(gateBeforeStep, gate));
  }

  ScriptedChangelogSource(List<List<Change>> steps, java.util.Map<Integer, Gate> gates) {
    this.steps = List.copyOf(steps);
    this.gates = new java.util.HashMap<>(gates);
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    monitor = new Object();
    positionState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>("scripted-source-position", IntSerializer.INSTANCE));
    for (Integer position : positionState.get()) {
      nextStep = position;
    }
    confirmedCheckpoint = context.getRestoredCheckpointId().orElse(-1L);
  }

  @Override
  public void run(SourceContext<RowData> context) throws Exception {
    while (running && nextStep < steps.size()) {
      Gate gate = gates.get(nextStep);
      if (gate != null) {
        while (running && !gate.open(confirmedCheckpoint)) {
          synchronized (monitor) {
            monitor.wait(50);
          }
        }
        if (!running) {
          break; // cancelled (or stopped with a savepoint) while waiting: emit nothing more
        }
      }
      synchronized (context.getCheckpointLock()) {
        for (Change change : steps.get(nextStep)) {
          context.collect(change.toRow());
        }
        nextStep++;
        coveringCheckpoint = -1;
        stepConfirmed = false;
      }
      synchronized (monitor) {
        while (running && !stepConfirmed) {
          monitor.wait(20);
        }
      }
    }
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    positionState.update(List.of(nextStep));
    if (!stepConfirmed && coveringCheckpoint < 0) {
      coveringCheckpoint = context.getCheckpointId();
    }
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    if (coveringCheckpoint >= 0 && checkpointId >= coveringCheckpoint) {
      synchronized (monitor) {
        confirmedCheckpoint = checkpointId;
        stepConfirmed = true;
        monitor.notifyAll();
      }
    }
  }

  @Override
  public void cancel() {
    running = false;
  }
}
