package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkNotNull;

import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The fencing epoch of one pipeline: a counter in the znode {@code
 * <root>/pipelines/<pipeline>/epoch} (decimal text), over a given client. {@link #increment()}
 * hands out the next value with a versioned compare-and-set, so every value is handed out at most
 * once: a retried write may skip a number, never repeat one. {@link #read()} returns the current
 * value.
 *
 * <p>Not Curator's {@code SharedCount}: that stores a 4-byte binary int, and the znode's text
 * format is what running pipelines already hold.
 */
public final class FencingEpoch {
  private final CuratorFramework client;
  private final String path;
  private final String pipelineId;

  public FencingEpoch(CuratorFramework client, String rootPath, String pipelineId) {
    this.client = checkNotNull(client, "Cannot use the fencing epoch: the client is null");
    this.pipelineId = pipelineId;
    this.path = ZooKeeperPaths.epochPath(rootPath, pipelineId);
  }

  /** Creates the node at 1 or increments it; returns the value this call took. */
  public long increment() throws Exception {
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
      long next = decode(data) + 1;
      try {
        client.setData().withVersion(stat.getVersion()).forPath(path, encode(next));
        return next;
      } catch (KeeperException.BadVersionException raced) {
        // another instance incremented in between (or our own write landed and its reply was
        // lost, then retried by Curator): read again, so no epoch is ever handed out twice
      }
    }
  }

  /**
   * The current value.
   *
   * @throws KeeperException.NoNodeException when no epoch was ever taken (or the node was deleted)
   * @throws IllegalStateException when the node does not hold a number
   */
  public long read() throws Exception {
    return decode(client.getData().forPath(path));
  }

  /** The znode, {@code <root>/pipelines/<pipeline>/epoch}. */
  public String path() {
    return path;
  }

  private static byte[] encode(long value) {
    return Long.toString(value).getBytes(StandardCharsets.UTF_8);
  }

  private long decode(byte[] data) {
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
}
