package dev.shardberg.router.schema;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@link SchemaEvolution} changes to the Iceberg table through Iceberg's {@link
 * UpdateSchema} API (so a Hive Metastore takes them whatever its {@code
 * disallow.incompatible.col.type.changes}).
 *
 * <p>The changes are planned again against the freshly refreshed schema on every attempt: a second
 * source that applied the same rollout first, or a replay after a restore, leaves nothing to do.
 *
 * <p>The router holds no lock (it knows nothing of commits beyond Iceberg's API): in HA mode the
 * job hands it a table whose metadata swap runs under the table's ZooKeeper lock, the one every
 * committer of the table holds (the coordinators, maintenance), so a schema commit is serialised
 * with every other commit. A swap that meets a changed base, or a lock that cannot be taken now, is
 * Iceberg's {@link CommitFailedException}: nothing was committed, and the change is planned again
 * on the fresh schema after a pause. A coordinator commit whose base changed schema meanwhile is
 * checked again on the new base (see CheckpointCommitter).
 */
public final class TableSchemaEvolver implements Serializable, AutoCloseable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TableSchemaEvolver.class);
  static final int MAX_ATTEMPTS = 10;

  /** Pause before the first retry; doubled per attempt, at most 10 s. */
  static final long RETRY_PAUSE_MS = 500;

  private final TableLoader loader;
  private final String tableName;
  private transient Table table;

  /**
   * @param loader the table; in HA mode one whose commits hold the table's ZooKeeper lock
   */
  public TableSchemaEvolver(TableLoader loader, String tableName) {
    this.loader = loader;
    this.tableName = tableName;
  }

  public String tableName() {
    return tableName;
  }

  /**
   * The table's current schema, refreshed from the catalog. Like {@link #evolve}, it closes the
   * catalog again before it returns: both run rarely (a tagger's start, a DDL), and the taggers
   * that hold this have no close hook, so a catalog kept open would leak its file IO (on S3 an HTTP
   * client) with every restart.
   */
  public Schema current() {
    try {
      Table t = table();
      t.refresh();
      return t.schema();
    } finally {
      close();
    }
  }

  /**
   * Plans the changes against the current schema and commits them in one schema update; returns the
   * schema that results (the current one when nothing was to change).
   */
  public Schema evolve(String why, Function<Schema, List<SchemaEvolution.Change>> planner) {
    return evolve(why, planner, -1, Set.of());
  }

  /**
   * {@link #evolve(String, Function)}, and records in the same commit that {@code shard} dropped
   * {@code droppedColumns} ({@link #DROPPED_COLUMNS_PREFIX}): their values in the shard's older
   * rows stay in the table, so {@code verify} does not compare them for that shard.
   */
  public Schema evolve(
      String why,
      Function<Schema, List<SchemaEvolution.Change>> planner,
      int shard,
      Set<String> droppedColumns) {
    try {
      return evolveOpen(why, planner, shard, droppedColumns);
    } finally {
      close();
    }
  }

  private Schema evolveOpen(
      String why,
      Function<Schema, List<SchemaEvolution.Change>> planner,
      int shard,
      Set<String> droppedColumns) {
    Table t = table();
    RuntimeException last = null;
    long pauseMs = RETRY_PAUSE_MS;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) {
        pause(pauseMs);
        pauseMs = Math.min(pauseMs * 2, 10_000);
      }
      try {
        t.refresh();
        List<SchemaEvolution.Change> changes = planner.apply(t.schema());
        String droppedKey = DROPPED_COLUMNS_PREFIX + shard;
        Set<String> dropped = new TreeSet<>(droppedColumns(t.properties(), shard));
        boolean newDrops = dropped.addAll(droppedColumns);
        if (changes.isEmpty() && !newDrops) {
          return t.schema();
        }
        Transaction transaction = t.newTransaction();
        if (!changes.isEmpty()) {
          UpdateSchema update = transaction.updateSchema();
          changes.forEach(c -> c.applyTo(update));
          update.commit();
        }
        if (newDrops) {
          transaction.updateProperties().set(droppedKey, String.join(",", dropped)).commit();
        }
        transaction.commitTransaction();
        t.refresh();
        LOG.info(
            "Evolved Iceberg table {} to schema {} for {}: {}{}",
            tableName,
            t.schema().schemaId(),
            why,
            changes,
            newDrops
                ? "; shard "
                    + shard
                    + " dropped columns "
                    + dropped
                    + " (verify does not compare them for it)"
                : "");
        return t.schema();
      } catch (CommitFailedException | IllegalArgumentException e) {
        // another committer changed the schema meanwhile (the same column added first by another
        // host's source), or the table's commit lock cannot be taken now: plan again
        last = e;
        LOG.warn(
            "Schema update of table {} for {} not committed (attempt {} of {}), planning again in {}"
                + " ms: {}",
            tableName,
            why,
            attempt,
            MAX_ATTEMPTS,
            pauseMs,
            e.getMessage());
      }
    }
    throw new IllegalStateException(
        String.format(
            "Cannot evolve table %s for %s: the schema update failed %d times in a row; the job restarts from its last checkpoint and tries again",
            tableName, why, MAX_ATTEMPTS),
        last);
  }

  /**
   * Table property prefix: {@code shardberg.dropped-columns.<shard>} = the columns the shard
   * dropped (or renamed away) while the job ran, comma-separated. The table keeps those columns and
   * the shard's older values in them (no data is deleted because of a DDL), which MySQL no longer
   * has.
   */
  public static final String DROPPED_COLUMNS_PREFIX = "shardberg.dropped-columns.";

  /** The columns {@code shard} dropped, as recorded in the table's properties (empty: none). */
  public static Set<String> droppedColumns(java.util.Map<String, String> properties, int shard) {
    String value = properties.get(DROPPED_COLUMNS_PREFIX + shard);
    if (value == null || value.isBlank()) {
      return Set.of();
    }
    Set<String> columns = new TreeSet<>();
    for (String c : value.split(",")) {
      if (!c.isBlank()) {
        columns.add(c.trim());
      }
    }
    return columns;
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for the table's commit lock", e);
    }
  }

  private Table table() {
    if (table == null) {
      if (!loader.isOpen()) {
        loader.open();
      }
      table = loader.loadTable();
    }
    return table;
  }

  @Override
  public void close() {
    try {
      if (loader.isOpen()) {
        loader.close();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot close the table loader of " + tableName, e);
    }
    table = null;
  }
}
