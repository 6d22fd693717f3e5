package dev.shardberg.tests.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A real Spark (local, one core, Iceberg's Spark runtime) reading a table through an Iceberg
 * catalog named {@code t}: a second engine on the table the job wrote.
 */
public final class SparkReader {
  private SparkReader() {}

  /**
   * The rows of {@code select} (which names tables as {@code t.<namespace>.<table>}), each through
   * {@code render}, sorted.
   *
   * @param catalogProperties Iceberg's catalog properties ({@code type}, {@code uri}, {@code
   *     warehouse}, {@code io-impl}, {@code s3.*}, …), each set as {@code
   *     spark.sql.catalog.t.<key>}
   */
  public static List<String> rows(
      Map<String, String> catalogProperties, String select, Function<Row, String> render) {
    SparkSession.Builder builder =
        SparkSession.builder()
            .master("local[1]")
            .appName("shardberg-read")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.catalog.t", "org.apache.iceberg.spark.SparkCatalog");
    catalogProperties.forEach((key, value) -> builder.config("spark.sql.catalog.t." + key, value));
    SparkSession spark = builder.getOrCreate();
    try {
      List<String> rows = new ArrayList<>();
      for (Row r : spark.sql(select).collectAsList()) {
        rows.add(render.apply(r));
      }
      rows.sort(null);
      return rows;
    } finally {
      spark.stop();
    }
  }

  /**
   * {@code shard|order_id|status|amount} of {@code <db>.orders} in the Hadoop catalog at {@code
   * warehouse}, as Spark reads them, sorted: the rows {@code OrdersShards.rows} gives for MySQL.
   */
  public static List<String> orders(java.net.URI warehouse, String db) {
    return rows(
        Map.of("type", "hadoop", "warehouse", warehouse.toString()),
        "SELECT shard_number, order_id, status, amount FROM t." + db + ".orders",
        r ->
            r.getInt(0)
                + "|"
                + r.getLong(1)
                + "|"
                + r.getString(2)
                + "|"
                + r.getDecimal(3).toPlainString());
  }
}
