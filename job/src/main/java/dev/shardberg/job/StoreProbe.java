package dev.shardberg.job;

import dev.shardberg.job.config.ShardbergConfig.CatalogConfig;
import dev.shardberg.job.config.ShardbergOptions;
import dev.shardberg.job.config.TargetRules;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Reaches the store of the table's files before anything is written ({@code validate}): the table's
 * location through its own file IO when the table exists, else the configured warehouse through the
 * file IO the catalog properties name. On an object store it lists the location (a missing bucket,
 * a wrong endpoint or key fails there; an object's HEAD would not tell a missing bucket from a
 * missing object); elsewhere it asks whether the location exists. Reads only.
 */
final class StoreProbe {
  private static final String DEFAULT_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO";

  private StoreProbe() {}

  /** The table's location through the table's file IO; says what it reached. */
  static String check(CatalogConfig catalog, Table table) {
    probe(catalog, table.io(), table.location(), "the table's location (in the catalog)");
    return "reached " + table.location() + " (the table's location)";
  }

  /**
   * A table not created yet: the configured warehouse through the catalog properties' file IO, or,
   * without one (a REST catalog choosing locations itself), the location the catalog would give the
   * table, learnt from a create transaction that is never committed (on a REST catalog a staged
   * create: the server writes nothing), through that transaction's file IO (the one the job's
   * writers get, with any credentials the catalog vends). Says what it reached, or why it could not
   * probe.
   */
  static String checkNewTable(
      CatalogConfig catalog,
      Catalog catalogInstance,
      TableIdentifier id,
      Supplier<Catalog.TableBuilder> builder) {
    if (catalog.warehouse() != null) {
      checkWarehouse(catalog);
      return "reached " + catalog.warehouse() + " (target.catalog.warehouse)";
    }
    if (!id.namespace().isEmpty()
        && catalogInstance instanceof SupportsNamespaces namespaces
        && !namespaces.namespaceExists(id.namespace())) {
      return "not probed: without target.catalog.warehouse the catalog chooses the table's"
          + " location, and namespace '"
          + id.namespace()
          + "' does not exist yet (`run` creates it; its first checkpoint is the first write to"
          + " the store)";
    }
    Table staged;
    try {
      staged = builder.get().createTransaction().table(); // never committed
    } catch (NoSuchNamespaceException e) {
      return "not probed: namespace '" + id.namespace() + "' does not exist yet";
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot learn from the %s catalog (target.catalog.uri) where it would put table %s"
                  + " (a create that is never committed; nothing was written): %s. Check"
                  + " target.catalog.uri, the catalog's credential (target.catalog.properties:"
                  + " credential or token) and its permission to create tables in namespace '%s'",
              catalog.type(), id, Catalogs.rootMessage(e), id.namespace()),
          e);
    }
    probe(
        catalog,
        staged.io(),
        staged.location(),
        "the location the catalog gives the new table; target.catalog.warehouse is unset");
    return "reached " + staged.location() + " (the location the catalog gives the new table)";
  }

  /** The configured warehouse through the catalog properties' file IO. */
  private static void checkWarehouse(CatalogConfig catalog) {
    Map<String, String> properties = new HashMap<>(catalog.properties());
    properties.put(CatalogProperties.WAREHOUSE_LOCATION, catalog.warehouse());
    FileIO io =
        CatalogUtil.loadFileIO(
            properties.getOrDefault(CatalogProperties.FILE_IO_IMPL, DEFAULT_FILE_IO),
            properties,
            Catalogs.hadoopConf(catalog));
    try (io) {
      probe(catalog, io, catalog.warehouse(), ShardbergOptions.TARGET_CATALOG_WAREHOUSE.key());
    }
  }

  private static void probe(CatalogConfig catalog, FileIO io, String location, String where) {
    try {
      if (TargetRules.objectStoreScheme(location) != null
          && io instanceof SupportsPrefixOperations listing) {
        Iterator<FileInfo> first = listing.listPrefix(location).iterator();
        first.hasNext(); // one listing request
      } else {
        io.newInputFile(location).exists();
      }
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot reach the store of table files at '%s' (%s) with %s: %s. Check the location's"
                  + " bucket or file system, %s, and the credentials (for S3FileIO the AWS SDK's"
                  + " default chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile or a role)",
              location,
              where,
              io.getClass().getSimpleName(),
              Catalogs.rootMessage(e),
              endpoint(catalog)),
          e);
    }
  }

  private static String endpoint(CatalogConfig catalog) {
    String endpoint = catalog.properties().get("s3.endpoint");
    return endpoint == null
        ? "the endpoint (target.catalog.properties, e.g. s3.endpoint; unset: the provider's own)"
        : "target.catalog.properties.s3.endpoint = '" + endpoint + "'";
  }
}
