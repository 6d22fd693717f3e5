package dev.shardberg.tests.demo;

import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A schema rollout the way teams roll one out over many shards: {@code ALTER TABLE … ADD COLUMN} on one
 * shard after the other, spread evenly over a period, each followed by an update that gives some of
 * that shard's rows a value in the new column — while the change generator keeps writing on every
 * shard. On its own thread; each DDL in its own connection, so it never waits behind the generator's.
 */
public final class SchemaRollout implements AutoCloseable {
  /** The column the demo's and the bench's rollout add, and its MySQL type. */
  public static final String COLUMN = "loyalty_tier";

  public static final String TYPE = "VARCHAR(16) NULL";

  private final OrdersShards orders;
  private final int shards;
  private final Duration over;
  private final Consumer<String> progress;
  private final AtomicInteger applied = new AtomicInteger();
  private volatile boolean running;
  private volatile Throwable failure;
  private Thread thread;

  /**
   * @param over the period the rollout is spread over: shard i is altered at (i + 1) / (shards + 1) of it
   * @param progress told one line per shard altered
   */
  public SchemaRollout(OrdersShards orders, int shards, Duration over, Consumer<String> progress) {
    this.orders = orders;
    this.shards = shards;
    this.over = over;
    this.progress = progress;
  }

  public synchronized void start() {
    running = true;
    thread = new Thread(this::loop, "shardberg-schema-rollout");
    thread.setDaemon(true);
    thread.start();
  }

  /** Waits for the shard being altered, then stops; fails if a DDL failed. */
  public void stop() throws InterruptedException {
    running = false;
    if (thread != null) {
      thread.interrupt();
      thread.join();
    }
    if (failure != null) {
      throw new IllegalStateException("Schema rollout failed: " + failure.getMessage(), failure);
    }
  }

  /** Shards altered so far. */
  public int applied() {
    return applied.get();
  }

  private void loop() {
    long start = System.nanoTime();
    try {
      for (int shard = 0; shard < shards && running; shard++) {
        long dueNanos = start + over.toNanos() * (shard + 1) / (shards + 1);
        long wait;
        while (running && (wait = dueNanos - System.nanoTime()) > 0) {
          try {
            Thread.sleep(Math.min(200, Math.max(1, wait / 1_000_000)));
          } catch (InterruptedException e) {
            if (!running) {
              return;
            }
          }
        }
        if (!running) {
          return;
        }
        alter(shard);
        applied.incrementAndGet();
        progress.accept(String.format("schema rollout: %s.%s gained column %s (%d of %d shards)",
            OrdersShards.DATABASE, OrdersShards.table(shard), COLUMN, applied.get(), shards));
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  private void alter(int shard) throws SQLException {
    EmbeddedMariaDb host = orders.hostOf(shard);
    try (Connection c = host.connect(OrdersShards.DATABASE); Statement st = c.createStatement()) {
      st.execute("ALTER TABLE " + OrdersShards.table(shard) + " ADD COLUMN " + COLUMN + " " + TYPE);
      st.executeUpdate("UPDATE " + OrdersShards.table(shard) + " SET " + COLUMN + " = 'gold' WHERE order_id % 97 = 0");
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
