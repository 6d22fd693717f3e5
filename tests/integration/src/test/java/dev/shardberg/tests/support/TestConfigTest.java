package dev.shardberg.tests.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the suites' configs are written with: every value reads back as written, strings as strings.
 */
class TestConfigTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @Test
  void valuesReadBackAsWrittenAndStringsStayStrings() throws Exception {
    TestConfig config =
        TestConfig.pipeline("p-1")
            .checkpointInterval("1s")
            .parallelism(2)
            .restart(3, "1s")
            .source(
                new TestConfig.Source("a", "127.0.0.1", 3306)
                    .user("cdc")
                    .passwordFile(Path.of("/tmp/pw"))
                    .serverIds("5400-5403")
                    .withoutTls())
            .tables("shop|shop_(?<shard>\\d+)", "orders_(?<shard>\\d+)")
            .keyColumns(List.of("tenant_id", "id"))
            .excludeShards(1, 2)
            .hadoopCatalog(URI.create("file:///tmp/wh/"))
            .table("shop", "orders")
            .buckets(2)
            .zooKeeper("127.0.0.1:2181");
    JsonNode root = YAML.readTree(config.yaml());

    assertThat(root.at("/pipeline/id").textValue()).isEqualTo("p-1");
    assertThat(root.at("/pipeline/parallelism").isInt()).isTrue();
    assertThat(root.at("/pipeline/restart/delay").textValue()).isEqualTo("1s");
    assertThat(root.at("/sources/0/host").textValue()).isEqualTo("127.0.0.1");
    assertThat(root.at("/sources/0/port").intValue()).isEqualTo(3306);
    assertThat(root.at("/sources/0/server-id-range").textValue()).isEqualTo("5400-5403");
    assertThat(root.at("/sources/0/jdbc-properties/useSSL").textValue())
        .as("a string, not a boolean")
        .isEqualTo("false");
    assertThat(root.at("/tables/database-pattern").textValue())
        .isEqualTo("shop|shop_(?<shard>\\d+)");
    assertThat(root.at("/tables/table-pattern").textValue()).isEqualTo("orders_(?<shard>\\d+)");
    assertThat(root.at("/tables/key-columns").toString()).isEqualTo("[\"tenant_id\",\"id\"]");
    assertThat(root.at("/tables/exclude-shards").toString()).isEqualTo("[1,2]");
    assertThat(root.at("/target/catalog/warehouse").textValue()).isEqualTo("file:///tmp/wh/");
    assertThat(root.at("/coordinator/zookeeper/connect").textValue()).isEqualTo("127.0.0.1:2181");
    assertThat(root.has("source")).as("a section without keys is left out").isFalse();
  }

  @Test
  void stringsThatYamlWouldReadAsSomethingElseAreQuoted() throws Exception {
    for (String value :
        List.of(
            "true", "no", "null", "42", "1.5", "1:30", "0x1f", "2026-01-31", "it's", "a b", "#x")) {
      JsonNode root = YAML.readTree(TestConfig.pipeline(value).yaml());
      assertThat(root.at("/pipeline/id").isTextual()).as(value).isTrue();
      assertThat(root.at("/pipeline/id").textValue()).isEqualTo(value);
    }
  }

  @Test
  void aCopyChangesApart() {
    TestConfig base = TestConfig.pipeline("p").tables("shop", "orders_(?<shard>\\d+)");
    TestConfig excluded = base.copy().excludeShards(1);
    assertThat(excluded.yaml()).contains("  exclude-shards: [1]\n");
    assertThat(base.yaml()).doesNotContain("exclude-shards");
  }
}
