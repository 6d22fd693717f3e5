package dev.shardberg.router.tagging;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.schema.TableSchemaEvolver;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Struct;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard's {@code TRUNCATE TABLE} in the evolving layout: one truncate marker per bucket, or a
 * stop when it cannot be told apart from the shard's snapshot (which needs to know when this
 * instance emitted each shard's last snapshot row).
 */
final class ShardTruncation {
  /** Logs as the evolving layout did before this class was split out of it: the lines stay. */
  private static final Logger LOG = LoggerFactory.getLogger(EvolvingLayout.class);

  private static final Pattern TRUNCATE =
      Pattern.compile(
          "^\\s*(/\\*.*?\\*/\\s*)*truncate\\b", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  /**
   * How far the TRUNCATE's binlog event time must lie past the shard's last snapshot row: binlog
   * times are whole seconds (up to 1 s early), plus 1 s for the clocks of the MySQL host and the
   * task manager.
   */
  static final long SNAPSHOT_TRUNCATE_MARGIN_MS = 2_000;

  private final HostShards shards;
  private final TableSchemaEvolver evolver;

  /**
   * Per shard, when this instance emitted its last snapshot row (wall clock): a TRUNCATE whose
   * binlog event time is not clearly after it happened during the shard's snapshot, and stops the
   * job.
   */
  private final Map<Integer, Long> lastSnapshotRowMillis = new HashMap<>();

  ShardTruncation(HostShards shards, TableSchemaEvolver evolver) {
    this.shards = shards;
    this.evolver = evolver;
  }

  /** True when {@code ddl} is a {@code TRUNCATE} (behind any leading comments). */
  static boolean isTruncate(String ddl) {
    return TRUNCATE.matcher(ddl).find();
  }

  /** Notes that this instance emits a snapshot row of {@code shard} now. */
  void snapshotRowEmitted(int shard) {
    lastSnapshotRowMillis.put(shard, System.currentTimeMillis());
  }

  /**
   * {@code TRUNCATE TABLE} of a shard: its rows leave the table at this point of the stream. One
   * marker per bucket ({@link VersionedRows#truncateMarker}) reaches the writer of each of the
   * shard's partitions in order with that partition's rows; the writer drops what it wrote of the
   * partition in this checkpoint and deletes the rest with the checkpoint's commit, so rows written
   * after the TRUNCATE stay. A TRUNCATE replayed after a restore deletes the same rows again, and
   * the rows written after it are replayed too.
   *
   * <p>Not during the shard's snapshot: Flink CDC emits a DDL read in the binlog while the shard's
   * chunks were being read whatever chunk it came before or after (it filters only row events by
   * the chunks' high watermarks), so some snapshot rows may predate the TRUNCATE and others already
   * reflect it. Deleting them all would lose rows, keeping them all could keep removed ones: the
   * job stops. A chunk's high watermark is read before its rows are emitted, so a TRUNCATE whose
   * binlog event time lies after the shard's last snapshot row came after every chunk of it. (Seen
   * only by the instance that read the snapshot: a failover between the end of the snapshot and the
   * TRUNCATE's record loses that knowledge; docs/schema-evolution.md says so.)
   */
  void truncate(
      Struct value, String ddl, String database, Collector<RowData> out, long eventMillis) {
    Struct source = value.schema().field("source") == null ? null : value.getStruct("source");
    String table =
        source == null || source.schema().field("table") == null ? null : source.getString("table");
    String db =
        source == null || source.schema().field("db") == null ? database : source.getString("db");
    if (table == null) {
      throw new ShardRouterException(
          String.format(
              "Cannot replicate '%s' on host '%s' (database '%s'): the record does not say which table was truncated,"
                  + " so the rows of that shard cannot be removed. The job stops here; re-read the shard"
                  + " (docs/schema-evolution.md, 'When the job stops')",
              ddl, shards.hostName(), database));
    }
    String qualified = db + "." + table;
    Integer shard = shards.shardByTable().get(qualified);
    if (shard == null) {
      LOG.debug("TRUNCATE on host '{}' of a table outside the plan: '{}'", shards.hostName(), ddl);
      return;
    }
    String where =
        String.format("shard %d ('%s' on host '%s')", shard, qualified, shards.hostName());
    Long lastSnapshotRow = lastSnapshotRowMillis.get(shard);
    // binlog event times are whole seconds: "after the last snapshot row" needs a margin past it
    if (lastSnapshotRow != null
        && (eventMillis < 0 || eventMillis <= lastSnapshotRow + SNAPSHOT_TRUNCATE_MARGIN_MS)) {
      throw new ShardRouterException(
          String.format(
              "Cannot replicate '%s' on %s: the TRUNCATE happened while this job was reading the shard's snapshot, so"
                  + " some of the rows read may predate it and others not; the job stops rather than lose or keep"
                  + " rows wrongly. Re-read this shard alone (docs/schema-evolution.md, 'Re-reading one shard')",
              ddl, where));
    }
    for (int bucket = 0; bucket < shards.buckets(); bucket++) {
      out.collect(VersionedRows.truncateMarker(shard, bucket));
    }
    LOG.info(
        "TRUNCATE on {}: its rows leave table {} with the checkpoint that holds this point of the binlog ('{}')",
        where,
        evolver.tableName(),
        ddl);
  }
}
