package dev.shardberg.router;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.function.Function;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@link SchemaEvolution} changes to the Iceberg table through Iceberg's {@link UpdateSchema}
 * API (so a Hive Metastore takes them whatever its {@code disallow.incompatible.col.type.changes}).
 *
 * <p>The changes are planned again against the freshly refreshed schema on every attempt: a second
 * source that applied the same rollout first, or a replay after a restore, leaves nothing to do.
 * The coordinator's commits are not disturbed beyond a retry: a commit whose base changed schema
 * is checked again on the new base (see CommitCoordinator).
 */
public final class TableSchemaEvolver implements Serializable, AutoCloseable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TableSchemaEvolver.class);
  static final int MAX_ATTEMPTS = 10;

  private final TableLoader loader;
  private final String tableName;
  private transient Table table;

  public TableSchemaEvolver(TableLoader loader, String tableName) {
    this.loader = loader;
    this.tableName = tableName;
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
    Table t = table();
    RuntimeException last = null;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      t.refresh();
      List<SchemaEvolution.Change> changes = planner.apply(t.schema());
      if (changes.isEmpty()) {
        return t.schema();
      }
      UpdateSchema update = t.updateSchema();
      changes.forEach(c -> c.applyTo(update));
      try {
        update.commit();
        t.refresh();
        LOG.info(
            "Evolved Iceberg table {} to schema {} for {}: {}", tableName, t.schema().schemaId(), why, changes);
        return t.schema();
      } catch (CommitFailedException | IllegalArgumentException e) {
        // another source changed the schema meanwhile (the same column added first): plan again
        last = e;
        LOG.info("Schema update of table {} for {} met a concurrent change, planning again: {}", tableName, why, e.getMessage());
      }
    }
    throw new IllegalStateException(
        String.format(
            "Cannot evolve table %s for %s: the schema update failed %d times in a row; the job restarts from its last checkpoint and tries again",
            tableName, why, MAX_ATTEMPTS),
        last);
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
