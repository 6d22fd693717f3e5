package dev.shardberg.coordinator.zk;

import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.ROOT;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.children;
import static dev.shardberg.coordinator.zk.ZooKeeperTestSupport.observer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.CommittedCheckpoints;
import dev.shardberg.coordinator.ShardbergSink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's JobManager high availability and Shardberg's HA mode on ONE ZooKeeper server, as
 * docs/high-availability.md tells operators to run them: a MiniCluster configured with exactly the
 * {@code high-availability.*} keys of that page runs a Shardberg pipeline whose coordinator commits
 * through the ZooKeeper lock and fencing epoch. The job commits every batch, once, with the epoch
 * it took from that ZooKeeper, and Flink's nodes and Shardberg's live side by side under their own
 * roots.
 */
class FlinkZooKeeperHaTest {
  @org.junit.jupiter.api.BeforeAll
  static void zooKeeperNeverExitsTheJvm() {
    dev.shardberg.coordinator.zk.ZooKeeperTestSupport.neverExitTheJvm();
  }

  private static final Path HA_DOC = Path.of("..", "docs", "high-availability.md");
  private static final TableIdentifier ID = TableIdentifier.of("shop", "orders");
  private static final int[] SHARDS = {0, 1};
  private static final int BATCHES = 3;
  private static final int ROWS_PER_SHARD = 2;

  @Test
  void jobManagerHaRunsOnTheSameZooKeeper(@TempDir Path haStorage, @TempDir Path warehouse)
      throws Exception {
    Map<String, String> documented = documentedHaKeys();
    assertThat(documented)
        .as("the high-availability.* keys of %s", HA_DOC)
        .containsOnlyKeys(
            "high-availability.type",
            "high-availability.zookeeper.quorum",
            "high-availability.storageDir",
            "high-availability.zookeeper.path.root",
            "high-availability.cluster-id")
        .containsEntry("high-availability.type", "zookeeper");
    String flinkRoot = documented.get("high-availability.zookeeper.path.root");

    try (TestingServer zooKeeper = ZooKeeperTestSupport.startServer();
        CuratorFramework zk = observer(zooKeeper.getConnectString())) {
      // The page's keys; the values that name the operator's hosts and paths point at this test's.
      Map<String, String> ha = new LinkedHashMap<>(documented);
      ha.put("high-availability.zookeeper.quorum", zooKeeper.getConnectString());
      ha.put("high-availability.storageDir", haStorage.toUri().toString());
      ha.put("high-availability.cluster-id", "shardberg-orders");
      MiniClusterConfiguration clusterConf =
          new MiniClusterConfiguration.Builder()
              .setConfiguration(Configuration.fromMap(ha))
              .setNumTaskManagers(1)
              .setNumSlotsPerTaskManager(4)
              .build();
      CatalogLoader catalog = createTable(warehouse);
      try (MiniCluster cluster = new MiniCluster(clusterConf)) {
        cluster.start();
        StreamExecutionEnvironment env = new TestStreamEnvironment(cluster, 2);
        env.enableCheckpointing(200);
        DataStream<RowData> changes =
            env.addSource(
                    new BatchPerCheckpointSource("flink-ha", SHARDS, BATCHES, ROWS_PER_SHARD, -1),
                    "synthetic changes",
                    InternalTypeInfo.of(BatchPerCheckpointSource.ROW_TYPE))
                .setParallelism(1);
        ShardbergSink.forRowData(changes)
            .tableLoader(TableLoader.fromCatalog(catalog, ID))
            .tableName("hadoop.shop.orders")
            .rowType(BatchPerCheckpointSource.ROW_TYPE)
            .pipelineId("orders")
            .commitGuard(
                new ZooKeeperCommitGuardFactory(
                    ZooKeeperTestSupport.options(zooKeeper.getConnectString())))
            .append();
        env.execute("shardberg under Flink HA");

        String flinkCluster = flinkRoot + "/shardberg-orders";
        assertThat(children(zk, "/"))
            .as("root znodes: Flink's and Shardberg's, apart")
            .contains(flinkRoot.substring(1), ROOT.substring(1));
        assertThat(children(zk, flinkCluster)).as("Flink's HA nodes").contains("leader");
        assertThat(children(zk, flinkCluster + "/leader")).isNotEmpty();
        assertThat(haStorage.resolve("job-result-store").resolve("shardberg-orders")).isDirectory();
      }
      assertThat(new String(zk.getData().forPath(ZooKeeperPaths.epochPath(ROOT, "orders")), UTF_8))
          .as("the pipeline's fencing epoch, taken from this ZooKeeper")
          .isEqualTo("1");
      assertThat(zk.checkExists().forPath(ZooKeeperPaths.lockPath(ROOT, "hadoop.shop.orders")))
          .as("the table's lock node")
          .isNotNull();
      assertThat(children(zk, ROOT))
          .as("Shardberg's nodes")
          .containsExactlyInAnyOrder("locks", "pipelines");

      Table table = catalog.loadCatalog().loadTable(ID);
      assertThat(rows(table))
          .isEqualTo(BatchPerCheckpointSource.expectedRows(SHARDS, BATCHES, ROWS_PER_SHARD));
      List<CommitRecord> commits = CommittedCheckpoints.history(table, "orders", Integer.MAX_VALUE);
      assertThat(commits.stream().filter(c -> !c.heartbeat()).count())
          .as("one data commit per batch")
          .isEqualTo(BATCHES);
      assertThat(commits).as("every commit under epoch 1").allMatch(c -> c.epoch() == 1);
    }
  }

  /** The {@code high-availability.*} lines of the page's Flink config block: key → value. */
  private static Map<String, String> documentedHaKeys() throws Exception {
    String page = Files.readString(HA_DOC);
    int section = page.indexOf("## Flink JobManager HA on the same ZooKeeper");
    assertThat(section).as("the Flink HA section of %s", HA_DOC).isNotNegative();
    int start = page.indexOf("```yaml", section);
    int end = page.indexOf("```", start + 7);
    Map<String, String> keys = new LinkedHashMap<>();
    for (String line : page.substring(start + 7, end).split("\n")) {
      String setting = line.replaceAll("#.*", "").trim();
      if (setting.startsWith("high-availability.")) {
        int colon = setting.indexOf(':');
        keys.put(setting.substring(0, colon).trim(), setting.substring(colon + 1).trim());
      }
    }
    return keys;
  }

  private static CatalogLoader createTable(Path warehouse) {
    CatalogLoader catalog =
        CatalogLoader.hadoop(
            "hadoop",
            new org.apache.hadoop.conf.Configuration(),
            Map.of("warehouse", warehouse.toString()));
    Schema schema = new Schema(SharedTableWorkload.SCHEMA.columns(), Set.of(1, 2));
    catalog
        .loadCatalog()
        .createTable(
            ID,
            schema,
            PartitionSpec.builderFor(schema).identity("shard_number").bucket("id", 2).build(),
            Map.of(TableProperties.FORMAT_VERSION, "2"));
    return catalog;
  }

  /** "shard|id|payload", sorted; fails on a key read twice. */
  private static Set<String> rows(Table table) throws Exception {
    Set<String> keys = new TreeSet<>();
    Set<String> rows = new TreeSet<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        String key = r.getField("shard_number") + "|" + r.getField("id");
        assertThat(keys.add(key)).as("key %s read once", key).isTrue();
        rows.add(key + "|" + r.getField("payload"));
      }
    }
    return rows;
  }
}
