package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import dev.shardberg.coordinator.CoordinatorConfigOptions;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Curator-backed {@link CommitGuard}: composes one {@link ZooKeeperConnection}, the table's
 * {@link ZooKeeperTableLock} and the pipeline's {@link FencingEpoch} over it, and runs every commit
 * holding the lock.
 *
 * <h2>Connecting lazily</h2>
 *
 * The coordinator's guard ({@link #lazy}) does not touch ZooKeeper when it is opened (in the
 * coordinator's {@code initializeState}): it connects at its first {@link #runExclusive}, and a
 * ZooKeeper that cannot be reached then is a {@link CommitDeferredException} — the checkpoint stays
 * pending and the next completed checkpoint tries again. So a ZooKeeper outage during a failover
 * keeps commits pending instead of failing the job after its restart attempts. {@link #open}
 * connects and takes the epoch at once, for tools and tests.
 *
 * <h2>Fencing</h2>
 *
 * The lazy guard takes its epoch at its first commit, under the table lock ({@link
 * FencingEpoch#increment()}); the value is this instance's {@link #epoch()} and goes into every
 * commit (summary and the table's progress record). The guard checks it in one place: {@link
 * #runExclusive}, holding the lock, right before the action ({@link #checkStillHeld()}). A larger
 * value in the node means another instance of the same pipeline has started since, and this one
 * stops for good. What makes the commit itself safe is the coordinator's side of the same check: it
 * compares its epoch with the one in the table's progress record on the very metadata it commits
 * on, and its commit only swaps from that metadata (Iceberg's compare-and-swap), so an instance
 * whose session expired after the guard's check cannot land a commit on top of a newer instance's.
 *
 * <h2>States</h2>
 *
 * The connection states are those of {@link ZooKeeperConnection} (its javadoc has the diagram),
 * plus one terminal state of the guard itself:
 *
 * <pre>
 *   LATENT ── first runExclusive ──▶ CONNECTED ⇄ SUSPENDED / LOST   (connection's state machine)
 *   any ── newer epoch seen ──▶ FENCED (terminal: canCommit false, every call throws)
 * </pre>
 *
 * <h2>A session that expires while a commit is in flight</h2>
 *
 * The guard never claims an outcome it cannot know. Before the action, the lock refuses when the
 * connection was interrupted since the lock was taken (the caller gets {@link
 * CommitDeferredException}: nothing committed, retried at the next checkpoint). Once the commit has
 * gone to Iceberg, its outcome is what Iceberg answered: a normal return is a landed commit, {@code
 * CommitStateUnknownException} stays unknown, and the coordinator resolves it on its next attempt
 * from the table's progress record ({@code shardberg.progress.<pipeline-id>}), read under the lock.
 */
public final class ZooKeeperCommitGuard implements CommitGuard {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperCommitGuard.class);

  private final ZooKeeperOptions options;
  private final String tableName;
  private final String pipelineId;

  /**
   * Null until connected; then the connection, the table's lock and the pipeline's epoch over it.
   */
  private volatile Recipes recipes;

  /** What the guard composes once connected; the connection's client reconnects by itself. */
  private record Recipes(
      ZooKeeperConnection connection, ZooKeeperTableLock lock, FencingEpoch epoch) {}

  /** This instance's epoch; -1 until taken (at the first commit of a lazy guard). */
  private volatile long epoch = -1;

  /** The newer epoch that fenced this instance, or 0 while not fenced. */
  private volatile long fencedBy;

  private volatile boolean closed;

  private ZooKeeperCommitGuard(ZooKeeperOptions options, String pipelineId, String tableName) {
    checkArgument(
        pipelineId != null && !pipelineId.isBlank(),
        "Cannot open the ZooKeeper commit guard of table '%s': the pipeline id is empty; set"
            + " shardberg.pipeline-id",
        tableName);
    this.options = options;
    this.tableName = tableName;
    this.pipelineId = pipelineId;
  }

  /**
   * The coordinator's guard: no connection yet. It connects at its first {@link #runExclusive} and
   * takes its epoch there, under the lock.
   */
  public static ZooKeeperCommitGuard lazy(
      ZooKeeperOptions options, String pipelineId, String tableName) {
    return new ZooKeeperCommitGuard(options, pipelineId, tableName);
  }

  /**
   * Connects, takes a new fencing epoch for {@code pipelineId}, and prepares the lock of {@code
   * tableName}. Fails when ZooKeeper is not reachable within the connection timeout.
   */
  public static ZooKeeperCommitGuard open(
      ZooKeeperOptions options, String pipelineId, String tableName) throws Exception {
    ZooKeeperCommitGuard guard = new ZooKeeperCommitGuard(options, pipelineId, tableName);
    try {
      guard.connect();
      guard.takeEpoch();
      return guard;
    } catch (Exception | Error e) {
      guard.close();
      throw e;
    }
  }

  /** Connects once; the connection's client then reconnects by itself. */
  private synchronized Recipes connect() throws InterruptedException {
    if (closed) {
      throw new IllegalStateException(
          "Cannot use the ZooKeeper commit guard of table '" + tableName + "': it is closed");
    }
    if (recipes == null) {
      ZooKeeperConnection connection = ZooKeeperConnection.open(options);
      recipes =
          new Recipes(
              connection,
              new ZooKeeperTableLock(connection, tableName),
              new FencingEpoch(connection.client(), options.rootPath(), pipelineId));
    }
    return recipes;
  }

  private void takeEpoch() throws Exception {
    Recipes connected = recipes;
    long taken = connected.epoch().increment();
    epoch = taken;
    LOG.info(
        "Pipeline {} took fencing epoch {} at {}; commits to table {} go through the lock at {}",
        pipelineId,
        taken,
        connected.epoch().path(),
        tableName,
        connected.lock().lockPath());
  }

  @Override
  public long epoch() {
    return epoch;
  }

  /** True until the guard knows it cannot commit: fenced, or connected once and now not. */
  @Override
  public boolean canCommit() {
    Recipes current = recipes;
    return fencedBy == 0 && (current == null || current.connection().isConnected());
  }

  /**
   * Connects if this is the first call, then runs {@code action} holding the table lock: takes the
   * epoch if not taken yet, and checks it under the lock, so a superseded instance stops at its
   * first attempt after a newer one started, whatever the action would decide. When ZooKeeper
   * cannot be reached the action does not run ({@link CommitDeferredException}: retried later).
   */
  @Override
  public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
    throwIfFenced();
    Recipes connected;
    try {
      connected = connect();
    } catch (IllegalStateException e) {
      if (closed) {
        throw e;
      }
      throw new CommitDeferredException(
          String.format(
              "Cannot take the commit lock of table '%s': %s; nothing was run, the commit is"
                  + " retried at the next completed checkpoint",
              tableName, e.getMessage()),
          e);
    }
    return connected
        .lock()
        .runExclusive(
            lockTimeout,
            () -> {
              if (epoch < 0) {
                try {
                  takeEpoch();
                } catch (Exception e) {
                  throw new LockLostException(
                      String.format(
                          "Cannot take the fencing epoch of pipeline '%s' at %s: %s; nothing was"
                              + " committed, the commit is retried later",
                          pipelineId, connected.epoch().path(), e),
                      e);
                }
              }
              // the guard's one fencing check: under the lock, right before the commit
              checkStillHeld();
              return action.call();
            });
  }

  /**
   * Checks both things a commit under the lock needs: that this thread still holds the table lock
   * (the connection was not interrupted since it was taken), and that this pipeline's epoch node
   * shows no newer epoch ({@link CommitFencedException} otherwise, and the guard is FENCED for
   * good). {@link #runExclusive} runs it once under the lock before its action; call it again only
   * after slow work under the lock, right before the commit. When the lock may be lost or the node
   * cannot be read, nothing may be committed and {@code runExclusive} reports a {@link
   * dev.shardberg.coordinator.CommitDeferredException} (retried at the next checkpoint).
   */
  @Override
  public void checkStillHeld() throws CommitFencedException {
    throwIfFenced();
    Recipes connected = this.recipes;
    if (connected == null || epoch < 0) {
      throw new LockLostException(
          String.format(
              "Cannot check the fencing epoch of pipeline '%s': not connected to ZooKeeper yet",
              pipelineId));
    }
    ZooKeeperTableLock lock = connected.lock();
    if (lock.isHeldByCurrentThread()) {
      lock.checkStillHeld();
    } else if (!connected.connection().isConnected()) {
      throw new LockLostException(
          String.format(
              "Cannot check the fencing epoch of pipeline '%s': the ZooKeeper connection is %s",
              pipelineId, connected.connection().state()));
    }
    String epochPath = connected.epoch().path();
    long current;
    try {
      current = connected.epoch().read();
    } catch (KeeperException.NoNodeException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot commit pipeline '%s': its fencing epoch node %s is gone (this instance has"
                  + " epoch %s); the ZooKeeper data was deleted or %s changed. Restart the job so"
                  + " it takes a fresh epoch",
              pipelineId, epochPath, epoch, CoordinatorConfigOptions.ZK_ROOT_PATH.key()),
          e);
    } catch (IllegalStateException e) {
      throw e;
    } catch (Exception e) {
      throw new LockLostException(
          String.format(
              "Cannot check the fencing epoch of pipeline '%s' at %s: %s; nothing was committed,"
                  + " the commit is retried later",
              pipelineId, epochPath, e),
          e);
    }
    if (current > epoch) {
      fencedBy = current;
      CommitFencedException fenced = fencedException(current);
      LOG.error("{}", fenced.getMessage());
      throw fenced;
    }
    if (current < epoch) {
      throw new IllegalStateException(
          String.format(
              "Cannot commit pipeline '%s': its fencing epoch node %s shows %s, lower than this"
                  + " instance's epoch %s; the ZooKeeper data was rewritten. Restart the job so it"
                  + " takes a fresh epoch",
              pipelineId, epochPath, current, epoch));
    }
  }

  private void throwIfFenced() {
    long newer = fencedBy;
    if (newer != 0) {
      throw fencedException(newer);
    }
  }

  private CommitFencedException fencedException(long newerEpoch) {
    return new CommitFencedException(
        String.format(
            "Cannot commit to table '%s': another instance of pipeline '%s' started with epoch %s"
                + " (this instance has epoch %s), so this instance stops committing for good."
                + " Expected after a redeploy; otherwise two jobs run with the same"
                + " shardberg.pipeline-id — stop one of them",
            tableName, pipelineId, newerEpoch, epoch));
  }

  /** {@code LATENT} until the first connection. */
  public ZooKeeperConnection.State connectionState() {
    Recipes current = recipes;
    return current == null ? ZooKeeperConnection.State.LATENT : current.connection().state();
  }

  /** How many times the connection was suspended or lost since this guard connected. */
  public long connectionInterruptions() {
    Recipes current = recipes;
    return current == null ? 0 : current.connection().interruptions();
  }

  public String pipelineId() {
    return pipelineId;
  }

  /**
   * The ZooKeeper client of this guard (null before the first connection); tests expire its
   * session.
   */
  CuratorFramework client() {
    Recipes current = recipes;
    return current == null ? null : current.connection().client();
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (recipes != null) {
      recipes.connection().close();
    }
  }
}
