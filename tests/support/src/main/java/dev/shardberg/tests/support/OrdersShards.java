package dev.shardberg.tests.support;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * An orders-like table sharded over embedded MariaDB servers: shard {@code n} is table {@code
 * shop.orders_n}, shards spread round-robin in contiguous blocks over the hosts. Rows of shard
 * {@code n} have ids {@code 1..rowsPerShard}; {@code updated_at} is the (UTC) time the row was last
 * written by the client, which the freshness probe reads back from Iceberg.
 */
public final class OrdersShards {
  public static final String DATABASE = "shop";
  public static final String TABLE_PATTERN = "orders_(?<shard>\\d+)";
  public static final String[] STATUSES = {"NEW", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"};
  private static final int BATCH = 1_000;

  private final List<EmbeddedMariaDb> hosts;
  private final int shards;

  public OrdersShards(List<EmbeddedMariaDb> hosts, int shards) {
    this.hosts = List.copyOf(hosts);
    this.shards = shards;
  }

  public static String table(int shard) {
    return "orders_" + shard;
  }

  /**
   * The rows of {@code qualifiedTable} on {@code host} as {@code shard|order_id|status|amount}:
   * what a second engine reading the Iceberg table must find for shard {@code shard}.
   */
  public static List<String> rows(EmbeddedMariaDb host, String qualifiedTable, int shard)
      throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = host.connect(qualifiedTable.substring(0, qualifiedTable.indexOf('.')));
        java.sql.Statement statement = c.createStatement();
        java.sql.ResultSet r =
            statement.executeQuery("SELECT order_id, status, amount FROM " + qualifiedTable)) {
      while (r.next()) {
        rows.add(
            shard
                + "|"
                + r.getLong(1)
                + "|"
                + r.getString(2)
                + "|"
                + r.getBigDecimal(3).toPlainString());
      }
    }
    return rows;
  }

  public static String ddl(String qualifiedTable) {
    return "CREATE TABLE "
        + qualifiedTable
        + " ("
        + " order_id BIGINT NOT NULL,"
        + " customer_id INT NOT NULL,"
        + " status VARCHAR(16) NOT NULL,"
        + " amount DECIMAL(12,2) NOT NULL,"
        + " currency CHAR(3) NOT NULL,"
        + " note VARCHAR(255) NULL,"
        + " created_at DATETIME(3) NOT NULL,"
        + " updated_at DATETIME(6) NOT NULL,"
        + " PRIMARY KEY (order_id))";
  }

  /**
   * The host holding {@code shard}: contiguous blocks, e.g. 8 shards on 2 hosts → 0-3 on A, 4-7 on
   * B.
   */
  public EmbeddedMariaDb hostOf(int shard) {
    int perHost = (shards + hosts.size() - 1) / hosts.size();
    return hosts.get(Math.min(shard / perHost, hosts.size() - 1));
  }

  public List<Integer> shardsOf(EmbeddedMariaDb host) {
    List<Integer> result = new ArrayList<>();
    for (int s = 0; s < shards; s++) {
      if (hostOf(s) == host) {
        result.add(s);
      }
    }
    return result;
  }

  public void createTables() {
    for (EmbeddedMariaDb host : hosts) {
      List<String> sql = new ArrayList<>();
      sql.add("CREATE DATABASE IF NOT EXISTS " + DATABASE);
      for (int shard : shardsOf(host)) {
        sql.add(ddl(DATABASE + "." + table(shard)));
      }
      host.execute(sql.toArray(String[]::new));
    }
  }

  /**
   * Loads {@code rowsPerShard} rows into every shard, one loader thread per host, multi-row
   * inserts.
   */
  public void load(int rowsPerShard, long seed) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(hosts.size());
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (EmbeddedMariaDb host : hosts) {
        futures.add(
            pool.submit(
                () -> {
                  try (Connection c = host.connect(DATABASE)) {
                    for (int shard : shardsOf(host)) {
                      loadShard(c, shard, rowsPerShard, new SplittableRandom(seed + shard));
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static void loadShard(Connection c, int shard, int rows, SplittableRandom random)
      throws SQLException {
    c.setAutoCommit(false);
    LocalDateTime base = LocalDateTime.of(2026, 1, 1, 0, 0);
    for (int from = 1; from <= rows; from += BATCH) {
      int to = Math.min(rows, from + BATCH - 1);
      StringBuilder sql =
          new StringBuilder("INSERT INTO ")
              .append(table(shard))
              .append(
                  " (order_id, customer_id, status, amount, currency, note, created_at, updated_at) VALUES ");
      for (int id = from; id <= to; id++) {
        sql.append(id == from ? "" : ",").append("(?,?,?,?,?,?,?,?)");
      }
      try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
        int p = 1;
        for (int id = from; id <= to; id++) {
          LocalDateTime created =
              base.plusSeconds(random.nextInt(30 * 24 * 3600))
                  .plusNanos(random.nextInt(1000) * 1_000_000L);
          ps.setLong(p++, id);
          ps.setInt(p++, random.nextInt(1, 100_000));
          ps.setString(p++, STATUSES[random.nextInt(STATUSES.length)]);
          ps.setBigDecimal(p++, BigDecimal.valueOf(random.nextLong(100, 10_000_000), 2));
          ps.setString(p++, random.nextBoolean() ? "EUR" : "USD");
          ps.setString(
              p++,
              random.nextInt(4) == 0 ? null : "gift wrap \u00e9\u6f22 #" + random.nextInt(1000));
          ps.setTimestamp(p++, Timestamp.valueOf(created));
          ps.setTimestamp(p++, Timestamp.valueOf(created));
        }
        ps.executeUpdate();
      }
      c.commit();
    }
    c.setAutoCommit(true);
  }

  /** Now, UTC, at microsecond precision: what {@code updated_at} holds for a change made now. */
  public static LocalDateTime nowUtc() {
    return LocalDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS);
  }
}
