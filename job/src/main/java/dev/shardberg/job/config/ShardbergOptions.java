package dev.shardberg.job.config;

import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.router.RouterOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * The job's own config keys (checkpoints, restarts, parallelism, the CDC source's knobs, the
 * catalog and the table's name) as Flink {@link ConfigOption}s, and the register of every key of a
 * Shardberg config file, whichever module declares it.
 *
 * <p>Keys live in the module that owns their behaviour: {@link RouterOptions} (shard-router: {@code
 * sources[].*}, {@code tables.*}, the table layout, the binlog watch), {@link
 * CoordinatorConfigOptions} (commit-coordinator: {@code pipeline.id}, heartbeats, the commit lock,
 * {@code coordinator.zookeeper.*}), {@link MaintenanceOptions} (commit-coordinator: {@code
 * maintenance.*}) and this class (everything the job assembles itself).
 *
 * <p><b>To add a key</b>: declare a {@code ConfigOption} (type, default, description) in the
 * options class of the module that reads it, list it in {@link #all()} below (its place there is
 * its place in docs/config.md), add it to {@link #REQUIRED} if it has no default and must be set,
 * read it with {@code configuration.get(OPTION)} where {@link ShardbergConfig} builds its records,
 * and regenerate docs/config.md ({@code ConfigReferenceTest} says how). The loader then accepts,
 * type-checks and suggests it by itself; cross-key rules go into {@link CrossKeyRules} (or its
 * {@link SourceRules} and {@link TargetRules}).
 */
public final class ShardbergOptions {
  private ShardbergOptions() {}

  // ---- pipeline ---------------------------------------------------------------------------------
  public static final ConfigOption<Duration> PIPELINE_CHECKPOINT_INTERVAL =
      ConfigOptions.key("pipeline.checkpoint-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(60))
          .withDescription(
              "Exactly-once checkpoint interval. One Iceberg commit per checkpoint: this is also the"
                  + " freshness of the table.");
  public static final ConfigOption<Duration> PIPELINE_CHECKPOINT_TIMEOUT =
      ConfigOptions.key("pipeline.checkpoint-timeout")
          .durationType()
          .defaultValue(Duration.ofMinutes(10))
          .withDescription("A checkpoint that takes longer fails.");
  public static final ConfigOption<Duration> PIPELINE_CHECKPOINT_MIN_PAUSE =
      ConfigOptions.key("pipeline.checkpoint-min-pause")
          .durationType()
          .noDefaultValue()
          .withDescription(
              "Minimum pause between the end of one checkpoint and the start of the next (Flink's"
                  + " execution.checkpointing.min-pause). Unset: the cluster's (Flink's default: none)."
                  + " When a checkpoint takes longer than the interval (a slow object store), Flink starts"
                  + " the next one at once and a backlog of changes may never drain; a pause of about half"
                  + " the interval lets each commit take the backlog in fewer, larger commits"
                  + " (docs/object-store.md).");
  public static final ConfigOption<String> PIPELINE_CHECKPOINT_DIR =
      ConfigOptions.key("pipeline.checkpoint-dir")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Checkpoint storage URI (e.g. hdfs:///flink/checkpoints or file:///var/shardberg/cp);"
                  + " retained on cancellation so the job can be resumed with `flink run -s`; a local"
                  + " `shardberg run` resumes from the newest one there by itself. Unset: the cluster's"
                  + " execution.checkpointing.dir; for a local run ./shardberg-data/checkpoints/<pipeline.id>.");
  public static final ConfigOption<Integer> PIPELINE_PARALLELISM =
      ConfigOptions.key("pipeline.parallelism")
          .intType()
          .defaultValue(1)
          .withDescription(
              "Parallelism of each host's MySQL source (snapshot readers). Every source's server-id range"
                  + " must hold at least this many ids.");
  public static final ConfigOption<Integer> PIPELINE_WRITER_PARALLELISM =
      ConfigOptions.key("pipeline.writer-parallelism")
          .intType()
          .noDefaultValue()
          .withDescription("Number of Iceberg writers. Unset: the same as pipeline.parallelism.");
  public static final ConfigOption<Integer> PIPELINE_RESTART_ATTEMPTS =
      ConfigOptions.key("pipeline.restart.attempts")
          .intType()
          .defaultValue(10)
          .withDescription("Fixed-delay restart strategy: attempts before the job fails for good.");
  public static final ConfigOption<Duration> PIPELINE_RESTART_DELAY =
      ConfigOptions.key("pipeline.restart.delay")
          .durationType()
          .defaultValue(Duration.ofSeconds(10))
          .withDescription("Delay between two restart attempts.");
  public static final ConfigOption<OnStatelessStart> PIPELINE_ON_STATELESS_START =
      ConfigOptions.key("pipeline.on-stateless-start")
          .enumType(OnStatelessStart.class)
          .defaultValue(OnStatelessStart.FAIL)
          .withDescription(
              "What a start without state (no checkpoint or savepoint to resume) does when the table already"
                  + " holds commits of this pipeline. fail: refuse to start, naming the resume command (a fresh"
                  + " snapshot on top would keep every row deleted in MySQL meanwhile). resnapshot: remove the"
                  + " rows of this pipeline's shards from the table in one commit, then snapshot them again"
                  + " (needs source.startup-mode initial; readers see those shards empty until the snapshot"
                  + " commits).");

  // ---- source: CDC knobs, the same for every host
  // ------------------------------------------------
  public static final ConfigOption<StartupMode> SOURCE_STARTUP_MODE =
      ConfigOptions.key("source.startup-mode")
          .enumType(StartupMode.class)
          .defaultValue(StartupMode.INITIAL)
          .withDescription(
              "initial (snapshot, then binlog) | latest (binlog from now on, no snapshot) | timestamp"
                  + " (binlog from source.startup-timestamp).");
  public static final ConfigOption<String> SOURCE_STARTUP_TIMESTAMP =
      ConfigOptions.key("source.startup-timestamp")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Start of the binlog for startup-mode timestamp: ISO-8601 instant (2026-01-31T12:00:00Z)"
                  + " or epoch milliseconds.");
  public static final ConfigOption<Integer> SOURCE_SNAPSHOT_CHUNK_SIZE =
      ConfigOptions.key("source.snapshot-chunk-size")
          .intType()
          .defaultValue(8096)
          .withDescription("Rows per snapshot chunk (split) of a shard table.");
  public static final ConfigOption<Integer> SOURCE_FETCH_SIZE =
      ConfigOptions.key("source.fetch-size")
          .intType()
          .defaultValue(1024)
          .withDescription("JDBC fetch size while reading a snapshot chunk.");
  public static final ConfigOption<Integer> SOURCE_CONNECTION_POOL_SIZE =
      ConfigOptions.key("source.connection-pool-size")
          .intType()
          .defaultValue(20)
          .withDescription("JDBC connection pool size per source.");
  public static final ConfigOption<Duration> SOURCE_POLL_INTERVAL =
      ConfigOptions.key("source.poll-interval")
          .durationType()
          .defaultValue(Duration.ofMillis(50))
          .withDescription(
              "Debezium poll.interval.ms: how long a reader waits for new records. Debezium's 500 ms"
                  + " default leaves the snapshot phase latency-bound.");
  public static final ConfigOption<String> SOURCE_SERVER_TIME_ZONE =
      ConfigOptions.key("source.server-time-zone")
          .stringType()
          .defaultValue("UTC")
          .withDescription(
              "Session time zone of the MySQL servers (for TIMESTAMP columns), e.g. UTC or Europe/Berlin.");
  public static final ConfigOption<Duration> SOURCE_CONNECT_TIMEOUT =
      ConfigOptions.key("source.connect-timeout")
          .durationType()
          .defaultValue(Duration.ofSeconds(30))
          .withDescription("Timeout of a connection to MySQL.");
  public static final ConfigOption<Duration> SOURCE_HEARTBEAT_INTERVAL =
      ConfigOptions.key("source.heartbeat-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(30))
          .withDescription("Binlog heartbeat: keeps the binlog offset moving on an idle server.");
  public static final ConfigOption<Duration> SOURCE_KEEP_ALIVE_INTERVAL =
      ConfigOptions.key("source.keep-alive-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(5))
          .withDescription(
              "Binlog connection keep-alive (Debezium connect.keep.alive.interval.ms): the server sends a heartbeat"
                  + " every 0.8 x this, and a connection silent for longer is reconnected. Short means a lost connection"
                  + " is noticed in seconds; keep it above the longest pause of the job's reading (backpressure).");
  public static final ConfigOption<Map<String, String>> SOURCE_DEBEZIUM_PROPERTIES =
      ConfigOptions.key("source.debezium-properties")
          .mapType()
          .defaultValue(Map.of())
          .withDescription(
              "Pass-through Debezium properties; they win over the values derived from the keys above."
                  + " database.jdbc.driver and database.database.jdbc.driver are refused: Shardberg sets them (docs/sources.md).");

  // ---- target: the catalog and the table's name
  // ----------------------------------------------------
  public static final ConfigOption<CatalogType> TARGET_CATALOG_TYPE =
      ConfigOptions.key("target.catalog.type")
          .enumType(CatalogType.class)
          .noDefaultValue()
          .withDescription("hadoop | hive | rest | jdbc.");
  public static final ConfigOption<String> TARGET_CATALOG_NAME =
      ConfigOptions.key("target.catalog.name")
          .stringType()
          .defaultValue("shardberg")
          .withDescription(
              "Name of the catalog inside the job (shows up in logs and in the commit-lock name).");
  public static final ConfigOption<String> TARGET_CATALOG_URI =
      ConfigOptions.key("target.catalog.uri")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Metastore URI (hive: thrift://host:9083), REST catalog URL (rest) or JDBC URL of the"
                  + " catalog's database (jdbc: jdbc:mysql://host:3306/iceberg_catalog,"
                  + " jdbc:postgresql://…). Required for hive, rest and jdbc.");
  public static final ConfigOption<String> TARGET_CATALOG_WAREHOUSE =
      ConfigOptions.key("target.catalog.warehouse")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Warehouse location (hdfs://…, file:/…; s3://…, gs://… behind a hive, rest or jdbc catalog)."
                  + " Required for hadoop, which is refused on an object store: it has no atomic"
                  + " swap of the table's metadata there.");
  public static final ConfigOption<String> TARGET_CATALOG_HADOOP_CONF_DIR =
      ConfigOptions.key("target.catalog.hadoop-conf-dir")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Directory with core-site.xml / hdfs-site.xml / hive-site.xml to load into the Hadoop"
                  + " configuration of the catalog.");
  public static final ConfigOption<String> TARGET_CATALOG_JDBC_USER =
      ConfigOptions.key("target.catalog.jdbc.user")
          .stringType()
          .noDefaultValue()
          .withDescription("Database user of a jdbc catalog. Required for jdbc.");
  public static final ConfigOption<String> TARGET_CATALOG_JDBC_PASSWORD_ENV =
      ConfigOptions.key("target.catalog.jdbc.password-env")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Name of the environment variable holding the jdbc catalog user's password. Exactly"
                  + " one of password-env and password-file for type jdbc.");
  public static final ConfigOption<String> TARGET_CATALOG_JDBC_PASSWORD_FILE =
      ConfigOptions.key("target.catalog.jdbc.password-file")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Path of a file holding the jdbc catalog user's password (one trailing line break"
                  + " removed).");
  public static final ConfigOption<Map<String, String>> TARGET_CATALOG_PROPERTIES =
      ConfigOptions.key("target.catalog.properties")
          .mapType()
          .defaultValue(Map.of())
          .withDescription(
              "Pass-through catalog properties, e.g. Kerberos (hive.metastore.sasl.enabled,"
                  + " hive.metastore.kerberos.principal), io-impl, client pool size.");
  public static final ConfigOption<String> TARGET_NAMESPACE =
      ConfigOptions.key("target.namespace")
          .stringType()
          .noDefaultValue()
          .withDescription("Iceberg namespace (Hive database) of the table; created when missing.");
  public static final ConfigOption<String> TARGET_TABLE =
      ConfigOptions.key("target.table")
          .stringType()
          .noDefaultValue()
          .withDescription("Iceberg table name; created when missing.");

  // ---- the register: every key of a config file, in documentation order
  // ---------------------------

  private static final List<ConfigOption<?>> ALL =
      List.of(
          CoordinatorConfigOptions.PIPELINE_ID,
          PIPELINE_CHECKPOINT_INTERVAL,
          PIPELINE_CHECKPOINT_TIMEOUT,
          PIPELINE_CHECKPOINT_MIN_PAUSE,
          PIPELINE_CHECKPOINT_DIR,
          PIPELINE_PARALLELISM,
          PIPELINE_WRITER_PARALLELISM,
          CoordinatorConfigOptions.HEARTBEAT_EVERY_EMPTY_CHECKPOINTS,
          PIPELINE_RESTART_ATTEMPTS,
          PIPELINE_RESTART_DELAY,
          PIPELINE_ON_STATELESS_START,
          RouterOptions.SOURCES,
          RouterOptions.SOURCE_NAME,
          RouterOptions.SOURCE_HOST,
          RouterOptions.SOURCE_PORT,
          RouterOptions.SOURCE_USER,
          RouterOptions.SOURCE_PASSWORD_ENV,
          RouterOptions.SOURCE_PASSWORD_FILE,
          RouterOptions.SOURCE_JDBC_PROPERTIES,
          RouterOptions.SOURCE_SERVER_ID_RANGE,
          RouterOptions.TABLES_DATABASE_PATTERN,
          RouterOptions.TABLES_TABLE_PATTERN,
          RouterOptions.TABLES_SHARD_MAP,
          RouterOptions.TABLES_KEY_COLUMNS,
          RouterOptions.TABLES_EXCLUDE_SHARDS,
          RouterOptions.TABLES_REREAD_SHARDS,
          RouterOptions.TABLES_DROPPED_SHARDS,
          RouterOptions.TABLES_NEW_SHARDS,
          RouterOptions.TABLES_DISCOVERY_INTERVAL,
          SOURCE_STARTUP_MODE,
          SOURCE_STARTUP_TIMESTAMP,
          SOURCE_SNAPSHOT_CHUNK_SIZE,
          SOURCE_FETCH_SIZE,
          SOURCE_CONNECTION_POOL_SIZE,
          SOURCE_POLL_INTERVAL,
          SOURCE_SERVER_TIME_ZONE,
          SOURCE_CONNECT_TIMEOUT,
          SOURCE_HEARTBEAT_INTERVAL,
          RouterOptions.SOURCE_BINLOG_FORMAT_CHECK_INTERVAL,
          SOURCE_KEEP_ALIVE_INTERVAL,
          RouterOptions.SOURCE_HEALTH_CHECK_INTERVAL,
          RouterOptions.SOURCE_UNREACHABLE_TIMEOUT,
          SOURCE_DEBEZIUM_PROPERTIES,
          TARGET_CATALOG_TYPE,
          TARGET_CATALOG_NAME,
          TARGET_CATALOG_URI,
          TARGET_CATALOG_WAREHOUSE,
          TARGET_CATALOG_HADOOP_CONF_DIR,
          TARGET_CATALOG_JDBC_USER,
          TARGET_CATALOG_JDBC_PASSWORD_ENV,
          TARGET_CATALOG_JDBC_PASSWORD_FILE,
          TARGET_CATALOG_PROPERTIES,
          TARGET_NAMESPACE,
          TARGET_TABLE,
          RouterOptions.TARGET_BUCKETS,
          RouterOptions.TARGET_KEY_COLUMN,
          RouterOptions.TARGET_TABLE_PROPERTIES,
          CoordinatorConfigOptions.INSERT_ONLY_INITIAL_LOAD,
          CoordinatorConfigOptions.DELETE_MODE,
          CoordinatorConfigOptions.CLOSE_CONCURRENCY,
          RouterOptions.SCHEMA_CHANGE_BEHAVIOR,
          CoordinatorConfigOptions.LOCK_TIMEOUT,
          CoordinatorConfigOptions.ZK_CONNECT,
          CoordinatorConfigOptions.ZK_ROOT_PATH,
          CoordinatorConfigOptions.ZK_SESSION_TIMEOUT,
          CoordinatorConfigOptions.ZK_CONNECTION_TIMEOUT,
          CoordinatorConfigOptions.ZK_LOCK_TIMEOUT,
          CoordinatorConfigOptions.ZK_RETRY_BASE_SLEEP,
          CoordinatorConfigOptions.ZK_RETRY_MAX_RETRIES,
          MaintenanceOptions.ENABLED,
          MaintenanceOptions.INTERVAL,
          MaintenanceOptions.COMPACTION_ENABLED,
          MaintenanceOptions.COMPACTION_TARGET_FILE_SIZE,
          MaintenanceOptions.COMPACTION_MIN_SMALL_FILES,
          MaintenanceOptions.COMPACTION_MAX_PARTITIONS_PER_CYCLE,
          MaintenanceOptions.COMPACTION_MAX_BYTES_PER_CYCLE,
          MaintenanceOptions.COMPACTION_MERGE_MIN_FILES,
          MaintenanceOptions.EXPIRE_SNAPSHOTS_ENABLED,
          MaintenanceOptions.EXPIRE_SNAPSHOTS_MAX_AGE,
          MaintenanceOptions.EXPIRE_SNAPSHOTS_RETAIN_LAST,
          MaintenanceOptions.ORPHAN_FILES_ENABLED,
          MaintenanceOptions.ORPHAN_FILES_INTERVAL,
          MaintenanceOptions.ORPHAN_FILES_MIN_AGE,
          MaintenanceOptions.REWRITE_MANIFESTS_MAX_MANIFESTS);

  /** Keys without a default that every config file must set ({@code sources[].*}: every entry). */
  private static final Set<String> REQUIRED =
      keys(
          CoordinatorConfigOptions.PIPELINE_ID,
          RouterOptions.SOURCES,
          RouterOptions.SOURCE_NAME,
          RouterOptions.SOURCE_HOST,
          RouterOptions.SOURCE_USER,
          RouterOptions.SOURCE_SERVER_ID_RANGE,
          RouterOptions.TABLES_DATABASE_PATTERN,
          RouterOptions.TABLES_TABLE_PATTERN,
          TARGET_CATALOG_TYPE,
          TARGET_NAMESPACE,
          TARGET_TABLE);

  private static final Map<String, ConfigOption<?>> BY_KEY = new LinkedHashMap<>();

  static {
    for (ConfigOption<?> option : ALL) {
      if (BY_KEY.put(option.key(), option) != null) {
        throw new IllegalStateException("Config key " + option.key() + " is declared twice");
      }
    }
  }

  /** Every key, in documentation order. */
  public static List<ConfigOption<?>> all() {
    return ALL;
  }

  /** The keys of one {@code sources[]} entry. */
  public static List<ConfigOption<?>> perSource() {
    return ALL.stream().filter(ShardbergOptions::isPerSource).toList();
  }

  /** The keys outside the {@code sources[]} entries. */
  public static List<ConfigOption<?>> topLevel() {
    return ALL.stream().filter(o -> !isPerSource(o)).toList();
  }

  public static boolean isPerSource(ConfigOption<?> option) {
    return option.key().startsWith(RouterOptions.SOURCE_PREFIX);
  }

  public static boolean isRequired(ConfigOption<?> option) {
    return REQUIRED.contains(option.key());
  }

  /** The key with this path ({@code sources[].host} form for list elements). */
  public static Optional<ConfigOption<?>> find(String path) {
    return Optional.ofNullable(BY_KEY.get(path));
  }

  private static Set<String> keys(ConfigOption<?>... options) {
    return java.util.Arrays.stream(options)
        .map(ConfigOption::key)
        .collect(Collectors.toUnmodifiableSet());
  }
}
