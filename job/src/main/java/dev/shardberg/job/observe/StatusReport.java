package dev.shardberg.job.observe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.job.PipelineStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The lag part of {@code status}: per shard the newest committed change ({@link ShardFreshness}),
 * per host the running job's view of its binlog ({@link HostLag}, when a Flink REST address is
 * given), as text lines after the commit summary or as one JSON document with both.
 *
 * @param hosts null when no REST address was given; {@code hostsError} says why it is empty
 *     otherwise
 */
public record StatusReport(
    PipelineStatus status, List<ShardFreshness> shards, List<HostLag> hosts, String hostsError) {

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  public static StatusReport of(PipelineStatus status, List<HostLag> hosts, String hostsError) {
    return new StatusReport(status, ShardFreshness.of(status.commits()), hosts, hostsError);
  }

  /**
   * Snapshot rows read per shard by the running job (from its hosts' gauges); null without a REST
   * address or a running job. Shards of the plan with no row read yet are absent.
   */
  public Map<Integer, Long> snapshotRowsByShard() {
    if (hosts == null || hosts.isEmpty()) {
      return null;
    }
    Map<Integer, Long> rows = new TreeMap<>();
    hosts.forEach(h -> rows.putAll(h.snapshotRowsByShard()));
    return rows;
  }

  /** The text lines printed after {@link PipelineStatus#render}. */
  public String renderLag() {
    StringBuilder sb = new StringBuilder();
    Map<Integer, Long> snapshotRows = snapshotRowsByShard();
    Set<Integer> shardNumbers = new TreeSet<>();
    shards.forEach(s -> shardNumbers.add(s.shard()));
    if (snapshotRows != null) {
      shardNumbers.addAll(snapshotRows.keySet());
    }
    if (!shardNumbers.isEmpty()) {
      Map<Integer, ShardFreshness> freshness = new HashMap<>();
      shards.forEach(s -> freshness.put(s.shard(), s));
      sb.append(
          String.format(
              "%n  %-6s %-26s %-10s %s%n",
              "shard", "last change committed at", "ago", "snapshot rows read"));
      for (int shard : shardNumbers) {
        ShardFreshness s = freshness.get(shard);
        Instant committed = s == null ? null : s.lastChangeCommitted();
        sb.append(
            String.format(
                "  %-6d %-26s %-10s %s%n",
                shard,
                committed == null ? "-" : committed,
                committed == null
                    ? "-"
                    : Durations.human(Duration.between(committed, status.now())),
                snapshotRows == null ? "-" : snapshotRows.getOrDefault(shard, 0L)));
      }
    }
    if (hosts == null) {
      sb.append(
          String.format(
              "%n  hosts: pass --flink-rest <url> of the running job (a local `run --web-port N`: http://localhost:N)"
                  + " for the binlog lag per host%n"));
    } else if (hosts.isEmpty()) {
      sb.append(
          String.format(
              "%n  hosts: %s%n",
              hostsError == null
                  ? "no running job of this pipeline at the REST address"
                  : hostsError));
    } else {
      sb.append(
          String.format(
              "%n  %-14s %-12s %-26s %14s %12s %14s%n",
              "host",
              "connection",
              "newest change read (written)",
              "last read ago",
              "read lag",
              "snapshot rows"));
      for (HostLag h : hosts) {
        sb.append(
            String.format(
                "  %-14s %-12s %-26s %14s %12s %14d%n",
                h.host(),
                h.connected()
                    + ("unreachable".equals(h.connected())
                        ? " " + h.unreachableMillis() / 1000 + "s"
                        : ""),
                h.newestChangeWritten() == null ? "-" : h.newestChangeWritten(),
                h.sinceLastChangeMillis() < 0
                    ? "-"
                    : Durations.human(Duration.ofMillis(h.sinceLastChangeMillis())),
                h.readLagMillis() < 0 ? "-" : h.readLagMillis() + " ms",
                h.snapshotRows()));
      }
      for (HostLag h : hosts) {
        if (h.droppedShards() > 0) {
          // the running job never removes them; the next resume does with tables.dropped-shards:
          // delete
          sb.append(
              String.format(
                  "  WARNING host %s: %d shard table(s) dropped on MySQL; their rows stay in the table while the job"
                      + " runs, and leave it at the next resume only with tables.dropped-shards: delete (the job's"
                      + " log names them)%n",
                  h.host(), h.droppedShards()));
        }
        if (!h.capturedShards().isEmpty()) {
          // tables.new-shards: capture
          sb.append(
              String.format(
                  "  host %s: shard(s) %s created while the job runs are read from the binlog since their"
                      + " CREATE TABLE (tables.new-shards: capture); the next resume reads them once more"
                      + " from a fresh snapshot%n",
                  h.host(), new java.util.TreeSet<>(h.capturedShards())));
        }
        if (h.unreadShardTables() > 0) {
          // Flink CDC reads only the tables the job was built with
          sb.append(
              String.format(
                  "  WARNING host %s: %d table(s) matching the shard patterns created while the job runs"
                      + " are not read by it; stop the job with a savepoint and resume it with the same"
                      + " config to read them (the job's log names them)%n",
                  h.host(), h.unreadShardTables()));
        }
      }
    }
    return sb.toString();
  }

  /**
   * Everything {@code status} knows, as one JSON document (field names are stable; times ISO-8601
   * UTC).
   */
  public String json() {
    ObjectNode root = JSON.createObjectNode();
    root.put("pipeline", status.pipelineId());
    root.put("table", status.table());
    root.put("now", status.now().toString());
    root.put("committed", status.committed());
    if (status.committed()) {
      CommitRecord last = status.commits().get(0);
      root.put("lastCheckpoint", last.checkpointId());
      root.put("lastCommitAt", Instant.ofEpochMilli(last.timestampMillis()).toString());
      root.put("sinceLastCommitMillis", status.sinceLastCommit().toMillis());
      root.put("commits", status.commits().size());
      root.put("flinkJobId", last.flinkJobId());
    }
    if (status.currentSnapshotRecords() != null) {
      root.put("currentSnapshotRecords", status.currentSnapshotRecords());
    }
    // shards whose rows left the table because their MySQL table was gone (tables.dropped-shards)
    ArrayNode removedArray = root.putArray("removedShards");
    status
        .removedShards()
        .forEach(
            (shard, c) -> {
              ObjectNode n = removedArray.addObject();
              n.put("shard", shard);
              n.put("removedAt", Instant.ofEpochMilli(c.timestampMillis()).toString());
              n.put("checkpoint", c.checkpointId());
            });
    ArrayNode shardArray = root.putArray("shards");
    Map<Integer, Long> snapshotRows = snapshotRowsByShard();
    Set<Integer> listed = new HashSet<>();
    for (ShardFreshness s : shards) {
      listed.add(s.shard());
      ObjectNode n = shardArray.addObject();
      n.put("shard", s.shard());
      n.put("addedRecords", s.addedRecords());
      n.put("deletedRecords", s.deletedRecords());
      n.put("commitsWithChanges", s.commitsWithChanges());
      if (s.lastChangeCommitted() != null) {
        n.put("lastChangeCommittedAt", s.lastChangeCommitted().toString());
        n.put(
            "sinceLastChangeMillis",
            Duration.between(s.lastChangeCommitted(), status.now()).toMillis());
      } else {
        n.putNull("lastChangeCommittedAt");
      }
      putSnapshotRows(n, snapshotRows, s.shard());
    }
    if (snapshotRows != null) {
      // shards being read that have nothing committed yet (the first checkpoint of a snapshot)
      for (Map.Entry<Integer, Long> e : snapshotRows.entrySet()) {
        if (!listed.contains(e.getKey())) {
          ObjectNode n = shardArray.addObject();
          n.put("shard", e.getKey());
          n.put("addedRecords", 0);
          n.put("deletedRecords", 0);
          n.put("commitsWithChanges", 0);
          n.putNull("lastChangeCommittedAt");
          putSnapshotRows(n, snapshotRows, e.getKey());
        }
      }
    }
    if (hosts == null) {
      root.putNull("hosts");
    } else {
      ArrayNode hostArray = root.putArray("hosts");
      for (HostLag h : hosts) {
        ObjectNode n = hostArray.addObject();
        n.put("host", h.host());
        n.put("connection", h.connected());
        n.put("unreachableMillis", h.unreachableMillis());
        if (h.newestChangeWritten() != null) {
          n.put("newestChangeWrittenAt", h.newestChangeWritten().toString());
        } else {
          n.putNull("newestChangeWrittenAt");
        }
        n.put("sinceLastChangeMillis", h.sinceLastChangeMillis());
        n.put("readLagMillis", h.readLagMillis());
        n.put("snapshotRowsRead", h.snapshotRows());
        n.put("droppedShards", h.droppedShards());
        n.put("unreadShardTables", h.unreadShardTables());
        ArrayNode captured = n.putArray("capturedShards");
        new java.util.TreeSet<>(h.capturedShards()).forEach(captured::add);
        if (h.sampledAtMillis() >= 0) {
          n.put("sampledAt", Instant.ofEpochMilli(h.sampledAtMillis()).toString());
        } else {
          n.putNull("sampledAt");
        }
      }
      if (hostsError != null) {
        root.put("hostsError", hostsError);
      }
    }
    try {
      return JSON.writeValueAsString(root) + System.lineSeparator();
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("Cannot render the status as JSON", e);
    }
  }

  private static void putSnapshotRows(ObjectNode n, Map<Integer, Long> snapshotRows, int shard) {
    if (snapshotRows == null) {
      n.putNull("snapshotRowsRead");
    } else {
      n.put("snapshotRowsRead", snapshotRows.getOrDefault(shard, 0L));
    }
  }
}
