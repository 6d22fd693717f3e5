package dev.shardberg.tests.cluster;

import dev.shardberg.tests.support.EmbeddedMariaDb;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code shop.orders_<n>} sharded over embedded MariaDB servers ({@code shardsPerHost} contiguous
 * shards each), loaded with rows and then changed by seeded random inserts, updates and deletes.
 * {@link #rows()} renders every row as {@code shard|order_id|status|amount|note}, the same
 * rendering {@link FlinkClusterEndToEndTest} gives the Iceberg table's rows.
 */
final class OrdersWorkload implements AutoCloseable {
  static final String DATABASE = "shop";
  static final String TABLE_PATTERN = "orders_(?<shard>\\d+)";
  private static final String[] STATUSES = {"NEW", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"};

  private final List<EmbeddedMariaDb> hosts;
  private final int shardsPerHost;
  private final List<AtomicLong> nextId = new ArrayList<>();
  private final AtomicLong changes = new AtomicLong();
  private final List<Connection> connections = new ArrayList<>();
  private final SplittableRandom random;
  private ScheduledExecutorService changer;
  private ScheduledFuture<?> changing;
  private volatile Throwable changeFailure;

  OrdersWorkload(List<EmbeddedMariaDb> hosts, int shardsPerHost, long seed) {
    this.hosts = List.copyOf(hosts);
    this.shardsPerHost = shardsPerHost;
    this.random = new SplittableRandom(seed);
  }

  int shards() {
    return hosts.size() * shardsPerHost;
  }

  /** Creates every shard and loads {@code rowsPerShard} rows into it (ids 1..rowsPerShard). */
  void createAndLoad(int rowsPerShard) throws SQLException {
    for (int h = 0; h < hosts.size(); h++) {
      EmbeddedMariaDb host = hosts.get(h);
      host.execute("CREATE DATABASE IF NOT EXISTS " + DATABASE);
      Connection c = host.connect(DATABASE);
      connections.add(c);
      for (int s = h * shardsPerHost; s < (h + 1) * shardsPerHost; s++) {
        try (Statement st = c.createStatement()) {
          st.execute(
              "CREATE TABLE orders_"
                  + s
                  + " (order_id BIGINT NOT NULL, customer_id INT NOT NULL,"
                  + " status VARCHAR(16) NOT NULL, amount DECIMAL(12,2) NOT NULL, note VARCHAR(64) NULL,"
                  + " PRIMARY KEY (order_id))");
        }
        for (long id = 1; id <= rowsPerShard; id++) {
          insert(s, id);
        }
        nextId.add(new AtomicLong(rowsPerShard + 1L));
      }
    }
  }

  /** Applies {@code count} random changes now, on the calling thread. */
  synchronized void applyChanges(int count) throws SQLException {
    for (int i = 0; i < count; i++) {
      applyOneChange();
    }
  }

  /** Starts applying random changes in the background, {@code perSecond} of them a second. */
  void startChanges(int perSecond) {
    changer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "orders-changes"));
    changing =
        changer.scheduleAtFixedRate(
            () -> {
              try {
                applyChanges(1);
              } catch (Throwable t) {
                changeFailure = t;
                throw new IllegalStateException("Cannot apply a change to the shards", t);
              }
            },
            0,
            1_000_000 / perSecond,
            TimeUnit.MICROSECONDS);
  }

  /** Stops the background changes; returns how many changes were applied in all so far. */
  long stopChanges() throws InterruptedException {
    changing.cancel(false);
    changer.shutdown();
    changer.awaitTermination(30, TimeUnit.SECONDS);
    if (changeFailure != null) {
      throw new IllegalStateException("Changing the shards failed", changeFailure);
    }
    return changes.get();
  }

  long changesApplied() {
    return changes.get();
  }

  /** Every row of every shard, rendered {@code shard|order_id|status|amount|note}. */
  synchronized Set<String> rows() throws SQLException {
    Set<String> rows = new TreeSet<>();
    for (int s = 0; s < shards(); s++) {
      try (Statement st = connectionOf(s).createStatement();
          ResultSet rs =
              st.executeQuery("SELECT order_id, status, amount, note FROM orders_" + s)) {
        while (rs.next()) {
          rows.add(render(s, rs.getLong(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4)));
        }
      }
    }
    return rows;
  }

  static String render(int shard, long orderId, String status, BigDecimal amount, String note) {
    return shard + "|" + orderId + "|" + status + "|" + amount.toPlainString() + "|" + note;
  }

  private void applyOneChange() throws SQLException {
    int shard = random.nextInt(shards());
    int op = random.nextInt(4);
    long maxId = nextId.get(shard).get() - 1;
    if (op == 0) {
      insert(shard, nextId.get(shard).getAndIncrement());
    } else if (op == 1 && maxId > 0) {
      try (PreparedStatement ps =
          connectionOf(shard)
              .prepareStatement("DELETE FROM orders_" + shard + " WHERE order_id = ?")) {
        ps.setLong(1, random.nextLong(1, maxId + 1));
        ps.executeUpdate();
      }
    } else if (maxId > 0) {
      try (PreparedStatement ps =
          connectionOf(shard)
              .prepareStatement(
                  "UPDATE orders_"
                      + shard
                      + " SET status = ?, amount = ?, note = ? WHERE order_id = ?")) {
        ps.setString(1, STATUSES[random.nextInt(STATUSES.length)]);
        ps.setBigDecimal(2, BigDecimal.valueOf(random.nextLong(100, 1_000_000), 2));
        ps.setString(3, random.nextInt(3) == 0 ? null : "changed #" + changes.get());
        ps.setLong(4, random.nextLong(1, maxId + 1));
        ps.executeUpdate();
      }
    }
    changes.incrementAndGet();
  }

  private void insert(int shard, long id) throws SQLException {
    try (PreparedStatement ps =
        connectionOf(shard)
            .prepareStatement(
                "INSERT INTO orders_"
                    + shard
                    + " (order_id, customer_id, status, amount, note) VALUES (?, ?, ?, ?, ?)")) {
      ps.setLong(1, id);
      ps.setInt(2, random.nextInt(1, 10_000));
      ps.setString(3, STATUSES[random.nextInt(STATUSES.length)]);
      ps.setBigDecimal(4, BigDecimal.valueOf(random.nextLong(100, 1_000_000), 2));
      ps.setString(5, random.nextInt(4) == 0 ? null : "note " + id);
      ps.executeUpdate();
    }
  }

  private Connection connectionOf(int shard) {
    return connections.get(shard / shardsPerHost);
  }

  @Override
  public void close() throws SQLException {
    if (changer != null) {
      changer.shutdownNow();
    }
    for (Connection c : connections) {
      c.close();
    }
  }
}
