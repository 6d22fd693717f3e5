package dev.shardberg.tests.bench;

import dev.shardberg.tests.support.EmbeddedMariaDb;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bench's MySQL side: K embedded MariaDB servers, N shards {@code shop.orders_<n>} (shard n on
 * host n mod K) of an orders-like table, bulk-loaded with R rows each, then a rate-limited change
 * stream. Every row carries {@code mysql_commit_ts}, microseconds since the epoch of the MariaDB
 * server clock at the statement that wrote it (autocommit, so at its commit), for freshness.
 *
 * <p>Loading is deterministic (seeded per shard), so every mode starts from the same rows; {@link
 * #reset} drops and reloads the shards between modes while the servers keep running.
 */
final class Workload implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Workload.class);

  static final String DATABASE = "shop";
  static final String TABLE_PREFIX = "orders_";
  static final String CDC_USER = "bench_cdc";

  /** Benchmark-only credential of throwaway embedded servers; never a real secret. */
  static final String CDC_PASSWORD = "bench-cdc-pw";

  /** Microseconds since the epoch, evaluated by the server. */
  static final String COMMIT_TS_EXPR = "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)";

  private static final int ROWS_PER_INSERT = 1000;
  private static final String[] STATUSES = {
    "NEW", "PAID", "PACKED", "SHIPPED", "DELIVERED", "RETURNED"
  };

  static final String DDL =
      "CREATE TABLE %s.%s ("
          + " id BIGINT NOT NULL PRIMARY KEY,"
          + " customer_id BIGINT NOT NULL,"
          + " sku VARCHAR(32) NOT NULL,"
          + " status VARCHAR(16) NOT NULL,"
          + " quantity INT NOT NULL,"
          + " amount DECIMAL(12,2) NOT NULL,"
          + " priority SMALLINT NULL,"
          + " note VARCHAR(64) NULL,"
          + " order_date DATE NOT NULL,"
          + " updated_at DATETIME(6) NOT NULL,"
          + " mysql_commit_ts BIGINT NOT NULL"
          + ") ENGINE=InnoDB";

  /**
   * The columns of {@link #DDL} in order: inserts name them, so a column added on a shard (a schema
   * rollout) does not break them.
   */
  static final String COLUMNS =
      "(id, customer_id, sku, status, quantity, amount, priority, note, order_date, updated_at, mysql_commit_ts)";

  private final List<EmbeddedMariaDb> servers;
  private int shards;
  private int rowsPerShard;
  private ShardState[] state;

  private Workload(List<EmbeddedMariaDb> servers) {
    this.servers = servers;
  }

  /** Starts K servers (server-ids 1..K; CDC readers use ids from 5000 up). */
  static Workload start(int hosts, Progress progress) {
    List<EmbeddedMariaDb> servers = new ArrayList<>();
    try {
      for (int i = 0; i < hosts; i++) {
        progress.line("setup", "starting embedded MariaDB host%d (%d of %d)", i, i + 1, hosts);
        EmbeddedMariaDb server = EmbeddedMariaDb.start("host" + i, i + 1);
        server.createCdcUser(CDC_USER, CDC_PASSWORD);
        // the servers are throwaway: no fsync per autocommit, so the change stream is not
        // disk-bound
        server.execute(
            "SET GLOBAL innodb_flush_log_at_trx_commit = 2", "SET GLOBAL sync_binlog = 0");
        servers.add(server);
      }
      return new Workload(servers);
    } catch (RuntimeException e) {
      servers.forEach(EmbeddedMariaDb::close);
      throw e;
    }
  }

  List<EmbeddedMariaDb> servers() {
    return servers;
  }

  int shards() {
    return shards;
  }

  EmbeddedMariaDb hostOf(int shard) {
    return servers.get(shard % servers.size());
  }

  /** Every shard table, for a schema rollout over them (key column {@code id}). */
  List<dev.shardberg.tests.demo.SchemaRollout.Target> rolloutTargets() {
    List<dev.shardberg.tests.demo.SchemaRollout.Target> targets = new java.util.ArrayList<>();
    for (int s = 0; s < shards; s++) {
      targets.add(
          new dev.shardberg.tests.demo.SchemaRollout.Target(
              hostOf(s),
              DATABASE,
              table(s),
              "id",
              "updated_at = NOW(6), mysql_commit_ts = " + COMMIT_TS_EXPR));
    }
    return targets;
  }

  static String table(int shard) {
    return TABLE_PREFIX + shard;
  }

  /**
   * Drops the shards, creates N new ones and loads R rows into each; returns the load time in ms.
   */
  long reset(int shards, int rowsPerShard, Progress progress) {
    this.shards = shards;
    this.rowsPerShard = rowsPerShard;
    long start = System.nanoTime();
    for (EmbeddedMariaDb server : servers) {
      server.execute("DROP DATABASE IF EXISTS " + DATABASE, "CREATE DATABASE " + DATABASE);
    }
    state = new ShardState[shards];
    for (int s = 0; s < shards; s++) {
      hostOf(s).execute(String.format(DDL, DATABASE, table(s)));
      state[s] = new ShardState(rowsPerShard);
    }
    AtomicLong loaded = new AtomicLong();
    int threads = Math.min(shards, Math.max(2, 2 * servers.size()));
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int s = 0; s < shards; s++) {
        int shard = s;
        futures.add(
            pool.submit(
                () -> {
                  load(shard, loaded);
                  return null;
                }));
      }
      long total = (long) shards * rowsPerShard;
      for (Future<?> f : futures) {
        while (true) {
          try {
            f.get(2, TimeUnit.SECONDS);
            break;
          } catch (java.util.concurrent.TimeoutException e) {
            progress.line("load", "rows loaded %,d of %,d", loaded.get(), total);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Cannot load the shards: interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(
          "Cannot load the shards: " + e.getCause().getMessage(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    progress.line(
        "load",
        "loaded %,d rows into %d shards on %d hosts in %,d ms",
        (long) shards * rowsPerShard,
        shards,
        servers.size(),
        ms);
    return ms;
  }

  private void load(int shard, AtomicLong loaded) throws SQLException {
    Random random = new Random(31L * shard + 7);
    try (Connection c = hostOf(shard).connect(DATABASE);
        Statement st = c.createStatement()) {
      StringBuilder sql = new StringBuilder();
      int inBatch = 0;
      for (long id = 1; id <= rowsPerShard; id++) {
        if (inBatch == 0) {
          sql.setLength(0);
          sql.append("INSERT INTO ")
              .append(table(shard))
              .append(' ')
              .append(COLUMNS)
              .append(" VALUES ");
        } else {
          sql.append(',');
        }
        appendRow(sql, id, random);
        inBatch++;
        if (inBatch == ROWS_PER_INSERT || id == rowsPerShard) {
          st.executeUpdate(sql.toString());
          loaded.addAndGet(inBatch);
          inBatch = 0;
        }
      }
    }
  }

  private static void appendRow(StringBuilder sql, long id, Random random) {
    sql.append('(')
        .append(id)
        .append(',')
        .append(1 + random.nextInt(1_000_000))
        .append(",'SKU-")
        .append(random.nextInt(100_000))
        .append("','")
        .append(STATUSES[random.nextInt(STATUSES.length)])
        .append("',")
        .append(1 + random.nextInt(20))
        .append(',')
        .append(BigDecimal.valueOf(random.nextInt(10_000_000), 2).toPlainString())
        .append(',')
        .append(random.nextInt(4) == 0 ? "NULL" : String.valueOf(random.nextInt(5)))
        .append(',')
        .append(random.nextInt(3) == 0 ? "NULL" : "'gift wrap " + random.nextInt(1000) + "'")
        .append(",DATE_SUB('2026-11-30', INTERVAL ")
        .append(random.nextInt(1000))
        .append(" DAY),NOW(6),")
        .append(COMMIT_TS_EXPR)
        .append(')');
  }

  /** Per-shard key bookkeeping for the change stream; guarded by its own monitor. */
  private static final class ShardState {
    private final List<Long> live;
    private long nextId;

    ShardState(int rows) {
      live = new ArrayList<>(rows + 1024);
      for (long id = 1; id <= rows; id++) {
        live.add(id);
      }
      nextId = rows + 1L;
    }
  }

  /** Counts of what the change stream applied. */
  record ChangeCounts(long inserts, long updates, long deletes, long elapsedMs) {
    long total() {
      return inserts + updates + deletes;
    }

    double ratePerSecond() {
      return elapsedMs == 0 ? 0 : total() * 1000.0 / elapsedMs;
    }
  }

  /**
   * Runs the change stream for {@code durationMs} at {@code rate} changes/s on {@code threads}
   * threads (each with its own connection per host), and returns what it applied.
   */
  ChangeCounts changeStream(
      int rate, long durationMs, BenchConfig.Mix mix, double skew, int threads, Runnable onTick) {
    if (rate == 0 || durationMs == 0) {
      return new ChangeCounts(0, 0, 0, 0);
    }
    AtomicLong inserts = new AtomicLong();
    AtomicLong updates = new AtomicLong();
    AtomicLong deletes = new AtomicLong();
    long start = System.nanoTime();
    long end = start + durationMs * 1_000_000L;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      futures.add(
          pool.submit(
              () -> {
                runChanges(
                    thread,
                    rate / (double) threads,
                    start,
                    end,
                    mix,
                    skew,
                    inserts,
                    updates,
                    deletes);
                return null;
              }));
    }
    try {
      for (Future<?> f : futures) {
        while (true) {
          try {
            f.get(1, TimeUnit.SECONDS);
            break;
          } catch (java.util.concurrent.TimeoutException e) {
            onTick.run();
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Cannot run the change stream: interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(
          "Cannot run the change stream: " + e.getCause().getMessage(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
    return new ChangeCounts(
        inserts.get(), updates.get(), deletes.get(), (System.nanoTime() - start) / 1_000_000);
  }

  private void runChanges(
      int thread,
      double rate,
      long start,
      long end,
      BenchConfig.Mix mix,
      double skew,
      AtomicLong inserts,
      AtomicLong updates,
      AtomicLong deletes)
      throws SQLException {
    Random random = new Random(1_000_003L * (thread + 1));
    List<Connection> connections = new ArrayList<>();
    try {
      for (EmbeddedMariaDb server : servers) {
        connections.add(server.connect(DATABASE));
      }
      long periodNanos = (long) (1_000_000_000L / rate);
      long next = start;
      while (true) {
        long now = System.nanoTime();
        if (now >= end) {
          return;
        }
        if (now < next) {
          // a load generator paces itself; this is not a test waiting for a condition
          LockSupport.parkNanos(next - now);
          continue;
        }
        next += periodNanos;
        int shard = skew > 0 && random.nextDouble() < skew ? 0 : random.nextInt(shards);
        Connection c = connections.get(shard % servers.size());
        int dice = random.nextInt(100);
        ShardState s = state[shard];
        synchronized (s) {
          if (dice < mix.updatePercent() && !s.live.isEmpty()) {
            long id = s.live.get(random.nextInt(s.live.size()));
            try (PreparedStatement ps =
                c.prepareStatement(
                    "UPDATE "
                        + table(shard)
                        + " SET status = ?, quantity = quantity + 1, amount = ?,"
                        + " updated_at = NOW(6), mysql_commit_ts = "
                        + COMMIT_TS_EXPR
                        + " WHERE id = ?")) {
              ps.setString(1, STATUSES[random.nextInt(STATUSES.length)]);
              ps.setBigDecimal(2, BigDecimal.valueOf(random.nextInt(10_000_000), 2));
              ps.setLong(3, id);
              ps.executeUpdate();
            }
            updates.incrementAndGet();
          } else if (dice < mix.updatePercent() + mix.insertPercent() || s.live.isEmpty()) {
            long id = s.nextId++;
            StringBuilder sql =
                new StringBuilder("INSERT INTO ")
                    .append(table(shard))
                    .append(' ')
                    .append(COLUMNS)
                    .append(" VALUES ");
            appendRow(sql, id, random);
            try (Statement st = c.createStatement()) {
              st.executeUpdate(sql.toString());
            }
            s.live.add(id);
            inserts.incrementAndGet();
          } else {
            int index = random.nextInt(s.live.size());
            long id = s.live.get(index);
            try (PreparedStatement ps =
                c.prepareStatement("DELETE FROM " + table(shard) + " WHERE id = ?")) {
              ps.setLong(1, id);
              ps.executeUpdate();
            }
            // swap-remove keeps the pick O(1); the order of live keys does not matter
            s.live.set(index, s.live.get(s.live.size() - 1));
            s.live.remove(s.live.size() - 1);
            deletes.incrementAndGet();
          }
        }
      }
    } finally {
      for (Connection c : connections) {
        try {
          c.close();
        } catch (SQLException e) {
          LOG.debug("Closing a change-stream connection failed: {}", e.getMessage());
        }
      }
    }
  }

  /**
   * Updates one live row of every shard, so that the newest change of each shard is a row the table
   * must show (a trailing delete leaves nothing to look for), and returns per shard the newest
   * {@code mysql_commit_ts} present afterwards: the catch-up mark.
   */
  long[] markAndReadNewest() {
    for (int s = 0; s < shards; s++) {
      ShardState st = state[s];
      synchronized (st) {
        if (st.live.isEmpty()) {
          continue;
        }
        hostOf(s)
            .execute(
                "UPDATE "
                    + DATABASE
                    + "."
                    + table(s)
                    + " SET updated_at = NOW(6), mysql_commit_ts = "
                    + COMMIT_TS_EXPR
                    + " WHERE id = "
                    + st.live.get(0));
      }
    }
    return newestCommitTs();
  }

  /** Per shard, the newest {@code mysql_commit_ts} present now (0 for an empty shard). */
  long[] newestCommitTs() {
    long[] result = new long[shards];
    for (int s = 0; s < shards; s++) {
      try (Connection c = hostOf(s).connect(DATABASE);
          Statement st = c.createStatement();
          var rs = st.executeQuery("SELECT COALESCE(MAX(mysql_commit_ts), 0) FROM " + table(s))) {
        rs.next();
        result[s] = rs.getLong(1);
      } catch (SQLException e) {
        throw new IllegalStateException(
            String.format(
                "Cannot read the newest commit ts of shard %d (%s.%s): %s",
                s, DATABASE, table(s), e.getMessage()),
            e);
      }
    }
    return result;
  }

  @Override
  public void close() {
    for (EmbeddedMariaDb server : servers) {
      try {
        server.close();
      } catch (RuntimeException e) {
        LOG.warn("Embedded MariaDB {} did not close cleanly: {}", server.name(), e.getMessage());
      }
    }
  }
}
