package dev.shardberg.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MySqlHostTest {

  @Test
  void everyHostReadsTinyIntOneAsANumber() {
    MySqlHost host = new MySqlHost("a", "db.example", 3306, "cdc", Secret.of("pw"), Map.of());
    assertThat(host.jdbcProperties()).containsExactly(Map.entry("tinyInt1isBit", "false"));
    assertThat(host.jdbcUrl()).isEqualTo("jdbc:mysql://db.example:3306/?tinyInt1isBit=false");
  }

  @Test
  void aUserSettingThatBreaksTheTypeMappingIsRefused() {
    assertThatThrownBy(
            () -> new MySqlHost("a", "db.example", 3306, "cdc", Secret.of("pw"), Map.of("tinyInt1isBit", "true")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use jdbc-properties tinyInt1isBit=true of MySQL host 'a': Shardberg's type mapping needs"
                + " tinyInt1isBit=false (see docs/type-mapping.md); remove the property");
  }
}
