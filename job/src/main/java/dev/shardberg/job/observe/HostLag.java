package dev.shardberg.job.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Per MySQL host, what the running job's host watch reports (its gauges, read through Flink's REST
 * API of the cluster or of a local {@code run --web-port}): reachable or not and for how long, the
 * binlog time of the newest change read, how long ago it was read and how far behind the binlog it
 * was. Flink's REST layer caches metrics (10 s by default), so the figures are at most that old.
 *
 * @param connected "reachable", "unreachable" or "unknown"
 * @param newestChangeWritten binlog timestamp of the newest change read; null before the first
 * @param sinceLastChangeMillis time since a change was last read; -1 before the first
 * @param readLagMillis how long after it was written the newest change was read; -1 before the
 *     first
 * @param snapshotRows rows of the initial snapshot read from this host so far (sum over subtasks)
 * @param snapshotRowsByShard the same per shard number; a shard absent has no snapshot row read yet
 * @param droppedShards shards of the host whose MySQL table is gone while the job runs (their rows
 *     stay in the table until the next resume, which removes them with {@code
 *     tables.dropped-shards: delete})
 * @param unreadShardTables tables of the host that match the shard patterns but are not read by
 *     this run (created while it runs; the next resume reads them)
 * @param binlogPhase 1 when the host's source reads its binlog and no snapshot (every snapshot
 *     split done, no table new to a restored state being read), 0 while a snapshot is read, -1 when
 *     the job does not say (a startup mode without snapshot)
 * @param sampledAtMillis when the job read these gauges (epoch ms), which is when the figures above
 *     were true; -1 when the job does not say (the REST API answers from its cache of the job's
 *     metrics)
 * @param capturedShards shard numbers of tables the job reads from the binlog since it saw them
 *     created ({@code tables.new-shards: capture}; gauges {@code host.<name>.shard.<n>.captured})
 */
public record HostLag(
    String host,
    String connected,
    long unreachableMillis,
    Instant newestChangeWritten,
    long sinceLastChangeMillis,
    long readLagMillis,
    long snapshotRows,
    Map<Integer, Long> snapshotRowsByShard,
    long droppedShards,
    long unreadShardTables,
    long sampledAtMillis,
    long binlogPhase,
    java.util.Set<Integer> capturedShards) {

  public HostLag {
    capturedShards =
        capturedShards == null ? java.util.Set.of() : java.util.Set.copyOf(capturedShards);
  }

  /** A reading without captured shards. */
  public HostLag(
      String host,
      String connected,
      long unreachableMillis,
      Instant newestChangeWritten,
      long sinceLastChangeMillis,
      long readLagMillis,
      long snapshotRows,
      Map<Integer, Long> snapshotRowsByShard,
      long droppedShards,
      long unreadShardTables,
      long sampledAtMillis,
      long binlogPhase) {
    this(
        host,
        connected,
        unreachableMillis,
        newestChangeWritten,
        sinceLastChangeMillis,
        readLagMillis,
        snapshotRows,
        snapshotRowsByShard,
        droppedShards,
        unreadShardTables,
        sampledAtMillis,
        binlogPhase,
        java.util.Set.of());
  }

  /** A reading without the source's phase (-1: not said). */
  public HostLag(
      String host,
      String connected,
      long unreachableMillis,
      Instant newestChangeWritten,
      long sinceLastChangeMillis,
      long readLagMillis,
      long snapshotRows,
      Map<Integer, Long> snapshotRowsByShard,
      long droppedShards,
      long unreadShardTables,
      long sampledAtMillis) {
    this(
        host,
        connected,
        unreachableMillis,
        newestChangeWritten,
        sinceLastChangeMillis,
        readLagMillis,
        snapshotRows,
        snapshotRowsByShard,
        droppedShards,
        unreadShardTables,
        sampledAtMillis,
        -1);
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> GAUGES =
      List.of(
          "connected",
          "unreachableMillis",
          "lastEventTime",
          "millisSinceLastEvent",
          "eventTimeLag",
          "droppedShards",
          "unreadShardTables",
          "sampledAt",
          "binlogPhase");

  /**
   * Metric ids per REST request: Flink's REST server limits the request line (4 KiB by default).
   */
  private static final int IDS_PER_REQUEST = 30;

  /**
   * The host lines of the running job of {@code pipelineId} at {@code restUrl}; empty when no job
   * of that pipeline is running there.
   */
  public static List<HostLag> read(String restUrl, String pipelineId) throws IOException {
    Rest rest = new Rest(restUrl);
    String prefix = "shardberg " + pipelineId + " \u2192 ";
    String jobId = null;
    for (JsonNode job : rest.get("/jobs/overview").path("jobs")) {
      if (job.path("name").asText().startsWith(prefix)
          && "RUNNING".equals(job.path("state").asText())) {
        jobId = job.path("jid").asText();
      }
    }
    List<HostLag> hosts = new ArrayList<>();
    if (jobId == null) {
      return hosts;
    }
    for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
      String name = vertex.path("name").asText();
      int at = name.indexOf("Host watch ");
      if (at < 0) {
        continue;
      }
      String host = name.substring(at + "Host watch ".length()).split(" ")[0];
      String base =
          "/jobs/" + jobId + "/vertices/" + vertex.path("id").asText() + "/subtasks/metrics";
      // the ids end in host.<name>.<gauge> and host.<name>.shard.<n>.snapshotRows; the operator
      // part
      // of the id is Flink's business
      Map<String, String> idOf = new HashMap<>();
      Map<String, Integer> shardOf = new HashMap<>();
      java.util.Set<Integer> captured = new java.util.TreeSet<>();
      Pattern capturedGauge =
          Pattern.compile(".*\\.host\\." + Pattern.quote(host) + "\\.shard\\.(\\d+)\\.captured$");
      Pattern shardGauge =
          Pattern.compile(
              ".*\\.host\\." + Pattern.quote(host) + "\\.shard\\.(\\d+)\\.snapshotRows$");
      for (JsonNode metric : rest.get(base)) {
        String id = metric.path("id").asText();
        for (String gauge : GAUGES) {
          if (id.endsWith(".host." + host + "." + gauge)) {
            idOf.put(id, gauge);
          }
        }
        if (id.endsWith(".host." + host + ".snapshotRows")) {
          idOf.put(id, "snapshotRows");
        }
        Matcher c = capturedGauge.matcher(id);
        if (c.matches()) {
          captured.add(Integer.parseInt(c.group(1)));
        }
        Matcher m = shardGauge.matcher(id);
        if (m.matches()) {
          shardOf.put(id, Integer.parseInt(m.group(1)));
        }
      }
      if (idOf.isEmpty()) {
        continue;
      }
      // max over subtasks for the host's state (only subtask 0 probes, the binlog is read by one
      // subtask); sum for the snapshot rows (chunks are read by all subtasks)
      Map<String, Double> values = new HashMap<>();
      for (JsonNode metric :
          rest.get(
              base
                  + "?agg=max,sum&get="
                  + URLEncoder.encode(String.join(",", idOf.keySet()), StandardCharsets.UTF_8))) {
        String gauge = idOf.get(metric.path("id").asText());
        if (gauge != null) {
          values.put(gauge, metric.path("snapshotRows".equals(gauge) ? "sum" : "max").asDouble());
        }
      }
      Map<Integer, Long> byShard = new TreeMap<>();
      List<String> shardIds = new ArrayList<>(shardOf.keySet());
      for (int from = 0; from < shardIds.size(); from += IDS_PER_REQUEST) {
        String ids =
            String.join(
                ",", shardIds.subList(from, Math.min(shardIds.size(), from + IDS_PER_REQUEST)));
        for (JsonNode metric :
            rest.get(base + "?agg=sum&get=" + URLEncoder.encode(ids, StandardCharsets.UTF_8))) {
          Integer shard = shardOf.get(metric.path("id").asText());
          if (shard != null) {
            byShard.put(shard, Math.round(metric.path("sum").asDouble()));
          }
        }
      }
      long connected = Math.round(values.getOrDefault("connected", -1.0));
      long lastEvent = Math.round(values.getOrDefault("lastEventTime", -1.0));
      hosts.add(
          new HostLag(
              host,
              connected == 1 ? "reachable" : connected == 0 ? "unreachable" : "unknown",
              Math.round(values.getOrDefault("unreachableMillis", 0.0)),
              lastEvent > 0 ? Instant.ofEpochMilli(lastEvent) : null,
              Math.round(values.getOrDefault("millisSinceLastEvent", -1.0)),
              Math.round(values.getOrDefault("eventTimeLag", -1.0)),
              Math.round(values.getOrDefault("snapshotRows", 0.0)),
              byShard,
              Math.round(values.getOrDefault("droppedShards", 0.0)),
              Math.round(values.getOrDefault("unreadShardTables", 0.0)),
              Math.round(values.getOrDefault("sampledAt", -1.0)),
              Math.round(values.getOrDefault("binlogPhase", -1.0)),
              captured));
    }
    return hosts;
  }

  /**
   * This host on the console's progress line at {@code now}: "a reachable lag 120 ms", "b
   * unreachable for 14 s". An unreachable host shows no lag: that is the lag of the last change
   * read before the outage, not of now. A reading taken before {@code notBefore} (the moment the
   * line was asked for: the REST API answered from its cache) counts the outage until {@code now}
   * and says how old it is.
   */
  public String describe(Instant now, Instant notBefore) {
    long age = sampledAtMillis < 0 ? 0 : Math.max(0, now.toEpochMilli() - sampledAtMillis);
    StringBuilder sb = new StringBuilder(host).append(' ').append(connected);
    if ("unreachable".equals(connected)) {
      long down = unreachableMillis + age;
      sb.append(" for ").append(down < 120_000 ? down / 1000 + " s" : down / 60_000 + " min");
    } else if (readLagMillis >= 0) {
      sb.append(" lag ").append(readLagMillis).append(" ms");
    }
    if (sampledAtMillis >= 0 && sampledAtMillis < notBefore.toEpochMilli()) {
      sb.append(String.format(" (as of %.1f s ago)", age / 1000.0));
    }
    return sb.toString();
  }

  /**
   * Whether every host's reading was taken at or after {@code notBefore} (a job that does not say
   * counts as yes).
   */
  public static boolean sampledSince(List<HostLag> hosts, Instant notBefore) {
    return hosts.stream()
        .allMatch(h -> h.sampledAtMillis() < 0 || h.sampledAtMillis() >= notBefore.toEpochMilli());
  }

  private record Rest(String base) {
    private static final HttpClient HTTP =
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    Rest {
      base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
    }

    JsonNode get(String path) throws IOException {
      try {
        HttpResponse<String> response =
            HTTP.send(
                HttpRequest.newBuilder(URI.create(base + path))
                    .timeout(Duration.ofSeconds(10))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
          throw new IOException(
              "Flink REST "
                  + base
                  + path
                  + " answered "
                  + response.statusCode()
                  + ": "
                  + response.body());
        }
        return JSON.readTree(response.body());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("Interrupted while reading " + base + path, e);
      }
    }
  }
}
