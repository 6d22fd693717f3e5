package dev.shardberg.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShardAssignmentTest {

  private static Map<String, List<FoundTable>> found(List<FoundTable> a, List<FoundTable> b) {
    Map<String, List<FoundTable>> m = new LinkedHashMap<>();
    m.put("a", a);
    m.put("b", b);
    return m;
  }

  @Test
  void assignsNumbersAcrossHostsAndSkipsEmptyHosts() {
    LogicalTableSpec spec =
        LogicalTableSpecTest.spec("shop_\\d+", "orders_(?<shard>\\d+)", Map.of());
    Map<String, List<ShardTable>> plan =
        ShardNumbering.assign(
            spec,
            found(
                List.of(
                    new FoundTable("a", "shop_1", "orders_2"),
                    new FoundTable("a", "shop_1", "orders_0")),
                List.of()));
    assertThat(plan).containsOnlyKeys("a");
    assertThat(plan.get("a"))
        .containsExactly(
            new ShardTable("a", "shop_1", "orders_2", 2),
            new ShardTable("a", "shop_1", "orders_0", 0));
  }

  @Test
  void duplicateNumbersNameBothTablesWithHost() {
    LogicalTableSpec spec =
        LogicalTableSpecTest.spec("shop_\\d+", "orders_(?<shard>\\d+)", Map.of());
    assertThatThrownBy(
            () ->
                ShardNumbering.assign(
                    spec,
                    found(
                        List.of(
                            new FoundTable("a", "shop_1", "orders_3"),
                            new FoundTable("a", "shop_1", "orders_4")),
                        List.of(
                            new FoundTable("b", "shop_2", "orders_03"),
                            new FoundTable("b", "shop_2", "orders_4")))))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot assign shard numbers: shard number 3 is taken by 'shop_1.orders_3' on host 'a' and 'shop_2.orders_03' on host 'b'; shard number 4 is taken by 'shop_1.orders_4' on host 'a' and 'shop_2.orders_4' on host 'b'; every shard table needs its own number (fix the patterns or tables.shard-map)");
  }

  @Test
  void matchedTableWithoutNumberIsNamed() {
    LogicalTableSpec spec =
        LogicalTableSpecTest.spec("shop", "orders_(?<shard>\\d+)|orders_x", Map.of());
    assertThatThrownBy(
            () ->
                ShardNumbering.assign(
                    spec, found(List.of(new FoundTable("a", "shop", "orders_x")), List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot assign a shard number to 1 matched table(s): 'shop.orders_x' on host 'a'; the named group (?<shard>\\d+) captured nothing and tables.shard-map has no entry for them. Add them to tables.shard-map (key 'database.table') or tighten tables.database-pattern / tables.table-pattern to leave them out");
  }

  @Test
  void noTableAnywhereIsAnError() {
    LogicalTableSpec spec = LogicalTableSpecTest.spec("shop", "orders_(?<shard>\\d+)", Map.of());
    assertThatThrownBy(() -> ShardNumbering.assign(spec, found(List.of(), List.of())))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot find any table matching tables.database-pattern 'shop' and tables.table-pattern 'orders_(?<shard>\\d+)' on host(s) [a, b]; the patterns are anchored Java regexes matched against whole names (check them, the case of the names and the user's privileges)");
  }
}
