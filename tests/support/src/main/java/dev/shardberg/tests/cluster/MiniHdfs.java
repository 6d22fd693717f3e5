package dev.shardberg.tests.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real HDFS (Hadoop 3.4.1's {@code MiniDFSCluster}: one NameNode and DataNodes with their RPC,
 * data transfer pipeline and on-disk block storage) in its own JVM on loopback, started with
 * Hadoop's {@code MiniHadoopClusterManager -nomr} from the shaded {@code hadoop-client-minicluster}
 * jar.
 *
 * <p>Why its own JVM: the unshaded NameNode and DataNode need Jetty 9, Jersey 1 and Hadoop's
 * server-side dependencies, which clash with what Hive Metastore 2.3, Spark and Flink bring to our
 * test classpath; the shaded jars relocate all of it, and a separate JVM keeps even those out of
 * our class loaders. Clients (the test, the Flink cluster, the job) talk to it over its RPC port
 * like to any HDFS.
 *
 * <p>The jars come from {@code tests/support/target/hadoop-dist} (Maven copies them there; the
 * system property {@value #DIST_PROPERTY} overrides the location): {@code minicluster/} for this
 * JVM and {@code client/}, the Hadoop client a Flink cluster gets through {@code HADOOP_CLASSPATH}
 * ({@link #clientJars()}). {@link #confDir()} holds the {@code core-site.xml} and {@code
 * hdfs-site.xml} a client needs ({@code HADOOP_CONF_DIR}).
 *
 * <pre>{@code
 * try (MiniHdfs hdfs = MiniHdfs.start(workDir.resolve("hdfs"), 1)) {
 *   URI warehouse = hdfs.uri().resolve("/warehouse");      // hdfs://127.0.0.1:<port>/warehouse
 * }
 * }</pre>
 */
public final class MiniHdfs implements AutoCloseable {

  /**
   * System property naming the directory with {@code client/} and {@code minicluster/}; default:
   * next to this class.
   */
  public static final String DIST_PROPERTY = "shardberg.hadoop.dist";

  private static final Logger LOG = LoggerFactory.getLogger(MiniHdfs.class);
  private static final String MANAGER_CLASS =
      "org.apache.hadoop.mapreduce.MiniHadoopClusterManager";
  private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

  private final Path workDir;
  private final Path confDir;
  private final Process process;
  private final URI uri;
  private final Thread shutdownHook;
  private final Duration startUpTime;

  private MiniHdfs(Path workDir, Path confDir, Process process, URI uri, Duration startUpTime) {
    this.workDir = workDir;
    this.confDir = confDir;
    this.process = process;
    this.uri = uri;
    this.startUpTime = startUpTime;
    this.shutdownHook = new Thread(this::stopProcess, "mini-hdfs-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /**
   * Formats and starts an HDFS with {@code dataNodes} DataNodes under {@code workDir} (name and
   * data directories, {@code hdfs.log}, {@code conf/}); returns once the NameNode answers and has
   * written its config.
   */
  public static MiniHdfs start(Path workDir, int dataNodes) {
    checkArgument(
        dataNodes >= 1, "Cannot start an HDFS with %s DataNodes: use at least 1", dataNodes);
    Path dist = distDir();
    Path work = workDir.toAbsolutePath();
    Path written = work.resolve("minicluster-conf.xml");
    Path log = work.resolve("hdfs.log");
    int port = freePort();
    long started = System.nanoTime();
    Process process;
    try {
      Files.createDirectories(work);
      Files.deleteIfExists(written);
      Path log4j = work.resolve("log4j2-hdfs.properties");
      Files.writeString(
          log4j,
          String.join(
              "\n",
              "rootLogger.level = WARN",
              "rootLogger.appenderRef.file.ref = File",
              "appender.file.name = File",
              "appender.file.type = File",
              "appender.file.fileName = " + log,
              "appender.file.layout.type = PatternLayout",
              "appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n",
              ""));
      List<String> command =
          new ArrayList<>(
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xmx512m",
                  "-XX:+UseSerialGC",
                  "-Dlog4j2.configurationFile=" + log4j,
                  "-Dtest.build.data=" + work.resolve("data"),
                  "-cp",
                  dist.resolve("minicluster") + "/*",
                  MANAGER_CLASS,
                  "-nomr",
                  "-format",
                  "-datanodes",
                  Integer.toString(dataNodes),
                  "-nnport",
                  Integer.toString(port),
                  "-writeConfig",
                  written.toString(),
                  "-D",
                  "hdfs.minidfs.basedir=" + work.resolve("data"),
                  "-D",
                  "dfs.namenode.rpc-address=127.0.0.1:" + port,
                  "-D",
                  "dfs.replication=" + Math.min(3, dataNodes)));
      process =
          new ProcessBuilder(command)
              .directory(work.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("hdfs.out").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot start the HDFS JVM in " + work + ": " + e.getMessage(), e);
    }
    LOG.info(
        "Started HDFS (MiniDFSCluster, {} DataNode(s)) pid {}, NameNode port {}, work dir {}",
        dataNodes,
        process.pid(),
        port,
        work);
    try {
      awaitWrittenConfig(process, written, work);
      URI uri = new URI("hdfs://127.0.0.1:" + port);
      Path confDir = writeClientConf(work.resolve("conf"), uri, Math.min(3, dataNodes));
      MiniHdfs hdfs =
          new MiniHdfs(work, confDir, process, uri, Duration.ofNanos(System.nanoTime() - started));
      LOG.info("HDFS ready at {} in {} ms", uri, hdfs.startUpTime.toMillis());
      return hdfs;
    } catch (RuntimeException | URISyntaxException e) {
      process.destroyForcibly();
      throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
    }
  }

  /** {@code hdfs://127.0.0.1:<port>}: the NameNode, the authority of every path on this HDFS. */
  public URI uri() {
    return uri;
  }

  /** {@code hdfs://127.0.0.1:<port>/<path>}. */
  public String path(String absolutePath) {
    checkArgument(
        absolutePath.startsWith("/"),
        "Cannot make an HDFS path of '%s': start it with /",
        absolutePath);
    return uri + absolutePath;
  }

  /**
   * A directory with {@code core-site.xml} ({@code fs.defaultFS}) and {@code hdfs-site.xml}: a
   * client's HADOOP_CONF_DIR.
   */
  public Path confDir() {
    return confDir;
  }

  public Path workDir() {
    return workDir;
  }

  public Duration startUpTime() {
    return startUpTime;
  }

  /**
   * The Hadoop client jars a Flink cluster needs for {@code hdfs://} checkpoints (and the job uses,
   * since {@code org.apache.hadoop.} loads parent-first): hadoop-client-api, hadoop-client-runtime,
   * commons-logging.
   */
  public static List<Path> clientJars() {
    try (Stream<Path> jars = Files.list(distDir().resolve("client"))) {
      return jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot list the Hadoop client jars in " + distDir().resolve("client"), e);
    }
  }

  /** {@link #clientJars()} joined with ':' — the value of HADOOP_CLASSPATH. */
  public static String clientClasspath() {
    return clientJars().stream().map(Path::toString).collect(Collectors.joining(":"));
  }

  /** Stops the HDFS JVM (SIGTERM, then SIGKILL after 10 s); the work dir stays. */
  @Override
  public void close() {
    stopProcess();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // the hook is running or has run
    }
  }

  private void stopProcess() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("HDFS at {} stopped", uri);
  }

  // ---------------------------------------------------------------- plumbing

  static Path distDir() {
    String configured = System.getProperty(DIST_PROPERTY);
    Path dir;
    if (configured != null && !configured.isBlank()) {
      dir = Path.of(configured);
    } else {
      // this class is in tests/support/target/classes or tests/support/target/<jar>: the copies are
      // in target/hadoop-dist
      try {
        Path codeSource =
            Path.of(MiniHdfs.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        dir = codeSource.getParent().resolve("hadoop-dist");
      } catch (URISyntaxException | RuntimeException e) {
        dir = Path.of("tests", "support", "target", "hadoop-dist");
      }
    }
    checkArgument(
        Files.isDirectory(dir.resolve("minicluster")) && Files.isDirectory(dir.resolve("client")),
        "Cannot start HDFS: no Hadoop jars in '%s' (client/ and minicluster/). Build them with "
            + "`mvn -pl tests/support -am generate-resources` (any later phase does too), or point -D%s at such a directory",
        dir.toAbsolutePath(),
        DIST_PROPERTY);
    return dir.toAbsolutePath();
  }

  /**
   * MiniHadoopClusterManager writes its whole configuration once the NameNode and DataNodes are up.
   */
  private static void awaitWrittenConfig(Process process, Path written, Path work) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "Cannot start HDFS: its JVM exited with "
                + process.exitValue()
                + ". Output ("
                + work.resolve("hdfs.out")
                + "):\n"
                + tail(work.resolve("hdfs.out"))
                + "\nLog ("
                + work.resolve("hdfs.log")
                + "):\n"
                + tail(work.resolve("hdfs.log")));
      }
      try {
        if (Files.isRegularFile(written)
            && Files.readString(written).contains("</configuration>")) {
          return;
        }
      } catch (IOException e) {
        // being written: read it again
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "Cannot start HDFS: not up after "
                + START_TIMEOUT
                + ". Log:\n"
                + tail(work.resolve("hdfs.log")));
      }
      try {
        Thread.sleep(100); // polling a condition in a launcher; tests wait with Awaitility
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while starting HDFS", e);
      }
    }
  }

  private static Path writeClientConf(Path dir, URI uri, int replication) {
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("core-site.xml"), siteXml("fs.defaultFS", uri.toString()));
      Files.writeString(
          dir.resolve("hdfs-site.xml"), siteXml("dfs.replication", Integer.toString(replication)));
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the HDFS client config to " + dir, e);
    }
  }

  private static String siteXml(String name, String value) {
    return "<?xml version=\"1.0\"?>\n<configuration>\n  <property><name>"
        + name
        + "</name><value>"
        + value
        + "</value></property>\n</configuration>\n";
  }

  private static String tail(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + file + ": " + e.getMessage() + ")";
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot find a free port on loopback", e);
    }
  }

  private static void checkArgument(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalArgumentException(String.format(template, args));
    }
  }
}
