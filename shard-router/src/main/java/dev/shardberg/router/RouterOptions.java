package dev.shardberg.router;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * The config keys of what this module owns: the MySQL hosts ({@code sources[].*}, read by {@link
 * dev.shardberg.router.discovery.MySqlHost} and discovery), which tables are shards ({@code
 * tables.*}, {@link dev.shardberg.router.discovery.LogicalTableSpec}), the binlog format watch, and
 * the layout of the Iceberg table ({@code target.buckets}, {@code target.key-column}, {@code
 * target.table-properties}, {@link dev.shardberg.router.schema.TableLayout}). Each key is declared
 * once, here; messages name it with {@code key()}, defaults are read with {@code defaultValue()}.
 *
 * <p>{@code sources} is a list of hosts: each entry is read as its own {@code Configuration} whose
 * keys are the {@code sources[].*} keys below ({@code sources[1].host} in messages about the second
 * entry). To add a key: declare it here and list it in the job's {@code ShardbergOptions.all()}.
 */
public final class RouterOptions {
  private RouterOptions() {}

  // ---- sources: one entry per MySQL host -----------------------------------------------------
  public static final ConfigOption<List<Map<String, String>>> SOURCES =
      ConfigOptions.key("sources")
          .mapType()
          .asList()
          .noDefaultValue()
          .withDescription(
              "The MySQL hosts holding the shards, one entry per host (one binlog = one CDC source).");

  /** Prefix of the keys of one {@link #SOURCES} entry. */
  public static final String SOURCE_PREFIX = "sources[].";

  public static final ConfigOption<String> SOURCE_NAME =
      ConfigOptions.key(SOURCE_PREFIX + "name")
          .stringType()
          .noDefaultValue()
          .withDescription("Short unique name of the host; used in operator uids and messages.");
  public static final ConfigOption<String> SOURCE_HOST =
      ConfigOptions.key(SOURCE_PREFIX + "host")
          .stringType()
          .noDefaultValue()
          .withDescription("Hostname or IP of the MySQL server.");
  public static final ConfigOption<Integer> SOURCE_PORT =
      ConfigOptions.key(SOURCE_PREFIX + "port")
          .intType()
          .defaultValue(3306)
          .withDescription("MySQL port.");
  public static final ConfigOption<String> SOURCE_USER =
      ConfigOptions.key(SOURCE_PREFIX + "user")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "MySQL user; needs SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT,"
                  + " LOCK TABLES.");
  public static final ConfigOption<String> SOURCE_PASSWORD_ENV =
      ConfigOptions.key(SOURCE_PREFIX + "password-env")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Name of the environment variable holding the password. Exactly one of password-env and"
                  + " password-file. Passwords never go into the config file itself.");
  public static final ConfigOption<String> SOURCE_PASSWORD_FILE =
      ConfigOptions.key(SOURCE_PREFIX + "password-file")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Path of a file holding the password (first line, surrounding whitespace stripped).");
  public static final ConfigOption<Map<String, String>> SOURCE_JDBC_PROPERTIES =
      ConfigOptions.key(SOURCE_PREFIX + "jdbc-properties")
          .mapType()
          .defaultValue(Map.of())
          .withDescription(
              "Extra JDBC properties for discovery and the CDC source, e.g. useSSL / sslMode / trustCertificateKeyStoreUrl.");
  public static final ConfigOption<String> SOURCE_SERVER_ID_RANGE =
      ConfigOptions.key(SOURCE_PREFIX + "server-id-range")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Binlog client server ids of this host's source, 'FIRST-LAST' (e.g. 5400-5403): at least"
                  + " pipeline.parallelism ids, unique among all clients of that MySQL server, not"
                  + " overlapping any other source's range.");

  // ---- tables: which tables are shards, and their numbers ------------------------------------
  public static final ConfigOption<String> TABLES_DATABASE_PATTERN =
      ConfigOptions.key("tables.database-pattern")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Java regex (anchored: must match the whole name) of the databases holding shards. May carry"
                  + " the shard number as named group (?<shard>\\d+).");
  public static final ConfigOption<String> TABLES_TABLE_PATTERN =
      ConfigOptions.key("tables.table-pattern")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Java regex (anchored) of the shard tables. May carry the shard number as named group"
                  + " (?<shard>\\d+).");
  public static final ConfigOption<Map<String, String>> TABLES_SHARD_MAP =
      ConfigOptions.key("tables.shard-map")
          .mapType()
          .defaultValue(Map.of())
          .withDescription(
              "Explicit shard numbers, 'database.table: number', used instead of a (?<shard>...) group.");
  public static final ConfigOption<List<String>> TABLES_KEY_COLUMNS =
      ConfigOptions.key("tables.key-columns")
          .stringType()
          .asList()
          .defaultValues()
          .withDescription(
              "Key columns to use instead of the primary key (required for tables without one): the"
                  + " columns of the primary key or of a UNIQUE index whose columns are all NOT NULL, on"
                  + " every shard; anything else is refused (it could merge distinct rows).");

  public static final ConfigOption<List<Integer>> TABLES_EXCLUDE_SHARDS =
      ConfigOptions.key("tables.exclude-shards")
          .intType()
          .asList()
          .defaultValues()
          .withDescription(
              "Shard numbers the job leaves out: not read, not checked against the others; their rows in the"
                  + " table stay as they are. Resumed from a checkpoint, the job drops their read position;"
                  + " removed from this list again later, each is read from a fresh snapshot (its old rows"
                  + " replaced) while the other shards go on from their position. The way past a change on"
                  + " one shard that the table cannot follow (docs/schema-evolution.md, 'Re-reading one shard').");
  public static final ConfigOption<List<Integer>> TABLES_REREAD_SHARDS =
      ConfigOptions.key("tables.reread-shards")
          .intType()
          .asList()
          .defaultValues()
          .withDescription(
              "Shard numbers to read from a fresh snapshot when the job resumes from a checkpoint whose state does"
                  + " not know them, in the startup modes latest and timestamp. In the initial mode (the default) it is"
                  + " not needed: a shard new to the restored state (created while the job was stopped, or included"
                  + " again after tables.exclude-shards) is read alone from a fresh snapshot by itself, its old rows"
                  + " replaced, the other shards going on from their position (docs/shard-fleet.md).");

  public static final ConfigOption<DroppedShards> TABLES_DROPPED_SHARDS =
      ConfigOptions.key("tables.dropped-shards")
          .enumType(DroppedShards.class)
          .defaultValue(DroppedShards.KEEP)
          .withDescription(
              "What happens to the rows of a shard whose MySQL table is gone, at the resume that no longer"
                  + " finds it: dropped while the job was stopped, dropped while it ran (the running job keeps"
                  + " the rows either way; the host watch WARNs within 30 s), or on a host removed from the"
                  + " config. keep: the rows stay (an INFO naming the shards at the resume). delete: they leave"
                  + " the table in one commit with the resumed run's first checkpoint; status lists the shards"
                  + " removed and when. Shards left out with tables.exclude-shards are never deleted. With"
                  + " target.delete-mode position the shard's files leave the table (docs/shard-fleet.md).");

  public static final ConfigOption<NewShards> TABLES_NEW_SHARDS =
      ConfigOptions.key("tables.new-shards")
          .enumType(NewShards.class)
          .defaultValue(NewShards.CAPTURE)
          .withDescription(
              "What happens to a shard table that appears on a host while the job runs (a CREATE TABLE"
                  + " matching the patterns, a table renamed into them, CREATE TABLE ... SELECT). capture"
                  + " (the default): the running job reads a table created by CREATE TABLE (also ... LIKE, ... SELECT, in a"
                  + " new database) from the binlog, from its CREATE TABLE on, without a savepoint or a"
                  + " restart, under any deployment; a number that clashes with a shard's, or columns that"
                  + " differ, stop the job naming both tables or the column. What it cannot read that way (a"
                  + " table renamed into the patterns already holding rows) is adopted as with adopt. adopt:"
                  + " a local run (bin/shardberg run) or an attached flink run (without -d: its client stays)"
                  + " takes a savepoint within tables.discovery-interval and resumes from it (under flink"
                  + " run: submits the job again) with the new shard, read alone from a fresh snapshot while"
                  + " the other shards go on from their binlog position; a clash stops the run with a"
                  + " savepoint. warn: the run only warns, and the next resume reads it. A detached flink run"
                  + " (-d) or an application-mode deployment adopts nothing (docs/shard-fleet.md).");
  public static final ConfigOption<Duration> TABLES_DISCOVERY_INTERVAL =
      ConfigOptions.key("tables.discovery-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(30))
          .withDescription(
              "How often a local run lists every host's tables matching the patterns (as at its start) to"
                  + " find shard tables created while it runs (tables.new-shards).");

  // ---- source: the binlog format watch --------------------------------------------------------
  public static final ConfigOption<Duration> SOURCE_BINLOG_FORMAT_CHECK_INTERVAL =
      ConfigOptions.key("source.binlog-format-check-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(10))
          .withDescription(
              "How often the job reads @@GLOBAL.binlog_format and @@GLOBAL.binlog_row_image of every host;"
                  + " anything but ROW / FULL stops the job for good, naming the host (changes logged in another"
                  + " format would be skipped). A SESSION-level change on one connection is not seen.");

  public static final ConfigOption<Duration> SOURCE_HEALTH_CHECK_INTERVAL =
      ConfigOptions.key("source.health-check-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(2))
          .withDescription(
              "How often the job probes every MySQL host (SELECT 1 on its own connection): a host that stops answering"
                  + " is logged at once (WARN, naming it), its return with the gap (INFO).");
  public static final ConfigOption<Duration> SOURCE_UNREACHABLE_TIMEOUT =
      ConfigOptions.key("source.unreachable-timeout")
          .durationType()
          .defaultValue(Duration.ofMinutes(10))
          .withDescription(
              "A host that has not answered the probes for this long fails the job, naming the host, instead of"
                  + " stalling its shards silently (counted again from each job restart).");

  // ---- schema changes on the shards (SchemaEvolution) -----------------------------------------
  public static final ConfigOption<SchemaChangeBehavior> SCHEMA_CHANGE_BEHAVIOR =
      ConfigOptions.key("schema.change-behavior")
          .enumType(SchemaChangeBehavior.class)
          .defaultValue(SchemaChangeBehavior.EVOLVE)
          .withDescription(
              "What a schema change (DDL) on a shard does. evolve: the table follows the shards in flight"
                  + " (new columns added optional, types widened, dropped columns kept optional; DDL that"
                  + " changes no column is ignored; a change Iceberg cannot take stops the job at once);"
                  + " fail: any DDL stops the job at once, naming shard and DDL. Rules in"
                  + " docs/schema-evolution.md.");

  // ---- target: the layout of the Iceberg table (TableLayout) -----------------------------------
  public static final ConfigOption<Integer> TARGET_BUCKETS =
      ConfigOptions.key("target.buckets")
          .intType()
          .defaultValue(5)
          .withDescription(
              "Buckets of the key column in the partition spec (identity(shard_number), bucket(B, key)),"
                  + " fixed when the table is created. Every checkpoint writes a data and a key-delete"
                  + " file per changed partition: with many shards and few changes per checkpoint, use"
                  + " fewer buckets (measured: 1 at 256 shards and 500 changes/s, docs/performance.md).");
  public static final ConfigOption<String> TARGET_KEY_COLUMN =
      ConfigOptions.key("target.key-column")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Key column to bucket by. Unset: for an existing table the column of its partition spec,"
                  + " else the key column with the most distinct values in a sample of the shards"
                  + " (`validate` prints the choice).");
  public static final ConfigOption<Map<String, String>> TARGET_TABLE_PROPERTIES =
      ConfigOptions.key("target.table-properties")
          .mapType()
          .defaultValue(Map.of())
          .withDescription(
              "Iceberg table properties overriding Shardberg's defaults (write.upsert.enabled=true,"
                  + " parquet + zstd, 64 KiB Parquet pages, commit retries …) when the table is created.");

  /** {@code sources[i].<key>}: a {@code sources[].*} key as it names the entry at {@code index}. */
  public static String sourceKey(ConfigOption<?> option, int index) {
    return option.key().replace("[]", "[" + index + "]");
  }
}
