package dev.shardberg.job;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.tagging.NewShardCapture;
import dev.shardberg.router.tagging.ShardTaggingDeserializer;
import io.debezium.connector.mysql.MySqlConnection;
import io.debezium.connector.mysql.MySqlPartition;
import io.debezium.relational.TableId;
import io.debezium.relational.history.TableChanges;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.cdc.connectors.mysql.debezium.DebeziumUtils;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSource;
import org.apache.flink.cdc.connectors.mysql.source.assigners.AssignerStatus;
import org.apache.flink.cdc.connectors.mysql.source.assigners.state.HybridPendingSplitsState;
import org.apache.flink.cdc.connectors.mysql.source.assigners.state.PendingSplitsState;
import org.apache.flink.cdc.connectors.mysql.source.assigners.state.SnapshotPendingSplitsState;
import org.apache.flink.cdc.connectors.mysql.source.config.MySqlSourceConfig;
import org.apache.flink.cdc.connectors.mysql.source.events.BinlogSplitMetaEvent;
import org.apache.flink.cdc.connectors.mysql.source.events.BinlogSplitUpdateRequestEvent;
import org.apache.flink.cdc.connectors.mysql.source.events.LatestFinishedSplitsNumberEvent;
import org.apache.flink.cdc.connectors.mysql.source.split.FinishedSnapshotSplitInfo;
import org.apache.flink.cdc.connectors.mysql.source.split.MySqlBinlogSplit;
import org.apache.flink.cdc.connectors.mysql.source.split.MySqlSchemalessSnapshotSplit;
import org.apache.flink.cdc.connectors.mysql.source.split.MySqlSplit;
import org.apache.flink.cdc.connectors.mysql.source.utils.TableDiscoveryUtils;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.RowData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One host's MySQL source that follows the shard fleet at a restore: a shard table the restored
 * state does not know (created while the job was stopped, or included again after {@code
 * tables.exclude-shards}) is read alone from a fresh snapshot while every other shard goes on from
 * its binlog position, and a shard table the state knows that is no longer in the plan (dropped,
 * excluded) is dropped from the state — with no config change.
 *
 * <p>Flink CDC does both only with {@code scanNewlyAddedTableEnabled}, and only in the enumerator's
 * restore ({@code MySqlSnapshotSplitAssigner.captureNewlyAddedTables}). On at every restore it
 * would also snapshot, at every restart of the job, an online schema-change tool's shadow table
 * that the {@code evolve} mode captures ({@link ShardTaggingDeserializer#captureListOf}): the
 * host's binlog stalls while a copy of a whole shard is read, and a cut-over during that read fails
 * the job. So this source holds two Flink CDC sources built alike but for that switch, and chooses
 * the enumerator per restore by comparing the restored state's tables with the plan's: the switch
 * is on only for the restore that meets a change in the host's shard tables (which then also reads
 * a shadow table that exists at that moment). The readers are always the switched-on source's: they
 * then hold back a table's binlog rows until its snapshot is done (a table the enumerator knows is
 * always past its snapshot), and learn the definitions of tables new to the state.
 *
 * <p>Refused (the job stops, naming the shard tables and the way on): a table new to a state whose
 * snapshot assignment is not finished. Flink CDC adds tables only after it, and would read the new
 * shard from the binlog alone — its rows already there would never reach the table.
 */
final class ShardFleetSource
    implements Source<RowData, MySqlSplit, PendingSplitsState>, ResultTypeQueryable<RowData> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ShardFleetSource.class);

  private final String hostName;

  /** "db.table" → shard number, the host's shard tables in the plan. */
  private final Map<String, Integer> planned;

  /** Regexes of the shadow tables of the planned ones (captured in evolve mode, not shards). */
  private final List<String> shadowPatterns;

  /** With {@code scanNewlyAddedTableEnabled}: the readers, and enumerators that follow a change. */
  private final MySqlSource<RowData> scanning;

  /** Without: the enumerators of a first start and of restores that meet no change. */
  private final MySqlSource<RowData> steady;

  /**
   * With {@code tables.new-shards: capture}: the readers' source (the shard patterns captured, the
   * switch off) and its tagger (the same object the source holds); else null.
   */
  private final MySqlSource<RowData> capturing;

  private final ShardTaggingDeserializer capturingTagger;

  ShardFleetSource(
      String hostName,
      List<ShardTable> tables,
      MySqlSource<RowData> scanning,
      MySqlSource<RowData> steady) {
    this(hostName, tables, scanning, steady, null, null);
  }

  /**
   * With readers that capture shard tables created while the job runs ({@code tables.new-shards:
   * capture}): {@code capturing} is built with {@code tagger} ({@code MySqlSources.forHost(…,
   * tagger)}), which this source reaches through the same reference after Flink ships it to a task.
   */
  ShardFleetSource(
      String hostName,
      List<ShardTable> tables,
      MySqlSource<RowData> scanning,
      MySqlSource<RowData> steady,
      MySqlSource<RowData> capturing,
      ShardTaggingDeserializer tagger) {
    this.hostName = hostName;
    Map<String, Integer> byName = new TreeMap<>();
    tables.forEach(t -> byName.put(t.qualifiedName(), t.shard()));
    this.planned = byName;
    this.shadowPatterns =
        tables.stream()
            .flatMap(
                t ->
                    ShardTaggingDeserializer.shadowTablePatterns(t).stream()
                        .map(p -> ShardTaggingDeserializer.escapeRegex(t.database()) + "\\." + p))
            .toList();
    this.scanning = scanning;
    this.steady = steady;
    this.capturing = capturing;
    this.capturingTagger = tagger;
  }

  @Override
  public Boundedness getBoundedness() {
    return steady.getBoundedness();
  }

  @Override
  public SourceReader<RowData, MySqlSplit> createReader(SourceReaderContext context)
      throws Exception {
    MetricGroup group = context.metricGroup().addGroup("host", hostName);
    if (capturing == null) {
      return new PhaseReporting(scanning.createReader(context), group, null);
    }
    return new PhaseReporting(
        capturing.createReader(context),
        group,
        new CaptureHooks(
            hostName,
            planned.keySet(),
            this::isShadow,
            capturingTagger,
            capturing.getConfigFactory().createConfig(context.getIndexOfSubtask()),
            group));
  }

  /**
   * What the reader of a capturing source ({@code tables.new-shards: capture}) tells its tagger
   * about the binlog split: which planned tables the split holds a snapshot of (the binlog rows of
   * the others are held until it does; Flink CDC snapshots them now), and which tables it defines
   * outside the plan (captured before a restore). Fills in the definitions of planned tables the
   * split lacks (tables new to a restored state), as Flink CDC's reader does with the switch on:
   * without them the binlog reader would skip their rows after their snapshot.
   */
  static final class CaptureHooks {
    private final String hostName;
    private final Set<String> planned;

    /** Shadow tables of the planned ones (online schema-change tools): followed, not shards. */
    private final java.util.function.Predicate<String> shadow;

    private final ShardTaggingDeserializer tagger;
    private final MySqlSourceConfig config;
    private final MetricGroup group;

    /** Tables with a finished snapshot split in the binlog split (its infos and meta events). */
    private final Set<String> snapshotted = new java.util.HashSet<>();

    private final Set<Integer> reported = new java.util.HashSet<>();

    CaptureHooks(
        String hostName,
        Set<String> planned,
        java.util.function.Predicate<String> shadow,
        ShardTaggingDeserializer tagger,
        MySqlSourceConfig config,
        MetricGroup group) {
      this.hostName = hostName;
      this.planned = Set.copyOf(planned);
      this.shadow = shadow;
      this.tagger = tagger;
      this.config = config;
      this.group = group;
    }

    MySqlSplit onBinlogSplit(MySqlBinlogSplit restored) {
      MySqlBinlogSplit split = withoutLeftTables(restored);
      split.getFinishedSnapshotSplitInfos().forEach(i -> snapshotted.add(name(i.getTableId())));
      Set<String> defined = new TreeSet<>();
      split.getTableSchemas().keySet().forEach(t -> defined.add(name(t)));
      List<TableId> undefined =
          planned.stream()
              .filter(t -> !defined.contains(t))
              .sorted()
              .map(
                  t ->
                      new TableId(
                          t.substring(0, t.indexOf('.')), null, t.substring(t.indexOf('.') + 1)))
              .toList();
      MySqlBinlogSplit filled = split;
      // an empty split is a first assignment: Flink CDC's reader then defines every table itself
      if (!defined.isEmpty() && !undefined.isEmpty()) {
        try (MySqlConnection jdbc = DebeziumUtils.createMySqlConnection(config)) {
          Map<TableId, TableChanges.TableChange> schemas =
              TableDiscoveryUtils.discoverSchemaForCapturedTables(
                  new MySqlPartition(config.getMySqlConnectorConfig().getLogicalName()),
                  undefined,
                  config,
                  jdbc);
          filled = MySqlBinlogSplit.fillTableSchemas(split, new java.util.HashMap<>(schemas));
        } catch (java.sql.SQLException e) {
          throw new ShardRouterException(
              String.format(
                  "Cannot read the definitions of shard table(s) %s on MySQL host '%s': %s",
                  undefined, hostName, e.getMessage()),
              e);
        }
        LOG.info(
            "Shard table(s) {} on MySQL host '{}' are new to the restored binlog position: their binlog rows"
                + " wait for their snapshot",
            undefined,
            hostName);
      }
      // captured before a restore (the host watch restored them)
      Set<String> outside =
          new TreeSet<>(NewShardCapture.capturedIn(tagger.capture().registryKey()).keySet());
      outside.removeAll(planned);
      tagger.onRestoredBinlogSplit(
          table -> planned.contains(table) && !snapshotted.contains(table),
          outside,
          (table, shard) -> {
            if (reported.add(shard)) {
              // a gauge object of its own: Flink's metric query service keys gauges by object,
              // and a lambda that captures nothing is one object for every shard
              int captured = shard;
              group
                  .addGroup("shard", Integer.toString(shard))
                  .gauge("captured", (Gauge<Integer>) () -> captured >= 0 ? 1 : 0);
            }
          });
      return filled;
    }

    /**
     * The split without the finished snapshot splits of tables the plan no longer has (a shard
     * excluded or dropped since): Flink CDC's reader drops them at a restore with the switch on, as
     * its enumerator does at such a restore. Kept, a shard included again would let its binlog rows
     * through before its new snapshot (the old snapshot's high watermarks are behind them). Their
     * definitions stay: the rows of an excluded shard are then dropped by the tagger, not warned
     * about by Debezium as rows of a table it does not know.
     */
    private MySqlBinlogSplit withoutLeftTables(MySqlBinlogSplit split) {
      Set<TableId> left = new java.util.HashSet<>();
      for (FinishedSnapshotSplitInfo info : split.getFinishedSnapshotSplitInfos()) {
        String table = name(info.getTableId());
        if (!planned.contains(table) && !shadow.test(table)) {
          left.add(info.getTableId());
        }
      }
      if (left.isEmpty()) {
        return split;
      }
      Map<TableId, TableChanges.TableChange> definitions =
          new java.util.HashMap<>(split.getTableSchemas());
      MySqlBinlogSplit filtered =
          MySqlBinlogSplit.filterOutdatedSplitInfos(split, table -> !left.contains(table));
      LOG.info(
          "Tables {} on MySQL host '{}' are no longer shards of the plan: their snapshot splits leave the"
              + " restored binlog split (read again from a fresh snapshot if included again)",
          left.stream().map(ShardFleetSource::name).sorted().toList(),
          hostName);
      return MySqlBinlogSplit.fillTableSchemas(filtered, definitions);
    }

    void onMeta(BinlogSplitMetaEvent event) {
      for (byte[] info : event.getMetaGroup()) {
        snapshotted.add(name(FinishedSnapshotSplitInfo.deserialize(info).getTableId()));
      }
    }
  }

  /**
   * Flink CDC's reader, plus gauge {@code host.<name>.binlogPhase}: 1 on the subtask that reads the
   * host's binlog split while no snapshot is being read, else 0. The enumerator hands out the
   * binlog split only once every snapshot split is done ({@code MySqlHybridSplitAssigner}), and
   * takes it back ({@link BinlogSplitUpdateRequestEvent}) while it reads the snapshot of tables new
   * to a restored state, until {@link LatestFinishedSplitsNumberEvent} gives it back. A local
   * {@code run} reads it (max over subtasks) before it adopts a shard created while it runs: a
   * state taken in a snapshot phase cannot add a table ({@link #restoreEnumerator}).
   */
  static final class PhaseReporting implements SourceReader<RowData, MySqlSplit> {
    private final SourceReader<RowData, MySqlSplit> reader;
    private final CaptureHooks capture;
    private volatile boolean binlogPhase;

    PhaseReporting(
        SourceReader<RowData, MySqlSplit> reader, MetricGroup group, CaptureHooks capture) {
      this.reader = reader;
      this.capture = capture;
      group.gauge("binlogPhase", (Gauge<Integer>) () -> binlogPhase ? 1 : 0);
    }

    @Override
    public void start() {
      reader.start();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
      return reader.pollNext(output);
    }

    @Override
    public List<MySqlSplit> snapshotState(long checkpointId) {
      return reader.snapshotState(checkpointId);
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
      return reader.isAvailable();
    }

    @Override
    public void addSplits(List<MySqlSplit> splits) {
      if (splits.stream().anyMatch(MySqlSplit::isBinlogSplit)) {
        binlogPhase = true;
        if (capture != null) {
          splits =
              splits.stream()
                  .map(s -> s.isBinlogSplit() ? capture.onBinlogSplit(s.asBinlogSplit()) : s)
                  .toList();
        }
      }
      reader.addSplits(splits);
    }

    @Override
    public void notifyNoMoreSplits() {
      reader.notifyNoMoreSplits();
    }

    @Override
    public void handleSourceEvents(SourceEvent sourceEvent) {
      if (sourceEvent instanceof BinlogSplitUpdateRequestEvent) {
        binlogPhase = false;
      }
      if (capture != null && sourceEvent instanceof BinlogSplitMetaEvent meta) {
        capture.onMeta(meta);
      }
      reader.handleSourceEvents(sourceEvent);
      if (sourceEvent instanceof LatestFinishedSplitsNumberEvent) {
        binlogPhase = true;
      }
    }

    @Override
    public void pauseOrResumeSplits(
        Collection<String> splitsToPause, Collection<String> splitsToResume) {
      reader.pauseOrResumeSplits(splitsToPause, splitsToResume);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
      reader.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
      reader.notifyCheckpointAborted(checkpointId);
    }

    @Override
    public void close() throws Exception {
      reader.close();
    }
  }

  @Override
  public SplitEnumerator<MySqlSplit, PendingSplitsState> createEnumerator(
      SplitEnumeratorContext<MySqlSplit> context) {
    return steady.createEnumerator(context);
  }

  @Override
  public SplitEnumerator<MySqlSplit, PendingSplitsState> restoreEnumerator(
      SplitEnumeratorContext<MySqlSplit> context, PendingSplitsState state) {
    if (!(state instanceof HybridPendingSplitsState hybrid)) {
      // startup mode latest / timestamp: no snapshot to read a new table with
      return steady.restoreEnumerator(context, state);
    }
    FleetChange change = change(hybrid.getSnapshotPendingSplits());
    if (change.isEmpty()) {
      return steady.restoreEnumerator(context, state);
    }
    AssignerStatus status = hybrid.getSnapshotPendingSplits().getSnapshotAssignerStatus();
    if (!change.added().isEmpty() && !AssignerStatus.isAssigningFinished(status)) {
      throw new ShardRouterException(
          String.format(
              "Cannot resume on MySQL host '%s': shard table(s) %s are new to the restored state, and that state is"
                  + " still in a snapshot phase (%s); Flink CDC adds tables only once it is over, and would read"
                  + " them from the binlog alone. Resume without them first (tables.exclude-shards: %s) until a"
                  + " checkpoint completes after the snapshot phase, then resume with them from that checkpoint",
              hostName, change.added().keySet(), status, new TreeSet<>(change.added().values())));
    }
    change
        .added()
        .forEach(
            (table, shard) ->
                LOG.info(
                    "Shard {} ('{}') on MySQL host '{}' is new to the restored state: it is read alone from a fresh"
                        + " snapshot while the other shards go on from their binlog position, and its rows replace"
                        + " any rows of shard {} in the table",
                    shard,
                    table,
                    hostName,
                    shard));
    if (!change.removed().isEmpty()) {
      LOG.info(
          "Shard table(s) {} on MySQL host '{}' are no longer in the plan (dropped or excluded): their read"
              + " position leaves the state; their rows stay in the table or leave it as tables.dropped-shards"
              + " says (excluded shards always keep theirs; the coordinator logs which)",
          change.removed(),
          hostName);
    }
    return scanning.restoreEnumerator(context, state);
  }

  /**
   * The shard tables of the plan the state does not know, and the tables the state knows that are
   * neither in the plan nor shadow tables of a planned one.
   */
  FleetChange change(SnapshotPendingSplitsState snapshot) {
    Set<String> known = new TreeSet<>();
    snapshot.getAlreadyProcessedTables().forEach(t -> known.add(name(t)));
    snapshot.getRemainingTables().forEach(t -> known.add(name(t)));
    for (MySqlSchemalessSnapshotSplit split : snapshot.getRemainingSplits()) {
      known.add(name(split.getTableId()));
    }
    for (MySqlSchemalessSnapshotSplit split : snapshot.getAssignedSplits().values()) {
      known.add(name(split.getTableId()));
    }
    Map<String, Integer> added = new TreeMap<>(planned);
    added.keySet().removeAll(known);
    Set<String> removed = new TreeSet<>(known);
    removed.removeAll(planned.keySet());
    removed.removeIf(this::isShadow);
    return new FleetChange(added, removed);
  }

  private boolean isShadow(String qualifiedName) {
    return shadowPatterns.stream().anyMatch(p -> Pattern.matches(p, qualifiedName));
  }

  private static String name(TableId table) {
    // MySQL's TableId: the database is the catalog
    return (table.catalog() != null ? table.catalog() : table.schema()) + "." + table.table();
  }

  /** What changed in a host's shard tables between a restored state and the plan. */
  record FleetChange(Map<String, Integer> added, Set<String> removed) {
    boolean isEmpty() {
      return added.isEmpty() && removed.isEmpty();
    }
  }

  @Override
  public SimpleVersionedSerializer<MySqlSplit> getSplitSerializer() {
    return steady.getSplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<PendingSplitsState> getEnumeratorCheckpointSerializer() {
    return steady.getEnumeratorCheckpointSerializer();
  }

  @Override
  public TypeInformation<RowData> getProducedType() {
    return steady.getProducedType();
  }
}
