package dev.shardberg.router.types;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.router.types.ExactSnapshotDriver.Column;
import dev.shardberg.router.types.ExactSnapshotDriver.Scan;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The SQL rewrite of {@link ExactSnapshotDriver} as pure logic; TypeRoundTripTest runs it against
 * MariaDB.
 */
class ExactSnapshotDriverTest {

  private static final List<Column> WITH_FLOAT =
      List.of(
          new Column("id", "int"),
          new Column("price", "float"),
          new Column("d", "double"),
          new Column("name", "varchar"));

  private static String rewrite(String sql, List<Column> columns) {
    Scan scan = ExactSnapshotDriver.scannedTable(sql).orElseThrow();
    return ExactSnapshotDriver.rewrite(scan, sql, columns);
  }

  @Test
  void chunkScanOfATableWithFloatListsTheColumnsWithFloatAsExactDouble() {
    assertThat(
            rewrite(
                "SELECT * FROM `shop`.`orders_0` WHERE `id` >= ? AND NOT (`id` = ?) AND `id` <= ?",
                WITH_FLOAT))
        .isEqualTo(
            "SELECT `id`, (`price` * 1E0) AS `price`, `d`, `name` FROM `shop`.`orders_0`"
                + " WHERE `id` >= ? AND NOT (`id` = ?) AND `id` <= ?");
    // the whole table (one split), and FLOAT in any case as information_schema may spell it
    assertThat(
            rewrite(
                "SELECT * FROM `shop`.`orders_0`",
                List.of(new Column("id", "int"), new Column("f", "FLOAT"))))
        .isEqualTo("SELECT `id`, (`f` * 1E0) AS `f` FROM `shop`.`orders_0`");
  }

  @Test
  void chunkScanOfATableWithTimeListsTheColumnsWithTimeAsTheTextTimeConverterReads() {
    List<Column> columns =
        List.of(
            new Column("id", "int"),
            new Column("t", "time"),
            new Column("f", "float"),
            new Column("d", "datetime"));
    assertThat(rewrite("SELECT * FROM `shop`.`orders_0` WHERE `id` <= ?", columns))
        .isEqualTo(
            "SELECT `id`, CONCAT(IF(`t` < 0, 1000, 0) + HOUR(`t`), ':', MINUTE(`t`), ':', SECOND(`t`), '.',"
                + " LPAD(MICROSECOND(`t`), 6, '0')) AS `t`, (`f` * 1E0) AS `f`, `d` FROM `shop`.`orders_0` WHERE `id` <= ?");
    // a table with TIME and no FLOAT is rewritten too; TIME in any case as information_schema may
    // spell it
    assertThat(
            rewrite(
                "SELECT * FROM `shop`.`orders_0`",
                List.of(new Column("id", "int"), new Column("t`", "TIME"))))
        .isEqualTo(
            "SELECT `id`, "
                + TimeConverter.snapshotSelect("`t```")
                + " AS `t``` FROM `shop`.`orders_0`");
  }

  @Test
  void identifiersWithBackticksAndDotsAreParsedAndQuoted() {
    String sql = "SELECT * FROM `my``db`.`t.1` WHERE `a``b` <= ?";
    Scan scan = ExactSnapshotDriver.scannedTable(sql).orElseThrow();
    assertThat(scan.database()).isEqualTo("my`db");
    assertThat(scan.table()).isEqualTo("t.1");
    assertThat(
            ExactSnapshotDriver.rewrite(
                scan, sql, List.of(new Column("a`b", "int"), new Column("f`", "float"))))
        .isEqualTo("SELECT `a``b`, (`f``` * 1E0) AS `f``` FROM `my``db`.`t.1` WHERE `a``b` <= ?");
  }

  @Test
  void tableWithoutFloatAndTimeOrWithoutVisibleColumnsIsLeftAlone() {
    String sql = "SELECT * FROM `shop`.`orders_0` WHERE `id` <= ?";
    assertThat(
            rewrite(
                sql,
                List.of(
                    new Column("id", "int"),
                    new Column("d", "double"),
                    new Column("x", "decimal"),
                    new Column("ts", "timestamp"))))
        .isSameAs(sql);
    assertThat(rewrite(sql, List.of())).isSameAs(sql);
  }

  @Test
  void everyOtherStatementIsNotAScan() {
    for (String sql :
        List.of(
            "SELECT MIN(`id`), MAX(`id`) FROM `shop`.`orders_0`",
            "SELECT MAX(`id`) FROM (SELECT `id` FROM `shop`.`orders_0` WHERE `id` >= ? ORDER BY `id` ASC LIMIT 8096) AS T",
            "SHOW TABLE STATUS LIKE 'orders_0';",
            "SHOW MASTER STATUS",
            "SELECT * FROM information_schema.COLUMNS",
            "SELECT * FROM `shop`",
            "SELECT * FROM `shop`.orders_0",
            "SELECT * FROM `shop`.`orders_0`, `shop`.`x`",
            "SELECT * FROM `shop`.`orders_0",
            "select * from `shop`.`orders_0`",
            "SELECT `id` FROM `shop`.`orders_0`")) {
      assertThat(ExactSnapshotDriver.scannedTable(sql)).as(sql).isEmpty();
    }
    assertThat(ExactSnapshotDriver.scannedTable(null)).isEmpty();
  }

  @Test
  void acceptsMySqlUrlsOnlyAndLeavesOthersToTheirDrivers() throws SQLException {
    ExactSnapshotDriver driver = new ExactSnapshotDriver();
    assertThat(driver.acceptsURL("jdbc:mysql://db-a:3306/?useSSL=false")).isTrue();
    assertThat(driver.acceptsURL("jdbc:postgresql://db-a/x")).isFalse();
    assertThat(driver.acceptsURL(null)).isFalse();
    assertThat(driver.connect("jdbc:postgresql://db-a/x", new Properties())).isNull();
  }
}
