package dev.shardberg.router;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MySqlIdentifiersTest {

  @Test
  void quotesInBackticksAndDoublesEmbeddedOnes() {
    assertThat(MySqlIdentifiers.quote("orders_0")).isEqualTo("`orders_0`");
    assertThat(MySqlIdentifiers.quote("my`db")).isEqualTo("`my``db`");
    assertThat(MySqlIdentifiers.quote("t.1")).isEqualTo("`t.1`");
    assertThat(MySqlIdentifiers.quote("")).isEqualTo("``");
  }
}
