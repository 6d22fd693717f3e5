package dev.shardberg.job.observe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.job.PipelineStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The lag part of {@code status}: per shard the newest committed change ({@link ShardFreshness}), per
 * host the running job's view of its binlog ({@link HostLag}, when a Flink REST address is given), as
 * text lines after the commit summary or as one JSON document with both.
 *
 * @param hosts null when no REST address was given; {@code hostsError} says why it is empty otherwise
 */
public record StatusReport(PipelineStatus status, List<ShardFreshness> shards, List<HostLag> hosts, String hostsError) {

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  public static StatusReport of(PipelineStatus status, List<HostLag> hosts, String hostsError) {
    return new StatusReport(status, ShardFreshness.of(status.commits()), hosts, hostsError);
  }

  /** The text lines printed after {@link PipelineStatus#render}. */
  public String renderLag() {
    StringBuilder sb = new StringBuilder();
    if (!shards.isEmpty()) {
      sb.append(String.format("%n  %-6s %-26s %s%n", "shard", "last change committed at", "ago"));
      for (ShardFreshness s : shards) {
        sb.append(String.format("  %-6d %-26s %s%n", s.shard(), s.lastChangeCommitted() == null ? "-" : s.lastChangeCommitted(),
            s.lastChangeCommitted() == null ? "-" : human(Duration.between(s.lastChangeCommitted(), status.now()))));
      }
    }
    if (hosts == null) {
      sb.append(String.format("%n  hosts: pass --flink-rest <url> of the running job (a local `run --web-port N`: http://localhost:N)"
          + " for the binlog lag per host%n"));
    } else if (hosts.isEmpty()) {
      sb.append(String.format("%n  hosts: %s%n", hostsError == null ? "no running job of this pipeline at the REST address" : hostsError));
    } else {
      sb.append(String.format("%n  %-14s %-12s %-26s %14s %12s%n", "host", "connection", "newest change read (written)",
          "last read ago", "read lag"));
      for (HostLag h : hosts) {
        sb.append(String.format("  %-14s %-12s %-26s %14s %12s%n", h.host(),
            h.connected() + ("unreachable".equals(h.connected()) ? " " + h.unreachableMillis() / 1000 + "s" : ""),
            h.newestChangeWritten() == null ? "-" : h.newestChangeWritten(),
            h.sinceLastChangeMillis() < 0 ? "-" : human(Duration.ofMillis(h.sinceLastChangeMillis())),
            h.readLagMillis() < 0 ? "-" : h.readLagMillis() + " ms"));
      }
    }
    return sb.toString();
  }

  /** Everything {@code status} knows, as one JSON document (field names are stable; times ISO-8601 UTC). */
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
    ArrayNode shardArray = root.putArray("shards");
    for (ShardFreshness s : shards) {
      ObjectNode n = shardArray.addObject();
      n.put("shard", s.shard());
      n.put("addedRecords", s.addedRecords());
      n.put("deletedRecords", s.deletedRecords());
      n.put("commitsWithChanges", s.commitsWithChanges());
      if (s.lastChangeCommitted() != null) {
        n.put("lastChangeCommittedAt", s.lastChangeCommitted().toString());
        n.put("sinceLastChangeMillis", Duration.between(s.lastChangeCommitted(), status.now()).toMillis());
      } else {
        n.putNull("lastChangeCommittedAt");
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

  private static String human(Duration d) {
    if (d.toMillis() < 1000) {
      return d.toMillis() + " ms";
    }
    if (d.toSeconds() < 120) {
      return String.format("%.1f s", d.toMillis() / 1000.0);
    }
    if (d.toMinutes() < 120) {
      return d.toMinutes() + " min";
    }
    return d.toHours() + " h";
  }
}
