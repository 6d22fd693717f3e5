package dev.shardberg.tests.bench;

import dev.shardberg.coordinator.ForklessLocalFileSystem;
import dev.shardberg.tests.cluster.MiniHdfs;
import dev.shardberg.tests.lakehouse.RestCatalogServer;
import dev.shardberg.tests.lakehouse.S3Server;
import dev.shardberg.tests.support.EmbeddedMariaDb;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.flink.CatalogLoader;

/**
 * Where one bench run's tables live, and the catalog in front of them: a local directory or HDFS
 * behind a Hadoop catalog, or an S3-compatible object store behind a REST catalog ({@code
 * --warehouse local|hdfs|s3}). Each mode gets a fresh location ({@link #location}).
 *
 * <p>On {@code s3}: an in-process S3Proxy ({@link S3Server}) answering every request of the job and
 * of the catalog service {@code --store-latency} late, and one REST catalog server ({@link
 * RestCatalogServer}: Iceberg's servlet over a JDBC catalog in a database of its own on the first
 * MariaDB host) per location, writing its metadata through the same slow endpoint, as a catalog
 * service pays its store's latency. The harness itself (table watcher, verification, query side)
 * reads through a second endpoint over the same objects that answers at once, so its polling
 * neither waits nor adds requests to the measured store; its catalog calls still reach the REST
 * server, whose table loads read metadata through the slow endpoint.
 */
final class BenchWarehouse implements AutoCloseable {
  /** DataNodes of the HDFS of {@code --warehouse hdfs} (replication = 1). */
  static final int HDFS_DATANODES = 1;

  static final String BUCKET = "bench";
  private static final String ACCESS_KEY = "shardberg-bench";
  private static final String CATALOG_DB_USER = "bench_catalog";
  private static final String S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO";

  private final BenchConfig.WarehouseFs fs;
  private final Path out;
  private final MiniHdfs hdfs;
  private final S3Server s3;
  private final String catalogDbPassword;
  private final EmbeddedMariaDb catalogDb;
  private final Map<String, RestCatalogServer> restServers = new HashMap<>();

  private BenchWarehouse(
      BenchConfig.WarehouseFs fs,
      Path out,
      MiniHdfs hdfs,
      S3Server s3,
      EmbeddedMariaDb catalogDb,
      String catalogDbPassword) {
    this.fs = fs;
    this.out = out;
    this.hdfs = hdfs;
    this.s3 = s3;
    this.catalogDb = catalogDb;
    this.catalogDbPassword = catalogDbPassword;
  }

  /** Local tables, for a caller that makes its own locations (the long run). */
  static BenchWarehouse local(Path out) {
    return new BenchWarehouse(BenchConfig.WarehouseFs.LOCAL, out, null, null, null, null);
  }

  /**
   * Starts what {@code config.warehouseFs()} needs; {@code catalogDb} holds the REST catalog's
   * databases on {@code s3}.
   */
  static BenchWarehouse start(
      BenchConfig config, Path out, EmbeddedMariaDb catalogDb, Progress progress) throws Exception {
    switch (config.warehouseFs()) {
      case HDFS -> {
        MiniHdfs hdfs = MiniHdfs.start(out.resolve("hdfs"), HDFS_DATANODES);
        progress.line(
            "hdfs",
            "HDFS (MiniDFSCluster, %d DataNode, own JVM) at %s, started in %,d ms",
            HDFS_DATANODES,
            hdfs.uri(),
            hdfs.startUpTime().toMillis());
        return new BenchWarehouse(config.warehouseFs(), out, hdfs, null, null, null);
      }
      case S3 -> {
        String secretKey = "bench-secret-" + Long.toHexString(System.nanoTime());
        S3Server s3 = S3Server.start(ACCESS_KEY, secretKey, config.storeLatency());
        s3.createBucket(BUCKET);
        // the job's S3FileIO and the harness's take their keys from the AWS SDK's default chain
        // (this JVM runs the MiniCluster), as a TaskManager would: none is in a config file
        System.setProperty("aws.accessKeyId", ACCESS_KEY);
        System.setProperty("aws.secretAccessKey", secretKey);
        String dbPassword = "bench-catalog-" + Long.toHexString(System.nanoTime());
        catalogDb.execute(
            "CREATE USER IF NOT EXISTS '"
                + CATALOG_DB_USER
                + "'@'%' IDENTIFIED BY '"
                + dbPassword
                + "'");
        progress.line(
            "s3",
            "S3-compatible store (S3Proxy, in memory) at %s, every request answered %s ms late;"
                + " REST catalog servers over JDBC on %s",
            s3.endpoint(),
            config.storeLatency().toMillis(),
            catalogDb.name());
        return new BenchWarehouse(config.warehouseFs(), out, null, s3, catalogDb, dbPassword);
      }
      default -> {
        return new BenchWarehouse(config.warehouseFs(), out, null, null, null, null);
      }
    }
  }

  /**
   * A fresh location per mode and N: on HDFS a new directory of this run's HDFS, on S3 a new prefix
   * of the bucket (with its own REST catalog), locally an emptied directory.
   */
  String location(String sub, BenchConfig.Mode mode, int shards) throws Exception {
    String name = mode.label().replace('+', '-') + "-N" + shards;
    if (hdfs != null) {
      return hdfs.path("/bench/" + sub + "warehouse/" + name);
    }
    if (s3 != null) {
      String location = "s3://" + BUCKET + "/" + sub + "warehouse/" + name;
      RestCatalogServer old = restServers.remove(location);
      if (old != null) {
        old.close();
      }
      String database = ("bench_catalog_" + sub + name).replaceAll("[^A-Za-z0-9_]", "_");
      catalogDb.execute(
          "DROP DATABASE IF EXISTS " + database,
          "CREATE DATABASE " + database,
          "GRANT ALL ON " + database + ".* TO '" + CATALOG_DB_USER + "'@'%'");
      Map<String, String> backend = new HashMap<>(fileIo(s3.endpoint()));
      backend.put(CatalogProperties.CATALOG_IMPL, "org.apache.iceberg.jdbc.JdbcCatalog");
      backend.put(CatalogProperties.URI, catalogDb.jdbcUrl(database));
      backend.put("jdbc.user", CATALOG_DB_USER);
      backend.put("jdbc.password", catalogDbPassword);
      backend.put(CatalogProperties.WAREHOUSE_LOCATION, location);
      restServers.put(location, RestCatalogServer.start(backend));
      return location;
    }
    Path dir = out.resolve(sub).resolve("warehouse").resolve(name);
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    return dir.toUri().toString();
  }

  /**
   * The catalog the measured job writes through (on S3: the slow endpoint), whose commits report to
   * {@link CommitReports}.
   */
  CatalogLoader jobCatalog(String location) {
    return s3 == null ? ModeRunner.catalogLoader(location) : rest(location, s3.endpoint());
  }

  /** The catalog the harness reads through (on S3: the endpoint without the injected latency). */
  CatalogLoader observerCatalog(String location) {
    return s3 == null ? ModeRunner.catalogLoader(location) : rest(location, s3.observerEndpoint());
  }

  private CatalogLoader rest(String location, String endpoint) {
    Map<String, String> props = new HashMap<>(fileIo(endpoint));
    props.put(CatalogProperties.URI, restServers.get(location).uri());
    props.put(CatalogProperties.WAREHOUSE_LOCATION, location);
    props.put(CatalogProperties.METRICS_REPORTER_IMPL, CommitReports.class.getName());
    return CatalogLoader.rest(
        ModeRunner.CATALOG,
        ForklessLocalFileSystem.install(new org.apache.hadoop.conf.Configuration()),
        props);
  }

  /** The {@code target.catalog} block of the job's config file for {@code location}. */
  String catalogYaml(String location) {
    StringBuilder yaml = new StringBuilder();
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(CatalogProperties.METRICS_REPORTER_IMPL, CommitReports.class.getName());
    if (s3 == null) {
      yaml.append("  catalog:\n    type: hadoop\n    name: ")
          .append(ModeRunner.CATALOG)
          .append('\n');
    } else {
      yaml.append("  catalog:\n    type: rest\n    name: ").append(ModeRunner.CATALOG).append('\n');
      yaml.append("    uri: ").append(restServers.get(location).uri()).append('\n');
      properties.putAll(fileIo(s3.endpoint()));
    }
    yaml.append("    warehouse: ").append(location).append('\n');
    yaml.append("    properties:\n");
    properties.forEach(
        (k, v) -> yaml.append("      ").append(k).append(": \"").append(v).append("\"\n"));
    return yaml.toString();
  }

  /** S3FileIO against the in-process store, as ShardbergEndToEndTest configures it. */
  private static Map<String, String> fileIo(String endpoint) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put(CatalogProperties.FILE_IO_IMPL, S3_FILE_IO);
    p.put("s3.endpoint", endpoint);
    p.put("s3.path-style-access", "true");
    p.put("client.region", S3Server.REGION);
    // S3Proxy does not read aws-chunked uploads with checksum trailers: whole-body uploads
    p.put("s3.chunked-encoding-enabled", "false");
    // the JDK's HTTP client: Iceberg's static worker pool outlives the MiniCluster jobs' class
    // loaders in this JVM, which Apache's client would touch through commons-logging
    p.put("http-client.type", "urlconnection");
    return p;
  }

  /** Requests the store answered late so far (s3 with a latency; else 0). */
  long delayedRequests() {
    return s3 == null ? 0 : s3.delayedRequests();
  }

  /** One line for the report's settings. */
  String describe(BenchConfig config) {
    return switch (fs) {
      case HDFS ->
          "hdfs: Hadoop 3.4.1 MiniDFSCluster, 1 NameNode + "
              + HDFS_DATANODES
              + " DataNode (replication 1) in its own JVM on this machine";
      case S3 ->
          "s3: S3Proxy 3.0.0 over jclouds' in-memory store in this JVM, every request of the job and"
              + " of the catalog answered "
              + config.storeLatency().toMillis()
              + " ms late (a delaying blob store); Iceberg's REST catalog servlet over a JDBC"
              + " catalog on MariaDB; S3FileIO with the JDK's HTTP client";
      case LOCAL -> "local: a directory under --output (ForklessLocalFileSystem)";
    };
  }

  @Override
  public void close() throws Exception {
    List<Exception> failures = new ArrayList<>();
    for (RestCatalogServer server : restServers.values()) {
      try {
        server.close();
      } catch (Exception e) {
        failures.add(e);
      }
    }
    restServers.clear();
    try {
      if (hdfs != null) {
        hdfs.close();
      }
      if (s3 != null) {
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
        s3.close();
      }
    } catch (Exception e) {
      failures.add(e);
    }
    if (!failures.isEmpty()) {
      Exception first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      throw first;
    }
  }
}
