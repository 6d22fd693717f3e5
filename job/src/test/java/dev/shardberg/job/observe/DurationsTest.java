package dev.shardberg.job.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

  @Test
  void humanStepsUpBelow120OfEachUnit() {
    assertThat(Durations.human(Duration.ofMillis(850))).isEqualTo("850 ms");
    assertThat(Durations.human(Duration.ofMillis(4_230))).isEqualTo(String.format("%.1f s", 4.23));
    assertThat(Durations.human(Duration.ofSeconds(119))).isEqualTo(String.format("%.1f s", 119.0));
    assertThat(Durations.human(Duration.ofSeconds(120))).isEqualTo("2 min");
    assertThat(Durations.human(Duration.ofMinutes(119))).isEqualTo("119 min");
    assertThat(Durations.human(Duration.ofMinutes(185))).isEqualTo("3 h");
  }

  @Test
  void humanToMinutesStaysInMinutes() {
    assertThat(Durations.humanToMinutes(Duration.ofMillis(850))).isEqualTo("850 ms");
    assertThat(Durations.humanToMinutes(Duration.ofMillis(4_230)))
        .isEqualTo(String.format("%.1f s", 4.23));
    assertThat(Durations.humanToMinutes(Duration.ofMinutes(185))).isEqualTo("185 min");
  }

  @Test
  void estimateInWholeUnits() {
    assertThat(Durations.estimate(Duration.ofSeconds(8))).isEqualTo("8 s");
    assertThat(Durations.estimate(Duration.ofSeconds(119))).isEqualTo("119 s");
    assertThat(Durations.estimate(Duration.ofMinutes(17))).isEqualTo("17 min");
    assertThat(Durations.estimate(Duration.ofMinutes(125))).isEqualTo("2 h 5 min");
  }
}
