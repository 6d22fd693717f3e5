package dev.shardberg.job;

import dev.shardberg.coordinator.CommitGuardFactory;
import dev.shardberg.coordinator.DeleteMode;
import dev.shardberg.coordinator.LockedTableLoader;
import dev.shardberg.coordinator.ShardbergSink;
import dev.shardberg.coordinator.zk.ZooKeeperCommitGuardFactory;
import dev.shardberg.coordinator.zk.ZooKeeperOptions;
import dev.shardberg.coordinator.zk.ZooKeeperTableLock;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.config.ShardbergConfig.PipelineConfig;
import dev.shardberg.job.config.ShardbergConfig.SourceConfig;
import dev.shardberg.job.config.ShardbergConfig.ZooKeeperConfig;
import dev.shardberg.job.config.StartupMode;
import dev.shardberg.router.DroppedShards;
import dev.shardberg.router.NewShards;
import dev.shardberg.router.SchemaChangeBehavior;
import dev.shardberg.router.Secret;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableCreator;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.tagging.NewShardCapture;
import dev.shardberg.router.tagging.ShardTaggingDeserializer;
import dev.shardberg.router.watch.BinlogFormatWatch;
import dev.shardberg.router.watch.SourceHostWatch;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSource;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole job, assembled in {@link #build}: discover the shards, derive the table layout, create
 * or validate the table, check a start without state against it ({@link StatelessStart}: refuse, or
 * remove the shards' rows to re-snapshot them), one MySQL CDC source per host (each tagging its
 * rows with their shard number, each followed by its {@link BinlogFormatWatch}), union, then the
 * commit coordinator's sink (distribution → writers → one coordinator).
 *
 * <p>The same method runs under {@code flink run} ({@link ShardbergJob}) and in a local MiniCluster
 * (the CLI, the demo and the tests); only the {@link StreamExecutionEnvironment} differs.
 */
public final class ShardbergPipeline {
  private static final Logger LOG = LoggerFactory.getLogger(ShardbergPipeline.class);

  /**
   * Operator uids are derived from these and the source names; never change them for a running
   * table.
   */
  static final String SOURCE_UID_PREFIX = "shardberg-source-";

  static final String BINLOG_WATCH_UID_PREFIX = "shardberg-binlog-watch-";

  static final String HOST_WATCH_UID_PREFIX = "shardberg-host-watch-";

  static final String SINK_UID_PREFIX = "shardberg"; // the sink appends -writer, -coordinator, -end

  private ShardbergPipeline() {}

  /**
   * What {@link #build} found and set up, for logs, the CLI and tests.
   *
   * @param deleteMode how the job writes updates and deletes: as configured, or chosen for the
   *     table ({@code deleteModeChosen}: {@code target.delete-mode} unset)
   */
  public record Assembled(
      ShardPlan plan,
      TableLayout layout,
      TableIdentifier table,
      String jobName,
      DeleteMode deleteMode,
      boolean deleteModeChosen) {}

  /**
   * The source side of the job as {@link #buildSources} leaves it: the union of the hosts' tagged
   * change streams, not yet connected to any sink.
   */
  public record Sources(ShardPlan plan, TableLayout layout, DataStream<RowData> changes) {}

  /**
   * Builds the pipeline into {@code env}; nothing runs until the caller executes the environment.
   */
  public static Assembled build(StreamExecutionEnvironment env, ShardbergConfig configured) {
    PipelineConfig pipeline = configured.pipeline();
    CatalogLoader catalogLoader = Catalogs.loader(configured.target().catalog());
    TableIdentifier tableId = Catalogs.identifier(configured.target());
    // target.delete-mode unset: position for a new table, the table's recorded mode otherwise
    ShardbergConfig config = DeleteModes.resolve(configured, catalogLoader, tableId);
    configureCheckpointsAndRestarts(env, config);
    OwnerStateStorage.check(env.getConfiguration(), config);
    Sources sources =
        buildSources(
            env, config, plan -> layout(config, plan, catalogLoader, tableId), evolver(config));
    ShardPlan plan = sources.plan();
    TableLayout layout = sources.layout();
    RowType rowType = createOrValidateTable(catalogLoader, tableId, layout, plan, evolves(config));
    String restoreFrom = env.getConfiguration().get(StateRecoveryOptions.SAVEPOINT_PATH);
    if (restoreFrom == null) {
      // a start without state on a table this pipeline wrote: refuse, or remove its shards' rows
      // first
      checkStatelessStart(env, config, plan, catalogLoader, tableId);
    } else {
      LOG.info("Pipeline {} restores from {}", pipeline.id(), restoreFrom);
      allowStateOfRemovedHosts(env, config, restoreFrom);
    }

    ShardbergSink.forRowData(sources.changes())
        .tableLoader(TableLoader.fromCatalog(catalogLoader, tableId))
        .tableName(config.target().qualifiedName())
        .rowType(rowType)
        .equalityColumns(layout.equalityColumns())
        .pipelineId(pipeline.id())
        .writeParallelism(pipeline.writerParallelism())
        .maxContinuousEmptyCommits(pipeline.heartbeatEveryEmptyCheckpoints())
        .commitGuard(commitGuard(config))
        .lockTimeout(config.coordinator().commitLockTimeout())
        .insertOnlyInitialLoad(config.target().insertOnlyInitialLoad())
        .deleteMode(config.target().deleteMode())
        .closeConcurrency(config.target().closeConcurrency())
        .maintenance(config.maintenance())
        .versionedRows(evolves(config)) // the taggers' rows follow the table's schema
        // a shard new to a restored state (created meanwhile, or included again after
        // tables.exclude-shards) is read from a fresh snapshot: its old rows go
        .shards(plan.shardNumbers())
        .rereadShards(replaceableShards(config, plan))
        // a shard the restored state knows that is neither planned nor excluded (its table dropped
        // while the job was stopped, or its host removed from the config): kept or removed
        .goneShards(
            config.tables().excludeShards(),
            config.tables().droppedShards() == DroppedShards.DELETE)
        .uidPrefix(SINK_UID_PREFIX)
        .append();

    String jobName = "shardberg " + pipeline.id() + " → " + config.target().qualifiedName();
    LOG.info(
        "Assembled {}: {} shards on {} hosts, checkpoint every {}, {} writers",
        jobName,
        plan.shardCount(),
        config.sources().size(),
        pipeline.checkpointInterval(),
        pipeline.writerParallelism());
    return new Assembled(
        plan,
        layout,
        tableId,
        jobName,
        config.target().deleteMode(),
        !configured.target().deleteModeSet());
  }

  /**
   * The source half of {@link #build}: discover the shards, derive the layout, and add one MySQL
   * CDC source per host (tagging its rows with their shard number), unioned. Touches no catalog and
   * sets no checkpoints or restarts (that is {@link #configureCheckpointsAndRestarts}, which {@link
   * #build} calls first). {@link #build} connects the result to the coordinator's sink; the
   * load-test harness configures the environment the same way and connects it to a counting sink to
   * measure the sources on their own. Without a catalog, the bucket column (also the snapshot chunk
   * key of tables without a primary key) is {@code target.key-column} or discovery's default.
   */
  public static Sources buildSources(StreamExecutionEnvironment env, ShardbergConfig configured) {
    // without a catalog an unset target.delete-mode is taken as for a table the job creates
    ShardbergConfig config =
        DeleteModes.chosen(configured, null, Catalogs.identifier(configured.target()), false);
    return buildSources(
        env,
        config,
        plan ->
            layout(
                config,
                plan,
                BucketColumn.resolve(config.target().keyColumn(), plan.schema(), Optional.empty())),
        null);
  }

  private static Sources buildSources(
      StreamExecutionEnvironment env,
      ShardbergConfig config,
      Function<ShardPlan, TableLayout> layoutOf,
      TableSchemaEvolver evolver) {
    PipelineConfig pipeline = config.pipeline();
    LogicalTableSpec spec = logicalTable(config);

    ShardPlan plan = ShardDiscovery.discover(spec, evolver != null);
    TableLayout layout = layoutOf.apply(plan);

    DataStream<RowData> changes = null;
    for (MySqlHost host : spec.hosts()) {
      if (plan.tablesOf(host.name()).isEmpty()) {
        continue; // discovery already warned: no shard on this host
      }
      SourceConfig source = sourceConfig(config, host.name());
      // the host's shard patterns alone: to name (and, with tables.new-shards: capture, read)
      // shard tables created while the job runs
      LogicalTableSpec hostSpec =
          new LogicalTableSpec(
              List.of(host),
              spec.databasePattern(),
              spec.tablePattern(),
              spec.explicitShardMap(),
              spec.keyColumns(),
              spec.excludedShards());
      NewShardCapture capture =
          capturesNewShards(config)
              ? new NewShardCapture(
                  hostSpec,
                  plan,
                  java.util.UUID.randomUUID() + "/" + host.name(),
                  spec.hosts().stream().filter(h -> !h.name().equals(host.name())).toList())
              : null;
      Source<RowData, ?, ?> mySqlSource =
          source(config, plan, layout, host, source, evolver, capture);
      DataStream<RowData> read =
          env.fromSource(mySqlSource, WatermarkStrategy.noWatermarks(), "MySQL " + host.name())
              .uid(SOURCE_UID_PREFIX + host.name())
              .setParallelism(pipeline.parallelism());
      // stops the job for good if the host's binlog stops being ROW / FULL (changes would be
      // skipped)
      DataStream<RowData> hostChanges =
          read.transform(
                  "Binlog format watch " + host.name(),
                  read.getType(),
                  new BinlogFormatWatch(host, config.cdc().binlogFormatCheckInterval()))
              .uid(BINLOG_WATCH_UID_PREFIX + host.name())
              .setParallelism(pipeline.parallelism())
              // says when the host is lost and back (with the gap), fails the job past
              // source.unreachable-timeout,
              // and exposes the host's binlog lag as gauges
              .transform(
                  "Host watch " + host.name(),
                  read.getType(),
                  new SourceHostWatch(
                          host,
                          plan.tablesOf(host.name()),
                          hostSpec,
                          config.cdc().healthCheckInterval(),
                          config.cdc().unreachableTimeout(),
                          // a dropped shard's WARN says what the next resume does with its rows
                          config.tables().droppedShards())
                      .withCapturedTables(capture == null ? null : capture.registryKey()))
              .uid(HOST_WATCH_UID_PREFIX + host.name())
              .setParallelism(pipeline.parallelism());
      changes = changes == null ? hostChanges : changes.union(hostChanges);
    }
    return new Sources(plan, layout, changes);
  }

  /**
   * A restore may leave out the sources of hosts removed from the config ({@code sources[]}): their
   * operators' state (read positions, host watches) has no operator to go to, which Flink refuses
   * unless told to ignore it. Every operator uid is derived from fixed prefixes and the host names
   * ({@link #SOURCE_UID_PREFIX} …, {@link #SINK_UID_PREFIX}), and the sink's operators are always
   * there, so the only state a restore can leave unclaimed is that of a source host no longer in
   * the config; the coordinator then keeps or removes its shards' rows ({@code
   * tables.dropped-shards}) and says which.
   */
  private static void allowStateOfRemovedHosts(
      StreamExecutionEnvironment env, ShardbergConfig config, String restoreFrom) {
    if (!env.getConfiguration().get(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE)) {
      LOG.info(
          "Pipeline {} restores from {} ignoring the state of hosts no longer in sources[] (now: {}): their"
              + " shards' rows are kept or removed as tables.dropped-shards ({}) says",
          config.pipeline().id(),
          restoreFrom,
          config.sources().stream().map(SourceConfig::name).toList(),
          config.tables().droppedShards());
      Configuration conf = new Configuration();
      conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
      env.configure(conf);
    }
  }

  /**
   * The host's CDC source. In the {@code initial} startup mode a {@link ShardFleetSource}: at a
   * restore, a shard table the state does not know is read alone from a fresh snapshot (its old
   * rows replaced by the coordinator), one it knows that left the plan is dropped from the state,
   * with no config change. In the other startup modes no shard is ever snapshotted: Flink CDC's
   * scanning for added and removed tables is on only while {@code tables.exclude-shards} or {@code
   * tables.reread-shards} lists a shard, as before.
   */
  private static Source<RowData, ?, ?> source(
      ShardbergConfig config,
      ShardPlan plan,
      TableLayout layout,
      MySqlHost host,
      SourceConfig source,
      TableSchemaEvolver evolver,
      NewShardCapture capture) {
    if (snapshotsNewShards(config)) {
      MySqlSource<RowData> scanning =
          MySqlSources.forHost(plan, layout, host, source, config.cdc(), evolver, true);
      MySqlSource<RowData> steady =
          MySqlSources.forHost(plan, layout, host, source, config.cdc(), evolver, false);
      if (capture == null) {
        return new ShardFleetSource(host.name(), plan.tablesOf(host.name()), scanning, steady);
      }
      ShardTaggingDeserializer tagger =
          ShardTaggingDeserializer.forHost(plan, host, layout, evolver).capturing(capture);
      return new ShardFleetSource(
          host.name(),
          plan.tablesOf(host.name()),
          scanning,
          steady,
          MySqlSources.forHost(plan, layout, host, source, config.cdc(), evolver, false, tagger),
          tagger);
    }
    return MySqlSources.forHost(
        plan,
        layout,
        host,
        source,
        config.cdc(),
        evolver,
        !config.tables().excludeShards().isEmpty() || !config.tables().rereadShards().isEmpty());
  }

  /**
   * Whether a shard new to a restored state is read from a fresh snapshot by itself ({@link
   * ShardFleetSource}): in the {@code initial} startup mode.
   */
  static boolean snapshotsNewShards(ShardbergConfig config) {
    return config.cdc().startupMode() == StartupMode.INITIAL;
  }

  /**
   * Whether the running job reads shard tables created while it runs from the binlog ({@code
   * tables.new-shards: capture}; the {@code initial} startup mode).
   */
  static boolean capturesNewShards(ShardbergConfig config) {
    return config.tables().newShards() == NewShards.CAPTURE && snapshotsNewShards(config);
  }

  /**
   * The shards the coordinator may find new to a restored state and replace with their fresh
   * snapshot: every shard of the plan when the source snapshots new shards by itself; else only
   * those of {@code tables.reread-shards}. Deletes by key replace a shard's old rows with a delete
   * by shard; deletes by position remove its old files in the same commit.
   */
  static java.util.Set<Integer> replaceableShards(ShardbergConfig config, ShardPlan plan) {
    return snapshotsNewShards(config) ? plan.shardNumbers() : config.tables().rereadShards();
  }

  /**
   * The bucket column for {@code plan}: {@code target.key-column}, else the partition spec of the
   * table when it exists (so a table created under an older default keeps validating), else
   * discovery's default. Reads the catalog, writes nothing.
   */
  static BucketColumn bucketColumn(
      ShardbergConfig config, ShardPlan plan, Catalog catalog, TableIdentifier tableId) {
    Optional<String> existing =
        config.target().keyColumn() == null && catalog.tableExists(tableId)
            ? TableCreator.bucketColumn(catalog.loadTable(tableId))
            : Optional.empty();
    return BucketColumn.resolve(config.target().keyColumn(), plan.schema(), existing);
  }

  static TableLayout layout(ShardbergConfig config, ShardPlan plan, BucketColumn bucket) {
    Map<String, String> properties = new java.util.LinkedHashMap<>();
    if (config.target().deleteMode() == DeleteMode.POSITION) {
      // a new table gets deletion vectors; an existing one keeps its version (v2: position deletes)
      properties.put(TableProperties.FORMAT_VERSION, "3");
    }
    properties.put(DeleteModes.PROPERTY, config.target().deleteMode().toString());
    properties.putAll(config.target().tableProperties());
    return TableLayout.derive(
        plan.schema(), config.target().buckets(), bucket.column(), properties);
  }

  private static TableLayout layout(
      ShardbergConfig config,
      ShardPlan plan,
      CatalogLoader catalogLoader,
      TableIdentifier tableId) {
    Catalog catalog = Catalogs.open(config.target().catalog(), catalogLoader);
    try {
      BucketColumn bucket = bucketColumn(config, plan, catalog, tableId);
      LOG.info("Bucket column of {}: {} ({})", tableId, bucket.column(), bucket.reason());
      return layout(config, plan, bucket);
    } finally {
      Catalogs.close(catalog);
    }
  }

  /**
   * Builds and runs until the job ends (under {@code flink run}: submits, then follows the job).
   */
  public static void run(StreamExecutionEnvironment env, ShardbergConfig config) throws Exception {
    Assembled assembled = build(env, config);
    env.execute(assembled.jobName());
  }

  /** Builds and submits without waiting; the caller follows or cancels the job. */
  public static JobClient start(StreamExecutionEnvironment env, ShardbergConfig config)
      throws Exception {
    Assembled assembled = build(env, config);
    return env.executeAsync(assembled.jobName());
  }

  /**
   * The router's view of {@code sources[]} and {@code tables.*}; reads the passwords (client side).
   */
  public static LogicalTableSpec logicalTable(ShardbergConfig config) {
    List<MySqlHost> hosts =
        config.sources().stream()
            .map(
                s ->
                    new MySqlHost(
                        s.name(), s.host(), s.port(), s.user(), secret(s), s.jdbcProperties()))
            .toList();
    return new LogicalTableSpec(
        hosts,
        config.tables().databasePattern(),
        config.tables().tablePattern(),
        config.tables().shardMap(),
        config.tables().keyColumns(),
        config.tables().excludeShards());
  }

  private static Secret secret(SourceConfig source) {
    return source.password().read();
  }

  private static SourceConfig sourceConfig(ShardbergConfig config, String name) {
    return config.sources().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
  }

  private static void checkStatelessStart(
      StreamExecutionEnvironment env,
      ShardbergConfig config,
      ShardPlan plan,
      CatalogLoader catalogLoader,
      TableIdentifier tableId) {
    StatelessStart.Launch launch =
        new StatelessStart.Launch(
            env instanceof LocalStreamEnvironment,
            env.getConfiguration()
                .getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
                .orElse(config.pipeline().checkpointDir()));
    Catalog catalog = catalogLoader.loadCatalog();
    try {
      StatelessStart.apply(catalog.loadTable(tableId), config, plan, launch);
    } finally {
      Catalogs.close(catalog);
    }
  }

  /**
   * Creates the table, or validates it (evolve: evolves its columns to fit every shard); returns
   * the writers' row type: the layout's, or with evolve the table's own schema, which the versioned
   * rows follow.
   */
  private static RowType createOrValidateTable(
      CatalogLoader catalogLoader,
      TableIdentifier tableId,
      TableLayout layout,
      ShardPlan plan,
      boolean evolve) {
    Catalog catalog = catalogLoader.loadCatalog();
    Map<String, String> namespace =
        Map.of(TableCreator.NAMESPACE_OWNER, System.getProperty("user.name", "shardberg"));
    try {
      if (!evolve) {
        TableCreator.createOrValidate(catalog, tableId, layout, namespace);
        return layout.rowType();
      }
      Table table =
          TableCreator.createOrEvolve(catalog, tableId, layout, plan.schema().columns(), namespace);
      return FlinkSchemaUtil.convert(table.schema());
    } finally {
      Catalogs.close(catalog);
    }
  }

  /**
   * Sets the job's checkpoints (exactly-once, {@code pipeline.checkpoint-*}, retained on cancel)
   * and its fixed-delay restarts ({@code pipeline.restart.*}) on {@code env}. {@link #build} calls
   * it; so does the load-test harness before {@link #buildSources}.
   */
  public static void configureCheckpointsAndRestarts(
      StreamExecutionEnvironment env, ShardbergConfig config) {
    PipelineConfig pipeline = config.pipeline();
    Configuration conf = new Configuration();
    conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, pipeline.checkpointInterval());
    conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.EXACTLY_ONCE);
    conf.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, pipeline.checkpointTimeout());
    if (pipeline.checkpointMinPause() != null) {
      conf.set(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS, pipeline.checkpointMinPause());
    }
    conf.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    if (pipeline.checkpointDir() != null) {
      conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, pipeline.checkpointDir());
    }
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(
        RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, pipeline.restartAttempts());
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, pipeline.restartDelay());
    env.configure(conf);
  }

  /** schema.change-behavior=evolve: the tagger evolves the table and emits versioned rows. */
  /**
   * The shard plan a start with {@code config} would find now (discovery on every host, as {@link
   * #build} runs it): for a running local {@code run} that looks for shard tables created
   * meanwhile.
   *
   * @throws dev.shardberg.router.ShardRouterException as a start would (a host that cannot be
   *     asked, two tables with one number, a shard whose columns differ)
   */
  public static ShardPlan discover(ShardbergConfig config) {
    return ShardDiscovery.discover(logicalTable(config), evolves(config));
  }

  static boolean evolves(ShardbergConfig config) {
    return config.target().schemaChangeBehavior() == SchemaChangeBehavior.EVOLVE;
  }

  /** The table's schema evolver for the taggers, or null (fixed layout; also without a catalog). */
  private static TableSchemaEvolver evolver(ShardbergConfig config) {
    if (!evolves(config) || config.target().catalog() == null) {
      return null;
    }
    TableLoader table =
        TableLoader.fromCatalog(
            Catalogs.loader(config.target().catalog()), Catalogs.identifier(config.target()));
    if (config.coordinator().haEnabled()) {
      // schema commits hold the table's ZooKeeper lock, like every other commit on the table
      ZooKeeperOptions zooKeeper = zooKeeperOptions(config);
      table =
          new LockedTableLoader(
              table,
              ZooKeeperTableLock.opener(zooKeeper, config.target().qualifiedName()),
              zooKeeper.lockTimeout());
    }
    return new TableSchemaEvolver(table, config.target().qualifiedName());
  }

  private static CommitGuardFactory commitGuard(ShardbergConfig config) {
    if (!config.coordinator().haEnabled()) {
      return CommitGuardFactory.none();
    }
    return new ZooKeeperCommitGuardFactory(zooKeeperOptions(config));
  }

  private static ZooKeeperOptions zooKeeperOptions(ShardbergConfig config) {
    ZooKeeperConfig zk = config.coordinator().zookeeper();
    return new ZooKeeperOptions(
        zk.connect(),
        zk.rootPath(),
        zk.sessionTimeout(),
        zk.connectionTimeout(),
        zk.lockTimeout(),
        zk.retryBaseSleep(),
        zk.retryMaxRetries());
  }
}
