package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.LOCK_TIMEOUT;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_CONNECT;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_CONNECTION_TIMEOUT;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_LOCK_TIMEOUT;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_RETRY_BASE_SLEEP;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_RETRY_MAX_RETRIES;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_ROOT_PATH;
import static dev.shardberg.coordinator.CoordinatorConfigOptions.ZK_SESSION_TIMEOUT;

import java.io.Serializable;
import java.time.Duration;
import org.apache.zookeeper.common.PathUtils;

/**
 * The {@code coordinator.zookeeper.*} settings of the HA mode, typed (the keys and their defaults
 * are declared in {@link dev.shardberg.coordinator.CoordinatorConfigOptions}). Without them the
 * coordinator runs with {@link dev.shardberg.coordinator.NoopCommitGuard} and behaves as a single
 * job that owns its table.
 *
 * <p>Start from {@link #of(String)} (every option's default) and change what you need with the
 * {@code with*} methods; every value is validated on construction, and a bad value fails with a
 * message that names the key, the value and the fix.
 *
 * @param connectString ZooKeeper connect string, {@code host:port[,host:port...][/chroot]}
 * @param rootPath znode under which locks and fencing epochs live
 * @param sessionTimeout ZooKeeper session timeout; a session lost for longer than this releases the
 *     table lock (the server deletes its ephemeral node)
 * @param connectionTimeout how long to wait for a connection before an operation fails
 * @param lockTimeout how long a commit waits for the table lock before the checkpoint's commit is
 *     postponed to the next checkpoint
 * @param retryBaseSleep first sleep of Curator's exponential backoff retry
 * @param retryMaxRetries retries of one ZooKeeper operation before it fails
 */
public record ZooKeeperOptions(
    String connectString,
    String rootPath,
    Duration sessionTimeout,
    Duration connectionTimeout,
    Duration lockTimeout,
    Duration retryBaseSleep,
    int retryMaxRetries)
    implements Serializable {

  private static final long serialVersionUID = 1L;

  /** Curator's {@code ExponentialBackoffRetry} refuses more retries than this. */
  static final int MAX_RETRIES_LIMIT = 29;

  public ZooKeeperOptions {
    checkArgument(
        connectString != null && !connectString.isBlank(),
        "Cannot use ZooKeeper HA: %s is not set; set it to host:port[,host:port...][/chroot],"
            + " e.g. zk1:2181,zk2:2181,zk3:2181",
        ZK_CONNECT.key());
    validateConnectString(connectString);
    checkArgument(
        rootPath != null && isValidRootPath(rootPath),
        "Cannot use ZooKeeper HA: %s '%s' is not a valid znode path; use an absolute path without a"
            + " trailing slash, e.g. %s",
        ZK_ROOT_PATH.key(),
        rootPath,
        ZK_ROOT_PATH.defaultValue());
    checkPositiveMillis(
        ZK_SESSION_TIMEOUT.key(), sessionTimeout, ZK_SESSION_TIMEOUT.defaultValue());
    checkPositiveMillis(
        ZK_CONNECTION_TIMEOUT.key(), connectionTimeout, ZK_CONNECTION_TIMEOUT.defaultValue());
    checkPositiveMillis(ZK_LOCK_TIMEOUT.key(), lockTimeout, LOCK_TIMEOUT.defaultValue());
    checkPositiveMillis(
        ZK_RETRY_BASE_SLEEP.key(), retryBaseSleep, ZK_RETRY_BASE_SLEEP.defaultValue());
    checkArgument(
        retryMaxRetries >= 0 && retryMaxRetries <= MAX_RETRIES_LIMIT,
        "Cannot use ZooKeeper HA: %s is %s; set it between 0 and %s (default %s)",
        ZK_RETRY_MAX_RETRIES.key(),
        retryMaxRetries,
        MAX_RETRIES_LIMIT,
        ZK_RETRY_MAX_RETRIES.defaultValue());
  }

  /** Every default, connected to {@code connectString}. */
  public static ZooKeeperOptions of(String connectString) {
    return new ZooKeeperOptions(
        connectString,
        ZK_ROOT_PATH.defaultValue(),
        ZK_SESSION_TIMEOUT.defaultValue(),
        ZK_CONNECTION_TIMEOUT.defaultValue(),
        LOCK_TIMEOUT.defaultValue(),
        ZK_RETRY_BASE_SLEEP.defaultValue(),
        ZK_RETRY_MAX_RETRIES.defaultValue());
  }

  public ZooKeeperOptions withRootPath(String path) {
    return new ZooKeeperOptions(
        connectString,
        path,
        sessionTimeout,
        connectionTimeout,
        lockTimeout,
        retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withSessionTimeout(Duration timeout) {
    return new ZooKeeperOptions(
        connectString,
        rootPath,
        timeout,
        connectionTimeout,
        lockTimeout,
        retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withConnectionTimeout(Duration timeout) {
    return new ZooKeeperOptions(
        connectString,
        rootPath,
        sessionTimeout,
        timeout,
        lockTimeout,
        retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withLockTimeout(Duration timeout) {
    return new ZooKeeperOptions(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        timeout,
        retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withRetry(Duration baseSleep, int maxRetries) {
    return new ZooKeeperOptions(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        lockTimeout,
        baseSleep,
        maxRetries);
  }

  private static void validateConnectString(String connectString) {
    int chroot = connectString.indexOf('/');
    String hosts = chroot < 0 ? connectString : connectString.substring(0, chroot);
    for (String host : hosts.split(",", -1)) {
      checkArgument(
          isValidHostPort(host),
          "Cannot use ZooKeeper HA: %s '%s' has a bad server entry '%s'; write host:port entries"
              + " separated by commas without spaces, e.g. zk1:2181,zk2:2181/chroot",
          ZK_CONNECT.key(),
          connectString,
          host);
    }
    if (chroot >= 0) {
      String path = connectString.substring(chroot);
      checkArgument(
          isValidRootPath(path),
          "Cannot use ZooKeeper HA: %s '%s' has a bad chroot '%s'; use an absolute znode path"
              + " without a trailing slash, or put the path in %s instead",
          ZK_CONNECT.key(),
          connectString,
          path,
          ZK_ROOT_PATH.key());
    }
  }

  private static boolean isValidHostPort(String entry) {
    if (entry.isEmpty() || entry.chars().anyMatch(Character::isWhitespace)) {
      return false;
    }
    int colon = entry.lastIndexOf(':');
    if (colon < 0) {
      return true; // ZooKeeper defaults the port to 2181
    }
    if (colon == 0) {
      return false;
    }
    try {
      int port = Integer.parseInt(entry.substring(colon + 1));
      return port > 0 && port <= 65535;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static boolean isValidRootPath(String path) {
    if (path.length() < 2 || path.endsWith("/")) {
      return false;
    }
    try {
      PathUtils.validatePath(path);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static void checkPositiveMillis(String key, Duration value, Duration example) {
    checkArgument(
        value != null
            && !value.isNegative()
            && value.toMillis() > 0
            && value.toMillis() <= Integer.MAX_VALUE,
        "Cannot use ZooKeeper HA: %s is %s; set a positive duration of at most %s ms, e.g. %s",
        key,
        value,
        Integer.MAX_VALUE,
        example.toMillis() % 1000 == 0 ? example.toSeconds() + " s" : example.toMillis() + " ms");
  }

  /** Sessions, connections and sleeps in the int milliseconds Curator takes. */
  int sessionTimeoutMs() {
    return Math.toIntExact(sessionTimeout.toMillis());
  }

  int connectionTimeoutMs() {
    return Math.toIntExact(connectionTimeout.toMillis());
  }

  int retryBaseSleepMs() {
    return Math.toIntExact(retryBaseSleep.toMillis());
  }
}
