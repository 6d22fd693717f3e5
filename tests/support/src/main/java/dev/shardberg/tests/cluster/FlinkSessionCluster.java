package dev.shardberg.tests.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real multi-process Flink 1.20 standalone session cluster on loopback: one JobManager JVM
 * ({@code StandaloneSessionClusterEntrypoint}) and TaskManager JVMs ({@code TaskManagerRunner}),
 * run from the jars of a Flink distribution's {@code lib/} (Maven copies them to {@code
 * tests/integration/target/flink-dist/lib}; the path comes from {@link Builder#distDir} or the
 * system property {@value #DIST_PROPERTY}), and driven with the real {@code flink} client ({@code
 * CliFrontend} in its own JVM with {@code FLINK_CONF_DIR} set).
 *
 * <p>Everything lives in one work directory: {@code conf/} (config.yaml, log4j), {@code logs/} (one
 * log and one stdout/stderr file per JVM), {@code checkpoints/}, {@code savepoints/}, and {@code
 * bin/flink}, a script that runs the client against this cluster by hand. Processes are stopped by
 * process id on {@link #close()} and, should the owner forget, by a JVM shutdown hook.
 *
 * <pre>{@code
 * try (FlinkSessionCluster cluster = FlinkSessionCluster.builder().taskManagers(1).start()) {
 *   String jobId = cluster.submit(JobSubmission.of(jar, "--config", "orders.yaml"));
 *   ...
 *   String savepoint = cluster.stopWithSavepoint(jobId);
 *   String resumed = cluster.submit(JobSubmission.of(jar, "--config", "orders.yaml").fromSavepoint(savepoint));
 * }
 * }</pre>
 */
public final class FlinkSessionCluster implements AutoCloseable {

  /** System property naming the directory of the cluster's jars (surefire sets it). */
  public static final String DIST_PROPERTY = "shardberg.flink.dist";

  private static final Logger LOG = LoggerFactory.getLogger(FlinkSessionCluster.class);

  /** The opens Flink's own config.yaml passes to every JVM on Java 17 (env.java.opts.all). */
  static final List<String> JAVA_17_OPTS =
      List.of(
          "-XX:+IgnoreUnrecognizedVMOptions",
          "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
          "--add-exports=java.management/sun.management=ALL-UNNAMED",
          "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
          "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.net=ALL-UNNAMED",
          "--add-opens=java.base/java.io=ALL-UNNAMED",
          "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-opens=java.base/java.text=ALL-UNNAMED",
          "--add-opens=java.base/java.time=ALL-UNNAMED",
          "--add-opens=java.base/java.util=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
          "--add-opens=java.sql/java.sql=ALL-UNNAMED");

  /**
   * For the client and BashJavaUtils, which run for seconds: start fast, spend little CPU on JIT
   * and GC threads.
   */
  private static final List<String> SHORT_LIVED_JVM_OPTS =
      List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  private static final String JOB_MANAGER_CLASS =
      "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";
  private static final String TASK_MANAGER_CLASS =
      "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
  private static final String CLI_CLASS = "org.apache.flink.client.cli.CliFrontend";
  private static final String BASH_JAVA_UTILS_CLASS =
      "org.apache.flink.runtime.util.bash.BashJavaUtils";
  private static final String BASH_JAVA_UTILS_PREFIX = "BASH_JAVA_UTILS_EXEC_RESULT:";

  private static final Pattern SUBMITTED_JOB_ID = Pattern.compile("JobID ([0-9a-f]{32})");
  private static final Pattern SAVEPOINT_PATH =
      Pattern.compile("Savepoint completed\\. Path: (\\S+)");
  private static final Pattern LISTED_JOB = Pattern.compile(" : ([0-9a-f]{32}) : .* \\((\\w+)\\)");
  private static final int LOG_TAIL_LINES = 60;

  private final Builder options;
  private final Path workDir;
  private final boolean ownsWorkDir;
  private final Path libDir;
  private final Path confDir;
  private final Path logDir;
  private final int restPort;
  private final URI restUri;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ObjectMapper json = new ObjectMapper();
  private final AtomicInteger taskManagerCounter = new AtomicInteger();
  private final AtomicInteger clientCounter = new AtomicInteger();
  private final List<FlinkProcess> taskManagers = new CopyOnWriteArrayList<>();
  private final Thread shutdownHook;
  private volatile FlinkProcess jobManager;
  private List<String> taskManagerJvmArgs = List.of();
  private List<String> taskManagerDynamicArgs = List.of();
  private Duration startUpTime = Duration.ZERO;
  private volatile boolean closed;

  /** A handle on one TaskManager JVM: the resource id it registered under, and its process id. */
  public record TaskManager(String resourceId, long pid) {}

  public static Builder builder() {
    return new Builder();
  }

  /** Options of a cluster; {@link #start()} starts it. */
  public static final class Builder {
    private Path distDir;
    private Path workDir;
    private int taskManagers = 1;
    private int slotsPerTaskManager = 2;
    private Duration startTimeout = Duration.ofMinutes(2);
    private String hadoopClasspath;
    private Path hadoopConfDir;
    private final Map<String, String> config = new LinkedHashMap<>();
    private final Map<String, String> environment = new LinkedHashMap<>();

    private Builder() {}

    /**
     * An environment variable of every Flink JVM and of the {@code flink} client, e.g. the AWS
     * SDK's {@code AWS_ACCESS_KEY_ID}: how a user hands credentials to a cluster without writing
     * them into a config file.
     */
    public Builder environment(String name, String value) {
      environment.put(name, value);
      return this;
    }

    /**
     * The directory holding the cluster's jars; default: the system property {@value
     * #DIST_PROPERTY}.
     */
    public Builder distDir(Path dir) {
      this.distDir = dir;
      return this;
    }

    /**
     * Where conf, logs, checkpoints and savepoints go; kept on close. Default: a temp dir, deleted
     * on close.
     */
    public Builder workDir(Path dir) {
      this.workDir = dir;
      return this;
    }

    public Builder taskManagers(int count) {
      checkArgument(
          count >= 1, "Cannot start a Flink cluster with %s TaskManagers: use at least 1", count);
      this.taskManagers = count;
      return this;
    }

    public Builder slotsPerTaskManager(int slots) {
      checkArgument(slots >= 1, "Cannot give a TaskManager %s slots: use at least 1", slots);
      this.slotsPerTaskManager = slots;
      return this;
    }

    public Builder startTimeout(Duration timeout) {
      this.startTimeout = timeout;
      return this;
    }

    /**
     * Hadoop on the cluster's classpath the way Flink's scripts put it there: {@code
     * HADOOP_CLASSPATH} is set in every Flink JVM's environment (JobManager, TaskManagers, the
     * client) and appended to its classpath after Flink's {@code lib/}, as {@code bin/config.sh}
     * does. Needed for {@code hdfs://} checkpoints (Flink's Hadoop file system finds Hadoop there).
     */
    public Builder hadoopClasspath(String classpath) {
      this.hadoopClasspath = classpath;
      return this;
    }

    /**
     * {@code HADOOP_CONF_DIR} of every Flink JVM (core-site.xml, hdfs-site.xml), also on the
     * classpath, as Flink's scripts do.
     */
    public Builder hadoopConfDir(Path dir) {
      this.hadoopConfDir = dir.toAbsolutePath();
      return this;
    }

    /**
     * An extra or overriding {@code config.yaml} entry, e.g. {@code ("heartbeat.timeout",
     * "20000")}.
     */
    public Builder config(String key, String value) {
      config.put(key, value);
      return this;
    }

    public FlinkSessionCluster start() {
      Path dist = distDir != null ? distDir : distDirFromSystemProperty();
      FlinkSessionCluster cluster = new FlinkSessionCluster(this, dist);
      try {
        cluster.startAll();
        return cluster;
      } catch (RuntimeException e) {
        cluster.close();
        throw e;
      }
    }
  }

  private FlinkSessionCluster(Builder options, Path distDir) {
    this.options = options;
    this.libDir = distDir.toAbsolutePath();
    try {
      this.ownsWorkDir = options.workDir == null;
      this.workDir =
          (ownsWorkDir ? Files.createTempDirectory("flink-session-") : options.workDir)
              .toAbsolutePath();
      this.confDir = Files.createDirectories(workDir.resolve("conf"));
      this.logDir = Files.createDirectories(workDir.resolve("logs"));
      Files.createDirectories(workDir.resolve("plugins"));
      Files.createDirectories(checkpointDir());
      Files.createDirectories(savepointDir());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot create the Flink cluster's work directory: " + e.getMessage(), e);
    }
    this.restPort = freePort();
    this.restUri = URI.create("http://127.0.0.1:" + restPort + "/");
    this.shutdownHook = new Thread(this::stopProcesses, "flink-session-cluster-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  private static Path distDirFromSystemProperty() {
    String dir = System.getProperty(DIST_PROPERTY);
    checkArgument(
        dir != null && !dir.isBlank(),
        "Cannot start a Flink cluster: system property '%s' is not set. It names the directory of the "
            + "cluster's jars, which `mvn -pl tests/integration -am test-compile` (or any later phase) writes to "
            + "tests/integration/target/flink-dist/lib; surefire sets it. By hand: -D%s=tests/integration/target/flink-dist/lib",
        DIST_PROPERTY,
        DIST_PROPERTY);
    return Path.of(dir);
  }

  // ---------------------------------------------------------------- start

  private void startAll() {
    checkDist();
    long started = System.nanoTime();
    writeConfig();
    // both memory computations at once; TaskManagers may start before the JobManager is up (they
    // retry)
    CompletableFuture<List<String>> tmParams =
        CompletableFuture.supplyAsync(() -> bashJavaUtils("GET_TM_RESOURCE_PARAMS"));
    List<String> jmParams = bashJavaUtils("GET_JM_RESOURCE_PARAMS");
    jobManager =
        launch(
            "jobmanager",
            JOB_MANAGER_CLASS,
            splitArgs(jmParams.get(0)),
            concat(List.of("--configDir", confDir.toString()), splitArgs(jmParams.get(1))));
    try {
      taskManagerJvmArgs = splitArgs(tmParams.join().get(0));
      taskManagerDynamicArgs = splitArgs(tmParams.join().get(1));
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException cause ? cause : e;
    }
    List<TaskManager> started0 = new ArrayList<>();
    for (int i = 0; i < options.taskManagers; i++) {
      started0.add(launchTaskManager());
    }
    int expectedSlots = options.taskManagers * options.slotsPerTaskManager;
    awaitCondition(
        options.taskManagers + " TaskManager(s) with " + expectedSlots + " slots registered",
        jobManager,
        () -> {
          JsonNode overview = getJson("overview");
          return overview.path("taskmanagers").asInt() == options.taskManagers
              && overview.path("slots-total").asInt() == expectedSlots;
        });
    startUpTime = Duration.ofNanos(System.nanoTime() - started);
    LOG.info(
        "Flink session cluster ready in {} ms: REST {}, {} TaskManager(s) {}, {} slots, work dir {}",
        startUpTime.toMillis(),
        restUri,
        started0.size(),
        started0,
        expectedSlots,
        workDir);
  }

  private void checkDist() {
    checkArgument(
        Files.isDirectory(libDir),
        "Cannot start a Flink cluster: the jar directory '%s' does not exist. Build it with "
            + "`mvn -pl tests/integration -am test-compile` (it copies Flink's jars to tests/integration/target/flink-dist/lib)",
        libDir);
    for (String jar :
        List.of("flink-runtime-", "flink-clients-", "flink-rpc-akka-loader-", "log4j-core-")) {
      try (Stream<Path> files = Files.list(libDir)) {
        checkArgument(
            files.anyMatch(f -> f.getFileName().toString().startsWith(jar)),
            "Cannot start a Flink cluster: no %s*.jar in '%s'. Rebuild it with `mvn -pl tests/integration -am test-compile`",
            jar,
            libDir);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot list the jar directory " + libDir, e);
      }
    }
  }

  private void writeConfig() {
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("jobmanager.rpc.address", "127.0.0.1");
    conf.put("jobmanager.rpc.port", Integer.toString(freePort()));
    conf.put("jobmanager.bind-host", "127.0.0.1");
    conf.put("taskmanager.bind-host", "127.0.0.1");
    conf.put("taskmanager.host", "127.0.0.1");
    conf.put("rest.address", "127.0.0.1");
    conf.put("rest.bind-address", "127.0.0.1");
    conf.put("rest.port", Integer.toString(restPort));
    conf.put("jobmanager.memory.process.size", "1g");
    conf.put("taskmanager.memory.process.size", "1536m");
    conf.put("taskmanager.numberOfTaskSlots", Integer.toString(options.slotsPerTaskManager));
    conf.put("parallelism.default", "1");
    conf.put("execution.checkpointing.dir", checkpointDir().toUri().toString());
    conf.put("execution.checkpointing.savepoint-dir", savepointDir().toUri().toString());
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "100");
    conf.put("restart-strategy.fixed-delay.delay", "1 s");
    // a killed TaskManager is noticed within seconds, not the default 50
    conf.put("heartbeat.interval", "2000");
    conf.put("heartbeat.timeout", "10000");
    // the REST API caches a job's execution graph this long (default 3 s)
    conf.put("web.refresh-interval", "500");
    conf.put("io.tmp.dirs", workDir.resolve("tmp").toString());
    conf.put("web.tmpdir", workDir.resolve("web").toString());
    conf.put("env.java.opts.all", String.join(" ", JAVA_17_OPTS));
    conf.putAll(options.config);
    String yaml =
        conf.entrySet().stream()
            .map(e -> e.getKey() + ": " + yamlScalar(e.getValue()))
            .collect(
                Collectors.joining(
                    "\n", "# written by " + FlinkSessionCluster.class.getName() + "\n", "\n"));
    String log4j =
        String.join(
            "\n",
            "monitorInterval = 0",
            "rootLogger.level = INFO",
            "rootLogger.appenderRef.file.ref = MainAppender",
            "logger.pekko.name = org.apache.pekko",
            "logger.pekko.level = INFO",
            "logger.zookeeper.name = org.apache.zookeeper",
            "logger.zookeeper.level = WARN",
            "appender.main.name = MainAppender",
            "appender.main.type = File",
            "appender.main.append = true",
            "appender.main.fileName = ${sys:log.file}",
            "appender.main.layout.type = PatternLayout",
            "appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n",
            "");
    try {
      Files.createDirectories(workDir.resolve("tmp"));
      Files.writeString(confDir.resolve("config.yaml"), yaml);
      Files.writeString(confDir.resolve("log4j.properties"), log4j);
      Files.writeString(confDir.resolve("log4j-cli.properties"), log4j);
      writeClientScript();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the Flink configuration to " + confDir, e);
    }
  }

  /** {@code bin/flink}: the same client the launcher runs, for use by hand against this cluster. */
  private void writeClientScript() throws IOException {
    Path bin = Files.createDirectories(workDir.resolve("bin"));
    String script =
        "#!/bin/sh\n"
            + "# The Flink client for the session cluster at "
            + restUri
            + "\n"
            + "export FLINK_CONF_DIR='"
            + confDir
            + "'\n"
            + (options.hadoopClasspath == null
                ? ""
                : "export HADOOP_CLASSPATH='" + options.hadoopClasspath + "'\n")
            + (options.hadoopConfDir == null
                ? ""
                : "export HADOOP_CONF_DIR='" + options.hadoopConfDir + "'\n")
            + "exec '"
            + javaExecutable()
            + "' "
            + String.join(" ", JAVA_17_OPTS)
            + " -Dlog.file='"
            + logDir.resolve("client-by-hand.log")
            + "'"
            + " -Dlog4j.configurationFile='"
            + confDir.resolve("log4j-cli.properties")
            + "'"
            + " -cp '"
            + classpath()
            + "' "
            + CLI_CLASS
            + " \"$@\"\n";
    Path flink = bin.resolve("flink");
    Files.writeString(flink, script);
    Files.setPosixFilePermissions(flink, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /**
   * Runs BashJavaUtils like Flink's scripts do; returns its two result lines: JVM flags, then -D
   * settings.
   */
  private List<String> bashJavaUtils(String command) {
    CliResult result =
        runJava(
            "bash-java-utils-" + command,
            BASH_JAVA_UTILS_CLASS,
            SHORT_LIVED_JVM_OPTS,
            List.of(command, "--configDir", confDir.toString()),
            Duration.ofMinutes(1));
    List<String> lines =
        result
            .output()
            .lines()
            .filter(l -> l.startsWith(BASH_JAVA_UTILS_PREFIX))
            .map(l -> l.substring(BASH_JAVA_UTILS_PREFIX.length()).trim())
            .toList();
    if (result.exitCode() != 0 || lines.size() < 2) {
      throw new IllegalStateException(
          "Cannot compute the Flink memory settings with BashJavaUtils "
              + command
              + ": exit "
              + result.exitCode()
              + ", output:\n"
              + result.output());
    }
    return lines.subList(lines.size() - 2, lines.size());
  }

  // ---------------------------------------------------------------- TaskManagers

  /** Starts one more TaskManager and waits until it has registered with the JobManager. */
  public TaskManager startTaskManager() {
    TaskManager tm = launchTaskManager();
    awaitCondition(
        "TaskManager " + tm.resourceId() + " registered",
        jobManager,
        () -> registeredTaskManagerIds().contains(tm.resourceId()));
    LOG.info("TaskManager {} (pid {}) started and registered", tm.resourceId(), tm.pid());
    return tm;
  }

  private TaskManager launchTaskManager() {
    String resourceId = "taskmanager-" + taskManagerCounter.incrementAndGet();
    List<String> args =
        concat(
            List.of(
                "--configDir", confDir.toString(), "-D", "taskmanager.resource-id=" + resourceId),
            taskManagerDynamicArgs);
    FlinkProcess process = launch(resourceId, TASK_MANAGER_CLASS, taskManagerJvmArgs, args);
    taskManagers.add(process);
    return new TaskManager(resourceId, process.pid());
  }

  /** The TaskManagers started by this launcher whose process is alive, oldest first. */
  public List<TaskManager> taskManagers() {
    return taskManagers.stream()
        .filter(FlinkProcess::isAlive)
        .map(p -> new TaskManager(p.name(), p.pid()))
        .toList();
  }

  /**
   * {@code kill -9} of the TaskManager's process (SIGKILL by pid); returns once the process is
   * gone.
   */
  public void killTaskManager(TaskManager tm) {
    FlinkProcess process =
        taskManagers.stream()
            .filter(p -> p.pid() == tm.pid())
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "Cannot kill TaskManager "
                            + tm
                            + ": this cluster did not start it. Started: "
                            + taskManagers()));
    process.kill();
    LOG.info("TaskManager {} (pid {}) killed with SIGKILL", tm.resourceId(), tm.pid());
  }

  /**
   * The resource ids of the TaskManagers the JobManager has registered (a killed one stays until
   * its heartbeat times out).
   */
  public List<String> registeredTaskManagerIds() {
    List<String> ids = new ArrayList<>();
    getJson("taskmanagers").path("taskmanagers").forEach(tm -> ids.add(tm.path("id").asText()));
    return ids;
  }

  /** {@code slots-total} of the REST overview. */
  public int slotsTotal() {
    return getJson("overview").path("slots-total").asInt();
  }

  // ---------------------------------------------------------------- jobs, through the real client

  /** {@code flink run -d ...}; returns the new job's id, or throws with the client's output. */
  public String submit(JobSubmission submission) {
    CliResult result = flink(submission.cliArgs());
    Matcher id = SUBMITTED_JOB_ID.matcher(result.output());
    if (!result.succeeded() || !id.find()) {
      throw new IllegalStateException(
          "Cannot submit " + submission.jar() + ": " + result.describe());
    }
    LOG.info(
        "Submitted job {} from {} (parallelism {}, savepoint {})",
        id.group(1),
        submission.jar().getFileName(),
        submission.parallelism() == 0 ? "default" : submission.parallelism(),
        submission.fromSavepoint());
    return id.group(1);
  }

  /** {@code flink stop --savepointPath <savepoints/> <jobId>}; returns the savepoint's path. */
  public String stopWithSavepoint(String jobId) {
    CliResult result =
        flink(List.of("stop", "--savepointPath", savepointDir().toUri().toString(), jobId));
    Matcher path = SAVEPOINT_PATH.matcher(result.output());
    if (!result.succeeded() || !path.find()) {
      throw new IllegalStateException(
          "Cannot stop job " + jobId + " with a savepoint: " + result.describe());
    }
    LOG.info("Stopped job {} with savepoint {}", jobId, path.group(1));
    return path.group(1);
  }

  /** {@code flink list -r}: the ids of the running jobs. */
  public List<String> runningJobIds() {
    CliResult result = flink(List.of("list", "-r"));
    if (!result.succeeded()) {
      throw new IllegalStateException("Cannot list jobs: " + result.describe());
    }
    List<String> ids = new ArrayList<>();
    Matcher m = LISTED_JOB.matcher(result.output());
    while (m.find()) {
      ids.add(m.group(1));
    }
    return ids;
  }

  /** Runs the {@code flink} client with these arguments; never throws on a non-zero exit. */
  public CliResult flink(String... args) {
    return flink(Arrays.asList(args));
  }

  /** Runs the {@code flink} client with these arguments; never throws on a non-zero exit. */
  public CliResult flink(List<String> args) {
    String name = "client-" + clientCounter.incrementAndGet();
    List<String> jvmArgs =
        concat(
            List.of(
                "-Xmx1g", "-Dlog4j.configurationFile=" + confDir.resolve("log4j-cli.properties")),
            SHORT_LIVED_JVM_OPTS);
    CliResult result = runJava(name, CLI_CLASS, jvmArgs, args, Duration.ofMinutes(5));
    LOG.debug("flink {} -> exit {}", args, result.exitCode());
    return new CliResult(args, result.exitCode(), result.output());
  }

  /** The job's state, subtasks and checkpoint counts from the REST API. */
  public JobStatus jobStatus(String jobId) {
    JsonNode job = getJson("jobs/" + jobId);
    int total = 0;
    int running = 0;
    for (JsonNode vertex : job.path("vertices")) {
      total += vertex.path("parallelism").asInt();
      running += vertex.path("tasks").path("RUNNING").asInt();
    }
    JsonNode checkpoints = getJson("jobs/" + jobId + "/checkpoints");
    JsonNode restored = checkpoints.path("latest").path("restored");
    return new JobStatus(
        jobId,
        job.path("state").asText(),
        total,
        running,
        checkpoints.path("counts").path("completed").asLong(),
        checkpoints.path("latest").path("completed").path("id").asLong(-1),
        restored.isObject() ? restored.path("id").asLong(-1) : -1,
        restored.isObject() && restored.path("is_savepoint").asBoolean(),
        checkpoints.path("counts").path("restored").asLong());
  }

  // ---------------------------------------------------------------- accessors

  public URI restUri() {
    return restUri;
  }

  public Path workDir() {
    return workDir;
  }

  public Path checkpointDir() {
    return workDir.resolve("checkpoints");
  }

  public Path savepointDir() {
    return workDir.resolve("savepoints");
  }

  public Path logDir() {
    return logDir;
  }

  /** From launching the JobManager until every TaskManager's slots are registered. */
  public Duration startUpTime() {
    return startUpTime;
  }

  /** The tails of every cluster JVM's logs, for a failing test's message. */
  public String logTails() {
    StringBuilder out = new StringBuilder();
    if (jobManager != null) {
      out.append(jobManager.tail(LOG_TAIL_LINES));
    }
    taskManagers.forEach(tm -> out.append(tm.tail(LOG_TAIL_LINES)));
    return out.toString();
  }

  // ---------------------------------------------------------------- stop

  /**
   * Stops every TaskManager and the JobManager by process id; deletes the work dir if it is a temp
   * dir.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    stopProcesses();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // the hook is running or has run
    }
    if (ownsWorkDir) {
      deleteRecursively(workDir);
    }
  }

  private synchronized void stopProcesses() {
    taskManagers.forEach(tm -> tm.stop(10));
    if (jobManager != null) {
      jobManager.stop(10);
    }
    LOG.info("Flink session cluster at {} stopped", restUri);
  }

  // ---------------------------------------------------------------- process plumbing

  private FlinkProcess launch(
      String name, String mainClass, List<String> jvmArgs, List<String> args) {
    Path logFile = logDir.resolve(name + ".log");
    Path outFile = logDir.resolve(name + ".out");
    List<String> command = javaCommand(name, mainClass, jvmArgs, args);
    try {
      Process process =
          processBuilder(command)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(outFile.toFile()))
              .start();
      LOG.info("Started {} (pid {}), log {}", name, process.pid(), logFile);
      return new FlinkProcess(name, process, logFile, outFile);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + name + ": " + e.getMessage(), e);
    }
  }

  /** Runs a short-lived Flink JVM to its end, output in logs/<name>.out. */
  private CliResult runJava(
      String name, String mainClass, List<String> jvmArgs, List<String> args, Duration timeout) {
    Path outFile = logDir.resolve(name + ".out");
    try {
      Process process =
          processBuilder(javaCommand(name, mainClass, jvmArgs, args))
              .redirectOutput(outFile.toFile())
              .start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        throw new IllegalStateException(
            "Cannot run "
                + mainClass
                + " "
                + args
                + ": no exit within "
                + timeout
                + ", killed. Output:\n"
                + FlinkProcess.tailOf(outFile, LOG_TAIL_LINES));
      }
      return new CliResult(
          args, process.exitValue(), Files.readString(outFile, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot run " + mainClass + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while running " + mainClass + " " + args, e);
    }
  }

  private List<String> javaCommand(
      String name, String mainClass, List<String> jvmArgs, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(javaExecutable());
    command.addAll(jvmArgs);
    command.addAll(JAVA_17_OPTS);
    command.add("-Dlog.file=" + logDir.resolve(name + ".log"));
    if (jvmArgs.stream().noneMatch(a -> a.startsWith("-Dlog4j.configurationFile="))) {
      command.add("-Dlog4j.configurationFile=" + confDir.resolve("log4j.properties"));
    }
    command.add("-cp");
    command.add(classpath());
    command.add(mainClass);
    command.addAll(args);
    return command;
  }

  private ProcessBuilder processBuilder(List<String> command) {
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    env.put("FLINK_CONF_DIR", confDir.toString());
    env.put("FLINK_LIB_DIR", libDir.toString());
    env.put("FLINK_PLUGINS_DIR", workDir.resolve("plugins").toString());
    env.put("FLINK_LOG_DIR", logDir.toString());
    if (options.hadoopClasspath != null) {
      env.put("HADOOP_CLASSPATH", options.hadoopClasspath);
    }
    if (options.hadoopConfDir != null) {
      env.put("HADOOP_CONF_DIR", options.hadoopConfDir.toString());
    }
    env.putAll(options.environment);
    return builder;
  }

  /**
   * Flink's lib/, then HADOOP_CLASSPATH and HADOOP_CONF_DIR (the order of bin/config.sh's
   * classpath).
   */
  private String classpath() {
    StringBuilder cp = new StringBuilder(libDir + "/*");
    if (options.hadoopClasspath != null) {
      cp.append(':').append(options.hadoopClasspath);
    }
    if (options.hadoopConfDir != null) {
      cp.append(':').append(options.hadoopConfDir);
    }
    return cp.toString();
  }

  private static String javaExecutable() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * Polls until the condition holds; fails with the log tails if the watched JVM dies or time runs
   * out.
   */
  private void awaitCondition(String what, FlinkProcess watched, BooleanSupplier condition) {
    long deadline = System.nanoTime() + options.startTimeout.toNanos();
    Exception lastError = null;
    while (true) {
      if (!watched.isAlive()) {
        throw new IllegalStateException(
            "Cannot start the Flink cluster: "
                + watched.name()
                + " exited while waiting until "
                + what
                + ".\n"
                + logTails());
      }
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException e) {
        lastError = e;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "Cannot start the Flink cluster: timed out after "
                + options.startTimeout
                + " waiting until "
                + what
                + (lastError == null ? "" : " (last error: " + lastError.getMessage() + ")")
                + ".\n"
                + logTails());
      }
      try {
        Thread.sleep(100); // polling a condition in a launcher; tests wait with Awaitility
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting until " + what, e);
      }
    }
  }

  private JsonNode getJson(String path) {
    HttpRequest request =
        HttpRequest.newBuilder(restUri.resolve(path)).timeout(Duration.ofSeconds(10)).GET().build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            "Cannot GET "
                + restUri.resolve(path)
                + ": HTTP "
                + response.statusCode()
                + " "
                + response.body());
      }
      return json.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot GET " + restUri.resolve(path) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted during GET " + path, e);
    }
  }

  // ---------------------------------------------------------------- small helpers

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot find a free port on loopback", e);
    }
  }

  private static List<String> splitArgs(String line) {
    return line.isBlank() ? List.of() : List.of(line.trim().split("\\s+"));
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  private static String yamlScalar(String value) {
    return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  private static void checkArgument(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalArgumentException(String.format(template, args));
    }
  }

  private static void deleteRecursively(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      LOG.warn(
          "Could not delete the Flink cluster's work dir {}: {}; delete it by hand",
          dir,
          e.toString());
    }
  }

  // ---------------------------------------------------------------- by hand

  /**
   * Starts a cluster and keeps it until Ctrl-C: {@code java -cp ... FlinkSessionCluster
   * [--taskmanagers N] [--dist DIR] [--workdir DIR]}. Prints the REST URL and the {@code bin/flink}
   * script to submit with.
   */
  public static void main(String[] args) throws InterruptedException {
    Builder builder = builder();
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      checkArgument(value != null, "Cannot parse '%s': it needs a value", args[i]);
      switch (args[i]) {
        case "--taskmanagers" -> builder.taskManagers(Integer.parseInt(value));
        case "--slots" -> builder.slotsPerTaskManager(Integer.parseInt(value));
        case "--dist" -> builder.distDir(Path.of(value));
        case "--workdir" -> builder.workDir(Path.of(value));
        default ->
            throw new IllegalArgumentException(
                "Cannot parse '"
                    + args[i]
                    + "': use --taskmanagers N, --slots N, --dist DIR, --workdir DIR");
      }
      i++;
    }
    FlinkSessionCluster cluster = builder.start();
    System.out.printf(
        "Flink session cluster ready in %d ms.%n  Web UI / REST: %s%n  Client: %s%n"
            + "  Logs: %s%nCtrl-C stops it.%n",
        cluster.startUpTime().toMillis(),
        cluster.restUri(),
        cluster.workDir().resolve("bin/flink"),
        cluster.logDir());
    // the shutdown hook stops the processes on Ctrl-C
    Thread.currentThread().join();
  }
}
