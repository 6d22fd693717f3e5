package dev.shardberg.job.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.DeleteMode;
import dev.shardberg.job.config.ShardbergConfig.CatalogConfig;
import dev.shardberg.job.config.ShardbergConfig.PasswordRef;
import dev.shardberg.job.config.ShardbergConfig.ServerIdRange;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  private static final Map<String, String> ENV = Map.of("PW_A", "s3cr3t-a");

  @TempDir Path tmp;

  private String minimal() {
    return """
        pipeline:
          id: orders
        sources:
          - name: a
            host: db-a
            user: cdc
            password-env: PW_A
            server-id-range: 5400-5403
        tables:
          database-pattern: shop
          table-pattern: 'orders_(?<shard>\\d+)'
        target:
          catalog:
            type: hadoop
            warehouse: file:///tmp/wh
          namespace: shop
          table: orders
        """;
  }

  private ShardbergConfig parse(String yaml) {
    return ConfigLoader.parse(yaml, "test.yaml", ENV::get);
  }

  private String messageOf(String yaml) {
    try {
      parse(yaml);
    } catch (ConfigException e) {
      return e.getMessage();
    }
    throw new AssertionError("expected a ConfigException");
  }

  private String jdbcCatalog(String catalogLines) {
    return minimal()
        .replace(
            """
                type: hadoop
                warehouse: file:///tmp/wh
            """,
            catalogLines);
  }

  @Test
  void aJdbcCatalogTakesItsUserAndAPasswordByReference() {
    ShardbergConfig config =
        parse(
            jdbcCatalog(
                """
                    type: jdbc
                    uri: jdbc:mysql://catalog-db:3306/iceberg_catalog
                    warehouse: hdfs://nn/warehouse
                    jdbc:
                      user: iceberg
                      password-env: PW_A
                """));
    CatalogConfig catalog = config.target().catalog();
    assertThat(catalog.type()).isEqualTo(CatalogType.JDBC);
    assertThat(catalog.uri()).isEqualTo("jdbc:mysql://catalog-db:3306/iceberg_catalog");
    assertThat(catalog.jdbcUser()).isEqualTo("iceberg");
    assertThat(catalog.jdbcPassword()).isEqualTo(PasswordRef.ofEnv("PW_A"));
    assertThat(catalog.toString()).doesNotContain("s3cr3t-a");
  }

  @Test
  void aJdbcCatalogWithoutItsUrlUserOrPasswordIsRefusedNamingTheKeys() {
    assertThat(messageOf(jdbcCatalog("    type: jdbc\n")))
        .contains(
            "Missing key 'target.catalog.uri': a jdbc catalog needs its database's JDBC URL"
                + " (jdbc:mysql://host:3306/iceberg_catalog).")
        .contains(
            "Missing key 'target.catalog.jdbc.user': a jdbc catalog needs the database user it"
                + " connects as.")
        .contains(
            "Missing password for the jdbc catalog: set 'target.catalog.jdbc.password-env' (name"
                + " of an environment variable) or 'target.catalog.jdbc.password-file'");
    assertThat(
            messageOf(
                jdbcCatalog(
                    """
                        type: jdbc
                        uri: thrift://catalog-db:9083
                        jdbc:
                          user: iceberg
                          password-env: UNSET_VARIABLE
                    """)))
        .contains(
            "'target.catalog.uri' = 'thrift://catalog-db:9083' is not a JDBC URL: a jdbc catalog"
                + " needs the URL of its database")
        .contains(
            "Cannot read the password of the jdbc catalog: environment variable 'UNSET_VARIABLE'"
                + " (target.catalog.jdbc.password-env) is not set.");
  }

  @Test
  void catalogCredentialsInThePassThroughPropertiesAreRefused() {
    String message =
        messageOf(
            jdbcCatalog(
                """
                    type: jdbc
                    uri: jdbc:mysql://catalog-db:3306/iceberg_catalog
                    jdbc:
                      user: iceberg
                      password-env: PW_A
                    properties:
                      jdbc.password: plain-text-pw
                """));
    assertThat(message)
        .contains(
            "Cannot set 'target.catalog.properties.jdbc.password': use"
                + " 'target.catalog.jdbc.password-env' or 'target.catalog.jdbc.password-file'"
                + " instead. Passwords never go into the config file.")
        .doesNotContain("plain-text-pw");
    assertThat(
            messageOf(
                minimal()
                    .replace(
                        "    warehouse: file:///tmp/wh\n",
                        "    warehouse: file:///tmp/wh\n    jdbc:\n      user: iceberg\n")))
        .contains(
            "'target.catalog.jdbc.*' is set, but 'target.catalog.type' = hadoop: set the type to"
                + " jdbc, or remove the jdbc keys.");
  }

  /** The rest + S3 example of docs/config.md, as the loader reads it. */
  @Test
  void aRestCatalogOnAnObjectStorePassesS3FileIoPropertiesThrough() {
    ShardbergConfig config =
        parse(
            jdbcCatalog(
                """
                    type: rest
                    name: lake
                    uri: https://catalog.example.com/api/catalog
                    warehouse: s3://lake/warehouse
                    properties:
                      io-impl: org.apache.iceberg.aws.s3.S3FileIO
                      s3.endpoint: https://objects.example.com   # MinIO, Ceph, S3Proxy…
                      s3.path-style-access: "true"
                      client.region: us-east-1
                      s3.secret-access-key: plain-text-secret
                """));
    CatalogConfig catalog = config.target().catalog();
    assertThat(catalog.type()).isEqualTo(CatalogType.REST);
    assertThat(catalog.warehouse()).isEqualTo("s3://lake/warehouse");
    assertThat(catalog.properties())
        .containsEntry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .containsEntry("s3.endpoint", "https://objects.example.com")
        .containsEntry("s3.path-style-access", "true")
        .containsEntry("client.region", "us-east-1");
    assertThat(catalog.toString())
        .contains("s3.endpoint=https://objects.example.com")
        .doesNotContain("plain-text-secret");
  }

  @Test
  void s3FileIoPropertiesWithWrongValuesAreRefusedNamingTheFix() {
    String message =
        messageOf(
            jdbcCatalog(
                """
                    type: rest
                    uri: https://catalog.example.com/api/catalog
                    properties:
                      s3.endpoint: objects.example.com:9000
                      s3.path-style-access: yes please
                """));
    assertThat(message)
        .contains(
            "'target.catalog.properties.s3.endpoint' = 'objects.example.com:9000' is not an"
                + " http(s) URL: S3FileIO needs the store's URL with its scheme, e.g."
                + " https://objects.example.com or http://127.0.0.1:9000 (leave it out for AWS S3).")
        .contains(
            "'target.catalog.properties.s3.path-style-access' = 'yes please' is not true or false:"
                + " Iceberg would read it as false");
  }

  @Test
  void deletesByPositionTakeReReadsReSnapshotsAndRemovedShards() {
    String yaml =
        minimal()
            .replace("  id: orders\n", "  id: orders\n  on-stateless-start: resnapshot\n")
            .replace("  namespace: shop\n", "  namespace: shop\n  delete-mode: position\n")
            .replace(
                "  table-pattern: 'orders_(?<shard>\\d+)'\n",
                "  table-pattern: 'orders_(?<shard>\\d+)'\n  reread-shards: [3]\n  dropped-shards: delete\n");
    ShardbergConfig all = parse(yaml);
    assertThat(all.tables().droppedShards()).isEqualTo(dev.shardberg.router.DroppedShards.DELETE);
    assertThat(all.target().deleteMode()).isEqualTo(DeleteMode.POSITION);
    ShardbergConfig config =
        parse(
            minimal()
                .replace("  namespace: shop\n", "  namespace: shop\n  delete-mode: position\n"));
    assertThat(config.target().deleteMode()).isEqualTo(DeleteMode.POSITION);
    // unset: chosen per table at the start (DeleteModesTest)
    assertThat(parse(minimal()).target().deleteModeSet()).isFalse();
    assertThat(config.tables().droppedShards()).isEqualTo(dev.shardberg.router.DroppedShards.KEEP);
  }

  @Test
  void droppedShardsAreKeptByDefaultAndDeletedOnRequest() {
    String delete =
        minimal()
            .replace(
                "  table-pattern: 'orders_(?<shard>\\d+)'\n",
                "  table-pattern: 'orders_(?<shard>\\d+)'\n  dropped-shards: delete\n");
    assertThat(parse(minimal()).tables().droppedShards())
        .isEqualTo(dev.shardberg.router.DroppedShards.KEEP);
    assertThat(parse(delete).tables().droppedShards())
        .isEqualTo(dev.shardberg.router.DroppedShards.DELETE);
    assertThat(messageOf(delete.replace("dropped-shards: delete", "dropped-shards: drop")))
        .contains("tables.dropped-shards");
  }

  @Test
  void minimalConfigGetsEveryDefault() {
    ShardbergConfig config = parse(minimal());
    assertThat(config.pipeline().id()).isEqualTo("orders");
    assertThat(config.pipeline().checkpointInterval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(config.pipeline().parallelism()).isEqualTo(1);
    assertThat(config.pipeline().writerParallelism()).isEqualTo(1);
    assertThat(config.pipeline().heartbeatEveryEmptyCheckpoints()).isEqualTo(10);
    assertThat(config.sources()).hasSize(1);
    assertThat(config.sources().get(0).port()).isEqualTo(3306);
    assertThat(config.sources().get(0).serverIds()).isEqualTo(new ServerIdRange(5400, 5403));
    assertThat(config.sources().get(0).password()).isEqualTo(PasswordRef.ofEnv("PW_A"));
    assertThat(config.cdc().startupMode()).isEqualTo(StartupMode.INITIAL);
    assertThat(config.cdc().pollInterval()).isEqualTo(Duration.ofMillis(50));
    assertThat(config.cdc().snapshotChunkSize()).isEqualTo(8096);
    assertThat(config.target().catalog().type()).isEqualTo(CatalogType.HADOOP);
    assertThat(config.target().buckets()).isEqualTo(5);
    assertThat(config.target().qualifiedName()).isEqualTo("shardberg.shop.orders");
    assertThat(config.coordinator().haEnabled()).isFalse();
    assertThat(config.coordinator().lockTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(config.coordinator().commitLockTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(config.pipeline().onStatelessStart()).isEqualTo(OnStatelessStart.FAIL);
    assertThat(config.cdc().binlogFormatCheckInterval()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void zooKeeperLockTimeoutIsTheJobsCommitLockTimeout() {
    String zk =
        minimal() + "coordinator:\n  lock-timeout: 45s\n  zookeeper:\n    connect: zk:2181\n";
    assertThat(parse(zk).coordinator().commitLockTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThat(parse(zk + "    lock-timeout: 5s\n").coordinator().commitLockTimeout())
        .isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void statelessStartPolicy() {
    String resnapshot =
        minimal().replace("  id: orders", "  id: orders\n  on-stateless-start: resnapshot");
    assertThat(parse(resnapshot).pipeline().onStatelessStart())
        .isEqualTo(OnStatelessStart.RESNAPSHOT);
    assertThat(
            messageOf(
                minimal().replace("  id: orders", "  id: orders\n  on-stateless-start: reset")))
        .contains("Cannot use 'pipeline.on-stateless-start' = 'reset': use fail or resnapshot.");
    assertThat(messageOf(resnapshot + "source:\n  startup-mode: latest\n"))
        .contains(
            "Cannot use 'pipeline.on-stateless-start' = resnapshot with 'source.startup-mode' = latest: a re-snapshot"
                + " removes the shards' rows and reads them again, which needs the snapshot; set source.startup-mode to"
                + " initial or pipeline.on-stateless-start to fail.");
    assertThat(
            parse(minimal() + "source:\n  binlog-format-check-interval: 2s\n")
                .cdc()
                .binlogFormatCheckInterval())
        .isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void exampleConfigParses() throws Exception {
    Path confDir = Files.createDirectories(tmp.resolve("hadoop-conf"));
    Path passwordFile = Files.writeString(tmp.resolve("b.password"), "pw-b\n");
    String yaml =
        Files.readString(Path.of("..", "docs", "example-config.yaml"))
            .replace("/etc/hadoop/conf", confDir.toString())
            .replace("/etc/shardberg/mysql-b.password", passwordFile.toString());
    ShardbergConfig config =
        ConfigLoader.parse(
            yaml, "example-config.yaml", Map.of("SHARDBERG_MYSQL_A_PASSWORD", "x")::get);
    assertThat(config.sources())
        .extracting(ShardbergConfig.SourceConfig::name)
        .containsExactly("mysql-a", "mysql-b");
    assertThat(config.sources().get(0).jdbcProperties()).containsEntry("sslMode", "VERIFY_CA");
    assertThat(config.sources().get(1).password())
        .isEqualTo(PasswordRef.ofFile(passwordFile.toString()));
    assertThat(config.tables().databasePattern()).isEqualTo("shop_(?<shard>\\d+)");
    assertThat(config.target().catalog().type()).isEqualTo(CatalogType.HIVE);
    assertThat(config.target().catalog().properties())
        .containsEntry("hive.metastore.sasl.enabled", "true");
    assertThat(config.target().tableProperties())
        .containsEntry("write.target-file-size-bytes", "268435456");
    assertThat(config.coordinator().zookeeper().connect()).startsWith("zk1.internal:2181");
    assertThat(config.coordinator().zookeeper().retryMaxRetries()).isEqualTo(10);
    assertThat(config.cdc().debeziumProperties()).containsEntry("max.batch.size", "4096");
  }

  @Test
  void unknownKeyNamesFullPathAndClosestKey() {
    assertThat(messageOf(minimal().replace("    host: db-a", "    hots: db-a\n    host: db-a")))
        .contains("Unknown key 'sources[0].hots'; did you mean 'sources[0].host'?");
    assertThat(messageOf(minimal() + "  bucket: 7\n"))
        .contains("Unknown key 'target.bucket'; did you mean 'target.buckets'?");
    assertThat(messageOf(minimal().replace("  id: orders", "  id: orders\n  buckets: 3")))
        .contains("Unknown key 'pipeline.buckets'; did you mean 'target.buckets'?");
  }

  @Test
  void missingKeysAreNamed() {
    String message =
        messageOf(
            minimal()
                .replace("  id: orders\n", "  parallelism: 1\n")
                .replace("  table: orders\n", ""));
    assertThat(message)
        .contains("Missing key 'pipeline.id'")
        .contains("Missing key 'target.table'");
  }

  @Test
  void overlappingServerIdRangesNameBothSources() {
    String yaml =
        minimal()
            .replace(
                "tables:",
                """
          - name: b
            host: db-b
            user: cdc
            password-env: PW_A
            server-id-range: 5402-5405
        tables:""");
    assertThat(messageOf(yaml))
        .contains(
            "Server-id ranges of sources 'a' (sources[0].server-id-range = 5400-5403) and 'b'"
                + " (sources[1].server-id-range = 5402-5405) overlap: give every source its own range, e.g. 5406-5409 for 'b'.");
  }

  /** The pause reaches the job's checkpoints; unset, the cluster's own setting stays in force. */
  @Test
  void checkpointMinPauseReachesTheJobsCheckpointsOnlyWhenSet() {
    ShardbergConfig paused =
        parse(minimal().replace("  id: orders", "  id: orders\n  checkpoint-min-pause: 3s"));
    assertThat(paused.pipeline().checkpointMinPause()).isEqualTo(Duration.ofSeconds(3));
    org.apache.flink.configuration.Configuration cluster =
        new org.apache.flink.configuration.Configuration();
    cluster.set(
        org.apache.flink.configuration.CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS,
        Duration.ofSeconds(1));
    var env =
        org.apache.flink.streaming.api.environment.StreamExecutionEnvironment
            .getExecutionEnvironment(cluster);
    dev.shardberg.job.ShardbergPipeline.configureCheckpointsAndRestarts(env, paused);
    assertThat(env.getCheckpointConfig().getMinPauseBetweenCheckpoints()).isEqualTo(3_000);

    ShardbergConfig unset = parse(minimal());
    assertThat(unset.pipeline().checkpointMinPause()).isNull();
    var clusterEnv =
        org.apache.flink.streaming.api.environment.StreamExecutionEnvironment
            .getExecutionEnvironment(cluster);
    dev.shardberg.job.ShardbergPipeline.configureCheckpointsAndRestarts(clusterEnv, unset);
    assertThat(clusterEnv.getCheckpointConfig().getMinPauseBetweenCheckpoints()).isEqualTo(1_000);
  }

  @Test
  void serverIdRangeSmallerThanParallelism() {
    String yaml = minimal().replace("  id: orders", "  id: orders\n  parallelism: 6");
    assertThat(messageOf(yaml))
        .contains(
            "'sources[0].server-id-range' = 5400-5403 holds 4 server id(s) but pipeline.parallelism is 6"
                + " (each source reader needs its own id): widen it to 5400-5405 or lower pipeline.parallelism.");
  }

  @Test
  void badRegexNamesKeyAndFix() {
    String yaml = minimal().replace("'orders_(?<shard>\\d+)'", "'orders_(?<shard>\\d+'");
    assertThat(messageOf(yaml))
        .contains(
            "Cannot compile 'tables.table-pattern' = 'orders_(?<shard>\\d+' as a Java regex: Unclosed group");
  }

  @Test
  void missingShardRule() {
    String yaml = minimal().replace("'orders_(?<shard>\\d+)'", "'orders_\\d+'");
    assertThat(messageOf(yaml)).contains("No shard-number rule: add a named group (?<shard>\\d+)");
  }

  @Test
  void passwordProblemsNeverShowSecrets() {
    assertThat(messageOf(minimal().replace("PW_A", "PW_MISSING")))
        .contains(
            "Cannot read the password of source 'a': environment variable 'PW_MISSING' (sources[0].password-env) is not set.");
    assertThat(messageOf(minimal().replace("    password-env: PW_A\n", "")))
        .contains("Missing password for source 'a': set 'sources[0].password-env'");
    String both =
        messageOf(
            minimal().replace("password-env: PW_A", "password-env: PW_A\n    password-file: /x"));
    assertThat(both)
        .contains(
            "Both 'sources[0].password-env' and 'sources[0].password-file' are set for source 'a'");
    assertThat(parse(minimal()).toString()).doesNotContain("s3cr3t-a").contains("env:PW_A");
  }

  /**
   * Issue 26, item 4: settings that remove the catalog's atomic swap, or the files a commit needs.
   */
  @Test
  void settingsThatRemoveTheFenceOrTheFilesAreRefusedNamingTheKey() {
    assertThat(messageOf(minimal().replace("file:///tmp/wh", "s3a://lake/warehouse")))
        .contains(
            "Cannot use 'target.catalog.type' = hadoop with 'target.catalog.warehouse' = 's3a://lake/warehouse':"
                + " the hadoop catalog commits by renaming a metadata file, which is not atomic on an object store (s3a://)")
        .contains("Use a catalog with an atomic swap (type hive, rest or jdbc)");
    assertThat(messageOf(minimal().replace("file:///tmp/wh", "gs://lake/wh")))
        .contains("object store (gs://)");
    // the same warehouse behind a catalog with an atomic swap is fine
    parse(
        minimal()
            .replace("type: hadoop", "type: hive\n    uri: thrift://hms:9083")
            .replace("file:///tmp/wh", "s3://lake/wh"));

    String hive = minimal().replace("type: hadoop", "type: hive\n    uri: thrift://hms:9083");
    assertThat(
            messageOf(
                hive.replace(
                    "  table: orders\n",
                    "  table: orders\n  table-properties:\n    engine.hive.lock-enabled: 'false'\n")))
        .contains(
            "Cannot set 'target.table-properties.engine.hive.lock-enabled' = false with a hive catalog")
        .contains("Remove the key");
    parse(
        hive.replace(
            "  table: orders\n",
            "  table: orders\n  table-properties:\n    engine.hive.lock-enabled: 'true'\n"));

    String withCheckpoints =
        minimal()
            .replace(
                "  id: orders",
                "  id: orders\n  checkpoint-interval: 1min\n  checkpoint-timeout: 10min");
    assertThat(messageOf(withCheckpoints + "maintenance:\n  orphan-files:\n    min-age: 30min\n"))
        .contains(
            "Cannot use 'maintenance.orphan-files.min-age' = PT30M: orphan removal would delete files the writers"
                + " wrote for checkpoints not yet taken")
        .contains(
            "It must be at least 3 x ('pipeline.checkpoint-interval' + 'pipeline.checkpoint-timeout') = PT33M");
    parse(withCheckpoints + "maintenance:\n  orphan-files:\n    min-age: 33min\n");
    parse(
        withCheckpoints + "maintenance:\n  orphan-files:\n    enabled: false\n    min-age: 1min\n");
  }

  @Test
  void typedValuesAreChecked() {
    assertThat(
            messageOf(
                minimal().replace("  id: orders", "  id: orders\n  checkpoint-interval: soon")))
        .contains(
            "Cannot parse 'pipeline.checkpoint-interval' = 'soon' as a duration: write e.g. 500ms, 10s, 5min or 1h.");
    assertThat(parse(minimal()).target().insertOnlyInitialLoad()).isTrue();
    assertThat(
            parse(
                    minimal()
                        .replace(
                            "  table: orders\n",
                            "  table: orders\n  insert-only-initial-load: false\n"))
                .target()
                .insertOnlyInitialLoad())
        .isFalse();
    assertThat(
            messageOf(
                minimal()
                    .replace(
                        "  table: orders\n",
                        "  table: orders\n  insert-only-initial-load: maybe\n")))
        .contains(
            "Cannot parse 'target.insert-only-initial-load' = 'maybe': expected true or false.");
    assertThat(messageOf(minimal().replace("type: hadoop", "type: glue")))
        .contains("Cannot use 'target.catalog.type' = 'glue': use hadoop, hive, rest or jdbc.");
    assertThat(messageOf(minimal().replace("type: hadoop", "type: hive")))
        .contains(
            "Missing key 'target.catalog.uri': a hive catalog needs its metastore URI (thrift://host:9083).");
    assertThat(messageOf(minimal() + "source:\n  startup-mode: timestamp\n"))
        .contains("Missing key 'source.startup-timestamp'");
    ShardbergConfig ts =
        parse(
            minimal()
                + "source:\n  startup-mode: timestamp\n  startup-timestamp: 2026-01-31T12:00:00Z\n");
    assertThat(ts.cdc().startupTimestamp()).isEqualTo(Instant.parse("2026-01-31T12:00:00Z"));
    assertThat(
            messageOf(
                minimal()
                    + "source:\n  debezium-properties:\n    database.jdbc.driver: com.mysql.cj.jdbc.Driver\n"))
        .contains(
            "Cannot set 'source.debezium-properties.database.jdbc.driver': Shardberg sets it to its own driver");
    assertThat(
            messageOf(
                minimal()
                    + "source:\n  debezium-properties:\n    database.database.jdbc.driver: x.Driver\n"))
        .contains(
            "Cannot set 'source.debezium-properties.database.database.jdbc.driver': Shardberg sets it");
    assertThat(messageOf(minimal() + "coordinator:\n  zookeeper:\n    root-path: /x\n"))
        .contains(
            "'coordinator.zookeeper.root-path' set but 'coordinator.zookeeper.connect' is not");
  }

  @Test
  void durationsParseInEveryWrittenForm() {
    Map<String, Duration> forms =
        Map.of(
            "500ms", Duration.ofMillis(500),
            "500 ms", Duration.ofMillis(500),
            "10s", Duration.ofSeconds(10),
            "2 s", Duration.ofSeconds(2),
            "5min", Duration.ofMinutes(5),
            "1h", Duration.ofHours(1),
            "2d", Duration.ofDays(2),
            "PT10S", Duration.ofSeconds(10),
            "250", Duration.ofMillis(250));
    forms.forEach(
        (text, expected) ->
            assertThat(
                    parse(
                            minimal()
                                .replace(
                                    "  id: orders", "  id: orders\n  checkpoint-interval: " + text))
                        .pipeline()
                        .checkpointInterval())
                .as(text)
                .isEqualTo(expected));
    assertThat(
            messageOf(
                minimal().replace("  id: orders", "  id: orders\n  checkpoint-interval: 1.5s")))
        .startsWith("Invalid config test.yaml: ")
        .contains(
            "Cannot parse 'pipeline.checkpoint-interval' = '1.5s' as a duration: write e.g. 500ms, 10s, 5min or 1h.");
    assertThat(
            messageOf(minimal().replace("  id: orders", "  id: orders\n  checkpoint-interval: 0s")))
        .contains("Cannot use 'pipeline.checkpoint-interval' = '0s': it must be longer than 0.");
    assertThat(
            parse(minimal().replace("  id: orders", "  id: orders\n  restart:\n    delay: 0s"))
                .pipeline()
                .restartDelay())
        .isZero();
    assertThat(messageOf(minimal() + "coordinator:\n  zookeeper:\n    session-timeout: PT5S\n"))
        .contains(
            "'coordinator.zookeeper.session-timeout' set but 'coordinator.zookeeper.connect' is not");
  }

  @Test
  void valuesOfEveryKindReachTheRecords() {
    ShardbergConfig config =
        parse(
            minimal()
                    .replace(
                        "  id: orders",
                        "  id: orders\n  parallelism: 2\n  writer-parallelism: 3\n  on-stateless-start: RESNAPSHOT")
                    .replace(
                        "    server-id-range: 5400-5403",
                        "    server-id-range: 5400-5403\n    port: 3307\n    jdbc-properties:\n      useSSL: false")
                    .replace(
                        "  table-pattern: 'orders_(?<shard>\\d+)'",
                        "  table-pattern: 'orders_(?<shard>\\d+)'\n  key-columns: tenant_id, id")
                + "  buckets: 3\n  table-properties:\n    write.format.default: orc\n"
                + "coordinator:\n  zookeeper:\n    connect: zk:2181\n    session-timeout: 30s\n");
    assertThat(config.pipeline().writerParallelism()).isEqualTo(3);
    assertThat(config.pipeline().onStatelessStart()).isEqualTo(OnStatelessStart.RESNAPSHOT);
    assertThat(config.sources().get(0).port()).isEqualTo(3307);
    assertThat(config.sources().get(0).jdbcProperties()).isEqualTo(Map.of("useSSL", "false"));
    assertThat(config.tables().keyColumns()).containsExactly("tenant_id", "id");
    assertThat(config.target().buckets()).isEqualTo(3);
    assertThat(config.target().tableProperties()).isEqualTo(Map.of("write.format.default", "orc"));
    assertThat(config.coordinator().zookeeper().sessionTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.coordinator().zookeeper().rootPath()).isEqualTo("/shardberg");
    assertThat(
            messageOf(
                minimal()
                    .replace(
                        "    server-id-range: 5400-5403",
                        "    server-id-range: 5400-5403\n    port: http")))
        .contains("Cannot parse 'sources[0].port' = 'http': expected a whole number.");
  }

  @Test
  void secretLookingPropertiesAreMasked() {
    ShardbergConfig config =
        parse(
            minimal()
                .replace(
                    "    warehouse: file:///tmp/wh",
                    "    warehouse: file:///tmp/wh\n    properties:\n      rest.auth.token: abc123\n      clients: 2"));
    assertThat(config.target().catalog().toString())
        .doesNotContain("abc123")
        .contains("rest.auth.token=******")
        .contains("clients=2");
  }

  @Test
  void maintenanceIsOnByDefaultAndItsKeysReachTheTypedSettings() {
    assertThat(parse(minimal()).maintenance().enabled()).isTrue();
    var settings =
        parse(
                minimal()
                    + """
                    maintenance:
                      interval: 30s
                      compaction:
                        target-file-size: 64mb
                        max-partitions-per-cycle: 3
                      expire-snapshots:
                        max-age: 0s
                        retain-last: 5
                      orphan-files:
                        enabled: false
                    """)
            .maintenance();
    assertThat(settings.interval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(settings.targetFileSizeBytes()).isEqualTo(64L << 20);
    assertThat(settings.maxPartitionsPerCycle()).isEqualTo(3);
    assertThat(settings.snapshotMaxAge()).isZero();
    assertThat(settings.retainLastSnapshots()).isEqualTo(5);
    assertThat(settings.orphanFiles()).isFalse();
    assertThat(settings.compaction()).isTrue();
  }

  @Test
  void aBadMaintenanceValueNamesItsKey() {
    assertThat(messageOf(minimal() + "maintenance:\n  expire-snapshots:\n    retain-last: 0\n"))
        .contains("maintenance.expire-snapshots.retain-last")
        .contains("got 0");
    assertThat(messageOf(minimal() + "maintenance:\n  interval: soon\n"))
        .contains("maintenance.interval")
        .contains("soon");
  }

  @Test
  void closeConcurrencyDefaultsTo8AndIsRefusedBelow1NamingTheKey() {
    assertThat(parse(minimal()).target().closeConcurrency()).isEqualTo(8);
    String withConcurrency =
        minimal().replace("  namespace: shop\n", "  namespace: shop\n  close-concurrency: 32\n");
    assertThat(parse(withConcurrency).target().closeConcurrency()).isEqualTo(32);
    assertThat(messageOf(withConcurrency.replace("close-concurrency: 32", "close-concurrency: 0")))
        .contains("Cannot use 'target.close-concurrency' = 0: it must be at least 1.");
    assertThat(
            messageOf(withConcurrency.replace("close-concurrency: 32", "close-concurrency: many")))
        .contains("Cannot parse 'target.close-concurrency' = 'many': expected a whole number.");
  }
}
