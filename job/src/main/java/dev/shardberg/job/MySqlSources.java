package dev.shardberg.job;

import dev.shardberg.job.config.ShardbergConfig.CdcConfig;
import dev.shardberg.job.config.ShardbergConfig.SourceConfig;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.tagging.NewShardCapture;
import dev.shardberg.router.tagging.ShardTaggingDeserializer;
import dev.shardberg.router.types.BinlogTime2;
import dev.shardberg.router.types.ExactSnapshotDriver;
import dev.shardberg.router.types.TimeConverter;
import dev.shardberg.router.types.YearConverter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSource;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSourceBuilder;
import org.apache.flink.cdc.connectors.mysql.table.StartupOptions;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.data.RowData;

/**
 * One Flink CDC MySQL source per host: the host's shard tables (and, when the table evolves, the
 * shadow tables of online schema-change tools), Debezium's settings with our exact YEAR/TIME/FLOAT
 * readers, and the shard-tagging deserializer.
 */
final class MySqlSources {
  private MySqlSources() {}

  static MySqlSource<RowData> forHost(
      ShardPlan plan,
      TableLayout layout,
      MySqlHost host,
      SourceConfig source,
      CdcConfig cdc,
      TableSchemaEvolver evolver,
      boolean scanNewlyAddedTables) {
    return forHost(
        plan,
        layout,
        host,
        source,
        cdc,
        evolver,
        scanNewlyAddedTables,
        ShardTaggingDeserializer.forHost(plan, host, layout, evolver));
  }

  /**
   * As above, with its tagger. When the tagger captures new shard tables ({@link
   * ShardTaggingDeserializer#capturing}; {@code tables.new-shards: capture}, the switch off) the
   * source also captures every table of the host matching the shard patterns, so that its binlog
   * reader reads a shard table created while the job runs, and its tagger decides ({@link
   * NewShardCapture}). A row of a table whose definition the reader does not know (one renamed into
   * the patterns) is then skipped with a WARN instead of failing the job (Debezium's {@code
   * inconsistent.schema.handling.mode}); the host watch names such a table as not read.
   */
  static MySqlSource<RowData> forHost(
      ShardPlan plan,
      TableLayout layout,
      MySqlHost host,
      SourceConfig source,
      CdcConfig cdc,
      TableSchemaEvolver evolver,
      boolean scanNewlyAddedTables,
      ShardTaggingDeserializer tagger) {
    NewShardCapture capture = tagger.capture();
    Properties debezium = new Properties();
    if (capture != null) {
      debezium.setProperty("inconsistent.schema.handling.mode", "warn");
    }
    debezium.setProperty("poll.interval.ms", Long.toString(cdc.pollInterval().toMillis()));
    // the binlog client's keep-alive: a silent connection is reconnected after this, and the
    // server's heartbeat period is 0.8 x this (Debezium's default, 60 s, left a restarted host
    // silent for minutes)
    debezium.setProperty(
        "connect.keep.alive.interval.ms", Long.toString(cdc.keepAliveInterval().toMillis()));
    debezium.putAll(cdc.debeziumProperties());
    // YEAR 0000 stays 0, TIME is exact signed microseconds in both phases (docs/type-mapping.md)
    List<String> converters = new ArrayList<>();
    String userConverters = debezium.getProperty("converters");
    if (userConverters != null && !userConverters.isBlank()) {
      converters.add(userConverters);
    }
    for (Map<String, String> ours :
        List.of(YearConverter.DEBEZIUM_PROPERTIES, TimeConverter.DEBEZIUM_PROPERTIES)) {
      debezium.putAll(ours);
      converters.add(ours.get("converters"));
    }
    debezium.setProperty("converters", String.join(",", converters));
    // the snapshot reads FLOAT and TIME exactly (ExactSnapshotDriver, docs/sources.md); the config
    // refuses an override
    debezium.putAll(ExactSnapshotDriver.DEBEZIUM_PROPERTIES);
    // the binlog reads TIME exactly through shard-router's row deserializers: refuse a class path
    // without them
    BinlogTime2.requireInstalled();
    Properties jdbc = new Properties();
    jdbc.putAll(host.jdbcProperties());
    MySqlSourceBuilder<RowData> builder = MySqlSource.<RowData>builder();
    String chunkKey = chunkKeyColumn(plan, layout);
    if (chunkKey != null) {
      for (ShardTable t : plan.tablesOf(host.name())) {
        // Flink CDC matches these names as regexes, like the table list
        String db = ShardTaggingDeserializer.escapeRegex(t.database());
        builder.chunkKeyColumn(
            new ObjectPath(db, ShardTaggingDeserializer.escapeRegex(t.table())), chunkKey);
        if (evolver != null) { // the shadow tables of online schema-change tools (captureListOf)
          ShardTaggingDeserializer.shadowTablePatterns(t)
              .forEach(shadow -> builder.chunkKeyColumn(new ObjectPath(db, shadow), chunkKey));
        }
      }
    }
    String[] databases = ShardTaggingDeserializer.databaseListOf(plan, host.name());
    String[] tables = // when evolving, with the shadow tables of gh-ost / pt-osc
        evolver != null
            ? ShardTaggingDeserializer.captureListOf(plan, host.name())
            : ShardTaggingDeserializer.tableListOf(plan, host.name());
    if (capture != null) {
      // every table matching the patterns, in any database matching its pattern (a CREATE
      // DATABASE too); Debezium splits the lists at commas not escaped
      LogicalTableSpec spec = capture.spec();
      databases = append(databases, escapeCommas(spec.databasePattern()));
      tables =
          append(
              tables,
              escapeCommas(
                  ShardTaggingDeserializer.capturePatternOf(
                      spec.databasePattern(), spec.tablePattern())));
    }
    return builder
        .hostname(host.hostname())
        .port(host.port())
        .databaseList(databases)
        .tableList(tables)
        .username(host.user())
        .password(host.password().reveal())
        .serverId(source.serverIds().toString())
        .serverTimeZone(cdc.serverTimeZone())
        .startupOptions(startupOptions(cdc))
        // only while shards are left out or read again: a restored source then drops the tables no
        // longer listed and reads the ones listed again from a fresh snapshot while the others go
        // on from their binlog position. Not always: it would also snapshot a shadow table of an
        // online schema change that exists at the restore (and fail when the cut-over renames it
        // away)
        .scanNewlyAddedTableEnabled(scanNewlyAddedTables)
        .splitSize(cdc.snapshotChunkSize())
        .fetchSize(cdc.fetchSize())
        .connectionPoolSize(cdc.connectionPoolSize())
        .connectTimeout(cdc.connectTimeout())
        .heartbeatInterval(cdc.heartbeatInterval())
        .debeziumProperties(debezium)
        .jdbcProperties(jdbc)
        // DDL reaches the tagger: evolve the table, or stop (schema.change-behavior)
        .includeSchemaChanges(true)
        // MySQL 8 binary JSON: the binlog renders a document as MySQL's snapshot text does
        // (FLINK-36578)
        .useLegacyJsonFormat(false)
        // the host: to read a shard's columns in flight
        .deserializer(tagger)
        .build();
  }

  private static String[] append(String[] list, String entry) {
    String[] longer = java.util.Arrays.copyOf(list, list.length + 1);
    longer[list.length] = entry;
    return longer;
  }

  private static String escapeCommas(String regex) {
    return regex.replace(",", "\\,");
  }

  /**
   * The snapshot chunk key for tables without a primary key (null when they have one: Flink CDC
   * then splits by its first column). Flink CDC takes one column: the bucket column, which is a key
   * column (the key is a UNIQUE index with NOT NULL columns) and, unless configured, the one with
   * the most distinct values when the table was created. It is fixed by the table's spec from then
   * on, so a restore never meets splits of another column.
   */
  static String chunkKeyColumn(ShardPlan plan, TableLayout layout) {
    return plan.schema().tablePrimaryKey().isEmpty() ? layout.keyColumn() : null;
  }

  private static StartupOptions startupOptions(CdcConfig cdc) {
    return switch (cdc.startupMode()) {
      case INITIAL -> StartupOptions.initial();
      case LATEST -> StartupOptions.latest();
      case TIMESTAMP -> StartupOptions.timestamp(cdc.startupTimestamp().toEpochMilli());
    };
  }
}
