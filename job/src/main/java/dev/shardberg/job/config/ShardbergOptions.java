package dev.shardberg.job.config;

import static dev.shardberg.job.config.ConfigKey.optional;
import static dev.shardberg.job.config.ConfigKey.required;

import dev.shardberg.job.config.ConfigKey.Kind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every key of a Shardberg config file, in one place: path, kind, default and description. The
 * loader rejects any key not listed here, and docs/config.md documents exactly these.
 */
public final class ShardbergOptions {
  private ShardbergOptions() {}

  // ---- pipeline ---------------------------------------------------------------------------------
  public static final ConfigKey PIPELINE_ID =
      required(
          "pipeline.id",
          Kind.STRING,
          "Stable id of this pipeline, written into every snapshot summary as shardberg.pipeline-id."
              + " Exactly-once bookkeeping is keyed by it (Flink job ids change on restore): never"
              + " change it for a running table, never share it between two pipelines.");
  public static final ConfigKey PIPELINE_CHECKPOINT_INTERVAL =
      optional(
          "pipeline.checkpoint-interval",
          Kind.DURATION,
          "60s",
          "Exactly-once checkpoint interval. One Iceberg commit per checkpoint: this is also the"
              + " freshness of the table.");
  public static final ConfigKey PIPELINE_CHECKPOINT_TIMEOUT =
      optional("pipeline.checkpoint-timeout", Kind.DURATION, "10min", "A checkpoint that takes longer fails.");
  public static final ConfigKey PIPELINE_CHECKPOINT_DIR =
      optional(
          "pipeline.checkpoint-dir",
          Kind.STRING,
          null,
          "Checkpoint storage URI (e.g. hdfs:///flink/checkpoints or file:///var/shardberg/cp);"
              + " retained on cancellation so the job can be resumed with `flink run -s`; a local"
              + " `shardberg run` resumes from the newest one there by itself. Unset: the cluster's"
              + " execution.checkpointing.dir; for a local run ./shardberg-data/checkpoints/<pipeline.id>.");
  public static final ConfigKey PIPELINE_PARALLELISM =
      optional(
          "pipeline.parallelism",
          Kind.INT,
          "1",
          "Parallelism of each host's MySQL source (snapshot readers). Every source's server-id range"
              + " must hold at least this many ids.");
  public static final ConfigKey PIPELINE_WRITER_PARALLELISM =
      optional(
          "pipeline.writer-parallelism",
          Kind.INT,
          null,
          "Number of Iceberg writers. Unset: the same as pipeline.parallelism.");
  public static final ConfigKey PIPELINE_HEARTBEAT_EVERY_EMPTY_CHECKPOINTS =
      optional(
          "pipeline.heartbeat-every-empty-checkpoints",
          Kind.INT,
          "10",
          "After this many checkpoints without changes the coordinator still commits an empty"
              + " snapshot, so readers can see the pipeline is alive (like Iceberg's"
              + " flink.max-continuous-empty-commits).");
  public static final ConfigKey PIPELINE_RESTART_ATTEMPTS =
      optional(
          "pipeline.restart.attempts",
          Kind.INT,
          "10",
          "Fixed-delay restart strategy: attempts before the job fails for good.");
  public static final ConfigKey PIPELINE_RESTART_DELAY =
      optional("pipeline.restart.delay", Kind.DURATION, "10s", "Delay between two restart attempts.");
  public static final ConfigKey PIPELINE_ON_STATELESS_START =
      optional(
          "pipeline.on-stateless-start",
          Kind.STRING,
          "fail",
          "What a start without state (no checkpoint or savepoint to resume) does when the table already"
              + " holds commits of this pipeline. fail: refuse to start, naming the resume command (a fresh"
              + " snapshot on top would keep every row deleted in MySQL meanwhile). resnapshot: remove the"
              + " rows of this pipeline's shards from the table in one commit, then snapshot them again"
              + " (needs source.startup-mode initial; readers see those shards empty until the snapshot"
              + " commits).");

  // ---- sources (one per MySQL host) -------------------------------------------------------------
  public static final ConfigKey SOURCES =
      required(
          "sources",
          Kind.SECTION_LIST,
          "The MySQL hosts holding the shards, one entry per host (one binlog = one CDC source).");
  public static final ConfigKey SOURCE_NAME =
      required("sources[].name", Kind.STRING, "Short unique name of the host; used in operator uids and messages.");
  public static final ConfigKey SOURCE_HOST = required("sources[].host", Kind.STRING, "Hostname or IP of the MySQL server.");
  public static final ConfigKey SOURCE_PORT = optional("sources[].port", Kind.INT, "3306", "MySQL port.");
  public static final ConfigKey SOURCE_USER =
      required(
          "sources[].user",
          Kind.STRING,
          "MySQL user; needs SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT,"
              + " LOCK TABLES.");
  public static final ConfigKey SOURCE_PASSWORD_ENV =
      optional(
          "sources[].password-env",
          Kind.STRING,
          null,
          "Name of the environment variable holding the password. Exactly one of password-env and"
              + " password-file. Passwords never go into the config file itself.");
  public static final ConfigKey SOURCE_PASSWORD_FILE =
      optional(
          "sources[].password-file",
          Kind.STRING,
          null,
          "Path of a file holding the password (first line, surrounding whitespace stripped).");
  public static final ConfigKey SOURCE_JDBC_PROPERTIES =
      optional(
          "sources[].jdbc-properties",
          Kind.MAP,
          "{}",
          "Extra JDBC properties for discovery and the CDC source, e.g. useSSL / sslMode / trustCertificateKeyStoreUrl.");
  public static final ConfigKey SOURCE_SERVER_ID_RANGE =
      required(
          "sources[].server-id-range",
          Kind.STRING,
          "Binlog client server ids of this host's source, 'FIRST-LAST' (e.g. 5400-5403): at least"
              + " pipeline.parallelism ids, unique among all clients of that MySQL server, not"
              + " overlapping any other source's range.");

  // ---- tables: which tables are shards, and their numbers ----------------------------------------
  public static final ConfigKey TABLES_DATABASE_PATTERN =
      required(
          "tables.database-pattern",
          Kind.STRING,
          "Java regex (anchored: must match the whole name) of the databases holding shards. May carry"
              + " the shard number as named group (?<shard>\\d+).");
  public static final ConfigKey TABLES_TABLE_PATTERN =
      required(
          "tables.table-pattern",
          Kind.STRING,
          "Java regex (anchored) of the shard tables. May carry the shard number as named group"
              + " (?<shard>\\d+).");
  public static final ConfigKey TABLES_SHARD_MAP =
      optional(
          "tables.shard-map",
          Kind.MAP,
          "{}",
          "Explicit shard numbers, 'database.table: number', used instead of a (?<shard>...) group.");
  public static final ConfigKey TABLES_KEY_COLUMNS =
      optional(
          "tables.key-columns",
          Kind.LIST,
          "[]",
          "Key columns to use instead of the primary key (required for tables without one): the"
              + " columns of the primary key or of a UNIQUE index whose columns are all NOT NULL, on"
              + " every shard; anything else is refused (it could merge distinct rows).");

  // ---- source: CDC knobs, the same for every host ------------------------------------------------
  public static final ConfigKey SOURCE_STARTUP_MODE =
      optional(
          "source.startup-mode",
          Kind.STRING,
          "initial",
          "initial (snapshot, then binlog) | latest (binlog from now on, no snapshot) | timestamp"
              + " (binlog from source.startup-timestamp).");
  public static final ConfigKey SOURCE_STARTUP_TIMESTAMP =
      optional(
          "source.startup-timestamp",
          Kind.STRING,
          null,
          "Start of the binlog for startup-mode timestamp: ISO-8601 instant (2026-01-31T12:00:00Z)"
              + " or epoch milliseconds.");
  public static final ConfigKey SOURCE_SNAPSHOT_CHUNK_SIZE =
      optional(
          "source.snapshot-chunk-size",
          Kind.INT,
          "8096",
          "Rows per snapshot chunk (split) of a shard table.");
  public static final ConfigKey SOURCE_FETCH_SIZE =
      optional("source.fetch-size", Kind.INT, "1024", "JDBC fetch size while reading a snapshot chunk.");
  public static final ConfigKey SOURCE_CONNECTION_POOL_SIZE =
      optional("source.connection-pool-size", Kind.INT, "20", "JDBC connection pool size per source.");
  public static final ConfigKey SOURCE_POLL_INTERVAL =
      optional(
          "source.poll-interval",
          Kind.DURATION,
          "50ms",
          "Debezium poll.interval.ms: how long a reader waits for new records. Debezium's 500 ms"
              + " default leaves the snapshot phase latency-bound.");
  public static final ConfigKey SOURCE_SERVER_TIME_ZONE =
      optional(
          "source.server-time-zone",
          Kind.STRING,
          "UTC",
          "Session time zone of the MySQL servers (for TIMESTAMP columns), e.g. UTC or Europe/Berlin.");
  public static final ConfigKey SOURCE_CONNECT_TIMEOUT =
      optional("source.connect-timeout", Kind.DURATION, "30s", "Timeout of a connection to MySQL.");
  public static final ConfigKey SOURCE_HEARTBEAT_INTERVAL =
      optional(
          "source.heartbeat-interval",
          Kind.DURATION,
          "30s",
          "Binlog heartbeat: keeps the binlog offset moving on an idle server.");
  public static final ConfigKey SOURCE_BINLOG_FORMAT_CHECK_INTERVAL =
      optional(
          "source.binlog-format-check-interval",
          Kind.DURATION,
          "10s",
          "How often the job reads @@GLOBAL.binlog_format and @@GLOBAL.binlog_row_image of every host;"
              + " anything but ROW / FULL stops the job for good, naming the host (changes logged in another"
              + " format would be skipped). A SESSION-level change on one connection is not seen.");
  public static final ConfigKey SOURCE_DEBEZIUM_PROPERTIES =
      optional(
          "source.debezium-properties",
          Kind.MAP,
          "{}",
          "Pass-through Debezium properties; they win over the values derived from the keys above."
              + " database.jdbc.driver and database.database.jdbc.driver are refused: Shardberg sets them (docs/sources.md).");

  // ---- target: the Iceberg table -----------------------------------------------------------------
  public static final ConfigKey TARGET_CATALOG_TYPE =
      required("target.catalog.type", Kind.STRING, "hadoop | hive | rest.");
  public static final ConfigKey TARGET_CATALOG_NAME =
      optional(
          "target.catalog.name",
          Kind.STRING,
          "shardberg",
          "Name of the catalog inside the job (shows up in logs and in the commit-lock name).");
  public static final ConfigKey TARGET_CATALOG_URI =
      optional(
          "target.catalog.uri",
          Kind.STRING,
          null,
          "Metastore URI (hive: thrift://host:9083) or REST catalog URL (rest). Required for hive and rest.");
  public static final ConfigKey TARGET_CATALOG_WAREHOUSE =
      optional(
          "target.catalog.warehouse",
          Kind.STRING,
          null,
          "Warehouse location (hdfs://…, s3a://…, file:/…). Required for hadoop.");
  public static final ConfigKey TARGET_CATALOG_HADOOP_CONF_DIR =
      optional(
          "target.catalog.hadoop-conf-dir",
          Kind.STRING,
          null,
          "Directory with core-site.xml / hdfs-site.xml / hive-site.xml to load into the Hadoop"
              + " configuration of the catalog.");
  public static final ConfigKey TARGET_CATALOG_PROPERTIES =
      optional(
          "target.catalog.properties",
          Kind.MAP,
          "{}",
          "Pass-through catalog properties, e.g. Kerberos (hive.metastore.sasl.enabled,"
              + " hive.metastore.kerberos.principal), io-impl, client pool size.");
  public static final ConfigKey TARGET_NAMESPACE =
      required("target.namespace", Kind.STRING, "Iceberg namespace (Hive database) of the table; created when missing.");
  public static final ConfigKey TARGET_TABLE = required("target.table", Kind.STRING, "Iceberg table name; created when missing.");
  public static final ConfigKey TARGET_BUCKETS =
      optional(
          "target.buckets",
          Kind.INT,
          "5",
          "Buckets of the key column in the partition spec (identity(shard_number), bucket(B, key)),"
              + " fixed when the table is created. Every checkpoint writes a data and a key-delete"
              + " file per changed partition: with many shards and few changes per checkpoint, use"
              + " fewer buckets (measured: 1 at 256 shards and 500 changes/s, docs/performance.md).");
  public static final ConfigKey TARGET_KEY_COLUMN =
      optional(
          "target.key-column",
          Kind.STRING,
          null,
          "Key column to bucket by. Unset: for an existing table the column of its partition spec,"
              + " else the key column with the most distinct values in a sample of the shards"
              + " (`validate` prints the choice).");
  public static final ConfigKey TARGET_TABLE_PROPERTIES =
      optional(
          "target.table-properties",
          Kind.MAP,
          "{}",
          "Iceberg table properties overriding Shardberg's defaults (write.upsert.enabled=true,"
              + " parquet + zstd, 64 KiB Parquet pages, commit retries …) when the table is created.");

  public static final ConfigKey TARGET_INSERT_ONLY_INITIAL_LOAD =
      optional(
          "target.insert-only-initial-load",
          Kind.BOOLEAN,
          "true",
          "Write the snapshot rows of shards that hold no data yet without equality deletes, in the"
              + " job's first run (no restored state); restored runs and shards with data always"
              + " upsert. false: every row is an upsert.");

  // ---- schema changes ---------------------------------------------------------------------------
  public static final ConfigKey SCHEMA_CHANGE_BEHAVIOR =
      optional(
          "schema.change-behavior",
          Kind.STRING,
          "evolve",
          "What a schema change (DDL) on a shard does. evolve: the table follows the shards in flight"
              + " (new columns added optional, types widened, dropped columns kept optional; DDL that"
              + " changes no column is ignored; a change Iceberg cannot take stops the job at once);"
              + " fail: any DDL stops the job at once, naming shard and DDL. Rules in"
              + " docs/schema-evolution.md.");

  // ---- coordinator ------------------------------------------------------------------------------
  public static final ConfigKey COORDINATOR_LOCK_TIMEOUT =
      optional(
          "coordinator.lock-timeout",
          Kind.DURATION,
          "60s",
          "Default of coordinator.zookeeper.lock-timeout (only with coordinator.zookeeper.connect).");
  public static final ConfigKey ZK_CONNECT =
      optional(
          "coordinator.zookeeper.connect",
          Kind.STRING,
          null,
          "ZooKeeper connect string (host1:2181,host2:2181). Set: HA mode, every commit on the table"
              + " holds a ZooKeeper lock and zombie instances are fenced.");
  public static final ConfigKey ZK_ROOT_PATH =
      optional("coordinator.zookeeper.root-path", Kind.STRING, "/shardberg", "ZooKeeper path under which locks and epochs live.");
  public static final ConfigKey ZK_SESSION_TIMEOUT =
      optional("coordinator.zookeeper.session-timeout", Kind.DURATION, "60s", "ZooKeeper session timeout.");
  public static final ConfigKey ZK_CONNECTION_TIMEOUT =
      optional("coordinator.zookeeper.connection-timeout", Kind.DURATION, "15s", "ZooKeeper connection timeout.");
  public static final ConfigKey ZK_LOCK_TIMEOUT =
      optional(
          "coordinator.zookeeper.lock-timeout",
          Kind.DURATION,
          null,
          "How long one commit of the job (and a tool using the same options) waits for the table's"
              + " ZooKeeper lock before keeping the checkpoint pending for the next one. Unset:"
              + " coordinator.lock-timeout.");
  public static final ConfigKey ZK_RETRY_BASE_SLEEP =
      optional("coordinator.zookeeper.retry.base-sleep", Kind.DURATION, "1s", "Curator exponential backoff: base sleep.");
  public static final ConfigKey ZK_RETRY_MAX_RETRIES =
      optional("coordinator.zookeeper.retry.max-retries", Kind.INT, "10", "Curator exponential backoff: max retries.");

  private static final Map<String, ConfigKey> ALL = new LinkedHashMap<>();

  static {
    for (ConfigKey key :
        List.of(
            PIPELINE_ID,
            PIPELINE_CHECKPOINT_INTERVAL,
            PIPELINE_CHECKPOINT_TIMEOUT,
            PIPELINE_CHECKPOINT_DIR,
            PIPELINE_PARALLELISM,
            PIPELINE_WRITER_PARALLELISM,
            PIPELINE_HEARTBEAT_EVERY_EMPTY_CHECKPOINTS,
            PIPELINE_RESTART_ATTEMPTS,
            PIPELINE_RESTART_DELAY,
            PIPELINE_ON_STATELESS_START,
            SOURCES,
            SOURCE_NAME,
            SOURCE_HOST,
            SOURCE_PORT,
            SOURCE_USER,
            SOURCE_PASSWORD_ENV,
            SOURCE_PASSWORD_FILE,
            SOURCE_JDBC_PROPERTIES,
            SOURCE_SERVER_ID_RANGE,
            TABLES_DATABASE_PATTERN,
            TABLES_TABLE_PATTERN,
            TABLES_SHARD_MAP,
            TABLES_KEY_COLUMNS,
            SOURCE_STARTUP_MODE,
            SOURCE_STARTUP_TIMESTAMP,
            SOURCE_SNAPSHOT_CHUNK_SIZE,
            SOURCE_FETCH_SIZE,
            SOURCE_CONNECTION_POOL_SIZE,
            SOURCE_POLL_INTERVAL,
            SOURCE_SERVER_TIME_ZONE,
            SOURCE_CONNECT_TIMEOUT,
            SOURCE_HEARTBEAT_INTERVAL,
            SOURCE_BINLOG_FORMAT_CHECK_INTERVAL,
            SOURCE_DEBEZIUM_PROPERTIES,
            TARGET_CATALOG_TYPE,
            TARGET_CATALOG_NAME,
            TARGET_CATALOG_URI,
            TARGET_CATALOG_WAREHOUSE,
            TARGET_CATALOG_HADOOP_CONF_DIR,
            TARGET_CATALOG_PROPERTIES,
            TARGET_NAMESPACE,
            TARGET_TABLE,
            TARGET_BUCKETS,
            TARGET_KEY_COLUMN,
            TARGET_TABLE_PROPERTIES,
            TARGET_INSERT_ONLY_INITIAL_LOAD,
            SCHEMA_CHANGE_BEHAVIOR,
            COORDINATOR_LOCK_TIMEOUT,
            ZK_CONNECT,
            ZK_ROOT_PATH,
            ZK_SESSION_TIMEOUT,
            ZK_CONNECTION_TIMEOUT,
            ZK_LOCK_TIMEOUT,
            ZK_RETRY_BASE_SLEEP,
            ZK_RETRY_MAX_RETRIES)) {
      ALL.put(key.key(), key);
    }
  }

  /** Every key, in documentation order. */
  public static List<ConfigKey> all() {
    return List.copyOf(ALL.values());
  }

  /** The key with this path ({@code sources[].host} form for list elements). */
  public static Optional<ConfigKey> find(String path) {
    return Optional.ofNullable(ALL.get(path));
  }
}
