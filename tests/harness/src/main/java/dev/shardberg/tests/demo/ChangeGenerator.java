package dev.shardberg.tests.demo;

import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Random inserts, updates and deletes on random shards of {@link OrdersShards}, at a target rate,
 * on its own thread. Every write sets {@code updated_at} to the client's UTC time at the write, the
 * freshness probe's reference. Autocommit: one transaction per change.
 */
public final class ChangeGenerator implements AutoCloseable {
  private final OrdersShards shards;
  private final int shardCount;
  private final SplittableRandom random;
  private final int ratePerSecond;
  private final Map<EmbeddedMariaDb, Connection> connections = new HashMap<>();
  private final List<List<Long>> liveIds = new ArrayList<>();
  private final long[] nextId;
  private final AtomicLong inserts = new AtomicLong();
  private final AtomicLong updates = new AtomicLong();
  private final AtomicLong deletes = new AtomicLong();
  private volatile boolean running;
  private volatile Throwable failure;
  private Thread thread;

  public ChangeGenerator(
      OrdersShards shards, int shardCount, int rowsPerShard, int ratePerSecond, long seed) {
    this.shards = shards;
    this.shardCount = shardCount;
    this.ratePerSecond = ratePerSecond;
    this.random = new SplittableRandom(seed);
    this.nextId = new long[shardCount];
    for (int s = 0; s < shardCount; s++) {
      List<Long> ids = new ArrayList<>(rowsPerShard);
      for (long id = 1; id <= rowsPerShard; id++) {
        ids.add(id);
      }
      liveIds.add(ids);
      nextId[s] = rowsPerShard + 1L;
    }
  }

  public synchronized void start() {
    running = true;
    thread = new Thread(this::loop, "shardberg-change-generator");
    thread.setDaemon(true);
    thread.start();
  }

  /** Stops after the change in flight; every change counted has been committed in MySQL. */
  public void stop() throws InterruptedException {
    running = false;
    if (thread != null) {
      thread.join();
    }
    if (failure != null) {
      throw new IllegalStateException("Change generator failed: " + failure.getMessage(), failure);
    }
  }

  public long inserts() {
    return inserts.get();
  }

  public long updates() {
    return updates.get();
  }

  public long deletes() {
    return deletes.get();
  }

  public long total() {
    return inserts() + updates() + deletes();
  }

  private void loop() {
    long start = System.nanoTime();
    long done = 0;
    try {
      while (running) {
        long due = (System.nanoTime() - start) * ratePerSecond / 1_000_000_000L;
        if (done >= due) {
          Thread.onSpinWait();
          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
          continue;
        }
        applyOne();
        done++;
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  /** Applies one random change; also usable synchronously (tests drive it step by step). */
  public void applyOne() throws SQLException {
    int shard = random.nextInt(shardCount);
    List<Long> ids = liveIds.get(shard);
    int op = random.nextInt(10);
    Connection c = connection(shard);
    Timestamp now = Timestamp.valueOf(OrdersShards.nowUtc());
    if (op < 3 || ids.isEmpty()) {
      long id = nextId[shard]++;
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO "
                  + OrdersShards.table(shard)
                  + " (order_id, customer_id, status, amount, currency, note, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)")) {
        ps.setLong(1, id);
        ps.setInt(2, random.nextInt(1, 100_000));
        ps.setString(3, "NEW");
        ps.setBigDecimal(4, BigDecimal.valueOf(random.nextLong(100, 10_000_000), 2));
        ps.setString(5, random.nextBoolean() ? "EUR" : "USD");
        ps.setString(6, random.nextBoolean() ? null : "live order " + id);
        ps.setTimestamp(7, now);
        ps.setTimestamp(8, now);
        ps.executeUpdate();
      }
      ids.add(id);
      inserts.incrementAndGet();
    } else if (op < 8) {
      long id = ids.get(random.nextInt(ids.size()));
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE "
                  + OrdersShards.table(shard)
                  + " SET status = ?, amount = ?, note = ?, updated_at = ? WHERE order_id = ?")) {
        ps.setString(1, OrdersShards.STATUSES[random.nextInt(OrdersShards.STATUSES.length)]);
        ps.setBigDecimal(2, BigDecimal.valueOf(random.nextLong(100, 10_000_000), 2));
        ps.setString(3, "updated " + random.nextInt(1_000_000));
        ps.setTimestamp(4, now);
        ps.setLong(5, id);
        ps.executeUpdate();
      }
      updates.incrementAndGet();
    } else {
      int index = random.nextInt(ids.size());
      long id = ids.get(index);
      ids.set(index, ids.get(ids.size() - 1));
      ids.remove(ids.size() - 1);
      try (PreparedStatement ps =
          c.prepareStatement("DELETE FROM " + OrdersShards.table(shard) + " WHERE order_id = ?")) {
        ps.setLong(1, id);
        ps.executeUpdate();
      }
      deletes.incrementAndGet();
    }
  }

  private Connection connection(int shard) throws SQLException {
    EmbeddedMariaDb host = shards.hostOf(shard);
    Connection c = connections.get(host);
    if (c == null) {
      c = host.connect(OrdersShards.DATABASE);
      connections.put(host, c);
    }
    return c;
  }

  @Override
  public void close() {
    running = false;
    for (Connection c : connections.values()) {
      try {
        c.close();
      } catch (SQLException e) {
        // closing after the run: nothing left to lose
      }
    }
  }
}
