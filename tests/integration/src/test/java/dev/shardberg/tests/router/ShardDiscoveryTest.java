package dev.shardberg.tests.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.Secret;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Discovery against two real binlog MariaDB servers. Host a keeps its shards in databases ({@code
 * shop_0.orders}, {@code shop_1.orders}, {@code shop_2.orders}), host b in tables ({@code
 * shop.orders_3} … {@code shop.orders_5}); one spec covers both: database pattern {@code
 * shop(_(?<shard>\d+))?}, table pattern {@code orders(_(?<shard>\d+))?}. Every other scenario lives
 * in its own databases so the scenarios do not disturb each other.
 */
class ShardDiscoveryTest {

  static final String CDC_USER = "cdc";
  static final String CDC_PASSWORD = "cdc-Pa55";
  static final String ORDERS_DDL =
      "(id BIGINT NOT NULL, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2) NULL, created DATETIME(3) NOT NULL, PRIMARY KEY (id))";

  static EmbeddedMariaDb serverA;
  static EmbeddedMariaDb serverB;

  @BeforeAll
  static void startServers() {
    CompletableFuture<EmbeddedMariaDb> a =
        CompletableFuture.supplyAsync(() -> EmbeddedMariaDb.start("router-a", 9201));
    CompletableFuture<EmbeddedMariaDb> b =
        CompletableFuture.supplyAsync(() -> EmbeddedMariaDb.start("router-b", 9202));
    serverA = a.join();
    serverB = b.join();
    for (EmbeddedMariaDb s : List.of(serverA, serverB)) {
      s.createCdcUser(CDC_USER, CDC_PASSWORD);
    }
    // the main logical table: shards from database names on a, from table names on b
    for (int i = 0; i < 3; i++) {
      serverA.execute(
          "CREATE DATABASE shop_" + i, "CREATE TABLE shop_" + i + ".orders " + ORDERS_DDL);
    }
    serverA.execute(
        "CREATE DATABASE shop_x",
        "CREATE TABLE shop_x.customers (id INT PRIMARY KEY)"); // db matches nothing's table
    serverB.execute("CREATE DATABASE shop");
    for (int i = 3; i < 6; i++) {
      serverB.execute("CREATE TABLE shop.orders_" + i + " " + ORDERS_DDL);
    }
    serverB.execute("CREATE TABLE shop.orders_archive " + ORDERS_DDL); // does not match the pattern
    serverB.execute(
        "CREATE VIEW shop.orders_9 AS SELECT * FROM shop.orders_3"); // views are not shards
  }

  @AfterAll
  static void stopServers() {
    if (serverA != null) {
      serverA.close();
    }
    if (serverB != null) {
      serverB.close();
    }
  }

  static MySqlHost host(String name, EmbeddedMariaDb server, String user, String password) {
    return new MySqlHost(
        name, server.host(), server.port(), user, Secret.of(password), Map.of("useSSL", "false"));
  }

  static LogicalTableSpec spec(String dbPattern, String tablePattern, List<String> keyColumns) {
    return new LogicalTableSpec(
        List.of(
            host("a", serverA, CDC_USER, CDC_PASSWORD), host("b", serverB, CDC_USER, CDC_PASSWORD)),
        dbPattern,
        tablePattern,
        Map.of(),
        keyColumns);
  }

  @Test
  void findsShardsInDatabasesOnOneHostAndInTablesOnTheOther() {
    ShardPlan plan =
        ShardDiscovery.discover(
            spec("shop(_(?<shard>\\d+))?", "orders(_(?<shard>\\d+))?", List.of()));
    assertThat(plan.tablesOf("a"))
        .containsExactly(
            new ShardTable("a", "shop_0", "orders", 0),
            new ShardTable("a", "shop_1", "orders", 1),
            new ShardTable("a", "shop_2", "orders", 2));
    assertThat(plan.tablesOf("b"))
        .containsExactly(
            new ShardTable("b", "shop", "orders_3", 3),
            new ShardTable("b", "shop", "orders_4", 4),
            new ShardTable("b", "shop", "orders_5", 5));
    assertThat(plan.shardCount()).isEqualTo(6);
    assertThat(plan.allTables()).extracting(ShardTable::shard).containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(plan.schema().primaryKey()).containsExactly("id");
    assertThat(plan.schema().columns())
        .containsExactly(
            new MySqlColumn("id", "bigint", "bigint(20)", false, null, null, 19, null, false),
            new MySqlColumn(
                "customer", "varchar", "varchar(40)", false, null, 40, null, null, false),
            new MySqlColumn("amount", "decimal", "decimal(12,2)", true, "NULL", null, 12, 2, false),
            new MySqlColumn(
                "created", "datetime", "datetime(3)", false, null, null, 3, null, false));
    assertThat(plan.describe())
        .isEqualTo(
            String.join(
                System.lineSeparator(),
                "6 shard(s) on 2 host(s)",
                "  host 'a': 3 shard(s)",
                "    shard 0     shop_0.orders",
                "    shard 1     shop_1.orders",
                "    shard 2     shop_2.orders",
                "  host 'b': 3 shard(s)",
                "    shard 3     shop.orders_3",
                "    shard 4     shop.orders_4",
                "    shard 5     shop.orders_5",
                "schema (4 columns, key [id] = PRIMARY KEY (id)):",
                "  id                             bigint(20) NOT NULL",
                "  customer                       varchar(40) NOT NULL",
                "  amount                         decimal(12,2) NULL",
                "  created                        datetime(3) NOT NULL",
                ""));
  }

  @Test
  void aHostWithoutShardsIsLeftOut() {
    ShardPlan plan = ShardDiscovery.discover(spec("shop_(?<shard>\\d+)", "orders", List.of()));
    assertThat(plan.tablesByHost()).containsOnlyKeys("a");
    assertThat(plan.tablesOf("b")).isEmpty();
    assertThat(plan.shardCount()).isEqualTo(3);
  }

  @Test
  void noTableAnywhere() {
    assertThatThrownBy(
            () -> ShardDiscovery.discover(spec("nothing_(?<shard>\\d+)", "orders", List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot find any table matching tables.database-pattern 'nothing_(?<shard>\\d+)' and tables.table-pattern 'orders' on host(s) [a, b]; the patterns are anchored Java regexes matched against whole names (check them, the case of the names and the user's privileges)");
  }

  @Test
  void duplicateShardNumberNamesBothTablesWithHost() {
    serverA.execute("CREATE DATABASE dup_1", "CREATE TABLE dup_1.orders " + ORDERS_DDL);
    serverB.execute(
        "CREATE DATABASE dup",
        "CREATE TABLE dup.orders_1 " + ORDERS_DDL,
        "CREATE TABLE dup.orders_2 " + ORDERS_DDL);
    assertThatThrownBy(
            () ->
                ShardDiscovery.discover(
                    spec("dup(_(?<shard>\\d+))?", "orders(_(?<shard>\\d+))?", List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot assign shard numbers: shard number 1 is taken by 'dup_1.orders' on host 'a' and 'dup.orders_1' on host 'b'; every shard table needs its own number (fix the patterns or tables.shard-map)");
  }

  /**
   * What a capture asks another host ({@code tables.new-shards: capture}): its tables that take one
   * number, however the number is written; a table whose number is not an int is left out, not a
   * failure of the question.
   */
  @Test
  void tablesNumberedListsAHostsTablesOfOneNumber() {
    serverB.execute(
        "CREATE DATABASE numbered",
        "CREATE TABLE numbered.orders_4 " + ORDERS_DDL,
        "CREATE TABLE numbered.orders_004 " + ORDERS_DDL,
        "CREATE TABLE numbered.orders_5 " + ORDERS_DDL,
        "CREATE TABLE numbered.orders_99999999999 " + ORDERS_DDL);
    LogicalTableSpec spec = spec("numbered", "orders_(?<shard>\\d+)", List.of());
    MySqlHost b = host("b", serverB, CDC_USER, CDC_PASSWORD);
    assertThat(ShardDiscovery.tablesNumbered(b, spec, 4, 5_000))
        .containsExactlyInAnyOrder("numbered.orders_4", "numbered.orders_004");
    assertThat(ShardDiscovery.tablesNumbered(b, spec, 6, 5_000)).isEmpty();
    assertThatThrownBy(
            () ->
                ShardDiscovery.tablesNumbered(
                    host("b", serverB, CDC_USER, "wrong-password"), spec, 4, 5_000))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageStartingWith("Cannot list the shard tables of MySQL host 'b' as user 'cdc'")
        .hasMessageNotContaining("wrong-password");
  }

  @Test
  void matchedTableWithoutNumber() {
    serverB.execute(
        "CREATE DATABASE nonum",
        "CREATE TABLE nonum.orders " + ORDERS_DDL,
        "CREATE TABLE nonum.orders_7 " + ORDERS_DDL);
    assertThatThrownBy(
            () -> ShardDiscovery.discover(spec("nonum", "orders(_(?<shard>\\d+))?", List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot assign a shard number to 1 matched table(s): 'nonum.orders' on host 'b'; the named group (?<shard>\\d+) captured nothing and tables.shard-map has no entry for them. Add them to tables.shard-map (key 'database.table') or tighten tables.database-pattern / tables.table-pattern to leave them out");
  }

  @Test
  void explicitShardMapNumbersTablesWithoutGroup() {
    serverA.execute(
        "CREATE DATABASE mapped",
        "CREATE TABLE mapped.orders_eu " + ORDERS_DDL,
        "CREATE TABLE mapped.orders_us " + ORDERS_DDL);
    LogicalTableSpec s =
        new LogicalTableSpec(
            List.of(host("a", serverA, CDC_USER, CDC_PASSWORD)),
            "mapped",
            "orders_(eu|us)",
            Map.of("mapped.orders_eu", 10, "mapped.orders_us", 20),
            List.of());
    ShardPlan plan = ShardDiscovery.discover(s);
    assertThat(plan.tablesOf("a"))
        .containsExactly(
            new ShardTable("a", "mapped", "orders_eu", 10),
            new ShardTable("a", "mapped", "orders_us", 20));
  }

  @Test
  void schemasThatDifferAreListedShardByShard() {
    serverA.execute(
        "CREATE DATABASE diff_0",
        "CREATE TABLE diff_0.orders " + ORDERS_DDL,
        "CREATE DATABASE diff_1",
        "CREATE TABLE diff_1.orders " + ORDERS_DDL,
        "CREATE DATABASE diff_2",
        "CREATE TABLE diff_2.orders (id BIGINT NOT NULL, customer VARCHAR(80) NOT NULL, amount DECIMAL(12,2) NULL, created DATETIME(3) NOT NULL, PRIMARY KEY (id))");
    serverB.execute(
        "CREATE DATABASE diff",
        "CREATE TABLE diff.orders_3 " + ORDERS_DDL,
        "CREATE TABLE diff.orders_4 (id BIGINT NOT NULL, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2) NULL, PRIMARY KEY (id, customer))");
    assertThatThrownBy(
            () ->
                ShardDiscovery.discover(
                    spec("diff(_(?<shard>\\d+))?", "orders(_(?<shard>\\d+))?", List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            String.join(
                System.lineSeparator(),
                "Cannot use the shards as one table: 2 of 5 shard(s) differ from the schema of the majority (3 shard(s), e.g. shard 0 'diff_0.orders' on host 'a'):",
                "  - shard 2 ('diff_2.orders' on host 'a'): column 'customer': expected varchar(40) NOT NULL, found varchar(80) NOT NULL",
                "  - shard 4 ('diff.orders_4' on host 'b'): column #4: expected 'created' datetime(3) NOT NULL, found (none)",
                "  - shard 4 ('diff.orders_4' on host 'b'): primary key: expected [id], found [id, customer]",
                "Make every shard's table identical (same columns in the same order, types, nullability and primary key), then start again."));
  }

  @Test
  void tableWithoutPrimaryKeyNeedsKeyColumnsThatAreAUniqueNotNullIndex() {
    serverA.execute(
        "CREATE DATABASE nopk_0",
        "CREATE TABLE nopk_0.orders (id BIGINT NOT NULL, code INT NULL, note TEXT, KEY ix_id (id), UNIQUE KEY uq_code (code))");
    assertThatThrownBy(
            () -> ShardDiscovery.discover(spec("nopk_(?<shard>\\d+)", "orders", List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot use table 'nopk_0.orders' on host 'a' as an upsert source: it has no primary key; add a primary key to every shard or name the columns of a UNIQUE index whose columns are all NOT NULL in tables.key-columns (the table has no such index)");
    assertThatThrownBy(
            () -> ShardDiscovery.discover(spec("nopk_(?<shard>\\d+)", "orders", List.of("id"))))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            String.join(
                System.lineSeparator(),
                "Cannot use tables.key-columns [id] as the row key: on 1 of 1 shard(s) no PRIMARY KEY or UNIQUE index has exactly these columns, all NOT NULL, so two different rows could share one key and be merged into one:",
                "  - shard 0 (nopk_0.orders on host a): key-columns (id) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: INDEX ix_id(id), UNIQUE uq_code(code)",
                "Name the columns of the primary key or of such a UNIQUE index in tables.key-columns, or add the index on every shard."));
    serverA.execute("ALTER TABLE nopk_0.orders ADD UNIQUE KEY uq_id (id)");
    ShardPlan plan = ShardDiscovery.discover(spec("nopk_(?<shard>\\d+)", "orders", List.of("id")));
    assertThat(plan.schema().primaryKey()).containsExactly("id");
    assertThat(plan.schema().keyIndex()).isEqualTo("UNIQUE INDEX uq_id (id)");
    assertThat(plan.schema().tablePrimaryKey()).isEmpty();
  }

  @Test
  void aCompositeKeyIsSampledForTheBucketColumn() {
    serverA.execute(
        "CREATE DATABASE sampled_0",
        "CREATE TABLE sampled_0.entries (tenant_id INT NOT NULL, entry_id BIGINT NOT NULL, PRIMARY KEY (tenant_id, entry_id))");
    serverB.execute(
        "CREATE DATABASE sampled_1",
        "CREATE TABLE sampled_1.entries (tenant_id INT NOT NULL, entry_id BIGINT NOT NULL, PRIMARY KEY (tenant_id, entry_id))");
    for (int e = 0; e < 40; e++) {
      serverA.execute("INSERT INTO sampled_0.entries VALUES (" + (e % 4) + ", " + e + ")");
      serverB.execute("INSERT INTO sampled_1.entries VALUES (" + (e % 2) + ", " + e + ")");
    }
    ShardPlan plan = ShardDiscovery.discover(spec("sampled_(?<shard>\\d+)", "entries", List.of()));
    assertThat(plan.schema().keySample())
        .containsExactly(Map.entry("tenant_id", 6L), Map.entry("entry_id", 80L));
    assertThat(plan.schema().defaultBucketColumn()).isEqualTo("entry_id");
  }

  @Test
  void wrongPasswordNamesHostAndUserButNotThePassword() {
    LogicalTableSpec s =
        new LogicalTableSpec(
            List.of(host("a", serverA, CDC_USER, "Wr0ng-secret")),
            "shop_(?<shard>\\d+)",
            "orders",
            Map.of(),
            List.of());
    assertThatThrownBy(() -> ShardDiscovery.discover(s))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot connect to MySQL host 'a' (127.0.0.1:"
                + serverA.port()
                + ") as user 'cdc': access denied; check sources[].user and the password (from inline value)")
        .message()
        .doesNotContain("Wr0ng-secret");
  }

  @Test
  void unreachableHostNamesHostAndUser() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    LogicalTableSpec s =
        new LogicalTableSpec(
            List.of(
                new MySqlHost(
                    "gone", "127.0.0.1", closedPort, "cdc", Secret.of("Secret-123"), Map.of())),
            "shop_(?<shard>\\d+)",
            "orders",
            Map.of(),
            List.of());
    assertThatThrownBy(() -> ShardDiscovery.discover(s))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot connect to MySQL host 'gone' (127.0.0.1:"
                + closedPort
                + ") as user 'cdc': Communications link failure; check sources[].host and sources[].port and that the server is reachable")
        .message()
        .doesNotContain("Secret-123");
  }

  @Test
  void missingPrivilegesAreListedWithTheGrantToRun() {
    serverB.execute(
        "CREATE USER 'reader'@'%' IDENTIFIED BY 'reader-pw'",
        "GRANT SELECT, SHOW DATABASES ON *.* TO 'reader'@'%'");
    LogicalTableSpec s =
        new LogicalTableSpec(
            List.of(host("b", serverB, "reader", "reader-pw")),
            "shop",
            "orders_(?<shard>\\d+)",
            Map.of(),
            List.of());
    assertThatThrownBy(() -> ShardDiscovery.discover(s))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            String.join(
                System.lineSeparator(),
                "Cannot capture changes: 1 problem(s) on the MySQL host(s):",
                "  - host 'b' (127.0.0.1:"
                    + serverB.port()
                    + "): user 'reader'@'%' lacks privilege(s) RELOAD, REPLICATION SLAVE, REPLICATION CLIENT needed by the binlog reader; run GRANT RELOAD, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'reader'@'%'"));
  }

  @Test
  void binlogFormatAndRowImageNameTheServerVariable() {
    serverB.execute(
        "SET GLOBAL binlog_format = 'MIXED'", "SET GLOBAL binlog_row_image = 'MINIMAL'");
    try {
      assertThatThrownBy(
              () ->
                  ShardDiscovery.discover(
                      spec("shop(_(?<shard>\\d+))?", "orders(_(?<shard>\\d+))?", List.of())))
          .isInstanceOf(ShardRouterException.class)
          .hasMessage(
              String.join(
                  System.lineSeparator(),
                  "Cannot capture changes: 2 problem(s) on the MySQL host(s):",
                  "  - host 'b' (127.0.0.1:"
                      + serverB.port()
                      + "): binlog_format is MIXED; set the server variable binlog_format=ROW (SET GLOBAL binlog_format = 'ROW' and in the server config)",
                  "  - host 'b' (127.0.0.1:"
                      + serverB.port()
                      + "): binlog_row_image is MINIMAL; set the server variable binlog_row_image=FULL (SET GLOBAL binlog_row_image = 'FULL' and in the server config)"));
    } finally {
      serverB.execute("SET GLOBAL binlog_format = 'ROW'", "SET GLOBAL binlog_row_image = 'FULL'");
    }
  }
}
