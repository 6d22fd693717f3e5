package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import dev.shardberg.coordinator.CoordinatorConfigOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceOptions;
import dev.shardberg.coordinator.maintenance.MaintenanceSettings;
import dev.shardberg.router.RouterOptions;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.flink.configuration.Configuration;

/**
 * The rules across keys of the Iceberg side: the catalog has what its type needs, commits only
 * through an atomic swap (no hadoop catalog on an object store, no hive catalog without its lock),
 * and orphan removal cannot delete files the writers wrote for checkpoints not yet taken.
 */
public final class TargetRules {
  private final Problems problems;
  private final KeyChecks keys;
  private final Function<String, String> env;

  /**
   * @param env environment lookup (for {@code password-env}); {@code System::getenv} outside tests
   */
  TargetRules(Problems problems, KeyChecks keys, Function<String, String> env) {
    this.problems = problems;
    this.keys = keys;
    this.env = env;
  }

  void target(Configuration conf) {
    CatalogType type = conf.get(TARGET_CATALOG_TYPE);
    if (type == CatalogType.HADOOP && conf.get(TARGET_CATALOG_WAREHOUSE) == null) {
      problems.add(
          "Missing key '"
              + TARGET_CATALOG_WAREHOUSE.key()
              + "': a hadoop catalog needs its warehouse directory"
              + " (e.g. hdfs://nn/warehouse or file:///tmp/warehouse).");
    }
    if ((type == CatalogType.HIVE || type == CatalogType.REST || type == CatalogType.JDBC)
        && conf.get(TARGET_CATALOG_URI) == null) {
      problems.add(
          "Missing key '"
              + TARGET_CATALOG_URI.key()
              + "': a "
              + type
              + " catalog needs its "
              + switch (type) {
                case HIVE -> "metastore URI (thrift://host:9083)";
                case REST -> "REST endpoint (https://host/api/catalog)";
                default -> "database's JDBC URL (jdbc:mysql://host:3306/iceberg_catalog)";
              }
              + ".");
    }
    jdbc(conf, type);
    s3FileIo(conf.get(TARGET_CATALOG_PROPERTIES));
    String confDir = conf.get(TARGET_CATALOG_HADOOP_CONF_DIR);
    if (confDir != null && !Files.isDirectory(Path.of(confDir))) {
      problems.add(
          "'"
              + TARGET_CATALOG_HADOOP_CONF_DIR.key()
              + "' = '"
              + confDir
              + "' is not a directory: point it at the directory"
              + " holding core-site.xml / hdfs-site.xml / hive-site.xml, or remove it.");
    }
    keys.positive(conf, RouterOptions.TARGET_BUCKETS);
    keys.positive(conf, CoordinatorConfigOptions.CLOSE_CONCURRENCY);
    String warehouse = conf.get(TARGET_CATALOG_WAREHOUSE);
    String scheme = warehouse == null ? null : objectStoreScheme(warehouse);
    if (type == CatalogType.HADOOP && scheme != null) {
      problems.add(
          "Cannot use '"
              + TARGET_CATALOG_TYPE.key()
              + "' = hadoop with '"
              + TARGET_CATALOG_WAREHOUSE.key()
              + "' = '"
              + warehouse
              + "': the hadoop catalog commits by renaming a metadata file, which is not atomic on an object store ("
              + scheme
              + "://), so two commits (the job's schema changes and checkpoints, maintenance, another writer) can"
              + " overwrite each other and a checkpoint is lost silently. Use a catalog with an atomic swap (type hive, rest or jdbc)"
              + " with its warehouse on the object store, or a warehouse on HDFS or a local file system.");
    }
    String hiveLock = conf.get(RouterOptions.TARGET_TABLE_PROPERTIES).get(HIVE_LOCK_ENABLED);
    if (type == CatalogType.HIVE && hiveLock != null && !Boolean.parseBoolean(hiveLock.trim())) {
      problems.add(
          "Cannot set '"
              + RouterOptions.TARGET_TABLE_PROPERTIES.key()
              + "."
              + HIVE_LOCK_ENABLED
              + "' = "
              + hiveLock
              + " with a hive catalog: without the metastore lock the commit's swap is atomic only on a Hive 4 metastore,"
              + " and the bundled Hive client is 2.3, so two commits can overwrite each other and a checkpoint is lost silently."
              + " Remove the key (the lock is on by default).");
    }
  }

  /**
   * A jdbc catalog: a JDBC URL, a user and exactly one readable password reference; the database
   * credentials of every catalog stay out of the pass-through properties, which the config file
   * holds in plain text.
   */
  private void jdbc(Configuration conf, CatalogType type) {
    Map<String, String> properties = conf.get(TARGET_CATALOG_PROPERTIES);
    for (String credential : List.of(JDBC_PASSWORD_PROPERTY, JDBC_USER_PROPERTY)) {
      if (properties.containsKey(credential)) {
        problems.add(
            "Cannot set '"
                + TARGET_CATALOG_PROPERTIES.key()
                + "."
                + credential
                + "': use '"
                + (credential.equals(JDBC_USER_PROPERTY)
                    ? TARGET_CATALOG_JDBC_USER.key()
                    : TARGET_CATALOG_JDBC_PASSWORD_ENV.key()
                        + "' or '"
                        + TARGET_CATALOG_JDBC_PASSWORD_FILE.key())
                + "' instead. Passwords never go into the config file.");
      }
    }
    boolean jdbcKeys =
        conf.get(TARGET_CATALOG_JDBC_USER) != null
            || conf.get(TARGET_CATALOG_JDBC_PASSWORD_ENV) != null
            || conf.get(TARGET_CATALOG_JDBC_PASSWORD_FILE) != null;
    if (type != CatalogType.JDBC) {
      if (jdbcKeys) {
        problems.add(
            "'target.catalog.jdbc.*' is set, but '"
                + TARGET_CATALOG_TYPE.key()
                + "' = "
                + type
                + ": set the type to jdbc, or remove the jdbc keys.");
      }
      return;
    }
    String uri = conf.get(TARGET_CATALOG_URI);
    if (uri != null && !uri.startsWith("jdbc:")) {
      problems.add(
          "'"
              + TARGET_CATALOG_URI.key()
              + "' = '"
              + uri
              + "' is not a JDBC URL: a jdbc catalog needs the URL of its database, e.g."
              + " jdbc:mysql://host:3306/iceberg_catalog or jdbc:postgresql://host:5432/iceberg.");
    }
    if (conf.get(TARGET_CATALOG_JDBC_USER) == null) {
      problems.add(
          "Missing key '"
              + TARGET_CATALOG_JDBC_USER.key()
              + "': a jdbc catalog needs the database user it connects as.");
    }
    PasswordRule.check(
        problems,
        env,
        "the jdbc catalog",
        TARGET_CATALOG_JDBC_PASSWORD_ENV.key(),
        conf.get(TARGET_CATALOG_JDBC_PASSWORD_ENV),
        TARGET_CATALOG_JDBC_PASSWORD_FILE.key(),
        conf.get(TARGET_CATALOG_JDBC_PASSWORD_FILE));
  }

  /**
   * Iceberg's S3FileIO properties whose wrong values would fail only inside the running job (an
   * endpoint without its scheme) or silently mean something else (path-style access read as false).
   */
  private void s3FileIo(Map<String, String> properties) {
    String endpoint = properties.get(S3_ENDPOINT_PROPERTY);
    if (endpoint != null && !isHttpUrl(endpoint.trim())) {
      problems.add(
          "'"
              + TARGET_CATALOG_PROPERTIES.key()
              + "."
              + S3_ENDPOINT_PROPERTY
              + "' = '"
              + endpoint
              + "' is not an http(s) URL: S3FileIO needs the store's URL with its scheme, e.g."
              + " https://objects.example.com or http://127.0.0.1:9000 (leave it out for AWS S3).");
    }
    String pathStyle = properties.get(S3_PATH_STYLE_ACCESS_PROPERTY);
    if (pathStyle != null
        && !pathStyle.trim().equalsIgnoreCase("true")
        && !pathStyle.trim().equalsIgnoreCase("false")) {
      problems.add(
          "'"
              + TARGET_CATALOG_PROPERTIES.key()
              + "."
              + S3_PATH_STYLE_ACCESS_PROPERTY
              + "' = '"
              + pathStyle
              + "' is not true or false: Iceberg would read it as false and address the bucket as"
              + " a host name (bucket.endpoint). Most S3-compatible stores (MinIO, Ceph, S3Proxy)"
              + " need true; AWS S3 needs neither.");
    }
  }

  private static boolean isHttpUrl(String value) {
    try {
      URI uri = new URI(value);
      return ("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
          && uri.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  /** Iceberg's S3FileIO properties for the store's endpoint and its bucket addressing. */
  static final String S3_ENDPOINT_PROPERTY = "s3.endpoint";

  static final String S3_PATH_STYLE_ACCESS_PROPERTY = "s3.path-style-access";

  /** Iceberg's JdbcCatalog properties for its database user and password. */
  static final String JDBC_USER_PROPERTY = "jdbc.user";

  static final String JDBC_PASSWORD_PROPERTY = "jdbc.password";

  /** Iceberg's table property that turns the Hive Metastore lock around commits off. */
  static final String HIVE_LOCK_ENABLED = "engine.hive.lock-enabled";

  /** The scheme of an object-store location (no atomic rename), or null. */
  public static String objectStoreScheme(String location) {
    int colon = location.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    String scheme = location.substring(0, colon).toLowerCase(Locale.ROOT);
    return Set.of(
                "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos",
                "cosn", "obs", "r2")
            .contains(scheme)
        ? scheme
        : null;
  }

  /**
   * The {@code maintenance.*} ranges are checked where they are declared, by {@link
   * MaintenanceSettings}.
   */
  void maintenance(Configuration conf) {
    MaintenanceSettings settings;
    try {
      settings = MaintenanceSettings.from(conf);
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage() + ". Fix the maintenance key in the config file.");
      return;
    }
    if (settings.enabled()
        && settings.orphanFiles()
        && conf.containsKey(MaintenanceOptions.ORPHAN_FILES_MIN_AGE.key())) {
      // A writer's file is closed at a barrier and staged when the checkpoint is taken: until then
      // only its age protects it from orphan removal. A checkpoint takes at most the timeout, and
      // files opened up to an interval before its barrier; three of those is the margin.
      Duration interval = conf.get(ShardbergOptions.PIPELINE_CHECKPOINT_INTERVAL);
      Duration timeout = conf.get(ShardbergOptions.PIPELINE_CHECKPOINT_TIMEOUT);
      Duration safe = interval.plus(timeout).multipliedBy(3);
      if (settings.orphanMinAge().compareTo(safe) < 0) {
        problems.add(
            "Cannot use '"
                + MaintenanceOptions.ORPHAN_FILES_MIN_AGE.key()
                + "' = "
                + settings.orphanMinAge()
                + ": orphan removal would delete files the writers wrote for checkpoints not yet taken, and the next commit"
                + " would reference them (every scan of their partitions then fails). It must be at least 3 x ('"
                + ShardbergOptions.PIPELINE_CHECKPOINT_INTERVAL.key()
                + "' + '"
                + ShardbergOptions.PIPELINE_CHECKPOINT_TIMEOUT.key()
                + "') = "
                + safe
                + "; the default is 1 day.");
      }
    }
  }
}
