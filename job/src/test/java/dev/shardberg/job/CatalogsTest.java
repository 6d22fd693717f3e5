package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.job.config.CatalogType;
import dev.shardberg.job.config.ShardbergConfig.CatalogConfig;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Opening the target catalog fails with one line naming where it was looked for, no secret. */
class CatalogsTest {
  @Test
  void aRestCatalogThatDoesNotAnswerIsOneLineNamingTheUriAndTheKeysToCheck() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort(); // closed again: nothing listens there
    }
    String uri = "http://127.0.0.1:" + port + "/catalog";
    CatalogConfig rest =
        new CatalogConfig(
            CatalogType.REST,
            "lake",
            uri,
            null,
            null,
            Map.of("token", "secret-token-value"),
            null,
            null);
    assertThatThrownBy(() -> Catalogs.open(rest))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "Cannot open the rest catalog 'lake' at target.catalog.uri = '" + uri + "': ")
        .hasMessageContaining(
            "Check target.catalog.uri and the catalog's credential (target.catalog.properties:"
                + " credential or token)")
        .hasMessageNotContaining("secret-token-value");
  }

  @Test
  void aUriIsShownWithoutItsUserInfoAndQuery() {
    assertThat(
            Catalogs.withoutSecrets("jdbc:mysql://app:pw-123@db.example:3306/cat?password=pw-456"))
        .isEqualTo("jdbc:mysql://…@db.example:3306/cat?…");
    assertThat(Catalogs.withoutSecrets("thrift://metastore:9083"))
        .isEqualTo("thrift://metastore:9083");
  }
}
