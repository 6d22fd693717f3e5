package dev.shardberg.coordinator;

import java.time.Duration;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * The config keys of what this module owns: the pipeline id the coordinator writes into every
 * commit, its heartbeat commits, the writers' insert-only initial load and the commit lock ({@code
 * coordinator.*}, with {@code coordinator.zookeeper.*} read into {@link
 * dev.shardberg.coordinator.zk.ZooKeeperOptions}). Each key is declared once, here: messages name
 * it with {@code key()}, and the sink's and the ZooKeeper options' defaults are these options'
 * {@code defaultValue()}. To add a key: declare it here and list it in the job's {@code
 * ShardbergOptions.all()} (which the config loader and docs/config.md read).
 */
public final class CoordinatorConfigOptions {
  private CoordinatorConfigOptions() {}

  public static final ConfigOption<String> PIPELINE_ID =
      ConfigOptions.key("pipeline.id")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Stable id of this pipeline, written into every snapshot summary as shardberg.pipeline-id."
                  + " Exactly-once bookkeeping is keyed by it (Flink job ids change on restore): never"
                  + " change it for a running table, never share it between two pipelines.");
  public static final ConfigOption<Integer> HEARTBEAT_EVERY_EMPTY_CHECKPOINTS =
      ConfigOptions.key("pipeline.heartbeat-every-empty-checkpoints")
          .intType()
          .defaultValue(10)
          .withDescription(
              "After this many checkpoints without changes the coordinator still commits an empty"
                  + " snapshot, so readers can see the pipeline is alive (like Iceberg's"
                  + " flink.max-continuous-empty-commits).");
  public static final ConfigOption<Boolean> INSERT_ONLY_INITIAL_LOAD =
      ConfigOptions.key("target.insert-only-initial-load")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Write the snapshot rows of shards that hold no data yet without equality deletes, in the"
                  + " job's first run (no restored state); restored runs and shards with data always"
                  + " upsert. false: every row is an upsert.");

  public static final ConfigOption<DeleteMode> DELETE_MODE =
      ConfigOptions.key("target.delete-mode")
          .enumType(DeleteMode.class)
          .noDefaultValue()
          .withDescription(
              "Unset (the default): position for a table the job creates; for an existing table"
                  + " the mode it was created with (its table property shardberg.delete-mode),"
                  + " equality for a table without it (written before this default, or created"
                  + " by another tool). The mode a start writes in is recorded in that property."
                  + " equality: updates and deletes are equality deletes, compacted by the job's"
                  + " maintenance. position: each writer owns its partitions and"
                  + " deletes rows by position, a deletion vector per data file on a format-v3 table"
                  + " (a new table is created as v3) and a position-delete file per data file on v2,"
                  + " never an equality delete. Each writer also compacts its own partitions (from"
                  + " maintenance.compaction.min-small-files data files it added, on a thread beside"
                  + " the writer, committed with the first checkpoint after it is done; a"
                  + " checkpoint waits for it only when the writer falls behind); the job's own"
                  + " compaction is off"
                  + " in this mode. A commit of another writer"
                  + " to a shard (an external compaction, a Spark DELETE) makes its writers read the"
                  + " shard's partitions again from the table; when the writers' own changes to it"
                  + " have not landed yet, the coordinator carries them over by key and the writers"
                  + " hold the shard's next changes until they have; a shard read again, removed"
                  + " or re-snapshotted leaves the table by its files; rewinds to older checkpoints"
                  + " are refused. The writers' row index is Flink state: a"
                  + " checkpoint directory is required (pipeline.checkpoint-dir, or the cluster's"
                  + " execution.checkpointing.dir; docs/owner-write-path.md).");

  public static final ConfigOption<Integer> CLOSE_CONCURRENCY =
      ConfigOptions.key("target.close-concurrency")
          .intType()
          .defaultValue(8)
          .withDescription(
              "Partitions each writer closes at once at a checkpoint (a partition's data and delete"
                  + " files on one thread; 1: one partition after the other on the writer's own"
                  + " thread). A close on HDFS or an object store is mostly waiting on the store (an"
                  + " upload, a NameNode round trip), so on a slow store a checkpoint's closes take"
                  + " about files per writer x the store's latency / this value: raise it when the"
                  + " writers' flush approaches pipeline.checkpoint-interval (docs/object-store.md,"
                  + " 'Freshness on a slow store').");

  // ---- coordinator: the commit lock -----------------------------------------------------------
  public static final ConfigOption<Duration> LOCK_TIMEOUT =
      ConfigOptions.key("coordinator.lock-timeout")
          .durationType()
          .defaultValue(Duration.ofSeconds(60))
          .withDescription(
              "Default of coordinator.zookeeper.lock-timeout (only with coordinator.zookeeper.connect).");

  /** Prefix of the HA keys; setting any of them needs {@link #ZK_CONNECT}. */
  public static final String ZK_PREFIX = "coordinator.zookeeper.";

  public static final ConfigOption<String> ZK_CONNECT =
      ConfigOptions.key(ZK_PREFIX + "connect")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "ZooKeeper connect string (host1:2181,host2:2181). Set: HA mode, every commit on the table"
                  + " holds a ZooKeeper lock and zombie instances are fenced.");
  public static final ConfigOption<String> ZK_ROOT_PATH =
      ConfigOptions.key(ZK_PREFIX + "root-path")
          .stringType()
          .defaultValue("/shardberg")
          .withDescription("ZooKeeper path under which locks and epochs live.");
  public static final ConfigOption<Duration> ZK_SESSION_TIMEOUT =
      ConfigOptions.key(ZK_PREFIX + "session-timeout")
          .durationType()
          .defaultValue(Duration.ofSeconds(60))
          .withDescription("ZooKeeper session timeout.");
  public static final ConfigOption<Duration> ZK_CONNECTION_TIMEOUT =
      ConfigOptions.key(ZK_PREFIX + "connection-timeout")
          .durationType()
          .defaultValue(Duration.ofSeconds(15))
          .withDescription("ZooKeeper connection timeout.");

  /** Unset: {@link #LOCK_TIMEOUT}. */
  public static final ConfigOption<Duration> ZK_LOCK_TIMEOUT =
      ConfigOptions.key(ZK_PREFIX + "lock-timeout")
          .durationType()
          .noDefaultValue()
          .withDescription(
              "How long one commit of the job (and a tool using the same options) waits for the table's"
                  + " ZooKeeper lock before keeping the checkpoint pending for the next one. Unset:"
                  + " coordinator.lock-timeout.");

  public static final ConfigOption<Duration> ZK_RETRY_BASE_SLEEP =
      ConfigOptions.key(ZK_PREFIX + "retry.base-sleep")
          .durationType()
          .defaultValue(Duration.ofSeconds(1))
          .withDescription("Curator exponential backoff: base sleep.");
  public static final ConfigOption<Integer> ZK_RETRY_MAX_RETRIES =
      ConfigOptions.key(ZK_PREFIX + "retry.max-retries")
          .intType()
          .defaultValue(10)
          .withDescription("Curator exponential backoff: max retries.");
}
