package dev.shardberg.job.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HostLagTest {
  private static final Instant NOW = Instant.ofEpochSecond(1_000);

  private static HostLag host(
      String connected, long unreachableMillis, long readLagMillis, Instant sampledAt) {
    return new HostLag(
        "b",
        connected,
        unreachableMillis,
        Instant.ofEpochSecond(900),
        5_000,
        readLagMillis,
        0,
        Map.of(),
        0,
        0,
        sampledAt.toEpochMilli());
  }

  @Test
  void aReachableHostShowsItsLag() {
    assertThat(host("reachable", 0, 120, NOW).describe(NOW, NOW))
        .isEqualTo("b reachable lag 120 ms");
    assertThat(host("reachable", 0, -1, NOW).describe(NOW, NOW))
        .as("no change read yet")
        .isEqualTo("b reachable");
  }

  /**
   * The lag of an unreachable host is that of the last change read before the outage: not shown.
   */
  @Test
  void anUnreachableHostShowsHowLongNotALag() {
    assertThat(host("unreachable", 2_400, 120, NOW).describe(NOW, NOW))
        .isEqualTo("b unreachable for 2 s");
  }

  /**
   * Flink's REST API answers from its cache of the job's metrics: a reading taken before this line
   * was asked for says how old it is, and the outage counts until now.
   */
  @Test
  void aReadingOlderThanTheLineSaysHowOldItIs() {
    Instant sampled = NOW.minusMillis(3_200);
    assertThat(host("reachable", 0, 120, sampled).describe(NOW, NOW.minusMillis(100)))
        .isEqualTo("b reachable lag 120 ms (as of 3.2 s ago)");
    assertThat(host("unreachable", 2_000, 120, sampled).describe(NOW, NOW.minusMillis(100)))
        .isEqualTo("b unreachable for 5 s (as of 3.2 s ago)");
    assertThat(host("reachable", 0, 120, sampled).describe(NOW, sampled))
        .as("taken after the line was asked for: current")
        .isEqualTo("b reachable lag 120 ms");
  }

  @Test
  void readingsTakenSinceAMoment() {
    Instant asked = NOW.minusMillis(100);
    assertThat(
            HostLag.sampledSince(
                java.util.List.of(host("reachable", 0, 1, NOW), host("reachable", 0, 1, asked)),
                asked))
        .isTrue();
    assertThat(
            HostLag.sampledSince(
                java.util.List.of(
                    host("reachable", 0, 1, NOW), host("reachable", 0, 1, asked.minusMillis(1))),
                asked))
        .isFalse();
  }
}
