package dev.shardberg.job;

import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.config.ShardbergConfig.SourceConfig;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.SchemaEvolution;
import dev.shardberg.router.schema.TableCreator;
import dev.shardberg.router.schema.TableLayout;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What {@code validate} prints: the discovered shards, the derived layout and whether the table
 * exists (and matches) or would be created. Discovery and the check read; nothing is written.
 */
public record TablePlan(
    ShardbergConfig config,
    ShardPlan plan,
    TableLayout layout,
    BucketColumn bucket,
    boolean tableExists,
    List<SchemaEvolution.Change> evolution,
    String store) {

  public static TablePlan of(ShardbergConfig configured) {
    ShardPlan plan =
        ShardDiscovery.discover(
            ShardbergPipeline.logicalTable(configured), ShardbergPipeline.evolves(configured));
    TableIdentifier id = Catalogs.identifier(configured.target());
    Catalog catalog = Catalogs.open(configured.target().catalog());
    try {
      ShardbergConfig config =
          DeleteModes.chosen(
              configured, catalog.tableExists(id) ? catalog.loadTable(id) : null, id, false);
      BucketColumn bucket = ShardbergPipeline.bucketColumn(config, plan, catalog, id);
      TableLayout layout = ShardbergPipeline.layout(config, plan, bucket);
      boolean exists = catalog.tableExists(id);
      String store =
          exists
              ? StoreProbe.check(config.target().catalog(), catalog.loadTable(id))
              : StoreProbe.checkNewTable(
                  config.target().catalog(),
                  catalog,
                  id,
                  () ->
                      catalog
                          .buildTable(id, layout.icebergSchema())
                          .withPartitionSpec(layout.spec())
                          .withProperties(layout.createProperties()));
      List<SchemaEvolution.Change> evolution = List.of();
      if (exists && ShardbergPipeline.evolves(config)) {
        // the columns may differ in evolvable ways (run evolves them); the rest is checked; alters
        // nothing
        evolution =
            TableCreator.evolvableChanges(
                catalog.loadTable(id), id, layout, plan.schema().columns());
      } else if (exists) {
        TableCreator.validate(
            catalog.loadTable(id), id, layout); // throws a precise diff; alters nothing
      }
      return new TablePlan(config, plan, layout, bucket, exists, evolution, store);
    } finally {
      Catalogs.close(catalog);
    }
  }

  public String render() {
    String nl = System.lineSeparator();
    StringBuilder sb = new StringBuilder();
    sb.append("Pipeline '")
        .append(config.pipeline().id())
        .append("' → ")
        .append(config.target().qualifiedName())
        .append(" (")
        .append(config.target().catalog().type())
        .append(" catalog)")
        .append(nl);
    sb.append(nl).append("Sources:").append(nl);
    for (SourceConfig s : config.sources()) {
      sb.append(
          String.format(
              "  %-12s %s@%s:%d  server ids %s  %d shard tables%n",
              s.name(),
              s.user(),
              s.host(),
              s.port(),
              s.serverIds(),
              plan.tablesOf(s.name()).size()));
    }
    sb.append(nl)
        .append("Shards (")
        .append(plan.shardCount())
        .append("):")
        .append(nl)
        .append(plan.describe())
        .append(nl);
    if (!config.tables().excludeShards().isEmpty()) {
      sb.append(
              "Excluded shards (tables.exclude-shards, not read; their rows in the table stay as they are): ")
          .append(new java.util.TreeSet<>(config.tables().excludeShards()))
          .append(nl);
    }
    Map<Integer, List<String>> differences = plan.differences();
    if (!differences.isEmpty()) {
      sb.append(nl)
          .append(
              "Shards that differ from the table schema (evolvable; schema.change-behavior=evolve):")
          .append(nl);
      differences.forEach(
          (shard, lines) ->
              lines.forEach(
                  l -> sb.append("  shard ").append(shard).append(": ").append(l).append(nl)));
    }
    sb.append(nl).append("Iceberg table:").append(nl);
    sb.append("  schema: ")
        .append(layout.icebergSchema().asStruct().fields().size())
        .append(" columns")
        .append(nl);
    layout.icebergSchema().columns().forEach(f -> sb.append("    ").append(f).append(nl));
    sb.append("  identifier fields: ")
        .append(layout.icebergSchema().identifierFieldNames())
        .append(nl);
    sb.append("  key: ")
        .append(plan.schema().primaryKey())
        .append(" = ")
        .append(plan.schema().keyIndex())
        .append(" on every shard")
        .append(nl);
    sb.append("  bucket column: ")
        .append(bucket.column())
        .append(" (")
        .append(bucket.reason())
        .append(")")
        .append(nl);
    String chunkKey = MySqlSources.chunkKeyColumn(plan, layout);
    if (chunkKey != null) {
      sb.append("  snapshot chunk key: ")
          .append(chunkKey)
          .append(
              " (the tables have no primary key; Flink CDC splits their snapshot by the bucket column)")
          .append(nl);
    }
    sb.append("  partition spec: ").append(layout.spec().fields()).append(nl);
    sb.append("  equality columns: ").append(layout.equalityColumns()).append(nl);
    Map<String, String> props = new TreeMap<>(layout.properties());
    sb.append("  properties: ").append(props).append(nl);
    sb.append("  state: ")
        .append(
            !tableExists
                ? "does not exist yet; `run` creates it (and its namespace)"
                : evolution.isEmpty()
                    ? "exists and matches the derived layout"
                    : "exists; `run` evolves it first: " + evolution)
        .append(nl);
    sb.append("  store: ").append(store).append(nl);
    sb.append(nl)
        .append(
            String.format(
                "Pipeline: checkpoint every %s, %d reader(s) per host, %d writer(s), startup %s, %s%n",
                config.pipeline().checkpointInterval(),
                config.pipeline().parallelism(),
                config.pipeline().writerParallelism(),
                config.cdc().startupMode(),
                config.coordinator().haEnabled()
                    ? "HA via ZooKeeper " + config.coordinator().zookeeper().connect()
                    : "no ZooKeeper lock"));
    return sb.toString();
  }
}
