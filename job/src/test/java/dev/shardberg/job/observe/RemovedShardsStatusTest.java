package dev.shardberg.job.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.shardberg.coordinator.CommitRecord;
import dev.shardberg.coordinator.ShardCounts;
import dev.shardberg.job.PipelineStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@code status} and {@code tables.dropped-shards} (docs/shard-fleet.md): the shards a resume
 * removed, each with its newest removal, and a shard dropped while the job runs, whose rows stay
 * until the next resume.
 */
class RemovedShardsStatusTest {
  private static CommitRecord commit(long checkpoint, long millis, Map<Integer, ShardCounts> c) {
    return new CommitRecord(checkpoint, checkpoint, 1, millis, "job", false, new TreeMap<>(c));
  }

  private static final PipelineStatus STATUS =
      new PipelineStatus(
          "p",
          "cat.db.t",
          // newest first: shard 1 removed twice (the later time counts), shard 3 once
          List.of(
              commit(9, 90_000, Map.of(0, new ShardCounts(2, 0), 1, ShardCounts.REMOVED)),
              commit(5, 50_000, Map.of(3, ShardCounts.REMOVED)),
              commit(4, 40_000, Map.of(1, ShardCounts.REMOVED, 0, new ShardCounts(1, 0)))),
          new TreeMap<>(),
          3L,
          Instant.ofEpochMilli(95_000));

  @Test
  void statusListsEachRemovedShardWithItsNewestRemoval() throws Exception {
    assertThat(STATUS.removedShards()).containsOnlyKeys(1, 3);
    assertThat(STATUS.removedShards().get(1).checkpointId()).isEqualTo(9);
    assertThat(STATUS.render(0))
        .contains("shards removed (their MySQL table gone; tables.dropped-shards: delete):")
        .contains("    shard 1      every row removed at 1970-01-01T00:01:30Z (checkpoint 9)")
        .contains("    shard 3      every row removed at 1970-01-01T00:00:50Z (checkpoint 5)");
    JsonNode removed =
        new ObjectMapper()
            .readTree(StatusReport.of(STATUS, null, null).json())
            .path("removedShards");
    assertThat(removed).hasSize(2);
    assertThat(removed.get(0).path("shard").asInt()).isEqualTo(1);
    assertThat(removed.get(0).path("removedAt").asText()).isEqualTo("1970-01-01T00:01:30Z");
    assertThat(removed.get(0).path("checkpoint").asLong()).isEqualTo(9);
    assertThat(removed.get(1).path("shard").asInt()).isEqualTo(3);
  }

  @Test
  void aShardDroppedWhileTheJobRunsIsAWarningItsRowsStayUntilTheNextResume() {
    HostLag host =
        new HostLag(
            "b", "reachable", 0, Instant.ofEpochMilli(94_000), 1_000, 20, 0, Map.of(), 1, 0, -1);
    assertThat(StatusReport.of(STATUS, List.of(host), null).renderLag())
        .contains(
            "  WARNING host b: 1 shard table(s) dropped on MySQL; their rows stay in the table while the job"
                + " runs, and leave it at the next resume only with tables.dropped-shards: delete (the job's"
                + " log names them)");
  }

  /**
   * Tables created while the job runs that match the shard patterns are not read by it: {@code
   * status} says so per host and how to read them, in the text and the JSON.
   */
  @Test
  void tablesCreatedWhileTheJobRunsAreAWarningWithTheWayOn() throws Exception {
    HostLag host =
        new HostLag(
            "a", "reachable", 0, Instant.ofEpochMilli(94_000), 1_000, 20, 0, Map.of(), 0, 2, -1);
    StatusReport report = StatusReport.of(STATUS, List.of(host), null);
    assertThat(report.renderLag())
        .contains(
            "  WARNING host a: 2 table(s) matching the shard patterns created while the job runs are"
                + " not read by it; stop the job with a savepoint and resume it with the same config to"
                + " read them (the job's log names them)")
        .doesNotContain("dropped on MySQL");
    assertThat(
            new ObjectMapper()
                .readTree(report.json())
                .path("hosts")
                .get(0)
                .path("unreadShardTables")
                .asLong())
        .isEqualTo(2);
    HostLag none =
        new HostLag(
            "a", "reachable", 0, Instant.ofEpochMilli(94_000), 1_000, 20, 0, Map.of(), 0, 0, -1);
    assertThat(StatusReport.of(STATUS, List.of(none), null).renderLag()).doesNotContain("WARNING");
  }

  /**
   * Shard tables the job read from the binlog since it saw them created ({@code tables.new-shards:
   * capture}) are listed per host, in the text and the JSON; they are read, so no warning.
   */
  @Test
  void shardsCapturedWhileTheJobRunsAreListedPerHost() throws Exception {
    HostLag host =
        new HostLag(
            "b",
            "reachable",
            0,
            Instant.ofEpochMilli(94_000),
            1_000,
            20,
            0,
            Map.of(),
            0,
            0,
            -1,
            1,
            java.util.Set.of(18, 16));
    StatusReport report = StatusReport.of(STATUS, List.of(host), null);
    assertThat(report.renderLag())
        .contains(
            "  host b: shard(s) [16, 18] created while the job runs are read from the binlog since"
                + " their CREATE TABLE (tables.new-shards: capture); the next resume reads them once"
                + " more from a fresh snapshot")
        .doesNotContain("WARNING");
    assertThat(
            new ObjectMapper().readTree(report.json()).path("hosts").get(0).path("capturedShards"))
        .extracting(com.fasterxml.jackson.databind.JsonNode::asInt)
        .containsExactly(16, 18);
  }
}
