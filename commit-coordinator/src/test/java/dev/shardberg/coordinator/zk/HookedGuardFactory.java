package dev.shardberg.coordinator.zk;

import dev.shardberg.coordinator.CommitGuard;
import dev.shardberg.coordinator.CommitGuardFactory;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real {@link ZooKeeperCommitGuardFactory}, plus a test hook that runs inside the lock, after
 * the guard took it and before the coordinator's commit action: the place to stop ZooKeeper or
 * expire the session "between taking the lock and committing", deterministically. Hooks are
 * registered by name in this JVM (the MiniCluster runs in the test's JVM).
 */
final class HookedGuardFactory implements CommitGuardFactory {
  private static final long serialVersionUID = 1L;

  /** Called with the guard and the 1-based number of its runExclusive call. */
  @FunctionalInterface
  interface Hook {
    void inLock(ZooKeeperCommitGuard guard, int call) throws Exception;
  }

  private static final Map<String, Hook> HOOKS = new ConcurrentHashMap<>();

  static void register(String name, Hook hook) {
    HOOKS.put(name, hook);
  }

  private final ZooKeeperCommitGuardFactory delegate;
  private final String hookName;

  HookedGuardFactory(ZooKeeperOptions options, String hookName) {
    this.delegate = new ZooKeeperCommitGuardFactory(options);
    this.hookName = hookName;
  }

  @Override
  public CommitGuard open(String pipelineId, String tableName) throws Exception {
    ZooKeeperCommitGuard guard = delegate.open(pipelineId, tableName);
    AtomicInteger calls = new AtomicInteger();
    return new CommitGuard() {
      @Override
      public long epoch() {
        return guard.epoch();
      }

      @Override
      public boolean canCommit() {
        return guard.canCommit();
      }

      @Override
      public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
        int call = calls.incrementAndGet();
        return guard.runExclusive(
            lockTimeout,
            () -> {
              Hook hook = HOOKS.get(hookName);
              if (hook != null) {
                hook.inLock(guard, call);
              }
              return action.call();
            });
      }

      @Override
      public void checkStillHeld() {
        guard.checkStillHeld();
      }

      @Override
      public void close() {
        guard.close();
      }
    };
  }
}
