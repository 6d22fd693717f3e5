package dev.shardberg.job;

import dev.shardberg.coordinator.CommitGuardFactory;
import dev.shardberg.coordinator.ShardbergSink;
import dev.shardberg.coordinator.zk.ZooKeeperCommitGuardFactory;
import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.config.ShardbergConfig.CdcConfig;
import dev.shardberg.job.config.ShardbergConfig.PipelineConfig;
import dev.shardberg.job.config.ShardbergConfig.SourceConfig;
import dev.shardberg.job.config.ShardbergConfig.ZooKeeperConfig;
import dev.shardberg.router.LogicalTableSpec;
import dev.shardberg.router.MySqlHost;
import dev.shardberg.router.Secret;
import dev.shardberg.router.ShardDiscovery;
import dev.shardberg.router.ShardPlan;
import dev.shardberg.router.ShardTaggingDeserializer;
import dev.shardberg.router.TableCreator;
import dev.shardberg.router.TableLayout;
import dev.shardberg.router.YearConverter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSource;
import org.apache.flink.cdc.connectors.mysql.table.StartupOptions;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole job, assembled in {@link #build}: discover the shards, derive the table layout, create
 * or validate the table, one MySQL CDC source per host (each tagging its rows with their shard
 * number), union, then the commit coordinator's sink (distribution → writers → one coordinator).
 *
 * <p>The same method runs under {@code flink run} ({@link ShardbergJob}) and in a local MiniCluster
 * (the CLI, the demo and the tests); only the {@link StreamExecutionEnvironment} differs.
 */
public final class ShardbergPipeline {
  private static final Logger LOG = LoggerFactory.getLogger(ShardbergPipeline.class);

  /** Operator uids are derived from these and the source names; never change them for a running table. */
  static final String SOURCE_UID_PREFIX = "shardberg-source-";

  static final String SINK_UID_PREFIX = "shardberg"; // the sink appends -writer, -coordinator, -end

  private ShardbergPipeline() {}

  /** What {@link #build} found and set up, for logs, the CLI and tests. */
  public record Assembled(ShardPlan plan, TableLayout layout, TableIdentifier table, String jobName) {}

  /**
   * The source side of the job as {@link #buildSources} leaves it: the union of the hosts' tagged
   * change streams, not yet connected to any sink.
   */
  public record Sources(ShardPlan plan, TableLayout layout, DataStream<RowData> changes) {}

  /** Builds the pipeline into {@code env}; nothing runs until the caller executes the environment. */
  public static Assembled build(StreamExecutionEnvironment env, ShardbergConfig config) {
    PipelineConfig pipeline = config.pipeline();
    Sources sources = buildSources(env, config);
    ShardPlan plan = sources.plan();
    TableLayout layout = sources.layout();
    CatalogLoader catalogLoader = Catalogs.loader(config.target().catalog());
    TableIdentifier tableId = Catalogs.identifier(config.target());
    createOrValidateTable(catalogLoader, tableId, layout);

    ShardbergSink.forRowData(sources.changes())
        .tableLoader(TableLoader.fromCatalog(catalogLoader, tableId))
        .tableName(config.target().qualifiedName())
        .rowType(layout.rowType())
        .equalityColumns(layout.equalityColumns())
        .pipelineId(pipeline.id())
        .writeParallelism(pipeline.writerParallelism())
        .maxContinuousEmptyCommits(pipeline.heartbeatEveryEmptyCheckpoints())
        .commitGuard(commitGuard(config))
        .lockTimeout(config.coordinator().lockTimeout())
        .insertOnlyInitialLoad(config.target().insertOnlyInitialLoad())
        .uidPrefix(SINK_UID_PREFIX)
        .append();

    String jobName = "shardberg " + pipeline.id() + " → " + config.target().qualifiedName();
    LOG.info("Assembled {}: {} shards on {} hosts, checkpoint every {}, {} writers",
        jobName, plan.shardCount(), config.sources().size(), pipeline.checkpointInterval(), pipeline.writerParallelism());
    return new Assembled(plan, layout, tableId, jobName);
  }

  /**
   * The first half of {@link #build}: discover the shards, derive the layout, set checkpoints and
   * restarts, and add one MySQL CDC source per host (tagging its rows with their shard number),
   * unioned. Touches no catalog. {@link #build} connects the result to the coordinator's sink; the
   * load-test harness connects it to a counting sink to measure the sources on their own.
   */
  public static Sources buildSources(StreamExecutionEnvironment env, ShardbergConfig config) {
    PipelineConfig pipeline = config.pipeline();
    LogicalTableSpec spec = logicalTable(config);

    ShardPlan plan = ShardDiscovery.discover(spec);
    TableLayout layout = TableLayout.derive(
        plan.schema(), config.target().buckets(), config.target().keyColumn(), config.target().tableProperties());

    configureCheckpointsAndRestarts(env, pipeline);

    DataStream<RowData> changes = null;
    for (MySqlHost host : spec.hosts()) {
      if (plan.tablesOf(host.name()).isEmpty()) {
        continue; // discovery already warned: no shard on this host
      }
      SourceConfig source = sourceConfig(config, host.name());
      MySqlSource<RowData> mySqlSource = mySqlSource(plan, layout, host, source, config.cdc());
      DataStream<RowData> hostChanges = env.fromSource(mySqlSource, WatermarkStrategy.noWatermarks(), "MySQL " + host.name())
          .uid(SOURCE_UID_PREFIX + host.name())
          .setParallelism(pipeline.parallelism());
      changes = changes == null ? hostChanges : changes.union(hostChanges);
    }
    return new Sources(plan, layout, changes);
  }

  /** Builds and runs until the job ends (under {@code flink run}: submits, then follows the job). */
  public static void run(ShardbergConfig config) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    Assembled assembled = build(env, config);
    env.execute(assembled.jobName());
  }

  /** Builds and submits without waiting; the caller follows or cancels the job. */
  public static JobClient start(StreamExecutionEnvironment env, ShardbergConfig config) throws Exception {
    Assembled assembled = build(env, config);
    return env.executeAsync(assembled.jobName());
  }

  /** The router's view of {@code sources[]} and {@code tables.*}; reads the passwords (client side). */
  public static LogicalTableSpec logicalTable(ShardbergConfig config) {
    List<MySqlHost> hosts = config.sources().stream()
        .map(s -> new MySqlHost(s.name(), s.host(), s.port(), s.user(), secret(s), s.jdbcProperties()))
        .toList();
    return new LogicalTableSpec(hosts, config.tables().databasePattern(), config.tables().tablePattern(),
        config.tables().shardMap(), config.tables().keyColumns());
  }

  private static Secret secret(SourceConfig source) {
    return source.password().env() != null
        ? Secret.fromEnv(source.password().env())
        : Secret.fromFile(Path.of(source.password().file()));
  }

  private static SourceConfig sourceConfig(ShardbergConfig config, String name) {
    return config.sources().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
  }

  private static void createOrValidateTable(CatalogLoader catalogLoader, TableIdentifier tableId, TableLayout layout) {
    Catalog catalog = catalogLoader.loadCatalog();
    try {
      TableCreator.createOrValidate(catalog, tableId, layout, Map.of(TableCreator.NAMESPACE_OWNER, System.getProperty("user.name", "shardberg")));
    } finally {
      Catalogs.close(catalog);
    }
  }

  private static void configureCheckpointsAndRestarts(StreamExecutionEnvironment env, PipelineConfig pipeline) {
    Configuration conf = new Configuration();
    conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, pipeline.checkpointInterval());
    conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.EXACTLY_ONCE);
    conf.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, pipeline.checkpointTimeout());
    conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    if (pipeline.checkpointDir() != null) {
      conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, pipeline.checkpointDir());
    }
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, pipeline.restartAttempts());
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, pipeline.restartDelay());
    env.configure(conf);
  }

  private static MySqlSource<RowData> mySqlSource(
      ShardPlan plan, TableLayout layout, MySqlHost host, SourceConfig source, CdcConfig cdc) {
    Properties debezium = new Properties();
    debezium.setProperty("poll.interval.ms", Long.toString(cdc.pollInterval().toMillis()));
    debezium.putAll(cdc.debeziumProperties());
    String userConverters = debezium.getProperty("converters");
    debezium.putAll(YearConverter.DEBEZIUM_PROPERTIES); // YEAR 0000 stays 0 (docs/type-mapping.md)
    if (userConverters != null && !userConverters.isBlank()) {
      debezium.setProperty("converters", userConverters + "," + YearConverter.DEBEZIUM_PROPERTIES.get("converters"));
    }
    Properties jdbc = new Properties();
    jdbc.putAll(host.jdbcProperties());
    return MySqlSource.<RowData>builder()
        .hostname(host.hostname())
        .port(host.port())
        .databaseList(ShardTaggingDeserializer.databaseListOf(plan, host.name()))
        .tableList(ShardTaggingDeserializer.tableListOf(plan, host.name()))
        .username(host.user())
        .password(host.password().reveal())
        .serverId(source.serverIds().toString())
        .serverTimeZone(cdc.serverTimeZone())
        .startupOptions(startupOptions(cdc))
        .splitSize(cdc.snapshotChunkSize())
        .fetchSize(cdc.fetchSize())
        .connectionPoolSize(cdc.connectionPoolSize())
        .connectTimeout(cdc.connectTimeout())
        .heartbeatInterval(cdc.heartbeatInterval())
        .debeziumProperties(debezium)
        .jdbcProperties(jdbc)
        .includeSchemaChanges(true) // the deserializer stops the job on DDL with a clear message
        // MySQL 8 binary JSON: the binlog renders a document as MySQL's snapshot text does (FLINK-36578)
        .useLegacyJsonFormat(false)
        .deserializer(ShardTaggingDeserializer.forHost(plan, host.name(), layout))
        .build();
  }

  private static StartupOptions startupOptions(CdcConfig cdc) {
    return switch (cdc.startupMode()) {
      case INITIAL -> StartupOptions.initial();
      case LATEST -> StartupOptions.latest();
      case TIMESTAMP -> StartupOptions.timestamp(cdc.startupTimestamp().toEpochMilli());
    };
  }

  private static CommitGuardFactory commitGuard(ShardbergConfig config) {
    if (!config.coordinator().haEnabled()) {
      return CommitGuardFactory.none();
    }
    ZooKeeperConfig zk = config.coordinator().zookeeper();
    return new ZooKeeperCommitGuardFactory(new ZooKeeperOptions(
        zk.connect(), zk.rootPath(), zk.sessionTimeout(), zk.connectionTimeout(), zk.lockTimeout(),
        zk.retryBaseSleep(), zk.retryMaxRetries()));
  }

}
