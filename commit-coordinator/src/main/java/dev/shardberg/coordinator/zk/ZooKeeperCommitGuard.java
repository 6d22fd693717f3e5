package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;

import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
import dev.shardberg.coordinator.CommitLockTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Curator-backed {@link CommitGuard}: the table's {@link ZooKeeperTableLock} around every
 * commit, plus a fencing epoch per pipeline.
 *
 * <h2>Connecting lazily</h2>
 *
 * The coordinator's guard ({@link #lazy}) does not touch ZooKeeper when it is opened (in the
 * coordinator's {@code initializeState}): it connects at its first {@link #runExclusive}, and a
 * ZooKeeper that cannot be reached then is a {@link CommitLockTimeoutException} — the checkpoint
 * stays pending and the next completed checkpoint tries again. So a ZooKeeper outage during a
 * failover keeps commits pending instead of failing the job after its restart attempts. {@link
 * #open} connects and takes the epoch at once, for tools and tests.
 *
 * <h2>Fencing</h2>
 *
 * The lazy guard takes its epoch at its first commit, under the table lock: it increments {@code
 * <root>/pipelines/<pipeline>/epoch} with a versioned compare-and-set; the new value is this
 * instance's {@link #epoch()} and goes into every commit (summary and the table's progress record).
 * The node is read again under the lock twice per commit: by {@link #runExclusive} before the action
 * runs, and by {@link #checkNotFenced()}, which the coordinator calls before the commit. A larger
 * value means another instance of the same pipeline has started since, and this one stops for good.
 * The coordinator also compares its epoch with the one in the table's progress record, on the very
 * metadata it commits on, and its commit only swaps from that metadata: an instance whose session
 * expired after these checks cannot land a commit on top of a newer instance's. Epochs are unique
 * and increase; a retried write may skip a number, never repeat one.
 *
 * <h2>States</h2>
 *
 * The connection states are those of {@link ZooKeeperTableLock} (its javadoc has the diagram), plus
 * one terminal state of the guard itself:
 *
 * <pre>
 *   CONNECTED ⇄ SUSPENDED / LOST      (lock's connection state machine)
 *   any ── newer epoch seen ──▶ FENCED (terminal: canCommit false, every call throws)
 * </pre>
 *
 * <h2>A session that expires while a commit is in flight</h2>
 *
 * The guard never claims an outcome it cannot know. Before the commit, {@link #checkNotFenced()}
 * refuses when the connection was interrupted since the lock was taken (the caller gets {@link
 * dev.shardberg.coordinator.CommitLockTimeoutException}: nothing committed, retried at the next
 * checkpoint). Once the commit has gone to Iceberg, its outcome is what Iceberg answered: a normal
 * return is a landed commit, {@code CommitStateUnknownException} stays unknown, and the coordinator
 * resolves it on its next attempt from the table's progress record ({@code
 * shardberg.progress.<pipeline-id>}), read under the lock.
 */
public final class ZooKeeperCommitGuard implements CommitGuard {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperCommitGuard.class);

  private final ZooKeeperOptions options;
  private final String tableName;
  private final String pipelineId;
  private final String epochPath;

  /** Null until connected; then the connected lock (its client reconnects by itself). */
  private volatile ZooKeeperTableLock lock;

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
    this.epochPath = ZooKeeperPaths.epochPath(options.rootPath(), pipelineId);
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

  /** Connects once; the lock's client then reconnects by itself. */
  private synchronized ZooKeeperTableLock connect() throws InterruptedException {
    if (closed) {
      throw new IllegalStateException(
          "Cannot use the ZooKeeper commit guard of table '" + tableName + "': it is closed");
    }
    if (lock == null) {
      lock = ZooKeeperTableLock.open(options, tableName);
    }
    return lock;
  }

  private void takeEpoch() throws Exception {
    long taken = incrementEpoch(lock.client(), epochPath, pipelineId);
    epoch = taken;
    LOG.info(
        "Pipeline {} took fencing epoch {} at {}; commits to table {} go through the lock at {}",
        pipelineId,
        taken,
        epochPath,
        tableName,
        lock.lockPath());
  }

  private static long incrementEpoch(CuratorFramework client, String path, String pipelineId)
      throws Exception {
    while (true) {
      Stat stat = new Stat();
      byte[] data;
      try {
        data = client.getData().storingStatIn(stat).forPath(path);
      } catch (KeeperException.NoNodeException e) {
        try {
          client.create().creatingParentsIfNeeded().forPath(path, encode(1));
          return 1;
        } catch (KeeperException.NodeExistsException raced) {
          continue; // another instance created it first: increment theirs
        }
      }
      long next = decode(data, path, pipelineId) + 1;
      try {
        client.setData().withVersion(stat.getVersion()).forPath(path, encode(next));
        return next;
      } catch (KeeperException.BadVersionException raced) {
        // another instance incremented in between (or our own write landed and its reply was
        // lost, then retried by Curator): read again, so no epoch is ever handed out twice
      }
    }
  }

  private static byte[] encode(long value) {
    return Long.toString(value).getBytes(StandardCharsets.UTF_8);
  }

  private static long decode(byte[] data, String path, String pipelineId) {
    String text = data == null ? "" : new String(data, StandardCharsets.UTF_8);
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot read the fencing epoch of pipeline '%s' at %s: '%s' is not a number; the"
                  + " znode was written by something else. Stop every instance of the pipeline,"
                  + " delete the znode and start one instance",
              pipelineId, path, text),
          e);
    }
  }

  @Override
  public long epoch() {
    return epoch;
  }

  /** True until the guard knows it cannot commit: fenced, or connected once and now not. */
  @Override
  public boolean canCommit() {
    ZooKeeperTableLock current = lock;
    return fencedBy == 0 && (current == null || current.isConnected());
  }

  /**
   * Connects if this is the first call, then runs {@code action} holding the table lock: takes the
   * epoch if not taken yet, and checks it under the lock, so a superseded instance stops at its
   * first attempt after a newer one started, whatever the action would decide. When ZooKeeper cannot
   * be reached the action does not run ({@link CommitLockTimeoutException}: retried later).
   */
  @Override
  public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
    throwIfFenced();
    ZooKeeperTableLock connected;
    try {
      connected = connect();
    } catch (IllegalStateException e) {
      if (closed) {
        throw e;
      }
      throw new CommitLockTimeoutException(
          String.format(
              "Cannot take the commit lock of table '%s': %s; nothing was run, the commit is"
                  + " retried at the next completed checkpoint",
              tableName, e.getMessage()),
          e);
    }
    return connected.runExclusive(
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
                      pipelineId, epochPath, e),
                  e);
            }
          }
          checkNotFenced();
          return action.call();
        });
  }

  /**
   * Reads this pipeline's epoch node; throws {@link CommitFencedException} when it shows a newer
   * epoch. Inside {@link #runExclusive} it first checks that the connection was not interrupted
   * since the lock was taken; when it was, or when the node cannot be read, nothing may be
   * committed and {@code runExclusive} reports a {@link
   * dev.shardberg.coordinator.CommitLockTimeoutException} (retried at the next checkpoint).
   */
  @Override
  public void checkNotFenced() throws CommitFencedException {
    throwIfFenced();
    ZooKeeperTableLock lock = this.lock;
    if (lock == null || epoch < 0) {
      throw new LockLostException(
          String.format(
              "Cannot check the fencing epoch of pipeline '%s': not connected to ZooKeeper yet",
              pipelineId));
    }
    if (lock.isHeldByCurrentThread()) {
      lock.checkLockHeld();
    } else if (!lock.isConnected()) {
      throw new LockLostException(
          String.format(
              "Cannot check the fencing epoch of pipeline '%s': the ZooKeeper connection is %s",
              pipelineId, lock.state()));
    }
    long current;
    try {
      current = decode(lock.client().getData().forPath(epochPath), epochPath, pipelineId);
    } catch (KeeperException.NoNodeException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot commit pipeline '%s': its fencing epoch node %s is gone (this instance has"
                  + " epoch %s); the ZooKeeper data was deleted or %s changed. Restart the job so"
                  + " it takes a fresh epoch",
              pipelineId, epochPath, epoch, ZooKeeperOptions.KEY_ROOT_PATH),
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

  /** Waits for the table lock so far (none before the first connection). */
  public LockWaitStats.Snapshot lockWaits() {
    ZooKeeperTableLock current = lock;
    return current == null ? new LockWaitStats().snapshot() : current.lockWaits();
  }

  /** {@code LATENT} until the first connection. */
  public ZooKeeperTableLock.State connectionState() {
    ZooKeeperTableLock current = lock;
    return current == null ? ZooKeeperTableLock.State.LATENT : current.state();
  }

  /** How many times the connection was suspended or lost since this guard connected. */
  public long connectionInterruptions() {
    ZooKeeperTableLock current = lock;
    return current == null ? 0 : current.connectionInterruptions();
  }

  public String pipelineId() {
    return pipelineId;
  }

  /** The ZooKeeper client of this guard (null before the first connection); tests expire its session. */
  CuratorFramework client() {
    ZooKeeperTableLock current = lock;
    return current == null ? null : current.client();
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (lock != null) {
      lock.close();
    }
  }
}
