package dev.shardberg.job.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SnapshotProgressTest {

  private static HostLag host(String name, Map<Integer, Long> rows) {
    return new HostLag(name, "reachable", 0, null, -1, -1, rows.values().stream().mapToLong(Long::longValue).sum(), rows, 0);
  }

  @Test
  void rowsShardsRateAndEtaFromTheEstimates() {
    SnapshotProgress first = SnapshotProgress.of(List.of(host("a", Map.of(0, 1_000L)), host("b", Map.of(4, 1_000L))));
    SnapshotProgress second = SnapshotProgress.of(List.of(host("a", Map.of(0, 3_000L, 1, 500L)), host("b", Map.of(4, 2_500L))));
    Map<Integer, Long> estimates = Map.of(0, 2_800L, 1, 4_000L, 4, 10_000L, 5, 4_500L);

    assertThat(second.rows()).isEqualTo(6_000);
    // shard 0 read past its estimate: none left there; 3500 + 7500 + 4500 left; 4000 rows in 2 s
    assertThat(second.remaining(estimates)).isEqualTo(15_500);
    assertThat(second.describe(first, Duration.ofSeconds(2), 8, estimates))
        .isEqualTo("6000 rows read from 3 of 8 shards, 2000 rows/s, ETA ~8 s (15500 rows left by MySQL's estimate)");
    assertThat(second.describe(first, Duration.ofSeconds(2), 8, Map.of()))
        .as("no estimates, no ETA").isEqualTo("6000 rows read from 3 of 8 shards, 2000 rows/s");
  }

  @Test
  void nothingToSayBeforeTheFirstRowAndOnceNoMoreRowsAreRead() {
    SnapshotProgress none = SnapshotProgress.of(List.of(host("a", Map.of())));
    SnapshotProgress done = SnapshotProgress.of(List.of(host("a", Map.of(0, 50L, 1, 50L))));
    assertThat(none.describe(null, Duration.ofSeconds(1), 2, Map.of())).isNull();
    assertThat(done.describe(null, Duration.ofSeconds(1), 2, Map.of())).isEqualTo("100 rows read from 2 of 2 shards, 100 rows/s");
    assertThat(done.describe(done, Duration.ofSeconds(1), 2, Map.of())).isNull();
  }
}
