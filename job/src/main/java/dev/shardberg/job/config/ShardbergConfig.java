package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.DeleteMode;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.router.DroppedShards;
import dev.shardberg.router.NewShards;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.SchemaChangeBehavior;
import dev.shardberg.router.Secret;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;

/**
 * One logical table's config, typed and validated: {@link #from} reads every record from the Flink
 * {@link Configuration} the {@link ConfigLoader} made of the YAML file, with {@code
 * configuration.get(OPTION)} (see {@link ShardbergOptions#all()} for every key and {@link
 * ConfigLoader} for the rules). Holds no secret: passwords are referenced by environment variable
 * or file and read only when a connection is opened.
 */
public record ShardbergConfig(
    PipelineConfig pipeline,
    List<SourceConfig> sources,
    TablesConfig tables,
    CdcConfig cdc,
    TargetConfig target,
    CoordinatorConfig coordinator,
    MaintenanceSettings maintenance)
    implements Serializable {

  public ShardbergConfig {
    sources = List.copyOf(sources);
  }

  /** This config with {@code target} in place of its target. */
  public ShardbergConfig withTarget(TargetConfig target) {
    return new ShardbergConfig(pipeline, sources, tables, cdc, target, coordinator, maintenance);
  }

  /** Reads and validates a config file; throws {@link ConfigException} naming every problem. */
  public static ShardbergConfig load(Path file) {
    return ConfigLoader.load(file);
  }

  /**
   * The records of a validated configuration: {@code conf} holds the top-level keys, {@code
   * sources} one configuration per {@code sources[]} entry (keys {@code sources[].*}).
   */
  static ShardbergConfig from(Configuration conf, List<Configuration> sources) {
    return new ShardbergConfig(
        PipelineConfig.from(conf),
        sources.stream().map(SourceConfig::from).toList(),
        TablesConfig.from(conf),
        CdcConfig.from(conf),
        TargetConfig.from(conf),
        CoordinatorConfig.from(conf),
        MaintenanceSettings.from(conf));
  }

  public record PipelineConfig(
      String id,
      Duration checkpointInterval,
      Duration checkpointTimeout,
      Duration checkpointMinPause,
      String checkpointDir,
      int parallelism,
      int writerParallelism,
      int heartbeatEveryEmptyCheckpoints,
      int restartAttempts,
      Duration restartDelay,
      OnStatelessStart onStatelessStart)
      implements Serializable {
    static PipelineConfig from(Configuration conf) {
      int parallelism = conf.get(PIPELINE_PARALLELISM);
      return new PipelineConfig(
          conf.get(CoordinatorConfigOptions.PIPELINE_ID),
          conf.get(PIPELINE_CHECKPOINT_INTERVAL),
          conf.get(PIPELINE_CHECKPOINT_TIMEOUT),
          conf.getOptional(PIPELINE_CHECKPOINT_MIN_PAUSE).orElse(null),
          conf.get(PIPELINE_CHECKPOINT_DIR),
          parallelism,
          conf.getOptional(PIPELINE_WRITER_PARALLELISM).orElse(parallelism),
          conf.get(CoordinatorConfigOptions.HEARTBEAT_EVERY_EMPTY_CHECKPOINTS),
          conf.get(PIPELINE_RESTART_ATTEMPTS),
          conf.get(PIPELINE_RESTART_DELAY),
          conf.get(PIPELINE_ON_STATELESS_START));
    }
  }

  public record SourceConfig(
      String name,
      String host,
      int port,
      String user,
      PasswordRef password,
      Map<String, String> jdbcProperties,
      ServerIdRange serverIds)
      implements Serializable {
    public SourceConfig {
      jdbcProperties = Map.copyOf(jdbcProperties);
    }

    /** One {@code sources[]} entry. */
    static SourceConfig from(Configuration source) {
      String env = source.get(RouterOptions.SOURCE_PASSWORD_ENV);
      return new SourceConfig(
          source.get(RouterOptions.SOURCE_NAME),
          source.get(RouterOptions.SOURCE_HOST),
          source.get(RouterOptions.SOURCE_PORT),
          source.get(RouterOptions.SOURCE_USER),
          env != null
              ? PasswordRef.ofEnv(env)
              : PasswordRef.ofFile(source.get(RouterOptions.SOURCE_PASSWORD_FILE)),
          source.get(RouterOptions.SOURCE_JDBC_PROPERTIES),
          ServerIdRange.parse(source.get(RouterOptions.SOURCE_SERVER_ID_RANGE)));
    }

    @Override
    public String toString() {
      return "source '"
          + name
          + "' ("
          + user
          + "@"
          + host
          + ":"
          + port
          + ", password "
          + password
          + ", server ids "
          + serverIds
          + ")";
    }
  }

  /**
   * Where a password comes from: an environment variable or a file. The job reads it (through the
   * router's {@code Secret}) when it assembles the sources; {@link #toString()} names the
   * reference.
   */
  public record PasswordRef(String env, String file) implements Serializable {
    public static PasswordRef ofEnv(String variable) {
      return new PasswordRef(variable, null);
    }

    public static PasswordRef ofFile(String path) {
      return new PasswordRef(null, path);
    }

    /** Reads the password now (where the job is built); fails naming the variable or file. */
    public Secret read() {
      return env != null ? Secret.fromEnv(env) : Secret.fromFile(java.nio.file.Path.of(file));
    }

    @Override
    public String toString() {
      return env != null ? "env:" + env : "file:" + file;
    }
  }

  /** An inclusive range of binlog client server ids, e.g. {@code 5400-5403}. */
  public record ServerIdRange(int first, int last) implements Serializable {
    /** {@code FIRST-LAST} or a single id; the loader checks the bounds. */
    static final Pattern SYNTAX = Pattern.compile("\\s*(\\d+)\\s*(?:-\\s*(\\d+)\\s*)?");

    /** A range the loader has accepted. */
    static ServerIdRange parse(String text) {
      Matcher m = SYNTAX.matcher(text);
      if (!m.matches()) {
        throw new IllegalArgumentException("Not a server-id range: " + text);
      }
      int first = Integer.parseInt(m.group(1));
      return new ServerIdRange(first, m.group(2) == null ? first : Integer.parseInt(m.group(2)));
    }

    public int size() {
      return last - first + 1;
    }

    public boolean overlaps(ServerIdRange other) {
      return first <= other.last && other.first <= last;
    }

    @Override
    public String toString() {
      return first == last ? Integer.toString(first) : first + "-" + last;
    }
  }

  public record TablesConfig(
      String databasePattern,
      String tablePattern,
      Map<String, Integer> shardMap,
      List<String> keyColumns,
      java.util.Set<Integer> excludeShards,
      java.util.Set<Integer> rereadShards,
      DroppedShards droppedShards,
      NewShards newShards,
      java.time.Duration discoveryInterval)
      implements Serializable {
    public TablesConfig {
      shardMap = Map.copyOf(shardMap);
      keyColumns = List.copyOf(keyColumns);
      excludeShards = java.util.Set.copyOf(excludeShards);
      rereadShards = java.util.Set.copyOf(rereadShards);
    }

    static TablesConfig from(Configuration conf) {
      Map<String, Integer> shardMap = new LinkedHashMap<>();
      conf.get(RouterOptions.TABLES_SHARD_MAP)
          .forEach((table, number) -> shardMap.put(table, Integer.parseInt(number.trim())));
      return new TablesConfig(
          conf.get(RouterOptions.TABLES_DATABASE_PATTERN),
          conf.get(RouterOptions.TABLES_TABLE_PATTERN),
          shardMap,
          conf.get(RouterOptions.TABLES_KEY_COLUMNS),
          new java.util.TreeSet<>(conf.get(RouterOptions.TABLES_EXCLUDE_SHARDS)),
          new java.util.TreeSet<>(conf.get(RouterOptions.TABLES_REREAD_SHARDS)),
          conf.get(RouterOptions.TABLES_DROPPED_SHARDS),
          conf.get(RouterOptions.TABLES_NEW_SHARDS),
          conf.get(RouterOptions.TABLES_DISCOVERY_INTERVAL));
    }

    public Pattern databaseRegex() {
      return Pattern.compile(databasePattern);
    }

    public Pattern tableRegex() {
      return Pattern.compile(tablePattern);
    }
  }

  public record CdcConfig(
      StartupMode startupMode,
      Instant startupTimestamp,
      int snapshotChunkSize,
      int fetchSize,
      int connectionPoolSize,
      Duration pollInterval,
      String serverTimeZone,
      Duration connectTimeout,
      Duration heartbeatInterval,
      Duration binlogFormatCheckInterval,
      Duration keepAliveInterval,
      Duration healthCheckInterval,
      Duration unreachableTimeout,
      Map<String, String> debeziumProperties)
      implements Serializable {
    public CdcConfig {
      debeziumProperties = Map.copyOf(debeziumProperties);
    }

    static CdcConfig from(Configuration conf) {
      String timestamp = conf.get(SOURCE_STARTUP_TIMESTAMP);
      return new CdcConfig(
          conf.get(SOURCE_STARTUP_MODE),
          timestamp == null ? null : parseTimestamp(timestamp),
          conf.get(SOURCE_SNAPSHOT_CHUNK_SIZE),
          conf.get(SOURCE_FETCH_SIZE),
          conf.get(SOURCE_CONNECTION_POOL_SIZE),
          conf.get(SOURCE_POLL_INTERVAL),
          conf.get(SOURCE_SERVER_TIME_ZONE),
          conf.get(SOURCE_CONNECT_TIMEOUT),
          conf.get(SOURCE_HEARTBEAT_INTERVAL),
          conf.get(RouterOptions.SOURCE_BINLOG_FORMAT_CHECK_INTERVAL),
          conf.get(SOURCE_KEEP_ALIVE_INTERVAL),
          conf.get(RouterOptions.SOURCE_HEALTH_CHECK_INTERVAL),
          conf.get(RouterOptions.SOURCE_UNREACHABLE_TIMEOUT),
          conf.get(SOURCE_DEBEZIUM_PROPERTIES));
    }

    /** {@code source.startup-timestamp}: epoch milliseconds or an ISO-8601 instant. */
    static Instant parseTimestamp(String text) {
      return text.chars().allMatch(Character::isDigit)
          ? Instant.ofEpochMilli(Long.parseLong(text))
          : Instant.parse(text);
    }

    @Override
    public String toString() {
      return "CdcConfig[startupMode="
          + startupMode
          + ", startupTimestamp="
          + startupTimestamp
          + ", snapshotChunkSize="
          + snapshotChunkSize
          + ", fetchSize="
          + fetchSize
          + ", connectionPoolSize="
          + connectionPoolSize
          + ", pollInterval="
          + pollInterval
          + ", serverTimeZone="
          + serverTimeZone
          + ", connectTimeout="
          + connectTimeout
          + ", heartbeatInterval="
          + heartbeatInterval
          + ", binlogFormatCheckInterval="
          + binlogFormatCheckInterval
          + ", keepAliveInterval="
          + keepAliveInterval
          + ", healthCheckInterval="
          + healthCheckInterval
          + ", unreachableTimeout="
          + unreachableTimeout
          + ", debeziumProperties="
          + masked(debeziumProperties)
          + "]";
    }
  }

  /**
   * @param jdbcUser the jdbc catalog's database user (type jdbc only)
   * @param jdbcPassword where its password is (type jdbc only; read when the job is built)
   */
  public record CatalogConfig(
      CatalogType type,
      String name,
      String uri,
      String warehouse,
      String hadoopConfDir,
      Map<String, String> properties,
      String jdbcUser,
      PasswordRef jdbcPassword)
      implements Serializable {
    public CatalogConfig {
      properties = Map.copyOf(properties);
    }

    static CatalogConfig from(Configuration conf) {
      String passwordEnv = conf.get(TARGET_CATALOG_JDBC_PASSWORD_ENV);
      String passwordFile = conf.get(TARGET_CATALOG_JDBC_PASSWORD_FILE);
      return new CatalogConfig(
          conf.get(TARGET_CATALOG_TYPE),
          conf.get(TARGET_CATALOG_NAME),
          conf.get(TARGET_CATALOG_URI),
          conf.get(TARGET_CATALOG_WAREHOUSE),
          conf.get(TARGET_CATALOG_HADOOP_CONF_DIR),
          conf.get(TARGET_CATALOG_PROPERTIES),
          conf.get(TARGET_CATALOG_JDBC_USER),
          passwordEnv == null && passwordFile == null
              ? null
              : new PasswordRef(passwordEnv, passwordFile));
    }

    /**
     * Pass-through properties may hold credentials (REST tokens, S3 keys): mask what looks like
     * one.
     */
    @Override
    public String toString() {
      return "CatalogConfig[type="
          + type
          + ", name="
          + name
          + ", uri="
          + uri
          + ", warehouse="
          + warehouse
          + ", hadoopConfDir="
          + hadoopConfDir
          + ", properties="
          + masked(properties)
          + (jdbcUser == null ? "" : ", jdbcUser=" + jdbcUser + ", jdbcPassword=" + jdbcPassword)
          + "]";
    }
  }

  public record TargetConfig(
      CatalogConfig catalog,
      String namespace,
      String table,
      int buckets,
      String keyColumn,
      Map<String, String> tableProperties,
      boolean insertOnlyInitialLoad,
      SchemaChangeBehavior schemaChangeBehavior,
      DeleteMode deleteMode,
      int closeConcurrency)
      implements Serializable {
    public TargetConfig {
      tableProperties = Map.copyOf(tableProperties);
    }

    /**
     * How the writers delete rows: {@code target.delete-mode} as set, or as resolved for the table
     * at the start ({@code DeleteModes} in the job) when it is not set.
     *
     * @throws IllegalStateException not set and not resolved yet
     */
    @Override
    public DeleteMode deleteMode() {
      if (deleteMode == null) {
        throw new IllegalStateException(
            "target.delete-mode is not set and was not resolved for table "
                + namespace
                + "."
                + table
                + " yet");
      }
      return deleteMode;
    }

    /** Whether {@code target.delete-mode} is set (or resolved); unset: chosen per table. */
    public boolean deleteModeSet() {
      return deleteMode != null;
    }

    /** This target with {@code mode} as its delete mode. */
    public TargetConfig withDeleteMode(DeleteMode mode) {
      return new TargetConfig(
          catalog,
          namespace,
          table,
          buckets,
          keyColumn,
          tableProperties,
          insertOnlyInitialLoad,
          schemaChangeBehavior,
          mode,
          closeConcurrency);
    }

    static TargetConfig from(Configuration conf) {
      return new TargetConfig(
          CatalogConfig.from(conf),
          conf.get(TARGET_NAMESPACE),
          conf.get(TARGET_TABLE),
          conf.get(RouterOptions.TARGET_BUCKETS),
          conf.get(RouterOptions.TARGET_KEY_COLUMN),
          conf.get(RouterOptions.TARGET_TABLE_PROPERTIES),
          conf.get(CoordinatorConfigOptions.INSERT_ONLY_INITIAL_LOAD),
          conf.get(RouterOptions.SCHEMA_CHANGE_BEHAVIOR),
          conf.getOptional(CoordinatorConfigOptions.DELETE_MODE).orElse(null),
          conf.get(CoordinatorConfigOptions.CLOSE_CONCURRENCY));
    }

    /** {@code catalog.namespace.table}, the name used in logs and for the commit lock. */
    public String qualifiedName() {
      return catalog.name() + "." + namespace + "." + table;
    }
  }

  public record ZooKeeperConfig(
      String connect,
      String rootPath,
      Duration sessionTimeout,
      Duration connectionTimeout,
      Duration lockTimeout,
      Duration retryBaseSleep,
      int retryMaxRetries)
      implements Serializable {}

  /** {@code zookeeper} is null unless {@code coordinator.zookeeper.connect} is set. */
  public record CoordinatorConfig(Duration lockTimeout, ZooKeeperConfig zookeeper)
      implements Serializable {
    static CoordinatorConfig from(Configuration conf) {
      Duration lockTimeout = conf.get(CoordinatorConfigOptions.LOCK_TIMEOUT);
      String connect = conf.get(CoordinatorConfigOptions.ZK_CONNECT);
      if (connect == null) {
        return new CoordinatorConfig(lockTimeout, null);
      }
      return new CoordinatorConfig(
          lockTimeout,
          new ZooKeeperConfig(
              connect,
              conf.get(CoordinatorConfigOptions.ZK_ROOT_PATH),
              conf.get(CoordinatorConfigOptions.ZK_SESSION_TIMEOUT),
              conf.get(CoordinatorConfigOptions.ZK_CONNECTION_TIMEOUT),
              conf.getOptional(CoordinatorConfigOptions.ZK_LOCK_TIMEOUT).orElse(lockTimeout),
              conf.get(CoordinatorConfigOptions.ZK_RETRY_BASE_SLEEP),
              conf.get(CoordinatorConfigOptions.ZK_RETRY_MAX_RETRIES)));
    }

    public boolean haEnabled() {
      return zookeeper != null;
    }

    /**
     * How long one commit of the job waits for the table's lock: {@code
     * coordinator.zookeeper.lock-timeout} in HA mode (which defaults to {@code
     * coordinator.lock-timeout}); without ZooKeeper there is no lock to wait for.
     */
    public Duration commitLockTimeout() {
      return zookeeper != null ? zookeeper.lockTimeout() : lockTimeout;
    }
  }

  static Map<String, String> masked(Map<String, String> properties) {
    Map<String, String> shown = new TreeMap<>();
    properties.forEach((k, v) -> shown.put(k, looksSecret(k) ? "******" : v));
    return shown;
  }

  static boolean looksSecret(String propertyKey) {
    String k = propertyKey.toLowerCase(Locale.ROOT);
    return k.contains("password")
        || k.contains("secret")
        || k.contains("token")
        || k.contains("credential")
        || k.endsWith(".key")
        || k.contains("access-key")
        || k.contains("access.key");
  }
}
