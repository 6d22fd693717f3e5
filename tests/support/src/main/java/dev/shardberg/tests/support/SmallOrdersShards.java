package dev.shardberg.tests.support;

import java.util.ArrayList;
import java.util.List;

/**
 * The small orders table the schema suites change under a running job: shards {@code <db>.orders_0
 * .. orders_<n-1>} on one embedded MariaDB server, each {@code (id BIGINT NOT NULL PRIMARY KEY, qty
 * INT NOT NULL, note VARCHAR(20) NULL)}. Each suite fills them and keeps the rows it expects
 * itself.
 */
public final class SmallOrdersShards {
  /** The columns of every shard, as written after {@code CREATE TABLE <name>}. */
  public static final String COLUMNS =
      "(id BIGINT NOT NULL PRIMARY KEY, qty INT NOT NULL, note VARCHAR(20) NULL)";

  private SmallOrdersShards() {}

  /** {@code <db>.orders_<shard>}. */
  public static String table(String db, int shard) {
    return db + ".orders_" + shard;
  }

  /** The {@code CREATE TABLE} statement of one shard. */
  public static String createTable(String db, int shard) {
    return "CREATE TABLE " + table(db, shard) + " " + COLUMNS;
  }

  /** Creates database {@code db} and its {@code shards} shards, empty. */
  public static void create(EmbeddedMariaDb server, String db, int shards) {
    List<String> sql = new ArrayList<>();
    sql.add("CREATE DATABASE " + db);
    for (int s = 0; s < shards; s++) {
      sql.add(createTable(db, s));
    }
    server.execute(sql.toArray(String[]::new));
  }
}
