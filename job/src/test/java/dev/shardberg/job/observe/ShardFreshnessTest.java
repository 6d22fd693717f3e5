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

class ShardFreshnessTest {
  private static CommitRecord commit(
      long checkpoint, long millis, int shard, long added, long deleted) {
    TreeMap<Integer, ShardCounts> counts = new TreeMap<>();
    counts.put(shard, new ShardCounts(added, deleted));
    if (shard != 9) {
      counts.put(9, ShardCounts.ZERO); // a shard listed without changes in this commit
    }
    return new CommitRecord(checkpoint, checkpoint, 1, millis, "job", false, counts);
  }

  @Test
  void newestCommitWithAChangeOfTheShardAndTotals() {
    List<CommitRecord> newestFirst =
        List.of(commit(3, 30_000, 1, 0, 2), commit(2, 20_000, 2, 5, 0), commit(1, 10_000, 1, 7, 0));
    List<ShardFreshness> shards = ShardFreshness.of(newestFirst);
    assertThat(shards)
        .containsExactly(
            new ShardFreshness(1, 7, 2, Instant.ofEpochMilli(30_000), 2),
            new ShardFreshness(2, 5, 0, Instant.ofEpochMilli(20_000), 1),
            new ShardFreshness(9, 0, 0, null, 0));
  }

  @Test
  void jsonHasTheShardsAndSaysWhenHostsWereNotAsked() throws Exception {
    List<CommitRecord> commits = List.of(commit(3, 30_000, 1, 4, 0));
    PipelineStatus status =
        new PipelineStatus(
            "p", "cat.db.t", commits, new TreeMap<>(), 4L, Instant.ofEpochMilli(32_500));
    JsonNode json = new ObjectMapper().readTree(StatusReport.of(status, null, null).json());
    assertThat(json.path("lastCheckpoint").asLong()).isEqualTo(3);
    assertThat(json.path("sinceLastCommitMillis").asLong()).isEqualTo(2_500);
    assertThat(json.path("shards").get(0).path("lastChangeCommittedAt").asText())
        .isEqualTo("1970-01-01T00:00:30Z");
    assertThat(json.path("shards").get(0).path("sinceLastChangeMillis").asLong()).isEqualTo(2_500);
    assertThat(json.path("shards").get(1).path("lastChangeCommittedAt").isNull()).isTrue();
    assertThat(json.path("hosts").isNull()).isTrue();
    assertThat(json.path("shards").get(0).path("snapshotRowsRead").isNull())
        .as("not known without --flink-rest")
        .isTrue();

    HostLag down =
        new HostLag(
            "b",
            "unreachable",
            12_000,
            Instant.ofEpochMilli(29_000),
            3_500,
            40,
            104,
            Map.of(1, 4L, 7, 100L),
            0,
            0,
            31_000);
    JsonNode withHosts =
        new ObjectMapper().readTree(StatusReport.of(status, List.of(down), null).json());
    assertThat(withHosts.path("hosts").get(0).path("connection").asText()).isEqualTo("unreachable");
    assertThat(withHosts.path("hosts").get(0).path("unreachableMillis").asLong()).isEqualTo(12_000);
    assertThat(withHosts.path("hosts").get(0).path("snapshotRowsRead").asLong()).isEqualTo(104);
    assertThat(withHosts.path("hosts").get(0).path("sampledAt").asText())
        .as("when the job read its gauges")
        .isEqualTo("1970-01-01T00:00:31Z");
    Map<Integer, Long> snapshotRows = new TreeMap<>();
    withHosts
        .path("shards")
        .forEach(
            n -> snapshotRows.put(n.path("shard").asInt(), n.path("snapshotRowsRead").asLong()));
    assertThat(snapshotRows)
        .as("every committed shard, and shard 7 being read with nothing committed yet")
        .containsEntry(1, 4L)
        .containsEntry(7, 100L);
    String text = StatusReport.of(status, List.of(down), null).renderLag();
    assertThat(text).contains("unreachable 12s");
    assertThat(text.lines().filter(l -> l.trim().startsWith("7 ")).findFirst())
        .hasValueSatisfying(l -> assertThat(l).endsWith(" 100"));
  }
}
