package dev.shardberg.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.Secret;
import dev.shardberg.router.ShardRouterException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LogicalTableSpecTest {

  static final MySqlHost A =
      new MySqlHost("a", "127.0.0.1", 3306, "cdc", Secret.of("pw"), Map.of());
  static final MySqlHost B =
      new MySqlHost("b", "127.0.0.1", 3307, "cdc", Secret.of("pw"), Map.of());

  static LogicalTableSpec spec(String dbPattern, String tablePattern, Map<String, Integer> map) {
    return new LogicalTableSpec(List.of(A, B), dbPattern, tablePattern, map, List.of());
  }

  @Test
  void shardFromTablePattern() {
    LogicalTableSpec s = spec("shop", "orders_(?<shard>\\d+)", Map.of());
    assertThat(s.matches("shop", "orders_12")).isTrue();
    assertThat(s.matches("shop", "orders_12_old")).isFalse(); // anchored
    assertThat(s.matches("shopx", "orders_12")).isFalse();
    assertThat(s.shardNumber("shop", "orders_12")).contains(12);
    assertThat(s.shardNumber("shop", "orders_007")).contains(7);
  }

  @Test
  void shardFromDatabasePattern() {
    LogicalTableSpec s = spec("shop_(?<shard>\\d+)", "orders", Map.of());
    assertThat(s.matches("shop_3", "orders")).isTrue();
    assertThat(s.shardNumber("shop_3", "orders")).contains(3);
  }

  @Test
  void tableGroupWinsAndMapFillsTheGaps() {
    LogicalTableSpec s =
        spec("shop", "orders_(?<shard>\\d+)|orders_legacy", Map.of("shop.orders_legacy", 99));
    assertThat(s.shardNumber("shop", "orders_1")).contains(1);
    assertThat(s.shardNumber("shop", "orders_legacy")).contains(99);
    LogicalTableSpec noMap = spec("shop", "orders_(?<shard>\\d+)|orders_legacy", Map.of());
    assertThat(noMap.shardNumber("shop", "orders_legacy")).isEqualTo(Optional.empty());
  }

  @Test
  void explicitMapAlone() {
    LogicalTableSpec s =
        spec("shop", "orders|orders_eu", Map.of("shop.orders", 0, "shop.orders_eu", 1));
    assertThat(s.shardNumber("shop", "orders_eu")).contains(1);
  }

  @Test
  void badRegexNamesKeyAndSaysHowToEscape() {
    assertThatThrownBy(() -> spec("shop", "orders_[0-9+", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot parse tables.table-pattern 'orders_[0-9+': Unclosed character class (at index 11). It is a Java regular expression matched against the whole name; escape metacharacters such as . $ ( ) [ ] with a backslash (e.g. 'app\\.v2') or quote a literal part with \\Q...\\E");
    assertThatThrownBy(() -> spec("shop(", "orders_(?<shard>\\d+)", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("Cannot parse tables.database-pattern 'shop(': Unclosed group");
  }

  @Test
  void noShardRuleIsAConfigError() {
    assertThatThrownBy(() -> spec("shop", "orders_\\d+", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot derive shard numbers: neither tables.database-pattern 'shop' nor tables.table-pattern 'orders_\\d+' has a named group (?<shard>\\d+), and tables.shard-map is empty; add the group to one pattern (e.g. 'orders_(?<shard>\\d+)') or list every table in tables.shard-map");
  }

  @Test
  void shardMapEntriesAreChecked() {
    assertThatThrownBy(() -> spec("shop", "orders", Map.of("orders", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Cannot use tables.shard-map key 'orders': it must be 'database.table'");
    assertThatThrownBy(() -> spec("shop", "orders", Map.of("shop.orders", -1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use tables.shard-map entry 'shop.orders': shard number -1 must be an int >= 0");
  }

  @Test
  void hostNamesAreUnique() {
    assertThatThrownBy(
            () ->
                new LogicalTableSpec(
                    List.of(A, A), "shop", "orders_(?<shard>\\d+)", Map.of(), List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot define the logical table: two sources are named 'a'; give each a unique sources[].name");
  }

  @Test
  void hugeCapturedNumberIsAnError() {
    LogicalTableSpec s = spec("shop", "orders_(?<shard>\\d+)", Map.of());
    assertThatThrownBy(() -> s.shardNumber("shop", "orders_99999999999"))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot assign a shard number to table 'shop.orders_99999999999': the captured number '99999999999' is not an int >= 0; use (?<shard>\\d+) with at most 9 digits or list the table in tables.shard-map");
  }
}
