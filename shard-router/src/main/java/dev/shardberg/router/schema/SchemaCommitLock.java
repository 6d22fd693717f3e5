package dev.shardberg.router.schema;

import java.io.Serializable;

/**
 * What {@link TableSchemaEvolver} holds around a schema commit, so that schema changes are
 * serialised with every other commit on the table. Without ZooKeeper it is {@link #NONE} (the
 * coordinator's commit checks its base again when the schema moved under it). In HA mode the job
 * passes the table's ZooKeeper lock, the same one the coordinator and maintenance hold, so a schema
 * commit never races a data commit.
 *
 * <p>The router knows nothing of ZooKeeper: the job module adapts the commit coordinator's lock to
 * this interface. Serializable: it travels with the source's deserializer to the task managers.
 */
public interface SchemaCommitLock extends Serializable {

  /** The work done holding the lock: plan against a fresh table, then commit. */
  @FunctionalInterface
  interface Action<T> {
    /**
     * @param checkStillHeld call right before the commit: throws {@link Unavailable} when the lock
     *     may have been lost since it was taken (nothing must be committed then)
     */
    T run(Runnable checkStillHeld) throws Exception;
  }

  /**
   * Runs {@code action} holding the table's commit lock, and releases it after.
   *
   * @throws Unavailable when the lock cannot be taken now (not reachable, timed out, lost before
   *     the commit); nothing was committed and the caller may try again
   */
  <T> T runExclusive(Action<T> action) throws Exception;

  /** No lock: a single job on the table. */
  SchemaCommitLock NONE =
      new SchemaCommitLock() {
        private static final long serialVersionUID = 1L;

        @Override
        public <T> T runExclusive(Action<T> action) throws Exception {
          return action.run(() -> {});
        }

        @Override
        public String toString() {
          return "no lock";
        }
      };

  /** The lock could not be taken or may be lost; nothing was committed. */
  final class Unavailable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Unavailable(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
