package dev.shardberg.coordinator.zk;

import static com.google.common.base.Preconditions.checkNotNull;

import dev.shardberg.coordinator.CoordinatorConfigOptions;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ZooKeeper connection: the {@link CuratorFramework} built from {@link ZooKeeperOptions} and
 * the state of its connection as committers see it. The recipes ({@link ZooKeeperTableLock}, {@link
 * FencingEpoch}) run over a connection given to them; whoever opens it closes it.
 *
 * <h2>State machine</h2>
 *
 * <pre>
 *              connected               SUSPENDED               LOST
 *   LATENT ──────────────▶ CONNECTED ───────────▶ SUSPENDED ─────────▶ LOST
 *                            ▲   │  ▲                 │                 │
 *                            │   │  └── RECONNECTED ──┘                 │
 *                            │   └───────────────── LOST ──────────────▶│
 *                            └──────────────── RECONNECTED ─────────────┘
 *   any ── close() ──▶ CLOSED
 * </pre>
 *
 * Only CONNECTED lets a commit start. SUSPENDED and LOST mean "stop committing now". Every exit
 * from CONNECTED counts as an {@link #interruptions() interruption}: a lock holder whose connection
 * was interrupted since it took the lock may have lost it (an expired session deletes the lock's
 * ephemeral node and the next waiter gets it).
 *
 * <p>Transitions happen on Curator's event thread (and in {@link #open}) with {@code
 * compareAndSet}; readers on any thread see a consistent state.
 */
public final class ZooKeeperConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperConnection.class);

  /** Connection states as committers see them. */
  public enum State {
    LATENT,
    CONNECTED,
    SUSPENDED,
    LOST,
    CLOSED
  }

  private static final Set<State> CAN_CONNECT =
      EnumSet.of(State.LATENT, State.SUSPENDED, State.LOST);
  private static final Set<State> CAN_SUSPEND = EnumSet.of(State.LATENT, State.CONNECTED);
  private static final Set<State> CAN_LOSE =
      EnumSet.of(State.LATENT, State.CONNECTED, State.SUSPENDED);

  private final ZooKeeperOptions options;
  private final CuratorFramework client;
  private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
  private final AtomicLong interruptions = new AtomicLong();

  private ZooKeeperConnection(ZooKeeperOptions options) {
    this.options = options;
    this.client =
        CuratorFrameworkFactory.builder()
            .connectString(options.connectString())
            .sessionTimeoutMs(options.sessionTimeoutMs())
            .connectionTimeoutMs(options.connectionTimeoutMs())
            // sleeps grow from base-sleep and are capped at the connection timeout, so one
            // operation during an outage fails in bounded time instead of sleeping for minutes
            .retryPolicy(
                new ExponentialBackoffRetry(
                    options.retryBaseSleepMs(),
                    options.retryMaxRetries(),
                    Math.max(options.retryBaseSleepMs(), options.connectionTimeoutMs())))
            .build();
    client.getConnectionStateListenable().addListener((c, newState) -> onConnectionState(newState));
  }

  /**
   * Starts the client and waits for the first connection. Fails, naming the keys, when none is made
   * within the connection timeout.
   */
  public static ZooKeeperConnection open(ZooKeeperOptions options) throws InterruptedException {
    checkNotNull(options, "Cannot connect to ZooKeeper: options are null");
    ZooKeeperConnection connection = new ZooKeeperConnection(options);
    connection.start();
    return connection;
  }

  private void start() throws InterruptedException {
    client.start();
    boolean connected =
        client.blockUntilConnected(options.connectionTimeoutMs(), TimeUnit.MILLISECONDS);
    if (!connected) {
      close();
      throw new IllegalStateException(
          String.format(
              "Cannot connect to ZooKeeper at '%s' (%s) within %s (%s): check that the servers are"
                  + " up and reachable from this host, or raise the connection timeout",
              options.connectString(),
              CoordinatorConfigOptions.ZK_CONNECT.key(),
              options.connectionTimeout(),
              CoordinatorConfigOptions.ZK_CONNECTION_TIMEOUT.key()));
    }
    // the listener may already have moved LATENT to CONNECTED; a later SUSPENDED wins either way
    state.compareAndSet(State.LATENT, State.CONNECTED);
  }

  private void onConnectionState(ConnectionState newState) {
    switch (newState) {
      case CONNECTED, RECONNECTED -> {
        if (moveTo(State.CONNECTED, CAN_CONNECT) && newState == ConnectionState.RECONNECTED) {
          LOG.info(
              "ZooKeeper connection to {} is back: commits resume at the next checkpoint",
              options.connectString());
        }
      }
      case SUSPENDED, READ_ONLY -> {
        if (moveTo(State.SUSPENDED, CAN_SUSPEND)) {
          LOG.warn(
              "ZooKeeper connection to {} is suspended: commits stop now and stay pending until"
                  + " the connection is back. Check the ZooKeeper servers",
              options.connectString());
        }
      }
      case LOST -> {
        if (moveTo(State.LOST, CAN_LOSE)) {
          LOG.warn(
              "ZooKeeper session to {} is lost: its locks are gone; commits stay pending until a"
                  + " new session is connected. Check the ZooKeeper servers",
              options.connectString());
        }
      }
    }
  }

  /** Moves to {@code target} when the current state allows it; counts every exit from CONNECTED. */
  private boolean moveTo(State target, Set<State> allowedFrom) {
    while (true) {
      State current = state.get();
      if (!allowedFrom.contains(current)) {
        return false;
      }
      if (state.compareAndSet(current, target)) {
        if (current == State.CONNECTED) {
          interruptions.incrementAndGet();
        }
        return true;
      }
    }
  }

  /** True while commits can start (state CONNECTED). */
  public boolean isConnected() {
    return state.get() == State.CONNECTED;
  }

  public State state() {
    return state.get();
  }

  /** How many times the connection left CONNECTED (suspended or lost) since {@link #open}. */
  public long interruptions() {
    return interruptions.get();
  }

  public CuratorFramework client() {
    return client;
  }

  public ZooKeeperOptions options() {
    return options;
  }

  @Override
  public void close() {
    State previous = state.getAndSet(State.CLOSED);
    if (previous != State.CLOSED) {
      client.close();
    }
  }
}
