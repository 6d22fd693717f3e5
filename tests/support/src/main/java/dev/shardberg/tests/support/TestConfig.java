package dev.shardberg.tests.support;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A Shardberg config file for a test, written through typed methods instead of YAML strings. Each
 * method sets the key of docs/config.md it is named after; what a test does not set keeps the job's
 * default, but for {@code target.delete-mode}: equality unless set ({@link #deleteModeUnset}).
 *
 * <p>{@link #yaml()} writes block YAML in the order of docs/config.md (pipeline, sources, tables,
 * source, maintenance, target, schema, coordinator), two spaces a level. A string stays plain where
 * YAML reads it back as the same string ({@code 1s}, {@code 5600-5601}, {@code file:/tmp/wh/}) and
 * is single-quoted otherwise (a regex, {@code 'false'}); numbers and lists of numbers stay numbers.
 */
public final class TestConfig {
  /**
   * A string YAML reads as itself when written plain: no indicator, space, quote or escape in it.
   */
  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_/][A-Za-z0-9_./:@+-]*");

  /**
   * Plain strings YAML 1.1 reads as something else: booleans, null, numbers (also 0x1f, 1:30),
   * dates.
   */
  private static final Pattern NOT_A_STRING =
      Pattern.compile(
          "(?i)y|n|yes|no|true|false|on|off|null"
              + "|[-+]?[0-9][0-9_]*(\\.[0-9_]*)?(e[-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?"
              + "|0x[0-9a-f_]+|0b[01_]+|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*");

  private final Map<String, Object> root = new LinkedHashMap<>();

  private TestConfig(String pipelineId) {
    for (String section :
        List.of("pipeline", "tables", "source", "maintenance", "target", "schema", "coordinator")) {
      root.put(section, new LinkedHashMap<String, Object>());
      if (section.equals("pipeline")) {
        root.put("sources", new ArrayList<Map<String, Object>>());
      }
    }
    put("pipeline.id", pipelineId);
    // the suites were written against deletes by key; a test of the job's own choice per table
    // (position for a table it creates) says deleteModeUnset()
    put("target.delete-mode", "equality");
  }

  /** A config of pipeline {@code pipeline.id}. */
  public static TestConfig pipeline(String id) {
    return new TestConfig(id);
  }

  /** Another config with the same keys, to change apart from this one. */
  public TestConfig copy() {
    TestConfig copy = new TestConfig("");
    copy.root.clear();
    root.forEach((key, value) -> copy.root.put(key, deepCopy(value)));
    return copy;
  }

  /** A part several tests add alike, e.g. the sources and tables of a fixture. */
  public TestConfig with(Consumer<TestConfig> part) {
    part.accept(this);
    return this;
  }

  // ---- pipeline
  // ---------------------------------------------------------------------------------------

  public TestConfig checkpointInterval(String duration) {
    return put("pipeline.checkpoint-interval", duration);
  }

  public TestConfig checkpointDir(URI location) {
    return put("pipeline.checkpoint-dir", location.toString());
  }

  public TestConfig checkpointDir(String location) {
    return put("pipeline.checkpoint-dir", location);
  }

  public TestConfig parallelism(int readersPerHost) {
    return put("pipeline.parallelism", readersPerHost);
  }

  public TestConfig writerParallelism(int writers) {
    return put("pipeline.writer-parallelism", writers);
  }

  /** {@code pipeline.restart.attempts} and {@code pipeline.restart.delay}. */
  public TestConfig restart(int attempts, String delay) {
    put("pipeline.restart.attempts", attempts);
    return put("pipeline.restart.delay", delay);
  }

  /** {@code pipeline.on-stateless-start}: fail or resnapshot. */
  public TestConfig onStatelessStart(String behavior) {
    return put("pipeline.on-stateless-start", behavior);
  }

  // ---- sources, tables
  // ---------------------------------------------------------------------------------

  /** One more entry of {@code sources}. */
  public TestConfig source(Source source) {
    sources().add(new LinkedHashMap<>(source.fields));
    return this;
  }

  /** {@code tables.database-pattern} and {@code tables.table-pattern}. */
  public TestConfig tables(String databasePattern, String tablePattern) {
    put("tables.database-pattern", databasePattern);
    return put("tables.table-pattern", tablePattern);
  }

  public TestConfig keyColumns(List<String> columns) {
    return put("tables.key-columns", List.copyOf(columns));
  }

  public TestConfig excludeShards(Integer... shards) {
    return put("tables.exclude-shards", Arrays.asList(shards));
  }

  /** {@code tables.dropped-shards}: keep or delete. */
  public TestConfig droppedShards(String behavior) {
    return put("tables.dropped-shards", behavior);
  }

  public TestConfig rereadShards(Integer... shards) {
    return put("tables.reread-shards", Arrays.asList(shards));
  }

  // ---- source
  // ------------------------------------------------------------------------------------------

  /** {@code source.startup-mode}: initial, latest or timestamp. */
  public TestConfig newShards(String behavior) {
    return put("tables.new-shards", behavior);
  }

  public TestConfig discoveryInterval(String duration) {
    return put("tables.discovery-interval", duration);
  }

  public TestConfig startupMode(String mode) {
    return put("source.startup-mode", mode);
  }

  public TestConfig serverTimeZone(String zone) {
    return put("source.server-time-zone", zone);
  }

  public TestConfig snapshotChunkSize(int rows) {
    return put("source.snapshot-chunk-size", rows);
  }

  public TestConfig healthCheckInterval(String duration) {
    return put("source.health-check-interval", duration);
  }

  public TestConfig binlogFormatCheckInterval(String duration) {
    return put("source.binlog-format-check-interval", duration);
  }

  // ---- maintenance
  // -------------------------------------------------------------------------------------

  public TestConfig maintenanceInterval(String duration) {
    return put("maintenance.interval", duration);
  }

  public TestConfig compactionMinSmallFiles(int files) {
    return put("maintenance.compaction.min-small-files", files);
  }

  // ---- target
  // ------------------------------------------------------------------------------------------

  /** A {@code hadoop} catalog with its warehouse. */
  public TestConfig hadoopCatalog(URI warehouse) {
    put("target.catalog.type", "hadoop");
    return put("target.catalog.warehouse", warehouse.toString());
  }

  /** A {@code hive} catalog: the metastore's URI and the warehouse. */
  public TestConfig hiveCatalog(String uri, URI warehouse) {
    return hiveCatalog(uri, warehouse.toString());
  }

  /** A {@code hive} catalog: the metastore's URI and the warehouse. */
  public TestConfig hiveCatalog(String uri, String warehouse) {
    put("target.catalog.type", "hive");
    put("target.catalog.uri", uri);
    return put("target.catalog.warehouse", warehouse);
  }

  /**
   * A jdbc catalog: its database's JDBC URL, the warehouse, and the database user with its password
   * in a file.
   */
  public TestConfig jdbcCatalog(String jdbcUrl, URI warehouse, String user, Path passwordFile) {
    put("target.catalog.type", "jdbc");
    put("target.catalog.uri", jdbcUrl);
    put("target.catalog.warehouse", warehouse.toString());
    put("target.catalog.jdbc.user", user);
    return put("target.catalog.jdbc.password-file", passwordFile.toString());
  }

  /**
   * A {@code rest} catalog: the REST server's URL and the warehouse, which may be an object store
   * location ({@code s3://bucket/path}); its file IO goes in {@link #catalogProperty}.
   */
  public TestConfig restCatalog(String uri, String warehouse) {
    put("target.catalog.type", "rest");
    put("target.catalog.uri", uri);
    return put("target.catalog.warehouse", warehouse);
  }

  /** A {@code rest} catalog without a warehouse: the service chooses the tables' locations. */
  public TestConfig restCatalog(String uri) {
    put("target.catalog.type", "rest");
    return put("target.catalog.uri", uri);
  }

  /**
   * One pass-through entry of {@code target.catalog.properties} ({@code io-impl}, {@code
   * s3.endpoint}, …): a dotted property name is one key of that map, not a path.
   */
  public TestConfig catalogProperty(String name, String value) {
    section("target.catalog.properties").put(name, value);
    return this;
  }

  /** One entry of {@code target.table-properties}. */
  public TestConfig tableProperty(String name, String value) {
    section("target.table-properties").put(name, value);
    return this;
  }

  /** {@code target.delete-mode}: equality (a test config's unless set) or position. */
  public TestConfig deleteMode(String mode) {
    return put("target.delete-mode", mode);
  }

  /** No {@code target.delete-mode}: the job chooses per table, as a user's config without it. */
  public TestConfig deleteModeUnset() {
    section("target").remove("delete-mode");
    return this;
  }

  /** {@code target.catalog.name}. */
  public TestConfig catalogName(String name) {
    return put("target.catalog.name", name);
  }

  public TestConfig hadoopConfDir(Path directory) {
    return put("target.catalog.hadoop-conf-dir", directory.toString());
  }

  /** {@code target.namespace} and {@code target.table}. */
  public TestConfig table(String namespace, String table) {
    put("target.namespace", namespace);
    return put("target.table", table);
  }

  public TestConfig buckets(int buckets) {
    return put("target.buckets", buckets);
  }

  // ---- schema, coordinator
  // -----------------------------------------------------------------------------

  /** {@code schema.change-behavior}: evolve or fail. */
  public TestConfig schemaChangeBehavior(String behavior) {
    return put("schema.change-behavior", behavior);
  }

  /** {@code coordinator.zookeeper.connect}: HA mode. */
  public TestConfig zooKeeper(String connect) {
    return put("coordinator.zookeeper.connect", connect);
  }

  // ---- output
  // ------------------------------------------------------------------------------------------

  /** The config file's text. */
  public String yaml() {
    StringBuilder yaml = new StringBuilder();
    writeMap(yaml, root, "", "");
    return yaml.toString();
  }

  /** Writes {@link #yaml()} to {@code file}; returns the file. */
  public Path write(Path file) throws IOException {
    return Files.writeString(file, yaml());
  }

  @Override
  public String toString() {
    return yaml();
  }

  /** One entry of {@code sources}: a MySQL host. */
  public static final class Source {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    /** Host {@code name} at {@code host:port}. */
    public Source(String name, String host, int port) {
      fields.put("name", name);
      fields.put("host", host);
      fields.put("port", port);
    }

    public Source user(String user) {
      fields.put("user", user);
      return this;
    }

    public Source passwordFile(Path file) {
      fields.put("password-file", file.toString());
      return this;
    }

    /** {@code server-id-range}, e.g. {@code 5600-5603}. */
    public Source serverIds(String range) {
      fields.put("server-id-range", range);
      return this;
    }

    /** One entry of {@code jdbc-properties}. */
    public Source jdbcProperty(String key, String value) {
      @SuppressWarnings("unchecked")
      Map<String, Object> properties =
          (Map<String, Object>)
              fields.computeIfAbsent("jdbc-properties", k -> new LinkedHashMap<>());
      properties.put(key, value);
      return this;
    }

    /**
     * {@code useSSL: false} and {@code allowPublicKeyRetrieval: true}: what an embedded MariaDB (no
     * TLS) needs.
     */
    public Source withoutTls() {
      return jdbcProperty("useSSL", "false").jdbcProperty("allowPublicKeyRetrieval", "true");
    }
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> sources() {
    return (List<Map<String, Object>>) root.get("sources");
  }

  private TestConfig put(String dottedKey, Object value) {
    int last = dottedKey.lastIndexOf('.');
    Map<String, Object> map = last < 0 ? root : section(dottedKey.substring(0, last));
    map.put(dottedKey.substring(last + 1), value);
    return this;
  }

  /** The mapping at {@code dottedPath}, created when missing. */
  @SuppressWarnings("unchecked")
  private Map<String, Object> section(String dottedPath) {
    Map<String, Object> map = root;
    for (String name : dottedPath.split("\\.")) {
      map =
          (Map<String, Object>) map.computeIfAbsent(name, k -> new LinkedHashMap<String, Object>());
    }
    return map;
  }

  private static Object deepCopy(Object value) {
    if (value instanceof Map<?, ?> map) {
      Map<Object, Object> copy = new LinkedHashMap<>();
      map.forEach((k, v) -> copy.put(k, deepCopy(v)));
      return copy;
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>();
      list.forEach(v -> copy.add(deepCopy(v)));
      return copy;
    }
    return value;
  }

  private static boolean isEmpty(Object value) {
    return value instanceof Map<?, ?> m && m.isEmpty() || value instanceof List<?> l && l.isEmpty();
  }

  /**
   * The entries of {@code map}, the first after {@code firstLead}, the others after {@code indent};
   * empty ones left out.
   */
  private static void writeMap(StringBuilder yaml, Map<?, ?> map, String firstLead, String indent) {
    String lead = firstLead;
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!isEmpty(e.getValue())) {
        writeEntry(yaml, lead, e.getKey().toString(), e.getValue(), indent);
        lead = indent;
      }
    }
  }

  private static void writeEntry(
      StringBuilder yaml, String lead, String key, Object value, String indent) {
    yaml.append(lead).append(key).append(':');
    if (value instanceof Map<?, ?> map) {
      yaml.append('\n');
      writeMap(yaml, map, indent + "  ", indent + "  ");
    } else if (value instanceof List<?> list && list.get(0) instanceof Map<?, ?>) {
      yaml.append('\n');
      for (Object element : list) {
        writeMap(yaml, (Map<?, ?>) element, indent + "  - ", indent + "    ");
      }
    } else if (value instanceof List<?> list) {
      List<String> scalars = new ArrayList<>();
      list.forEach(element -> scalars.add(scalar(element)));
      yaml.append(" [").append(String.join(", ", scalars)).append("]\n");
    } else {
      yaml.append(' ').append(scalar(value)).append('\n');
    }
  }

  private static String scalar(Object value) {
    if (value instanceof Number || value instanceof Boolean) {
      return value.toString();
    }
    String text = value.toString();
    if (PLAIN.matcher(text).matches() && !NOT_A_STRING.matcher(text).matches()) {
      return text;
    }
    return "'" + text.replace("'", "''") + "'";
  }
}
