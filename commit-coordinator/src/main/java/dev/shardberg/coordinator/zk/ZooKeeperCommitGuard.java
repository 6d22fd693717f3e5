package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;

import dev.shardberg.coordinator.CommitFencedException;
import dev.shardberg.coordinator.CommitGuard;
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
 * <h2>Fencing</h2>
 *
 * Opening the guard increments {@code <root>/pipelines/<pipeline>/epoch} with a versioned
 * compare-and-set; the new value is this instance's {@link #epoch()} and goes into every snapshot
 * summary. The node is read again under the lock twice per commit: by {@link #runExclusive} before
 * the action runs, and by {@link #checkNotFenced()}, which the coordinator calls just before the
 * commit. A larger value means another instance of the same pipeline has started since, and this
 * one stops for good. Epochs are unique and increase; a retried write may skip a number, never
 * repeat one.
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
 * resolves it on its next attempt from the snapshot summaries ({@code shardberg.pipeline-id},
 * {@code shardberg.checkpoint-id}), read under the lock.
 */
public final class ZooKeeperCommitGuard implements CommitGuard {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperCommitGuard.class);

  private final ZooKeeperTableLock lock;
  private final String pipelineId;
  private final String epochPath;
  private final long epoch;

  /** The newer epoch that fenced this instance, or 0 while not fenced. */
  private volatile long fencedBy;

  private ZooKeeperCommitGuard(
      ZooKeeperTableLock lock, String pipelineId, String epochPath, long epoch) {
    this.lock = lock;
    this.pipelineId = pipelineId;
    this.epochPath = epochPath;
    this.epoch = epoch;
  }

  /**
   * Connects, takes a new fencing epoch for {@code pipelineId}, and prepares the lock of {@code
   * tableName}. Fails when ZooKeeper is not reachable within the connection timeout.
   */
  public static ZooKeeperCommitGuard open(
      ZooKeeperOptions options, String pipelineId, String tableName) throws Exception {
    checkArgument(
        pipelineId != null && !pipelineId.isBlank(),
        "Cannot open the ZooKeeper commit guard of table '%s': the pipeline id is empty; set"
            + " shardberg.pipeline-id",
        tableName);
    ZooKeeperTableLock lock = ZooKeeperTableLock.open(options, tableName);
    try {
      String epochPath = ZooKeeperPaths.epochPath(options.rootPath(), pipelineId);
      long epoch = incrementEpoch(lock.client(), epochPath, pipelineId);
      LOG.info(
          "Pipeline {} took fencing epoch {} at {}; commits to table {} go through the lock at {}",
          pipelineId,
          epoch,
          epochPath,
          tableName,
          lock.lockPath());
      return new ZooKeeperCommitGuard(lock, pipelineId, epochPath, epoch);
    } catch (Exception | Error e) {
      lock.close();
      throw e;
    }
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

  @Override
  public boolean canCommit() {
    return fencedBy == 0 && lock.isConnected();
  }

  /**
   * Runs {@code action} holding the table lock, after checking the fencing epoch under the lock: a
   * superseded instance stops at its first attempt after a newer one started, whatever the action
   * would decide (it might otherwise skip a checkpoint the newer instance already numbered past, and
   * never reach its own fencing check).
   */
  @Override
  public <T> T runExclusive(Duration lockTimeout, Callable<T> action) throws Exception {
    throwIfFenced();
    return lock.runExclusive(
        lockTimeout,
        () -> {
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
            lock.tableName(), pipelineId, newerEpoch, epoch));
  }

  /** Waits for the table lock so far. */
  public LockWaitStats.Snapshot lockWaits() {
    return lock.lockWaits();
  }

  public ZooKeeperTableLock.State connectionState() {
    return lock.state();
  }

  /** How many times the connection was suspended or lost since this guard opened. */
  public long connectionInterruptions() {
    return lock.connectionInterruptions();
  }

  public String pipelineId() {
    return pipelineId;
  }

  /** The ZooKeeper client of this guard; tests expire its session. */
  CuratorFramework client() {
    return lock.client();
  }

  @Override
  public void close() {
    lock.close();
  }
}
