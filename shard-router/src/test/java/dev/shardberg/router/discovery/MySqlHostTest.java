package dev.shardberg.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.Secret;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MySqlHostTest {

  @Test
  void everyHostReadsTinyIntOneAndYearAsNumbers() {
    MySqlHost host = new MySqlHost("a", "db.example", 3306, "cdc", Secret.of("pw"), Map.of());
    assertThat(host.jdbcProperties())
        .containsExactly(Map.entry("tinyInt1isBit", "false"), Map.entry("yearIsDateType", "false"));
    assertThat(host.jdbcUrl())
        .isEqualTo("jdbc:mysql://db.example:3306/?tinyInt1isBit=false&yearIsDateType=false");
  }

  @Test
  void aUserSettingThatBreaksTheTypeMappingIsRefused() {
    assertThatThrownBy(
            () ->
                new MySqlHost(
                    "a",
                    "db.example",
                    3306,
                    "cdc",
                    Secret.of("pw"),
                    Map.of("tinyInt1isBit", "true")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use jdbc-properties tinyInt1isBit=true of MySQL host 'a': Shardberg's type mapping needs"
                + " tinyInt1isBit=false (see docs/type-mapping.md); remove the property");
    assertThatThrownBy(
            () ->
                new MySqlHost(
                    "a",
                    "db.example",
                    3306,
                    "cdc",
                    Secret.of("pw"),
                    Map.of("yearIsDateType", "true")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use jdbc-properties yearIsDateType=true of MySQL host 'a': Shardberg's type mapping needs"
                + " yearIsDateType=false (see docs/type-mapping.md); remove the property");
  }
}
