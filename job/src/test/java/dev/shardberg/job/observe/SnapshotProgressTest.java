package dev.shardberg.job.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SnapshotProgressTest {

  private static HostLag host(String name, Map<Integer, Long> rows) {
    return new HostLag(
        name,
        "reachable",
        0,
        null,
        -1,
        -1,
        rows.values().stream().mapToLong(Long::longValue).sum(),
        rows,
        0,
        0,
        -1);
  }

  @Test
  void rowsShardsRateAndEtaFromTheEstimates() {
    SnapshotProgress first =
        SnapshotProgress.of(List.of(host("a", Map.of(0, 1_000L)), host("b", Map.of(4, 1_000L))));
    SnapshotProgress second =
        SnapshotProgress.of(
            List.of(host("a", Map.of(0, 3_000L, 1, 500L)), host("b", Map.of(4, 2_500L))));
    Map<Integer, Long> estimates = Map.of(0, 2_800L, 1, 4_000L, 4, 10_000L, 5, 4_500L);

    assertThat(second.rows()).isEqualTo(6_000);
    // shard 0 read past its estimate: none left there; 3500 + 7500 + 4500 left; 4000 rows in 2 s
    assertThat(second.remaining(estimates)).isEqualTo(15_500);
    Set<Integer> everyShard = Set.of(0, 1, 2, 3, 4, 5, 6, 7);
    assertThat(second.describe(first, Duration.ofSeconds(2), everyShard, estimates))
        .isEqualTo(
            "6000 rows read from 3 of 8 shards, 2000 rows/s, ETA ~8 s (15500 rows left by MySQL's estimate)");
    assertThat(second.describe(first, Duration.ofSeconds(2), everyShard, Map.of()))
        .as("no estimates, no ETA")
        .isEqualTo("6000 rows read from 3 of 8 shards, 2000 rows/s");
  }

  @Test
  void nothingToSayBeforeTheFirstRowAndOnceNoMoreRowsAreRead() {
    SnapshotProgress none = SnapshotProgress.of(List.of(host("a", Map.of())));
    SnapshotProgress done = SnapshotProgress.of(List.of(host("a", Map.of(0, 50L, 1, 50L))));
    assertThat(none.describe(null, Duration.ofSeconds(1), Set.of(0, 1), Map.of())).isNull();
    assertThat(done.describe(null, Duration.ofSeconds(1), Set.of(0, 1), Map.of()))
        .isEqualTo("100 rows read from 2 of 2 shards, 100 rows/s");
    assertThat(done.describe(done, Duration.ofSeconds(1), Set.of(0, 1), Map.of())).isNull();
  }

  /**
   * A resumed run re-reads one shard (tables.reread-shards): the others go on from the binlog, so
   * their estimates are no rows left to read; the ETA and the shard count are those of the re-read
   * shard.
   */
  @Test
  void theEtaCountsOnlyTheShardsBeingSnapshotted() {
    Map<Integer, Long> estimates = Map.of(0, 940_000L, 1, 1_910L, 2, 940_000L);
    SnapshotProgress rereading = SnapshotProgress.of(List.of(host("a", Map.of(1, 950L))));
    assertThat(rereading.describe(null, Duration.ofSeconds(1), Set.of(1), estimates))
        .isEqualTo(
            "950 rows read from 1 of 1 shards, 950 rows/s, ETA ~1 s (960 rows left by MySQL's estimate)");
  }

  /**
   * A run resumed during the initial snapshot goes on with shards it was not told about: they count
   * once read.
   */
  @Test
  void aShardWithSnapshotRowsCountsEvenWhenNotExpected() {
    Map<Integer, Long> estimates = Map.of(0, 1_000L, 1, 3_000L, 2, 5_000L);
    SnapshotProgress resumed = SnapshotProgress.of(List.of(host("a", Map.of(1, 1_000L))));
    assertThat(resumed.describe(null, Duration.ofSeconds(2), Set.of(), estimates))
        .isEqualTo(
            "1000 rows read from 1 of 1 shards, 500 rows/s, ETA ~4 s (2000 rows left by MySQL's estimate)");
  }
}
