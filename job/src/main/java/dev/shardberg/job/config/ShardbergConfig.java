package dev.shardberg.job.config;

import dev.shardberg.router.SchemaChangeBehavior;

import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * One logical table's config, typed and validated (see {@link ShardbergOptions} for every key and
 * {@link ConfigLoader} for the rules). Holds no secret: passwords are referenced by environment
 * variable or file and read only when a connection is opened.
 */
public record ShardbergConfig(
    PipelineConfig pipeline,
    List<SourceConfig> sources,
    TablesConfig tables,
    CdcConfig cdc,
    TargetConfig target,
    CoordinatorConfig coordinator)
    implements Serializable {

  public ShardbergConfig {
    sources = List.copyOf(sources);
  }

  /** Reads and validates a config file; throws {@link ConfigException} naming every problem. */
  public static ShardbergConfig load(Path file) {
    return ConfigLoader.load(file);
  }

  public record PipelineConfig(
      String id,
      Duration checkpointInterval,
      Duration checkpointTimeout,
      String checkpointDir,
      int parallelism,
      int writerParallelism,
      int heartbeatEveryEmptyCheckpoints,
      int restartAttempts,
      Duration restartDelay,
      OnStatelessStart onStatelessStart)
      implements Serializable {}

  /** {@code pipeline.on-stateless-start}: what a start without state does on a table this pipeline wrote. */
  public enum OnStatelessStart {
    FAIL,
    RESNAPSHOT;

    static OnStatelessStart parse(String value) {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    }

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
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

    @Override
    public String toString() {
      return "source '" + name + "' (" + user + "@" + host + ":" + port + ", password " + password + ", server ids " + serverIds + ")";
    }
  }

  /**
   * Where a password comes from: an environment variable or a file. The job reads it (through the
   * router's {@code Secret}) when it assembles the sources; {@link #toString()} names the reference.
   */
  public record PasswordRef(String env, String file) implements Serializable {
    public static PasswordRef ofEnv(String variable) {
      return new PasswordRef(variable, null);
    }

    public static PasswordRef ofFile(String path) {
      return new PasswordRef(null, path);
    }

    @Override
    public String toString() {
      return env != null ? "env:" + env : "file:" + file;
    }
  }

  /** An inclusive range of binlog client server ids, e.g. {@code 5400-5403}. */
  public record ServerIdRange(int first, int last) implements Serializable {
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
      String databasePattern, String tablePattern, Map<String, Integer> shardMap, List<String> keyColumns)
      implements Serializable {
    public TablesConfig {
      shardMap = Map.copyOf(shardMap);
      keyColumns = List.copyOf(keyColumns);
    }

    public Pattern databaseRegex() {
      return Pattern.compile(databasePattern);
    }

    public Pattern tableRegex() {
      return Pattern.compile(tablePattern);
    }
  }

  public enum StartupMode {
    INITIAL,
    LATEST,
    TIMESTAMP;

    static StartupMode parse(String value) {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    }

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
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
      Map<String, String> debeziumProperties)
      implements Serializable {
    public CdcConfig {
      debeziumProperties = Map.copyOf(debeziumProperties);
    }

    @Override
    public String toString() {
      return "CdcConfig[startupMode=" + startupMode + ", startupTimestamp=" + startupTimestamp
          + ", snapshotChunkSize=" + snapshotChunkSize + ", fetchSize=" + fetchSize
          + ", connectionPoolSize=" + connectionPoolSize + ", pollInterval=" + pollInterval
          + ", serverTimeZone=" + serverTimeZone + ", connectTimeout=" + connectTimeout
          + ", heartbeatInterval=" + heartbeatInterval + ", binlogFormatCheckInterval=" + binlogFormatCheckInterval
          + ", debeziumProperties=" + masked(debeziumProperties) + "]";
    }
  }

  public enum CatalogType {
    HADOOP,
    HIVE,
    REST;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public record CatalogConfig(
      CatalogType type,
      String name,
      String uri,
      String warehouse,
      String hadoopConfDir,
      Map<String, String> properties)
      implements Serializable {
    public CatalogConfig {
      properties = Map.copyOf(properties);
    }

    /** Pass-through properties may hold credentials (REST tokens, S3 keys): mask what looks like one. */
    @Override
    public String toString() {
      return "CatalogConfig[type=" + type + ", name=" + name + ", uri=" + uri + ", warehouse=" + warehouse
          + ", hadoopConfDir=" + hadoopConfDir + ", properties=" + masked(properties) + "]";
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
      SchemaChangeBehavior schemaChangeBehavior)
      implements Serializable {
    public TargetConfig {
      tableProperties = Map.copyOf(tableProperties);
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
  public record CoordinatorConfig(Duration lockTimeout, ZooKeeperConfig zookeeper) implements Serializable {
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
    return k.contains("password") || k.contains("secret") || k.contains("token") || k.contains("credential")
        || k.endsWith(".key") || k.contains("access-key") || k.contains("access.key");
  }
}
