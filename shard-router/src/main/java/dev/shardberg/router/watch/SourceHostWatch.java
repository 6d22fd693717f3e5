package dev.shardberg.router.watch;

import dev.shardberg.router.DroppedShards;
import dev.shardberg.router.Preconditions;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.tagging.NewShardCapture;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pass-through operator chained after one host's MySQL source that makes the host's health visible:
 *
 * <ul>
 *   <li>subtask 0 probes the host ({@code SELECT 1} over its own JDBC connection, on a background
 *       thread so an unreachable host never blocks the task) every {@code probeInterval}; the first
 *       failed probe logs a WARN naming the host and the error, the first answer after that an INFO
 *       with the gap;
 *   <li>a host that has not answered for {@code unreachableLimit} fails the job ({@link
 *       HostUnreachableException}) instead of a silent stall;
 *   <li>every subtask tracks the binlog changes that pass (their timestamp is the binlog event
 *       time, the snapshot's rows carry none) and exposes them, with the connection state, as
 *       gauges in the metric group {@code host=<name>}; a one-line summary per host goes to the log
 *       every {@link #SUMMARY_EVERY};
 *   <li>every subtask counts the snapshot's rows that pass (the deserializer makes a snapshot read,
 *       and only that, a +I row with {@code shard_number} at position 0): gauge {@code
 *       snapshotRows} per host and {@code shard=<n>.snapshotRows} per shard (sum over subtasks:
 *       snapshot chunks are read in parallel). Flink CDC 3.5.0's MySQL source exports no chunk
 *       counts of its own;
 *   <li>subtask 0 also checks, every {@link #TABLES_CHECK_EVERY}, that the host's shard tables
 *       still exist: a shard whose table is gone (a {@code DROP TABLE}) logs one WARN naming it and
 *       counts in gauge {@code droppedShards}; {@code status} lists such shards too. Its rows stay
 *       in the Iceberg table while the job runs, whatever {@code tables.dropped-shards} says (this
 *       run does not delete them); the WARN says what the next resume does with them: {@code keep},
 *       they stay; {@code delete}, they leave the table in one commit (the shard is no longer
 *       found, see the coordinator's {@code ShardReread}). In the same look, a table that matches
 *       the shard patterns but is not in the plan (created after the job started) logs one WARN
 *       naming it and its shard number: it is not read while the job runs, and is read alone from a
 *       fresh snapshot at the next resume (a number that clashes with a shard's stops that resume,
 *       naming both tables); such tables count in gauge {@code unreadShardTables} while they exist,
 *       and {@code status} warns of them;
 *   <li>every subtask checks that the binlog changes it passes come from the server the job's
 *       binlog position belongs to ({@link ServerIdentityCheck}): at the start of every run and
 *       restore, and at each checkpoint that holds binlog changes; another server at the address (a
 *       promoted replica) stops the job ({@link SourceServerChangedException}) before any change
 *       read there is committed. The server is kept in this operator's state (union list state
 *       {@value #SERVER_STATE}).
 * </ul>
 *
 * <p>The binlog reader itself (Flink CDC / Debezium) fails its task when the server closes the
 * connection and Flink restarts the job from the last checkpoint ({@code pipeline.restart.*}); this
 * operator is what says so in terms of the host. Its outage clock starts again with each restart.
 */
public final class SourceHostWatch extends AbstractStreamOperator<RowData>
    implements OneInputStreamOperator<RowData, RowData>, ProcessingTimeCallback {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(SourceHostWatch.class);

  /** How often each host's one-line summary is logged. */
  static final Duration SUMMARY_EVERY = Duration.ofMinutes(1);

  /** How often subtask 0 checks that the host's shard tables still exist. */
  static final Duration TABLES_CHECK_EVERY = Duration.ofSeconds(30);

  /** The operator state holding the server the job's binlog position for the host belongs to. */
  static final String SERVER_STATE = "shardberg-host-server";

  /** The operator state listing the shard tables captured while the job runs ("shard:db.table"). */
  static final String CAPTURED_STATE = "shardberg-captured-tables";

  private final MySqlHost host;

  /** The host's shard tables in the plan (empty: not checked). */
  private final List<ShardTable> tables;

  /** The shard patterns, to name tables created while the job runs; null: not looked for. */
  private final LogicalTableSpec spec;

  private final long probeMillis;
  private final Duration unreachableLimit;

  /** {@code tables.dropped-shards}: what the next resume does with a dropped shard's rows. */
  private final DroppedShards droppedShardRows;

  /**
   * {@code tables.new-shards: capture}: the key under which this host's source lists the tables it
   * captured ({@link NewShardCapture#capturedIn}); those are read, not warned about. Null
   * otherwise.
   */
  private String capturedKey;

  private transient HostHealth health;
  private transient ScheduledExecutorService prober;
  private transient AtomicReference<Set<Integer>>
      latestMissing; // the prober's last look at the tables, for the task thread
  private transient Connection connection; // used by the prober thread only
  private transient long lastSummaryMillis;
  private transient MetricGroup hostGroup;
  private transient Map<Integer, long[]> snapshotRowsByShard; // task thread writes, gauges read
  private transient volatile long snapshotRows;
  private transient long lastTablesCheckMillis; // prober thread only
  private transient Set<Integer> droppedShards; // task thread writes, gauge reads the size
  private transient volatile int droppedShardCount;
  // tables matching the patterns that exist but are not read (created while the job runs)
  private transient volatile int unreadShardTableCount;
  private transient Set<String> unplannedSeen; // prober thread only: tables already warned about
  private transient ServerIdentityCheck serverCheck; // task thread only
  private transient ListState<String> serverState;
  private transient ListState<String> capturedState; // tables.new-shards: capture

  public SourceHostWatch(MySqlHost host, Duration probeInterval, Duration unreachableLimit) {
    this(host, List.of(), probeInterval, unreachableLimit);
  }

  /** Watches {@code host} and checks that {@code tables} (its shards in the plan) still exist. */
  public SourceHostWatch(
      MySqlHost host, List<ShardTable> tables, Duration probeInterval, Duration unreachableLimit) {
    this(host, tables, null, probeInterval, unreachableLimit, DroppedShards.KEEP);
  }

  /**
   * Watches {@code host}, checks that {@code tables} still exist, and names the tables created
   * while the job runs that match {@code spec}'s patterns (null: not looked for); a dropped shard's
   * WARN says what {@code droppedShardRows} ({@code tables.dropped-shards}) does with its rows.
   */
  public SourceHostWatch(
      MySqlHost host,
      List<ShardTable> tables,
      LogicalTableSpec spec,
      Duration probeInterval,
      Duration unreachableLimit,
      DroppedShards droppedShardRows) {
    this.host = Objects.requireNonNull(host, "host");
    this.tables = List.copyOf(tables);
    this.spec = spec;
    this.droppedShardRows = Objects.requireNonNull(droppedShardRows, "droppedShardRows");
    Preconditions.checkArgument(
        probeInterval != null && !probeInterval.isNegative() && !probeInterval.isZero(),
        "Cannot watch host '%s': the probe interval %s is not positive (source.health-check-interval)",
        host.name(),
        probeInterval);
    Preconditions.checkArgument(
        unreachableLimit != null && unreachableLimit.compareTo(probeInterval) > 0,
        "Cannot watch host '%s': source.unreachable-timeout (%s) must be longer than source.health-check-interval (%s)",
        host.name(),
        unreachableLimit,
        probeInterval);
    this.probeMillis = probeInterval.toMillis();
    this.unreachableLimit = unreachableLimit;
    this.chainingStrategy = ChainingStrategy.ALWAYS;
  }

  /**
   * Tables the host's source captured while the job runs (listed under {@code key}) are read: not
   * counted or warned about as unread. Returns this.
   */
  public SourceHostWatch withCapturedTables(String key) {
    this.capturedKey = key;
    return this;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    serverState =
        context
            .getOperatorStateStore()
            .getUnionListState(new ListStateDescriptor<>(SERVER_STATE, Types.STRING));
    if (capturedKey != null) {
      // the tables the source captured while the job ran: back to it before it reads anything
      capturedState =
          context
              .getOperatorStateStore()
              .getUnionListState(new ListStateDescriptor<>(CAPTURED_STATE, Types.STRING));
      Map<String, Integer> restored = new HashMap<>();
      if (context.isRestored()) {
        for (String entry : capturedState.get()) {
          int colon = entry.indexOf(':');
          restored.put(entry.substring(colon + 1), Integer.parseInt(entry.substring(0, colon)));
        }
      }
      NewShardCapture.restored(capturedKey, restored);
    }
    serverCheck = new ServerIdentityCheck(host, tables, connectTimeoutMillis());
    // before the source reads anything: the chain's operators are set up from its end
    serverCheck.start(context.isRestored() ? serverState.get() : java.util.Collections.emptyList());
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    serverCheck.beforeCheckpoint(context.getCheckpointId());
    serverState.update(serverCheck.state());
    if (capturedState != null) {
      List<String> entries = new ArrayList<>();
      Set<String> planned = new java.util.HashSet<>();
      tables.forEach(t -> planned.add(t.qualifiedName()));
      NewShardCapture.capturedIn(capturedKey)
          .forEach(
              (table, shard) -> {
                if (!planned.contains(table)) { // a resume's plan lists it: read as any shard
                  entries.add(shard + ":" + table);
                }
              });
      capturedState.update(entries);
    }
  }

  @Override
  public void open() throws Exception {
    super.open();
    health = new HostHealth(unreachableLimit);
    latestMissing = new AtomicReference<>();
    lastSummaryMillis = now();
    boolean probing = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
    snapshotRowsByShard = new HashMap<>();
    droppedShards = new TreeSet<>();
    unplannedSeen = new java.util.HashSet<>();
    hostGroup = getMetricGroup().addGroup("host", host.name());
    registerGauges(hostGroup, probing);
    if (probing) {
      prober =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "shardberg-host-probe-" + host.name());
                t.setDaemon(true);
                return t;
              });
      prober.scheduleWithFixedDelay(this::probe, 0, probeMillis, TimeUnit.MILLISECONDS);
      schedule();
    }
  }

  private void registerGauges(MetricGroup group, boolean probing) {
    // 1 reachable, 0 unreachable, -1 not known (yet, or on a subtask that does not probe)
    group.gauge(
        "connected",
        (Gauge<Integer>)
            () ->
                !probing
                    ? -1
                    : switch (health.state()) {
                      case REACHABLE -> 1;
                      case UNREACHABLE -> 0;
                      case UNKNOWN -> -1;
                    });
    group.gauge("unreachableMillis", (Gauge<Long>) () -> health.unreachableMillis(now()));
    group.gauge("lastEventTime", (Gauge<Long>) health::lastEventTimeMillis);
    group.gauge("millisSinceLastEvent", (Gauge<Long>) () -> health.millisSinceLastEvent(now()));
    group.gauge("eventTimeLag", (Gauge<Long>) health::eventTimeLagMillis);
    group.gauge("snapshotRows", (Gauge<Long>) () -> snapshotRows);
    group.gauge("droppedShards", (Gauge<Integer>) () -> droppedShardCount);
    group.gauge("unreadShardTables", (Gauge<Integer>) () -> unreadShardTableCount);
    // when the gauges are read: a reader of Flink's REST API, which caches metrics, knows how old
    // they are
    group.gauge("sampledAt", (Gauge<Long>) this::now);
  }

  @Override
  public void processElement(StreamRecord<RowData> element) {
    if (element.hasTimestamp() && element.getTimestamp() > 0) {
      health.eventRead(element.getTimestamp(), now());
      serverCheck.binlogChange();
    }
    RowData row = element.getValue();
    if (row.getRowKind() == RowKind.INSERT) {
      countSnapshotRow(row.getInt(0));
    }
    output.collect(element);
  }

  private void countSnapshotRow(int shard) {
    long[] count = snapshotRowsByShard.get(shard);
    if (count == null) {
      long[] created = new long[1];
      count = created;
      snapshotRowsByShard.put(shard, created);
      hostGroup
          .addGroup("shard", Integer.toString(shard))
          .gauge("snapshotRows", (Gauge<Long>) () -> created[0]);
    }
    count[0]++;
    snapshotRows++;
  }

  @Override
  public void onProcessingTime(long time) {
    Set<Integer> missing = latestMissing.getAndSet(null);
    if (missing != null) {
      applyMissing(missing);
    }
    long now = now();
    if (health.pastLimit(now)) {
      throw new HostUnreachableException(
          host,
          Duration.ofMillis(health.unreachableMillis(now)),
          unreachableLimit,
          health.lastError());
    }
    if (now - lastSummaryMillis >= SUMMARY_EVERY.toMillis()) {
      lastSummaryMillis = now;
      LOG.info("{}", summary(now));
    }
    schedule();
  }

  /**
   * A probe's outcome, applied on the prober thread as soon as it is known (the gauges and the log
   * say so at once, not at the task's next timer); {@code error} null when the host answered.
   */
  private void apply(long atMillis, String error) {
    if (error == null) {
      if (health.probeSucceeded(atMillis) == HostHealth.Transition.BACK) {
        LOG.info(
            "MySQL host {} is back after {} s unreachable; the binlog reader resumes from its last position",
            host.describe(),
            String.format("%.1f", health.lastGapMillis() / 1000.0));
      }
    } else if (health.probeFailed(atMillis, error) == HostHealth.Transition.LOST) {
      LOG.warn(
          "Lost MySQL host {}: {}. Its shards get no changes until it is back (the binlog reader reconnects by itself);"
              + " the job fails if it stays unreachable for {} (source.unreachable-timeout)",
          host.describe(),
          error,
          unreachableLimit);
    }
  }

  private void applyMissing(Set<Integer> missing) {
    for (ShardTable t : tables) {
      if (missing.contains(t.shard()) && droppedShards.add(t.shard())) {
        LOG.warn(
            droppedShardWarning(droppedShardRows),
            t.shard(),
            t.qualifiedName(),
            host.describe(),
            t.shard());
      } else if (!missing.contains(t.shard()) && droppedShards.remove(t.shard())) {
        LOG.info(
            "Shard {} ('{}') exists again on MySQL host {}",
            t.shard(),
            t.qualifiedName(),
            host.describe());
      }
    }
    droppedShardCount = droppedShards.size();
  }

  /**
   * The WARN for a shard whose table is gone while the job runs (placeholders: shard, table, host,
   * shard). This run never deletes its rows: with {@code keep} they stay for good; with {@code
   * delete} they leave the table in one commit at the next resume of the job, where the shard is no
   * longer found.
   */
  static String droppedShardWarning(DroppedShards droppedShardRows) {
    return switch (droppedShardRows) {
      case KEEP ->
          "Shard {} ('{}') no longer exists on MySQL host {} (dropped?): its rows stay in the Iceberg"
              + " table, also after the next resume (tables.dropped-shards: keep). Delete them yourself if they must"
              + " go (DELETE … WHERE shard_number = {})";
      case DELETE ->
          "Shard {} ('{}') no longer exists on MySQL host {} (dropped?): its rows stay in the Iceberg"
              + " table while this run goes on, and leave it in one commit at the next resume of the job"
              + " (tables.dropped-shards: delete; a delete by shard_number = {}). To remove them sooner, stop the"
              + " job with a savepoint and resume it with the same config";
    };
  }

  /** The per-host line logged every {@link #SUMMARY_EVERY}. */
  String summary(long now) {
    long lastEvent = health.lastEventTimeMillis();
    return String.format(
        "MySQL host %s: %s; %d snapshot rows of %d shards and %d binlog changes read%s",
        host.describe(),
        switch (health.state()) {
          case REACHABLE -> "reachable";
          case UNREACHABLE -> "UNREACHABLE for " + health.unreachableMillis(now) / 1000 + " s";
          case UNKNOWN -> "not probed yet";
        },
        snapshotRows,
        snapshotRowsByShard.size(),
        health.eventsRead(),
        lastEvent < 0
            ? ""
            : String.format(
                ", newest written %s, read %d s ago, %d ms after it was written",
                Instant.ofEpochMilli(lastEvent),
                health.millisSinceLastEvent(now) / 1000,
                health.eventTimeLagMillis()));
  }

  private void schedule() {
    getProcessingTimeService()
        .registerTimer(getProcessingTimeService().getCurrentProcessingTime() + probeMillis, this);
  }

  private long now() {
    return System.currentTimeMillis();
  }

  /**
   * Runs on the prober thread: one round trip, applied; the tables found missing left for the task
   * thread.
   */
  private void probe() {
    String error = null;
    try {
      if (connection == null || connection.isClosed()) {
        connection = connect();
      }
      try (Statement st = connection.createStatement()) {
        st.execute("SELECT 1");
      }
    } catch (SQLException | RuntimeException e) {
      error = e.getClass().getSimpleName() + ": " + firstLine(e.getMessage());
      closeQuietly();
    }
    Set<Integer> missing = null;
    if (error == null
        && !tables.isEmpty()
        && now() - lastTablesCheckMillis >= TABLES_CHECK_EVERY.toMillis()) {
      lastTablesCheckMillis = now();
      try {
        missing = missingShards();
      } catch (SQLException e) {
        LOG.debug("Cannot check the shard tables of host {}: {}", host.describe(), e.getMessage());
      }
    }
    apply(now(), error);
    if (missing != null) {
      latestMissing.set(missing);
    }
  }

  /**
   * The shards of {@link #tables} whose table does not exist on the host (prober thread); warns
   * once about each table of the same databases that matches the patterns and is not planned.
   */
  private Set<Integer> missingShards() throws SQLException {
    Set<String> databases = new TreeSet<>();
    tables.forEach(t -> databases.add(t.database()));
    String placeholders = String.join(",", java.util.Collections.nCopies(databases.size(), "?"));
    Map<String, String[]> existing = new HashMap<>();
    try (java.sql.PreparedStatement st =
        connection.prepareStatement(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ("
                + placeholders
                + ")")) {
      int i = 1;
      for (String db : databases) {
        st.setString(i++, db);
      }
      try (java.sql.ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          existing.put(
              rs.getString(1) + "." + rs.getString(2),
              new String[] {rs.getString(1), rs.getString(2)});
        }
      }
    }
    Set<Integer> missing = new TreeSet<>();
    for (ShardTable t : tables) {
      if (!existing.containsKey(t.qualifiedName())) {
        missing.add(t.shard());
      }
    }
    if (spec != null) {
      warnUnplanned(existing);
    }
    return missing;
  }

  /** One WARN per table that matches the patterns but is not in the plan (prober thread). */
  private void warnUnplanned(Map<String, String[]> existing) {
    int unread = 0;
    Map<String, Integer> captured =
        capturedKey == null ? Map.of() : NewShardCapture.capturedIn(capturedKey);
    Map<String, ShardTable> planned = new HashMap<>();
    Map<Integer, ShardTable> byShard = new HashMap<>();
    tables.forEach(
        t -> {
          planned.put(t.qualifiedName(), t);
          byShard.put(t.shard(), t);
        });
    for (Map.Entry<String, String[]> e : existing.entrySet()) {
      String db = e.getValue()[0];
      String table = e.getValue()[1];
      if (planned.containsKey(e.getKey())
          || captured.containsKey(e.getKey())
          || !spec.matches(db, table)) {
        continue;
      }
      Integer shard;
      try {
        shard = spec.shardNumber(db, table).orElse(null);
      } catch (RuntimeException notAnInt) {
        shard = null;
      }
      if (shard != null && spec.excludedShards().contains(shard)) {
        continue; // left out on purpose
      }
      unread++;
      if (!unplannedSeen.add(e.getKey())) {
        continue; // warned about already
      }
      ShardTable clash = shard == null ? null : byShard.get(shard);
      if (clash != null) {
        LOG.warn(
            "Table '{}' on MySQL host {} matches the shard patterns but is not read: it was created after the job"
                + " started, and its shard number {} is already taken by '{}'. The next resume stops naming both tables:"
                + " rename or drop one of them, or fix tables.table-pattern / tables.shard-map",
            e.getKey(),
            host.describe(),
            shard,
            clash.qualifiedName());
      } else {
        LOG.warn(
            "Table '{}' on MySQL host {} matches the shard patterns (shard {}) but is not read by this Flink job:"
                + " it was created (or renamed into the patterns) after the job started. A local `shardberg run` or"
                + " an attached `flink run` reads it by itself within tables.discovery-interval (tables.new-shards:"
                + " adopt or capture: a savepoint and a resume); else stop the job with a savepoint and resume it"
                + " with the same config: the resume reads it alone from a fresh snapshot, the other shards go on"
                + " from their position",
            e.getKey(),
            host.describe(),
            shard == null ? "without a number: add it to tables.shard-map" : shard);
      }
    }
    unreadShardTableCount = unread;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "(no message)";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }

  private Connection connect() throws SQLException {
    return host.openWatchConnection(connectTimeoutMillis());
  }

  private long connectTimeoutMillis() {
    return Math.max(1000L, Math.min(probeMillis * 2, 10_000L));
  }

  private void closeQuietly() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException ignored) {
        // already broken
      }
      connection = null;
    }
  }

  @Override
  public void close() throws Exception {
    if (serverCheck != null) {
      serverCheck.close();
    }
    if (prober != null) {
      prober.shutdownNow();
      prober.awaitTermination(10, TimeUnit.SECONDS);
      closeQuietly();
    }
    super.close();
  }
}
