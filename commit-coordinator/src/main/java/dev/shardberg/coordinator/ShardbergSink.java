package dev.shardberg.coordinator;

import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.Preconditions;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;

/**
 * The module's one entry point: wires a changelog of {@link RowData} (with {@link
 * org.apache.flink.types.RowKind}) into one Iceberg table, one commit per checkpoint, exactly once.
 *
 * <pre>{@code
 * ShardbergSink.forRowData(changes)
 *     .tableLoader(loader).tableName("hadoop.shop.orders")
 *     .rowType(rowType)                 // first field: shard_number INT NOT NULL
 *     .pipelineId("orders-to-iceberg")  // stable across restores
 *     .append();
 * }</pre>
 *
 * <p>The sink needs no knowledge of MySQL: the shard is the first field of the row type.
 *
 * <p>Row kinds are upserts by the equality columns: +I/+U write the row (and delete its key), -D
 * deletes the key, -U is dropped. A change of the key must therefore arrive as -D of the old key
 * and +U of the new one (the shard tagger emits it so); a -U/+U pair must keep the key.
 */
public final class ShardbergSink {
  /** Like Iceberg's {@code flink.max-continuous-empty-commits}. */
  public static final int DEFAULT_MAX_CONTINUOUS_EMPTY_COMMITS =
      CoordinatorConfigOptions.HEARTBEAT_EVERY_EMPTY_CHECKPOINTS.defaultValue();

  public static final Duration DEFAULT_LOCK_TIMEOUT =
      CoordinatorConfigOptions.LOCK_TIMEOUT.defaultValue();
  public static final int DEFAULT_COMMIT_ATTEMPTS = 3;
  public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofSeconds(1);

  /**
   * With {@link Builder#versionedRows}: a row {@code [shard, bucket, TRUNCATE_MARKER]} of kind
   * DELETE (a "schema id" no schema has) truncates partition (shard, bucket of the key column) at
   * its place in the stream: every row of that partition written before it, committed or in this
   * checkpoint, is deleted with this checkpoint's commit; the rows after it stay. A producer that
   * truncates a shard sends one marker per bucket, consecutively.
   */
  public static final int TRUNCATE_MARKER = -1;

  private ShardbergSink() {}

  public static Builder forRowData(DataStream<RowData> input) {
    return new Builder(input);
  }

  public static final class Builder {
    private final DataStream<RowData> input;
    private TableLoader tableLoader;
    private String tableName;
    private RowType rowType;
    private List<String> equalityColumns;
    private String pipelineId;
    private Integer writeParallelism;
    private int maxContinuousEmptyCommits = DEFAULT_MAX_CONTINUOUS_EMPTY_COMMITS;
    private CommitGuardFactory commitGuard = CommitGuardFactory.none();
    private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private int commitAttempts = DEFAULT_COMMIT_ATTEMPTS;
    private Duration retryBackoff = DEFAULT_RETRY_BACKOFF;
    private String uidPrefix;
    private boolean insertOnlyInitialLoad =
        CoordinatorConfigOptions.INSERT_ONLY_INITIAL_LOAD.defaultValue();
    private MaintenanceSettings maintenance = MaintenanceSettings.disabled();
    private DeleteMode deleteMode = DeleteMode.EQUALITY;
    private boolean versionedRows = false;
    private java.util.SortedSet<Integer> shards;
    private java.util.SortedSet<Integer> rereadShards = new java.util.TreeSet<>();
    private java.util.SortedSet<Integer> excludedShards = new java.util.TreeSet<>();
    private boolean removeGoneShards = false;
    private int closeConcurrency = CoordinatorConfigOptions.CLOSE_CONCURRENCY.defaultValue();

    private Builder(DataStream<RowData> input) {
      this.input = Objects.requireNonNull(input, "input");
    }

    public Builder tableLoader(TableLoader loader) {
      this.tableLoader = loader;
      return this;
    }

    /** Catalog-qualified table name, e.g. {@code hadoop.shop.orders}: for logs and the lock. */
    public Builder tableName(String name) {
      this.tableName = name;
      return this;
    }

    /** Row type of the changes; its first field is the shard column, {@code INT NOT NULL}. */
    public Builder rowType(RowType type) {
      this.rowType = type;
      return this;
    }

    /**
     * Equality (upsert key) columns: the shard column plus the primary key. Defaults to the table's
     * identifier fields.
     */
    public Builder equalityColumns(List<String> columns) {
      this.equalityColumns = List.copyOf(columns);
      return this;
    }

    /** Stable id of this pipeline, written into every commit; must not change across restores. */
    public Builder pipelineId(String id) {
      this.pipelineId = id;
      return this;
    }

    /** Writer parallelism; defaults to the input's parallelism. */
    public Builder writeParallelism(int parallelism) {
      this.writeParallelism = parallelism;
      return this;
    }

    /**
     * Write an empty heartbeat commit after this many empty checkpoints in a row (default: {@link
     * CoordinatorConfigOptions#HEARTBEAT_EVERY_EMPTY_CHECKPOINTS}).
     */
    public Builder maxContinuousEmptyCommits(int count) {
      this.maxContinuousEmptyCommits = count;
      return this;
    }

    /** Lock and fencing around each commit; default {@link CommitGuardFactory#none()}. */
    public Builder commitGuard(CommitGuardFactory factory) {
      this.commitGuard = factory;
      return this;
    }

    /**
     * How long a commit waits for the table's lock before staying pending (default: {@link
     * CoordinatorConfigOptions#LOCK_TIMEOUT}).
     */
    public Builder lockTimeout(Duration timeout) {
      this.lockTimeout = timeout;
      return this;
    }

    /** Attempts per checkpoint after Iceberg's own retries fail, and the first pause between. */
    public Builder commitRetries(int attempts, Duration backoff) {
      this.commitAttempts = attempts;
      this.retryBackoff = backoff;
      return this;
    }

    /**
     * Write snapshot rows of shards that hold no data yet without key deletes (default: {@link
     * CoordinatorConfigOptions#INSERT_ONLY_INITIAL_LOAD}, as in the job). It relies on the input:
     * an INSERT row is a snapshot read, each key is read at most once per shard in one run, and
     * every other write of a key (a live insert included) arrives as UPDATE_AFTER. The sink then
     * writes INSERT rows insert-only while the pipeline runs its first attempt (no restored state)
     * and their shard had no data file when the writer opened; everything else stays an upsert. The
     * finished initial load then carries no equality deletes. Other committers are not trusted: a
     * checkpoint whose insert-only shards got files from anyone else since the writers' scan is
     * refused (see docs/commit-coordinator.md). Turn it off for an input that emits INSERT for keys
     * that may already exist.
     */
    public Builder insertOnlyInitialLoad(boolean enabled) {
      this.insertOnlyInitialLoad = enabled;
      return this;
    }

    /**
     * How rows are deleted (default {@link DeleteMode#EQUALITY}). {@link DeleteMode#POSITION}: the
     * writers own their partitions and delete by position; the coordinator's compaction and merges
     * (which would move rows the writers know the places of) are off.
     */
    public Builder deleteMode(DeleteMode mode) {
      this.deleteMode =
          Preconditions.checkNotNull(mode, "Cannot build the sink: delete mode is null");
      return this;
    }

    /**
     * Table maintenance run inside the coordinator (compaction, snapshot expiry, orphan-file
     * removal, manifest rewrite), its commits serialised with the checkpoint commits; see {@link
     * dev.shardberg.coordinator.maintenance.TableMaintainer}. Default off here; the job turns it on
     * from its config ({@code maintenance.*}).
     */
    public Builder maintenance(MaintenanceSettings settings) {
      this.maintenance = settings;
      return this;
    }

    /**
     * Rows follow the table's schema as it evolves (default off: every row is of {@link #rowType}).
     * A versioned row holds the columns of one of the table's schemas, in order, then that schema's
     * id as a last INT field; the producer commits a schema to the table before the first row of it
     * (the shard tagger does, docs/schema-evolution.md). The table may only add columns, widen
     * types and make columns optional, so a column keeps its position in every later schema.
     * Writers write the newest schema they met; older rows are padded with NULLs and widened. The
     * row type stays the layout the sink checks the table against at start-up; its type information
     * must carry rows of any arity (the tagger's VersionedRows). Truncate markers ({@link
     * #TRUNCATE_MARKER}) are versioned rows too.
     */
    public Builder versionedRows(boolean enabled) {
      this.versionedRows = enabled;
      return this;
    }

    /**
     * The shards this job writes (default: not known). When set, a shard that a restored job writes
     * but its restored state does not know (it was left out of an earlier run and is included
     * again, so the source reads it from a fresh snapshot) has its rows in the table replaced: the
     * first checkpoint of the restored job deletes every older row of it.
     */
    public Builder shards(java.util.Set<Integer> shardNumbers) {
      this.shards = new java.util.TreeSet<>(shardNumbers);
      return this;
    }

    /**
     * With {@link #shards}: the shards the source reads from a fresh snapshot in this run. A
     * restored job whose state does not know one of its shards and does not find it here stops at
     * once: the source would go on with that shard from the binlog alone.
     */
    public Builder rereadShards(java.util.Set<Integer> shardNumbers) {
      this.rereadShards = new java.util.TreeSet<>(shardNumbers);
      return this;
    }

    /**
     * With {@link #shards}: what happens to a shard the restored state knows that is neither in
     * {@link #shards} nor in {@code excluded} (its MySQL table dropped while the job was stopped,
     * or its host removed from the config): {@code remove} true, every row of it leaves the table
     * with the restored job's first checkpoint (a delete by the shard column, in that commit);
     * false, its rows stay. Excluded shards always keep their rows. With deletes by position the
     * commit removes the shard's files instead.
     */
    public Builder goneShards(java.util.Set<Integer> excluded, boolean remove) {
      this.excludedShards = new java.util.TreeSet<>(excluded);
      this.removeGoneShards = remove;
      return this;
    }

    /**
     * Files each writer closes at once at a checkpoint (default: {@link
     * CoordinatorConfigOptions#CLOSE_CONCURRENCY}); 1 closes them one after the other on the
     * writer's task thread. A close on a remote store is mostly waiting, so a slow store wants
     * more.
     */
    public Builder closeConcurrency(int concurrency) {
      this.closeConcurrency = concurrency;
      return this;
    }

    /** Prefix of the operator uids (default {@code shardberg-<pipelineId>}); never change it. */
    public Builder uidPrefix(String prefix) {
      this.uidPrefix = prefix;
      return this;
    }

    /** Distribute by partition → writers (parallelism P) → one coordinator → discard. */
    public DataStreamSink<?> append() {
      Table table = validateAndLoadTable();
      String prefix = uidPrefix != null ? uidPrefix : "shardberg-" + pipelineId;
      int parallelism = writeParallelism != null ? writeParallelism : input.getParallelism();
      CoordinatorOptions options =
          new CoordinatorOptions(
              tableName,
              pipelineId,
              maxContinuousEmptyCommits,
              lockTimeout,
              commitAttempts,
              retryBackoff,
              deleteMode == DeleteMode.POSITION ? maintenance.withoutCompaction() : maintenance,
              shards,
              rereadShards,
              deleteMode,
              excludedShards,
              removeGoneShards);

      SingleOutputStreamOperator<WriterResult> written =
          input
              .keyBy(
                  new PartitionKeySelector(table.schema(), table.spec(), rowType, versionedRows),
                  Types.STRING)
              .transform(
                  "Shardberg writer: " + tableName,
                  WriterResultTypeInfo.INSTANCE,
                  new ShardbergWriter(
                          tableLoader,
                          tableName,
                          rowType,
                          equalityColumns,
                          insertOnlyInitialLoad,
                          versionedRows,
                          deleteMode == DeleteMode.POSITION ? pipelineId : null,
                          deleteMode == DeleteMode.POSITION
                                  && maintenance.enabled()
                                  && maintenance.compaction()
                              ? new PartitionOwner.OwnerCompaction(
                                  maintenance.minSmallFiles(),
                                  maintenance.maxPartitionsPerCycle(),
                                  maintenance.maxBytesPerCycle(),
                                  maintenance.smallFileBytes())
                              : null,
                          closeConcurrency)
                      .plannedShards(deleteMode == DeleteMode.POSITION ? shards : null))
              .uid(prefix + "-writer")
              .setParallelism(parallelism);

      SingleOutputStreamOperator<Void> committed =
          written
              .transform(
                  "Shardberg coordinator: " + tableName,
                  Types.VOID,
                  new CommitCoordinator(tableLoader, rowType, options, commitGuard))
              .uid(prefix + "-coordinator")
              .setParallelism(1)
              .setMaxParallelism(1);

      return committed
          .sinkTo(new DiscardingSink<>())
          .name("Shardberg end: " + tableName)
          .uid(prefix + "-end")
          .setParallelism(1);
    }

    private Table validateAndLoadTable() {
      Preconditions.checkArgument(
          tableLoader != null, "Cannot build the Shardberg sink: tableLoader is not set");
      Preconditions.checkArgument(
          tableName != null && !tableName.isBlank(),
          "Cannot build the Shardberg sink: tableName is not set (catalog-qualified, e.g. hadoop.shop.orders)");
      Preconditions.checkArgument(
          rowType != null, "Cannot build the Shardberg sink for %s: rowType is not set", tableName);
      Preconditions.checkArgument(
          pipelineId != null && !pipelineId.isBlank(),
          "Cannot build the Shardberg sink for %s: pipelineId is not set; give every pipeline a stable id",
          tableName);
      Preconditions.checkArgument(
          writeParallelism == null || writeParallelism > 0,
          "Cannot build the Shardberg sink for %s: writeParallelism must be > 0, got %s",
          tableName,
          writeParallelism);
      Preconditions.checkArgument(
          maxContinuousEmptyCommits > 0,
          "Cannot build the Shardberg sink for %s: maxContinuousEmptyCommits must be > 0, got %s",
          tableName,
          maxContinuousEmptyCommits);
      Preconditions.checkArgument(
          closeConcurrency >= 1,
          "Cannot build the Shardberg sink for %s: closeConcurrency (%s) must be at least 1, got %s",
          tableName,
          CoordinatorConfigOptions.CLOSE_CONCURRENCY.key(),
          closeConcurrency);
      Preconditions.checkArgument(
          maintenance != null,
          "Cannot build the Shardberg sink for %s: maintenance is null",
          tableName);
      Preconditions.checkArgument(
          commitGuard != null,
          "Cannot build the Shardberg sink for %s: commitGuard is null",
          tableName);
      Preconditions.checkArgument(
          lockTimeout != null && !lockTimeout.isNegative(),
          "Cannot build the Shardberg sink for %s: lockTimeout must be >= 0, got %s",
          tableName,
          lockTimeout);
      Preconditions.checkArgument(
          commitAttempts > 0 && retryBackoff != null && !retryBackoff.isNegative(),
          "Cannot build the Shardberg sink for %s: commit attempts must be > 0 and backoff >= 0, got %s and %s",
          tableName,
          commitAttempts,
          retryBackoff);
      Preconditions.checkArgument(
          !input.getExecutionEnvironment().getCheckpointConfig().isUnalignedCheckpointsEnabled(),
          "Cannot build the Shardberg sink for %s: unaligned checkpoints are enabled; the coordinator"
              + " needs every writer's files before its barrier. Disable"
              + " execution.checkpointing.unaligned for this job.",
          tableName);
      WriterTableCheck.shardColumn(rowType);

      TableLoader loader = tableLoader.clone();
      try (loader) {
        loader.open();
        Table table = loader.loadTable();
        if (equalityColumns == null) {
          equalityColumns = new ArrayList<>(table.schema().identifierFieldNames());
          Preconditions.checkArgument(
              !equalityColumns.isEmpty(),
              "Cannot build the Shardberg sink for %s: equalityColumns are not set and the table has"
                  + " no identifier fields; set them to the shard column plus the primary key",
              tableName);
        }
        WriterTableCheck.validate(table, tableName, rowType, equalityColumns, deleteMode);
        return table;
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException("Cannot close the table loader of " + tableName, e);
      }
    }
  }
}
