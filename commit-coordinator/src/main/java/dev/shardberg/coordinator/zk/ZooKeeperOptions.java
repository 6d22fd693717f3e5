package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkArgument;

import java.io.Serializable;
import java.time.Duration;
import org.apache.zookeeper.common.PathUtils;

/**
 * The {@code coordinator.zookeeper.*} settings of the HA mode. Without them the coordinator runs with
 * {@link dev.shardberg.coordinator.NoopCommitGuard} and behaves as a single job that owns its table.
 *
 * <p>Start from {@link #of(String)} (every default) and change what you need with the {@code with*}
 * methods; every value is validated on construction, and a bad value fails with a message that names
 * the key, the value and the fix.
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

  public static final String KEY_CONNECT = "coordinator.zookeeper.connect";
  public static final String KEY_ROOT_PATH = "coordinator.zookeeper.root-path";
  public static final String KEY_SESSION_TIMEOUT = "coordinator.zookeeper.session-timeout";
  public static final String KEY_CONNECTION_TIMEOUT = "coordinator.zookeeper.connection-timeout";
  public static final String KEY_LOCK_TIMEOUT = "coordinator.zookeeper.lock-timeout";
  public static final String KEY_RETRY_BASE_SLEEP = "coordinator.zookeeper.retry.base-sleep";
  public static final String KEY_RETRY_MAX_RETRIES = "coordinator.zookeeper.retry.max-retries";

  public static final String DEFAULT_ROOT_PATH = "/shardberg";
  public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(60);
  public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(15);
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(60);
  public static final Duration DEFAULT_RETRY_BASE_SLEEP = Duration.ofSeconds(1);
  public static final int DEFAULT_RETRY_MAX_RETRIES = 10;

  /** Curator's {@code ExponentialBackoffRetry} refuses more retries than this. */
  static final int MAX_RETRIES_LIMIT = 29;

  public ZooKeeperOptions {
    checkArgument(
        connectString != null && !connectString.isBlank(),
        "Cannot use ZooKeeper HA: %s is not set; set it to host:port[,host:port...][/chroot],"
            + " e.g. zk1:2181,zk2:2181,zk3:2181",
        KEY_CONNECT);
    validateConnectString(connectString);
    checkArgument(
        rootPath != null && isValidRootPath(rootPath),
        "Cannot use ZooKeeper HA: %s '%s' is not a valid znode path; use an absolute path without a"
            + " trailing slash, e.g. %s",
        KEY_ROOT_PATH,
        rootPath,
        DEFAULT_ROOT_PATH);
    checkPositiveMillis(KEY_SESSION_TIMEOUT, sessionTimeout, "60 s");
    checkPositiveMillis(KEY_CONNECTION_TIMEOUT, connectionTimeout, "15 s");
    checkPositiveMillis(KEY_LOCK_TIMEOUT, lockTimeout, "60 s");
    checkPositiveMillis(KEY_RETRY_BASE_SLEEP, retryBaseSleep, "1 s");
    checkArgument(
        retryMaxRetries >= 0 && retryMaxRetries <= MAX_RETRIES_LIMIT,
        "Cannot use ZooKeeper HA: %s is %s; set it between 0 and %s (default %s)",
        KEY_RETRY_MAX_RETRIES,
        retryMaxRetries,
        MAX_RETRIES_LIMIT,
        DEFAULT_RETRY_MAX_RETRIES);
  }

  /** Every default, connected to {@code connectString}. */
  public static ZooKeeperOptions of(String connectString) {
    return new ZooKeeperOptions(
        connectString,
        DEFAULT_ROOT_PATH,
        DEFAULT_SESSION_TIMEOUT,
        DEFAULT_CONNECTION_TIMEOUT,
        DEFAULT_LOCK_TIMEOUT,
        DEFAULT_RETRY_BASE_SLEEP,
        DEFAULT_RETRY_MAX_RETRIES);
  }

  public ZooKeeperOptions withRootPath(String path) {
    return new ZooKeeperOptions(
        connectString, path, sessionTimeout, connectionTimeout, lockTimeout, retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withSessionTimeout(Duration timeout) {
    return new ZooKeeperOptions(
        connectString, rootPath, timeout, connectionTimeout, lockTimeout, retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withConnectionTimeout(Duration timeout) {
    return new ZooKeeperOptions(
        connectString, rootPath, sessionTimeout, timeout, lockTimeout, retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withLockTimeout(Duration timeout) {
    return new ZooKeeperOptions(
        connectString, rootPath, sessionTimeout, connectionTimeout, timeout, retryBaseSleep,
        retryMaxRetries);
  }

  public ZooKeeperOptions withRetry(Duration baseSleep, int maxRetries) {
    return new ZooKeeperOptions(
        connectString, rootPath, sessionTimeout, connectionTimeout, lockTimeout, baseSleep,
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
          KEY_CONNECT,
          connectString,
          host);
    }
    if (chroot >= 0) {
      String path = connectString.substring(chroot);
      checkArgument(
          isValidRootPath(path),
          "Cannot use ZooKeeper HA: %s '%s' has a bad chroot '%s'; use an absolute znode path"
              + " without a trailing slash, or put the path in %s instead",
          KEY_CONNECT,
          connectString,
          path,
          KEY_ROOT_PATH);
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

  private static void checkPositiveMillis(String key, Duration value, String example) {
    checkArgument(
        value != null && !value.isNegative() && value.toMillis() > 0
            && value.toMillis() <= Integer.MAX_VALUE,
        "Cannot use ZooKeeper HA: %s is %s; set a positive duration of at most %s ms, e.g. %s",
        key,
        value,
        Integer.MAX_VALUE,
        example);
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
