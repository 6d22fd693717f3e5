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
 * <p>Each attempt runs holding the table's {@link SchemaCommitLock}: in HA mode the ZooKeeper lock
 * every committer of the table holds (the coordinators, maintenance), so refresh → plan → commit
 * happen with no other commit in between and the schema commit never meets a stale base, nor makes
 * another committer's base stale. Without it (a single job), a coordinator commit whose base
 * changed schema meanwhile is checked again on the new base (see CommitCoordinator).
 */
public final class TableSchemaEvolver implements Serializable, AutoCloseable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TableSchemaEvolver.class);
  static final int MAX_ATTEMPTS = 10;

  /**
   * Pause before the first retry when the lock is unavailable; doubled per attempt, at most 10 s.
   */
  static final long LOCK_RETRY_PAUSE_MS = 500;

  private final TableLoader loader;
  private final String tableName;
  private final SchemaCommitLock lock;
  private transient Table table;

  public TableSchemaEvolver(TableLoader loader, String tableName) {
    this(loader, tableName, SchemaCommitLock.NONE);
  }

  /**
   * @param lock held around every schema commit (the table's ZooKeeper lock in HA mode)
   */
  public TableSchemaEvolver(TableLoader loader, String tableName, SchemaCommitLock lock) {
    this.loader = loader;
    this.tableName = tableName;
    this.lock = lock;
  }

  public String tableName() {
    return tableName;
  }

  /** The table's current schema, refreshed from the catalog. */
  public Schema current() {
    Table t = table();
    t.refresh();
    return t.schema();
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
    Table t = table();
    RuntimeException last = null;
    long pauseMs = LOCK_RETRY_PAUSE_MS;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        return lock.runExclusive(
            checkStillHeld -> {
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
              checkStillHeld.run();
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
            });
      } catch (CommitFailedException | IllegalArgumentException e) {
        // another committer changed the schema meanwhile (without the lock: the same column added
        // first by another host's source): plan again
        last = e;
        LOG.info(
            "Schema update of table {} for {} met a concurrent change, planning again: {}",
            tableName,
            why,
            e.getMessage());
      } catch (SchemaCommitLock.Unavailable e) {
        last = e;
        LOG.warn(
            "Cannot take the commit lock of table {} for {} (attempt {} of {}), trying again in {} ms: {}",
            tableName,
            why,
            attempt,
            MAX_ATTEMPTS,
            pauseMs,
            e.getMessage());
        pause(pauseMs);
        pauseMs = Math.min(pauseMs * 2, 10_000);
      } catch (RuntimeException e) {
        throw e; // e.g. not evolvable: the planner's message says what to do
      } catch (Exception e) {
        throw new IllegalStateException(
            String.format("Cannot evolve table %s for %s: %s", tableName, why, e.getMessage()), e);
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
