package dev.shardberg.job;

import dev.shardberg.coordinator.ForklessLocalFileSystem;
import dev.shardberg.job.config.ShardbergConfig.CatalogConfig;
import dev.shardberg.job.config.ShardbergConfig.TargetConfig;
import dev.shardberg.job.config.ShardbergOptions;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/** Iceberg catalogs from {@code target.catalog.*}, through Iceberg's own catalog loaders. */
public final class Catalogs {
  private static final String[] HADOOP_SITE_FILES = {
    "core-site.xml", "hdfs-site.xml", "hive-site.xml"
  };

  /** Iceberg's JDBC catalog and its properties for the database user and password. */
  static final String JDBC_CATALOG = "org.apache.iceberg.jdbc.JdbcCatalog";

  private static final String JDBC_USER = "jdbc.user";
  private static final String JDBC_PASSWORD = "jdbc.password";

  private Catalogs() {}

  /** A serializable loader: it travels with the job graph to the coordinator. */
  public static CatalogLoader loader(CatalogConfig catalog) {
    Configuration hadoopConf = hadoopConf(catalog);
    Map<String, String> properties = new HashMap<>(catalog.properties());
    if (catalog.warehouse() != null) {
      properties.put(CatalogProperties.WAREHOUSE_LOCATION, catalog.warehouse());
    }
    if (catalog.uri() != null) {
      properties.put(CatalogProperties.URI, catalog.uri());
    }
    return switch (catalog.type()) {
      case HADOOP -> CatalogLoader.hadoop(catalog.name(), hadoopConf, properties);
      case HIVE -> CatalogLoader.hive(catalog.name(), hadoopConf, properties);
      case REST -> CatalogLoader.rest(catalog.name(), hadoopConf, properties);
      case JDBC -> {
        // read here, where the job is built: the loader carries it to the coordinator, as the
        // sources carry the MySQL passwords
        properties.put(JDBC_USER, catalog.jdbcUser());
        properties.put(JDBC_PASSWORD, catalog.jdbcPassword().read().reveal());
        yield CatalogLoader.custom(catalog.name(), properties, hadoopConf, JDBC_CATALOG);
      }
    };
  }

  /**
   * Opens the catalog; fails with one line naming the catalog, where it was looked for and the keys
   * to check (a REST catalog asks its server for its config here: a wrong URI or a refused
   * credential shows now, not at the first commit). No secret is printed.
   */
  public static Catalog open(CatalogConfig catalog) {
    return open(catalog, loader(catalog));
  }

  static Catalog open(CatalogConfig catalog, CatalogLoader loader) {
    try {
      return loader.loadCatalog();
    } catch (RuntimeException e) {
      String check =
          switch (catalog.type()) {
            case REST ->
                "target.catalog.uri and the catalog's credential (target.catalog.properties:"
                    + " credential or token)";
            case HIVE ->
                "target.catalog.uri (thrift://host:port) and target.catalog.hadoop-conf-dir";
            case JDBC ->
                "target.catalog.uri, target.catalog.jdbc.user and its password"
                    + " (target.catalog.jdbc.password-env / password-file)";
            case HADOOP -> "target.catalog.warehouse and target.catalog.hadoop-conf-dir";
          };
      throw new IllegalStateException(
          String.format(
              "Cannot open the %s catalog '%s'%s: %s. Check %s",
              catalog.type(),
              catalog.name(),
              catalog.uri() == null
                  ? ""
                  : " at target.catalog.uri = '" + withoutSecrets(catalog.uri()) + "'",
              rootMessage(e),
              check),
          e);
    }
  }

  /** A URI without its user info and query (where a password may be). */
  static String withoutSecrets(String uri) {
    String shown = uri;
    int query = shown.indexOf('?');
    if (query >= 0) {
      shown = shown.substring(0, query) + "?…";
    }
    int at = shown.indexOf('@');
    int scheme = shown.indexOf("://");
    if (at >= 0 && scheme >= 0 && at > scheme) {
      shown = shown.substring(0, scheme + 3) + "…@" + shown.substring(at + 1);
    }
    return shown;
  }

  /** The innermost cause's class and message. */
  static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage() == null ? "" : root.getMessage();
    return root.getClass().getSimpleName() + (message.isEmpty() ? "" : ": " + message);
  }

  /** The Hadoop configuration of the catalog and its file IO: the site files of its conf dir. */
  static Configuration hadoopConf(CatalogConfig catalog) {
    Configuration hadoopConf = new Configuration();
    if (catalog.hadoopConfDir() != null) {
      for (String site : HADOOP_SITE_FILES) {
        Path file = Path.of(catalog.hadoopConfDir(), site);
        if (Files.isRegularFile(file)) {
          hadoopConf.addResource(new org.apache.hadoop.fs.Path(file.toUri()));
        }
      }
    }
    ForklessLocalFileSystem.install(
        hadoopConf); // after the site files: a configured fs.file.impl wins
    return hadoopConf;
  }

  public static TableIdentifier identifier(TargetConfig target) {
    return TableIdentifier.of(target.namespace(), target.table());
  }

  public static TableLoader tableLoader(TargetConfig target) {
    return TableLoader.fromCatalog(loader(target.catalog()), identifier(target));
  }

  /**
   * Loads the target table, failing with the config keys to check when it does not exist. The
   * catalog stays open: the table's operations use its clients (short-lived CLI processes).
   */
  public static Table loadTable(TargetConfig target) {
    Catalog catalog = open(target.catalog());
    try {
      return catalog.loadTable(identifier(target));
    } catch (NoSuchTableException e) {
      close(catalog);
      throw new IllegalStateException(
          String.format(
              "Cannot find table %s in the %s catalog '%s': has the pipeline run yet? Check "
                  + ShardbergOptions.TARGET_NAMESPACE.key()
                  + ", "
                  + ShardbergOptions.TARGET_TABLE.key()
                  + " and target.catalog.*",
              identifier(target),
              target.catalog().type(),
              target.catalog().name()),
          e);
    }
  }

  static void close(Catalog catalog) {
    if (catalog instanceof Closeable closeable) {
      try {
        closeable.close();
      } catch (IOException e) {
        // nothing was written through this catalog instance; a failed close loses nothing
      }
    }
  }
}
