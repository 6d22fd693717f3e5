package dev.shardberg.job;

import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.DeleteMode;
import dev.shardberg.job.config.ConfigException;
import dev.shardberg.job.config.ShardbergConfig;
import java.util.Locale;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code target.delete-mode} per table: deletes by position for a table the job creates, and for an
 * existing table the mode it was written in — recorded in its table property {@value #PROPERTY}
 * (the job sets it when it creates the table, and at every start to the mode it writes in) — or
 * deletes by key for a table without it (written by a version before this default, or created by
 * another tool): a table written by key switches only by the documented step (a stop with a
 * savepoint, then {@code target.delete-mode: position}), never by an upgrade.
 */
public final class DeleteModes {
  private static final Logger LOG = LoggerFactory.getLogger(DeleteModes.class);

  /** The table property that records the mode a table is written in. */
  static final String PROPERTY = "shardberg.delete-mode";

  private DeleteModes() {}

  /**
   * {@code config} with its delete mode set: as configured, else chosen for the table; recorded in
   * the table when it exists (a new table gets it with the layout). Reads the catalog; writes only
   * that property.
   */
  static ShardbergConfig resolve(
      ShardbergConfig config, CatalogLoader catalogLoader, TableIdentifier tableId) {
    Catalog catalog = Catalogs.open(config.target().catalog(), catalogLoader);
    try {
      Table table = catalog.tableExists(tableId) ? catalog.loadTable(tableId) : null;
      ShardbergConfig resolved = chosen(config, table, tableId, true);
      if (table != null) {
        record(table, resolved.target().deleteMode());
      }
      return resolved;
    } finally {
      Catalogs.close(catalog);
    }
  }

  /**
   * {@code config} with its delete mode set, as configured or chosen for {@code table} (null: the
   * job creates it); reads nothing else, writes nothing.
   *
   * @param log whether to say at INFO why an unset mode was chosen
   */
  public static ShardbergConfig chosen(
      ShardbergConfig config, Table table, TableIdentifier tableId, boolean log) {
    if (config.target().deleteModeSet()) {
      return config;
    }
    DeleteMode mode;
    String why;
    if (table == null) {
      mode = DeleteMode.POSITION;
      why = "the job creates the table";
    } else {
      String recorded = table.properties().get(PROPERTY);
      if (recorded == null) {
        mode = DeleteMode.EQUALITY;
        why =
            "the table exists without table property "
                + PROPERTY
                + " (written before deletes by position became the default for new tables, or"
                + " created by another tool); to switch it, stop the job with a savepoint and"
                + " resume with target.delete-mode: position";
      } else {
        mode = parse(recorded, tableId);
        why = "the table's property " + PROPERTY + " says so";
      }
    }
    if (log) {
      LOG.info(
          "Pipeline {}: {} not set; table {} is written with deletes by {} ({})",
          config.pipeline().id(),
          CoordinatorConfigOptions.DELETE_MODE.key(),
          tableId,
          mode,
          why);
    }
    return config.withTarget(config.target().withDeleteMode(mode));
  }

  /**
   * How a start writes, in a phrase for the console: {@code mode}, and when {@code chosen} (the key
   * unset) where it came from.
   */
  public static String describe(DeleteMode mode, boolean chosen) {
    String how =
        mode == DeleteMode.POSITION
            ? "updates and deletes by position (the writers own their partitions)"
            : "updates and deletes by key (equality deletes)";
    if (!chosen) {
      return how;
    }
    return how
        + "; "
        + CoordinatorConfigOptions.DELETE_MODE.key()
        + " unset: "
        + (mode == DeleteMode.POSITION
            ? "position for a table the job creates, or the mode the table records"
            : "the mode the table records, or equality for a table written before deletes by"
                + " position became the default (to switch it: docs/owner-write-path.md)")
        + " ("
        + PROPERTY
        + ")";
  }

  /** Records {@code mode} in {@code table}'s property, when it records another (or none). */
  private static void record(Table table, DeleteMode mode) {
    if (!mode.toString().equals(table.properties().get(PROPERTY))) {
      table.updateProperties().set(PROPERTY, mode.toString()).commit();
      LOG.info("Table {}: {} = {} recorded (target.delete-mode)", table.name(), PROPERTY, mode);
    }
  }

  private static DeleteMode parse(String recorded, TableIdentifier tableId) {
    try {
      return DeleteMode.valueOf(recorded.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          String.format(
              "Cannot choose how to delete rows of table %s: its table property %s is '%s', not"
                  + " equality or position. Set %s, or fix the property.",
              tableId, PROPERTY, recorded, CoordinatorConfigOptions.DELETE_MODE.key()));
    }
  }
}
