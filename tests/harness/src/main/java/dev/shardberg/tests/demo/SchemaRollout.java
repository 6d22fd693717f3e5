package dev.shardberg.tests.demo;

import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A schema rollout the way teams roll one out over many shards: {@code ALTER TABLE … ADD COLUMN} on
 * one shard after the other, spread evenly over a period, each followed by an update that gives
 * some of that shard's rows a value in the new column — while the change generator keeps writing on
 * every shard. On its own thread; each DDL in its own connection, so it never waits behind the
 * generator's.
 */
public final class SchemaRollout implements AutoCloseable {
  /** The column the demo's and the bench's rollout add, and its MySQL type. */
  public static final String COLUMN = "loyalty_tier";

  public static final String TYPE = "VARCHAR(16) NULL";

  /**
   * One shard table to alter: where it lives, the key column the follow-up update picks rows by,
   * and what else that update sets (the workload's change timestamps, so freshness probes see a
   * change).
   */
  public record Target(
      EmbeddedMariaDb host, String database, String table, String keyColumn, String alsoSet) {}

  private final List<Target> targets;
  private final int shards;
  private final Duration over;
  private final AtomicLong firstMillis = new AtomicLong(-1);
  private final AtomicLong lastMillis = new AtomicLong(-1);
  private final Consumer<String> progress;
  private final AtomicInteger applied = new AtomicInteger();
  private volatile boolean running;
  private volatile Throwable failure;
  private Thread thread;

  /**
   * @param over the period the rollout is spread over: shard i is altered at (i + 1) / (shards + 1)
   *     of it
   * @param progress told one line per shard altered
   */
  public SchemaRollout(List<Target> targets, Duration over, Consumer<String> progress) {
    this.targets = List.copyOf(targets);
    this.shards = targets.size();
    this.over = over;
    this.progress = progress;
  }

  /** The demo's shards ({@link OrdersShards}). */
  public static List<Target> of(OrdersShards orders, int shards) {
    List<Target> targets = new ArrayList<>();
    for (int s = 0; s < shards; s++) {
      targets.add(
          new Target(
              orders.hostOf(s),
              OrdersShards.DATABASE,
              OrdersShards.table(s),
              "order_id",
              "updated_at = UTC_TIMESTAMP(6)"));
    }
    return targets;
  }

  /** When the first and the last ALTER finished (epoch millis; -1: none yet). */
  public long firstMillis() {
    return firstMillis.get();
  }

  public long lastMillis() {
    return lastMillis.get();
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
        Target target = targets.get(shard);
        alter(target);
        long now = System.currentTimeMillis();
        firstMillis.compareAndSet(-1, now);
        lastMillis.set(now);
        applied.incrementAndGet();
        progress.accept(
            String.format(
                "schema rollout: %s.%s gained column %s (%d of %d shards)",
                target.database(), target.table(), COLUMN, applied.get(), shards));
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  private static void alter(Target target) throws SQLException {
    try (Connection c = target.host().connect(target.database());
        Statement st = c.createStatement()) {
      st.execute("ALTER TABLE " + target.table() + " ADD COLUMN " + COLUMN + " " + TYPE);
      st.executeUpdate(
          "UPDATE "
              + target.table()
              + " SET "
              + COLUMN
              + " = 'gold', "
              + target.alsoSet()
              + " WHERE "
              + target.keyColumn()
              + " % 97 = 0");
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
