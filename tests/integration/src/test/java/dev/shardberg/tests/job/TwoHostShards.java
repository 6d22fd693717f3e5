package dev.shardberg.tests.job;

import dev.shardberg.tests.support.EmbeddedMariaDb;
import dev.shardberg.tests.support.OrdersShards;
import dev.shardberg.tests.support.TestConfig;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Eight shards of an orders table on two real MariaDB servers, and the expected content of the
 * Iceberg table kept alongside every change:
 *
 * <ul>
 *   <li>host A: database {@code shop}, tables {@code orders_0 .. orders_3} — shard number from the
 *       table name;
 *   <li>host B: databases {@code shop_4 .. shop_7}, one table {@code orders} each — shard number
 *       from the database name.
 * </ul>
 *
 * One config covers both with {@code database-pattern: shop|shop_(?<shard>\d+)} and {@code
 * table-pattern: orders|orders_(?<shard>\d+)}: the router takes the table's group first, else the
 * database's.
 */
final class TwoHostShards implements AutoCloseable {
  static final String DATABASE_PATTERN = "shop|shop_(?<shard>\\d+)";
  static final String TABLE_PATTERN = "orders|orders_(?<shard>\\d+)";
  static final String USER = "shardberg_cdc";
  static final String PASSWORD = "cdc-pw-\u00e9";

  final EmbeddedMariaDb a;
  final EmbeddedMariaDb b;
  final Path passwordFile;
  private final Map<Integer, TreeMap<Long, Row>> expected = new TreeMap<>();
  private final Map<Integer, Long> nextId = new TreeMap<>();

  record Row(
      long orderId,
      int customerId,
      String status,
      BigDecimal amount,
      String note,
      LocalDateTime createdAt) {}

  TwoHostShards(Path dir) throws Exception {
    CompletableFuture<EmbeddedMariaDb> startB =
        CompletableFuture.supplyAsync(() -> EmbeddedMariaDb.start("e2e-b", 12));
    EmbeddedMariaDb startedA;
    try {
      startedA = EmbeddedMariaDb.start("e2e-a", 11);
    } finally {
      this.b = startB.join();
    }
    this.a = startedA;
    a.execute("CREATE DATABASE shop");
    List<String> ddlA = new ArrayList<>();
    for (int s = 0; s < 4; s++) {
      ddlA.add(OrdersShards.ddl("shop.orders_" + s));
    }
    a.execute(ddlA.toArray(String[]::new));
    List<String> ddlB = new ArrayList<>();
    for (int s = 4; s < 8; s++) {
      ddlB.add("CREATE DATABASE shop_" + s);
      ddlB.add(OrdersShards.ddl("shop_" + s + ".orders"));
    }
    b.execute(ddlB.toArray(String[]::new));
    a.createCdcUser(USER, PASSWORD);
    b.createCdcUser(USER, PASSWORD);
    passwordFile = Files.writeString(dir.resolve("cdc.password"), PASSWORD + "\n");
    for (int s = 0; s < 8; s++) {
      expected.put(s, new TreeMap<>());
      nextId.put(s, 1L);
    }
  }

  EmbeddedMariaDb hostOf(int shard) {
    return shard < 4 ? a : b;
  }

  static String tableOf(int shard) {
    return shard < 4 ? "shop.orders_" + shard : "shop_" + shard + ".orders";
  }

  /** The sources and tables of a config for these shards: {@code config.with(shards::sources)}. */
  void sources(TestConfig config) {
    config
        .source(source(a, "5500-5503"))
        .source(source(b, "5504-5507"))
        .tables(DATABASE_PATTERN, TABLE_PATTERN);
  }

  private TestConfig.Source source(EmbeddedMariaDb host, String serverIds) {
    return new TestConfig.Source(host.name(), host.host(), host.port())
        .user(USER)
        .passwordFile(passwordFile)
        .serverIds(serverIds)
        .withoutTls();
  }

  // ---- changes, applied to MySQL and to the expected table together
  // --------------------------------

  void insert(int shard, int count) throws SQLException {
    try (Connection c = hostOf(shard).connect(null);
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + tableOf(shard)
                    + " (order_id, customer_id, status, amount, currency, note, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)")) {
      for (int i = 0; i < count; i++) {
        long id = nextId.merge(shard, 1L, Long::sum) - 1;
        Row row =
            new Row(
                id,
                shard * 1000 + (int) id,
                "NEW",
                new BigDecimal(id + "." + String.format("%02d", id % 100)),
                id % 3 == 0 ? null : "note \u6f22 " + shard + "/" + id,
                LocalDateTime.of(2026, 1, 1, 0, 0).plusMinutes(id).plusNanos(123_000_000));
        ps.setLong(1, row.orderId());
        ps.setInt(2, row.customerId());
        ps.setString(3, row.status());
        ps.setBigDecimal(4, row.amount());
        ps.setString(5, "EUR");
        ps.setString(6, row.note());
        ps.setTimestamp(7, Timestamp.valueOf(row.createdAt()));
        ps.setTimestamp(8, Timestamp.valueOf(row.createdAt()));
        ps.executeUpdate();
        expected.get(shard).put(id, row);
      }
    }
  }

  void update(int shard, long id, String status, String note) {
    hostOf(shard)
        .execute(
            "UPDATE "
                + tableOf(shard)
                + " SET status = '"
                + status
                + "', note = "
                + (note == null ? "NULL" : "'" + note + "'")
                + " WHERE order_id = "
                + id);
    expected
        .get(shard)
        .computeIfPresent(
            id,
            (k, r) ->
                new Row(r.orderId(), r.customerId(), status, r.amount(), note, r.createdAt()));
  }

  void delete(int shard, long id) {
    hostOf(shard).execute("DELETE FROM " + tableOf(shard) + " WHERE order_id = " + id);
    expected.get(shard).remove(id);
  }

  /**
   * A mixed round on every shard: inserts, updates (one key twice), deletes, an insert deleted
   * again.
   */
  void changeRound(int round) throws SQLException {
    for (int s = 0; s < 8; s++) {
      List<Long> ids = new ArrayList<>(expected.get(s).keySet());
      insert(s, 3);
      update(s, ids.get(round % ids.size()), "PAID", "round " + round);
      update(s, ids.get(round % ids.size()), "SHIPPED", null);
      update(s, ids.get((round + 5) % ids.size()), "CANCELLED", "r" + round + " \u00e9");
      delete(s, ids.get((round + 7) % ids.size()));
      long last = nextId.get(s) - 1;
      delete(s, last); // inserted in this round, deleted again
    }
  }

  /** Expected rows, rendered as {@code shard|id|customer|status|amount|note|created_at}, sorted. */
  List<String> expectedRows() {
    List<String> rows = new ArrayList<>();
    expected.forEach(
        (shard, byId) ->
            byId.values()
                .forEach(
                    r ->
                        rows.add(
                            render(
                                shard,
                                r.orderId(),
                                r.customerId(),
                                r.status(),
                                r.amount(),
                                r.note(),
                                r.createdAt()))));
    rows.sort(null);
    return rows;
  }

  long expectedCount() {
    return expected.values().stream().mapToLong(Map::size).sum();
  }

  /**
   * The table read with Iceberg's generic reader (deletes applied), rendered like {@link
   * #expectedRows()}.
   */
  static List<String> actualRows(Table table) throws Exception {
    table.refresh();
    List<String> rows = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return rows;
    }
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(
            render(
                (Integer) r.getField("shard_number"),
                (Long) r.getField("order_id"),
                (Integer) r.getField("customer_id"),
                (String) r.getField("status"),
                (BigDecimal) r.getField("amount"),
                (String) r.getField("note"),
                (LocalDateTime) r.getField("created_at")));
      }
    }
    rows.sort(null);
    return rows;
  }

  /**
   * The table {@code namespace.name} of a Hadoop-catalog {@code warehouse} as a real Spark
   * (Iceberg's Spark runtime) reads it, rendered like {@link #expectedRows}.
   */
  static List<String> sparkRows(java.net.URI warehouse, String namespace, String name) {
    return sparkRows(Map.of("type", "hadoop", "warehouse", warehouse.toString()), namespace, name);
  }

  /**
   * The table {@code namespace.name} as a real Spark (Iceberg's Spark runtime) reads it through an
   * Iceberg catalog of {@code catalogProperties} (Iceberg's catalog properties: {@code type},
   * {@code uri}, {@code warehouse}, {@code io-impl}, {@code s3.*}, …, each set as {@code
   * spark.sql.catalog.<name>.<key>}), rendered like {@link #expectedRows}.
   */
  static List<String> sparkRows(
      Map<String, String> catalogProperties, String namespace, String name) {
    return SparkReader.rows(
        catalogProperties,
        "SELECT shard_number, order_id, customer_id, status, amount, note, created_at FROM t."
            + namespace
            + "."
            + name,
        r ->
            render(
                r.getInt(0),
                r.getLong(1),
                r.getInt(2),
                r.getString(3),
                r.getDecimal(4),
                r.getString(5),
                r.getAs(6)));
  }

  static String render(
      int shard,
      long id,
      int customer,
      String status,
      BigDecimal amount,
      String note,
      LocalDateTime createdAt) {
    return shard
        + "|"
        + id
        + "|"
        + customer
        + "|"
        + status
        + "|"
        + amount.toPlainString()
        + "|"
        + note
        + "|"
        + createdAt;
  }

  @Override
  public void close() {
    a.close();
    b.close();
  }
}
