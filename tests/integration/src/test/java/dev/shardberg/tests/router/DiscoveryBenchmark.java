package dev.shardberg.tests.router;

import dev.shardberg.router.Secret;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Not a test: measures discovery over 2 hosts x 64 shards (host a: 64 tables in one database, host
 * b: 64 databases). Run with tests/integration's test classpath: {@code java -cp <classpath>
 * dev.shardberg.tests.router.DiscoveryBenchmark}.
 */
public final class DiscoveryBenchmark {
  private DiscoveryBenchmark() {}

  public static void main(String[] args) {
    String ddl =
        "(id BIGINT NOT NULL PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2), created DATETIME(3) NOT NULL, note TEXT)";
    try (EmbeddedMariaDb a = EmbeddedMariaDb.start("bench-a", 9401);
        EmbeddedMariaDb b = EmbeddedMariaDb.start("bench-b", 9402)) {
      a.createCdcUser("cdc", "pw");
      b.createCdcUser("cdc", "pw");
      List<String> sa = new ArrayList<>(List.of("CREATE DATABASE shop"));
      List<String> sb = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        sa.add("CREATE TABLE shop.orders_" + i + " " + ddl);
        sb.add("CREATE DATABASE shop_" + (64 + i));
        sb.add("CREATE TABLE shop_" + (64 + i) + ".orders " + ddl);
      }
      a.execute(sa.toArray(String[]::new));
      b.execute(sb.toArray(String[]::new));
      MySqlHost ha =
          new MySqlHost("a", a.host(), a.port(), "cdc", Secret.of("pw"), Map.of("useSSL", "false"));
      MySqlHost hb =
          new MySqlHost("b", b.host(), b.port(), "cdc", Secret.of("pw"), Map.of("useSSL", "false"));
      LogicalTableSpec both =
          new LogicalTableSpec(
              List.of(ha, hb),
              "shop(_(?<shard>\\d+))?",
              "orders(_(?<shard>\\d+))?",
              Map.of(),
              List.of());
      LogicalTableSpec onlyA =
          new LogicalTableSpec(List.of(ha), "shop", "orders_(?<shard>\\d+)", Map.of(), List.of());
      LogicalTableSpec onlyB =
          new LogicalTableSpec(List.of(hb), "shop_(?<shard>\\d+)", "orders", Map.of(), List.of());
      ShardPlan plan = ShardDiscovery.discover(both); // warm-up (driver, class loading)
      if (plan.shardCount() != 128) {
        throw new IllegalStateException("expected 128 shards, got " + plan.shardCount());
      }
      int runs = 20;
      long t0 = System.nanoTime();
      for (int i = 0; i < runs; i++) {
        ShardDiscovery.discover(both);
      }
      double bothMs = (System.nanoTime() - t0) / 1e6 / runs;
      t0 = System.nanoTime();
      for (int i = 0; i < runs; i++) {
        ShardDiscovery.discover(onlyA);
      }
      double aMs = (System.nanoTime() - t0) / 1e6 / runs;
      t0 = System.nanoTime();
      for (int i = 0; i < runs; i++) {
        ShardDiscovery.discover(onlyB);
      }
      double bMs = (System.nanoTime() - t0) / 1e6 / runs;
      System.out.printf(
          "discovery 2 hosts x 64 shards: %.1f ms total (mean of %d); host a alone (64 tables, 1 db): %.1f ms; host b alone (64 dbs): %.1f ms%n",
          bothMs, runs, aMs, bMs);
    }
  }
}
