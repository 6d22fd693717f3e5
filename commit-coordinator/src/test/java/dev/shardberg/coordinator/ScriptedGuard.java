package dev.shardberg.coordinator;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;

/** A guard whose lock, connection and epoch the test controls. */
final class ScriptedGuard implements CommitGuard {
  final AtomicBoolean lockTimesOut = new AtomicBoolean();
  final AtomicBoolean connected = new AtomicBoolean(true);
  private final long epoch;

  ScriptedGuard(long epoch) {
    this.epoch = epoch;
  }

  CommitGuardFactory factory() {
    return (pipelineId, tableName) -> this;
  }

  @Override
  public long epoch() {
    return epoch;
  }

  @Override
  public boolean canCommit() {
    return connected.get();
  }

  @Override
  public void checkStillHeld() {}

  @Override
  public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
    if (lockTimesOut.get() || !connected.get()) {
      throw new CommitDeferredException("lock not obtained within " + lockTimeout);
    }
    return action.call();
  }

  @Override
  public void close() {}
}
