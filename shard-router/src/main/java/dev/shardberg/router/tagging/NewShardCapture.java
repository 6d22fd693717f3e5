package dev.shardberg.router.tagging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.SchemaComparison;
import dev.shardberg.router.types.MySqlColumn;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard tagger's half of {@code tables.new-shards: capture}: a shard table created on the host
 * while the job runs is read from the binlog, from its {@code CREATE TABLE} on, by the running job.
 *
 * <p>The host's binlog reader then captures every table matching the shard patterns (not only the
 * planned ones), with Flink CDC's switch for newly added tables off, so that it emits the rows of a
 * table it has no snapshot of. This class decides what reaches the table:
 *
 * <ul>
 *   <li>a {@code CREATE TABLE} (also {@code … LIKE}, {@code … SELECT}) of a table outside the plan
 *       that matches the patterns: its number is checked against every shard of the plan and every
 *       table captured before (a clash stops the job for good, naming both tables), its columns and
 *       primary key against the plan's (a difference stops it, naming the column); then it is a
 *       shard of this job, its rows tagged like any other's;
 *   <li>rows of any other table outside the plan (a shard left out by {@code
 *       tables.exclude-shards}, a table renamed into the patterns, whose older rows no binlog
 *       reader saw) are dropped: the host watch counts such a table as not read, and a local run or
 *       an attached {@code flink run} adopts it with a savepoint;
 *   <li>the binlog rows of a planned table whose snapshot the restored binlog split does not hold
 *       yet (a table new to a restored state: Flink CDC snapshots it now) are dropped until the
 *       split holds it: its snapshot and the binlog after it carry them (with the switch on, Flink
 *       CDC's own reader would hold them back the same way). Snapshot rows (op {@code r}) pass.
 * </ul>
 *
 * Which tables were captured survives a restore in Flink CDC's binlog split (the reader records the
 * definition of every table whose DDL it reads), and comes back through {@link #restoreCaptured}.
 */
public final class NewShardCapture implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(NewShardCapture.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * How long a capture waits for another host's answer ({@link #checkOtherHosts}): the host's
   * binlog reader waits meanwhile, so a host that is down costs each new table this long, not a
   * column read's 30 s.
   */
  static final long OTHER_HOST_TIMEOUT_MS = 5_000;

  /** Captured shard tables by registry key, for the host watch in the same JVM. */
  private static final Map<String, Map<String, Integer>> REGISTRY = new ConcurrentHashMap<>();

  /** The patterns and shard-number rule, this host only. */
  private final LogicalTableSpec spec;

  /** Every shard of the plan, on every host: number → "'db.t' on host 'h'". */
  private final Map<Integer, String> plannedShards;

  /** Shared with the host's watch: its tables captured in this JVM. */
  private final String registryKey;

  /**
   * The job's other hosts: a table created here is checked against theirs, whose sources capture on
   * their own (two hosts creating one number would mix two tables' rows under it).
   */
  private final List<MySqlHost> otherHosts;

  /**
   * The plan's columns and MySQL primary key: a captured table must have the same (fixed layout);
   * null when the table evolves (the new shard's columns are planned as a DDL of it).
   */
  private List<MySqlColumn> columns;

  private List<String> primaryKey;

  private transient Map<String, Integer> captured;
  private transient Predicate<String> held;
  private transient BiConsumer<String, Integer> listener;

  /**
   * @param hostSpec the logical table with this host only
   * @param plan the plan the job was built with (every host)
   * @param registryKey a key unique to this host's source in this job build ({@link #capturedIn})
   */
  public NewShardCapture(LogicalTableSpec hostSpec, ShardPlan plan, String registryKey) {
    this(hostSpec, plan, registryKey, List.of());
  }

  /**
   * As above, with the job's other hosts ({@code otherHosts}), asked at each {@code CREATE TABLE}
   * of a new shard whether they hold a table of its number that is not in the plan.
   */
  public NewShardCapture(
      LogicalTableSpec hostSpec, ShardPlan plan, String registryKey, List<MySqlHost> otherHosts) {
    this.otherHosts = List.copyOf(otherHosts);
    this.spec = hostSpec;
    Map<Integer, String> planned = new TreeMap<>();
    plan.allTables().forEach(t -> planned.put(t.shard(), t.describe()));
    this.plannedShards = planned;
    this.registryKey = registryKey;
  }

  /**
   * The shard tables captured under {@code registryKey} in this JVM (qualified name → shard), by
   * the host's source or restored by its watch ({@link #restored}).
   */
  public static Map<String, Integer> capturedIn(String registryKey) {
    Map<String, Integer> found = REGISTRY.get(registryKey);
    return found == null ? Map.of() : Map.copyOf(found);
  }

  /**
   * The host's watch restored these captured tables from a checkpoint; its chain's source, set up
   * after it, reads them on ({@link ShardTaggingDeserializer#onRestoredBinlogSplit}). Merged, not
   * replaced: a table captured after that checkpoint by an earlier attempt in this JVM stays
   * listed, which is harmless — its {@code CREATE TABLE}, replayed, finds it captured.
   */
  public static void restored(String registryKey, Map<String, Integer> captured) {
    REGISTRY.computeIfAbsent(registryKey, k -> new ConcurrentHashMap<>()).putAll(captured);
  }

  /** The logical table, this host only. */
  public LogicalTableSpec spec() {
    return spec;
  }

  /** The key the host's watch looks captured tables up with. */
  public String registryKey() {
    return registryKey;
  }

  /** The host's name, for messages. */
  private String hostName() {
    return spec.hosts().get(0).name();
  }

  private Map<String, Integer> captured() {
    if (captured == null) {
      captured = new LinkedHashMap<>();
    }
    return captured;
  }

  /**
   * Binlog rows of the planned tables {@code held} accepts are dropped (their snapshot is pending:
   * see the class comment). Set by the source's reader, which sees the binlog split.
   */
  void holdBinlogRows(Predicate<String> held) {
    this.held = held;
  }

  /** Told of every table captured (qualified name, shard number). */
  void onCapture(BiConsumer<String, Integer> listener) {
    this.listener = listener;
  }

  boolean isHeld(String qualifiedName) {
    return held != null && held.test(qualifiedName);
  }

  /**
   * A DDL record: a {@code CREATE TABLE} of a new shard table is captured (added to {@code
   * shardByTable}). Returns true when the tagger is done with the record: with the fixed layout, a
   * DDL that touches no table of {@code shardByTable} (a capture, or a table this job does not
   * read); false when the tagger handles it as before — a DDL of a shard, and any DDL when the
   * table evolves (the evolving layout then takes a new shard's {@code CREATE TABLE} as that
   * shard's columns).
   *
   * @throws ShardRouterException when a created table's number is taken or its columns differ
   */
  boolean onDdl(Struct value, Map<String, Integer> shardByTable, MySqlHost host) {
    JsonNode history = history(value);
    List<String> created = new ArrayList<>();
    List<String> touched = new ArrayList<>();
    if (history != null) {
      for (JsonNode change : history.path("tableChanges")) {
        String name = DebeziumTableChanges.qualifiedName(change.path("id").asText(""));
        touched.add(name);
        if ("CREATE".equals(change.path("type").asText(""))) {
          created.add(name);
        }
      }
    }
    if (touched.isEmpty()) {
      String table = tableOf(value);
      if (table != null) {
        touched.add(table);
      }
    }
    // an evolving table's layout sees every DDL as before (it ignores tables outside the plan, and
    // follows the shadow tables of online schema-change tools); a new shard's CREATE TABLE reaches
    // it as a DDL of that shard, planned against the table (or refused, naming what cannot evolve)
    boolean evolving = columns == null;
    if (!touched.isEmpty()
        && created.size() == touched.size()
        && created.stream().allMatch(captured()::containsKey)) {
      return !evolving; // the CREATE TABLE of a table captured already, replayed after a restore
    }
    if (touched.isEmpty() || touched.stream().anyMatch(shardByTable::containsKey)) {
      return false;
    }
    for (String name : created) {
      capture(name, shardByTable, host, true);
    }
    return !evolving;
  }

  /**
   * Tables whose definition the restored binlog split holds though the plan does not list them:
   * those captured before the restore go on being read (after a failover the plan is the one the
   * job was built with).
   */
  void restoreCaptured(Collection<String> qualifiedNames, Map<String, Integer> shardByTable) {
    for (String name : qualifiedNames) {
      if (!shardByTable.containsKey(name)) {
        capture(name, shardByTable, null, false);
      }
    }
  }

  /** True when {@code qualifiedName} is a shard of this job from now on. */
  private boolean capture(
      String qualifiedName, Map<String, Integer> shardByTable, MySqlHost host, boolean created) {
    int dot = qualifiedName.indexOf('.');
    if (dot <= 0) {
      return false;
    }
    String database = qualifiedName.substring(0, dot);
    String table = qualifiedName.substring(dot + 1);
    if (!spec.matches(database, table)) {
      return false;
    }
    Optional<Integer> number = spec.shardNumber(database, table);
    if (number.isEmpty()) {
      if (created) {
        LOG.warn(
            "Table '{}' on MySQL host '{}' matches the shard patterns but gives no shard number (list it in {}): not read",
            qualifiedName,
            hostName(),
            RouterOptions.TABLES_SHARD_MAP.key());
      }
      return false;
    }
    int shard = number.get();
    if (spec.excludedShards().contains(shard)) {
      if (created) {
        LOG.info(
            "Table '{}' on MySQL host '{}' (shard {}) was created while the job runs; not read: {} lists shard {}",
            qualifiedName,
            hostName(),
            shard,
            RouterOptions.TABLES_EXCLUDE_SHARDS.key(),
            shard);
      }
      return false;
    }
    String taken = plannedShards.get(shard);
    if (taken == null) {
      for (Map.Entry<String, Integer> e : captured().entrySet()) {
        if (e.getValue() == shard) {
          taken = "'" + e.getKey() + "' on host '" + hostName() + "'";
        }
      }
    }
    if (taken != null) {
      if (!created) {
        LOG.warn(
            "Table '{}' on MySQL host '{}' was read as shard {} before the restore, but {} has that number now: not read",
            qualifiedName,
            hostName(),
            shard,
            taken);
        return false;
      }
      throw new ShardRouterException(
          String.format(
              "Cannot assign shard numbers: shard number %d is taken by %s and '%s' on host '%s' (created while"
                  + " the job runs); every shard table needs its own number. The job stops for good; nothing"
                  + " after its last completed checkpoint is lost. Rename or drop '%s' (or fix the patterns or "
                  + RouterOptions.TABLES_SHARD_MAP.key()
                  + "), then resume the job from its last checkpoint",
              shard,
              taken,
              qualifiedName,
              hostName(),
              qualifiedName));
    }
    if (created && host != null) {
      checkOtherHosts(qualifiedName, shard);
      checkColumns(new ShardTable(hostName(), database, table, shard), host);
    }
    shardByTable.put(qualifiedName, shard);
    captured().put(qualifiedName, shard);
    REGISTRY.computeIfAbsent(registryKey, k -> new ConcurrentHashMap<>()).put(qualifiedName, shard);
    if (listener != null) {
      listener.accept(qualifiedName, shard);
    }
    LOG.info(
        created
            ? "Shard {} ('{}' on MySQL host '{}') was created while the job runs: read from the binlog from its"
                + " CREATE TABLE on, without a restart (tables.new-shards: capture)"
            : "Shard {} ('{}' on MySQL host '{}'), created while the job ran before this restore, is read on from"
                + " the binlog",
        shard,
        qualifiedName,
        hostName());
    return true;
  }

  /**
   * Refuses a table created here whose number a table on another host takes: a planned one was
   * refused above; this finds one created there while the job runs too (captured by that host's
   * source, or about to be). Of two such tables the later one's capture finds the earlier one. A
   * host that cannot be asked is skipped with a WARN: the next resume's discovery compares them.
   */
  private void checkOtherHosts(String qualifiedName, int shard) {
    for (MySqlHost other : otherHosts) {
      List<String> numbered;
      try {
        numbered = ShardDiscovery.tablesNumbered(other, spec, shard, OTHER_HOST_TIMEOUT_MS);
      } catch (ShardRouterException e) {
        LOG.warn(
            "Could not ask MySQL host '{}' whether a table there takes shard number {} too, as '{}' created on host '{}'"
                + " does (the next resume's discovery compares them): {}",
            other.name(),
            shard,
            qualifiedName,
            hostName(),
            e.getMessage());
        continue;
      }
      if (!numbered.isEmpty()) {
        throw new ShardRouterException(
            String.format(
                "Cannot assign shard numbers: shard number %d is taken by '%s' on host '%s' and '%s' on host"
                    + " '%s' (both created while the job runs); every shard table needs its own number. The job"
                    + " stops for good before any row of '%s' on host '%s' is read; nothing after its last"
                    + " completed checkpoint is lost, and the rows of shard %d in the table are those of '%s' on"
                    + " host '%s', if any. Rename or drop one of them (or fix the patterns or "
                    + RouterOptions.TABLES_SHARD_MAP.key()
                    + "), then resume the job from its last checkpoint; to keep '%s' on host '%s' instead,"
                    + " list %d in "
                    + RouterOptions.TABLES_REREAD_SHARDS.key()
                    + " for that resume, so its rows replace those",
                shard,
                numbered.get(0),
                other.name(),
                qualifiedName,
                hostName(),
                qualifiedName,
                hostName(),
                shard,
                numbered.get(0),
                other.name(),
                qualifiedName,
                hostName(),
                shard));
      }
    }
  }

  void expectColumns(List<MySqlColumn> columns, List<String> primaryKey) {
    this.columns = List.copyOf(columns);
    this.primaryKey = List.copyOf(primaryKey);
  }

  private void checkColumns(ShardTable table, MySqlHost host) {
    if (columns == null) {
      return;
    }
    Optional<SchemaComparison.ShardColumns> now =
        ShardDiscovery.currentColumnsIfExists(
            host, table, ShardTaggingDeserializer.COLUMN_READ_TIMEOUT_MS);
    if (now.isEmpty()) {
      return; // dropped since: the rows that follow, if any, are checked by the layout
    }
    List<String> differences = SchemaComparison.differencesFrom(columns, primaryKey, now.get());
    if (!differences.isEmpty()) {
      throw new ShardRouterException(
          String.format(
              "Cannot read shard %d (%s), created while the job runs: it differs from the other shards:%n%s%n"
                  + "The job stops for good; nothing after its last completed checkpoint is lost. Make its"
                  + " columns and primary key those of the other shards (or drop it), then resume the job from"
                  + " its last checkpoint",
              table.shard(),
              table.describe(),
              String.join(
                  System.lineSeparator(), differences.stream().map(d -> "  - " + d).toList())));
    }
  }

  private static JsonNode history(Struct value) {
    if (value.schema().field("historyRecord") == null) {
      return null;
    }
    String text = value.getString("historyRecord");
    if (text == null) {
      return null;
    }
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      return null;
    }
  }

  private static String tableOf(Struct value) {
    if (value.schema().field("source") == null || value.getStruct("source") == null) {
      return null;
    }
    Struct source = value.getStruct("source");
    if (source.schema().field("table") == null
        || source.schema().field("db") == null
        || source.getString("table") == null) {
      return null;
    }
    return source.getString("db") + "." + source.getString("table");
  }
}
