package dev.shardberg.router.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class HostHealthTest {
  @Test
  void lostThenBackReportsEachTransitionOnceWithTheGap() {
    HostHealth health = new HostHealth(Duration.ofSeconds(60));
    assertThat(health.state()).isEqualTo(HostHealth.State.UNKNOWN);
    assertThat(health.probeSucceeded(1_000)).isEqualTo(HostHealth.Transition.NONE);
    assertThat(health.probeFailed(2_000, "refused")).isEqualTo(HostHealth.Transition.LOST);
    assertThat(health.probeFailed(4_000, "refused again")).isEqualTo(HostHealth.Transition.NONE);
    assertThat(health.unreachableMillis(5_000)).isEqualTo(3_000);
    assertThat(health.lastError()).isEqualTo("refused again");
    assertThat(health.probeSucceeded(9_500)).isEqualTo(HostHealth.Transition.BACK);
    assertThat(health.lastGapMillis()).isEqualTo(7_500);
    assertThat(health.unreachableMillis(10_000)).isZero();
    assertThat(health.probeSucceeded(11_000)).isEqualTo(HostHealth.Transition.NONE);
  }

  @Test
  void unreachableFromTheFirstProbeIsLostToo() {
    HostHealth health = new HostHealth(Duration.ofSeconds(10));
    assertThat(health.probeFailed(0, "refused")).isEqualTo(HostHealth.Transition.LOST);
    assertThat(health.pastLimit(10_000)).isFalse();
    assertThat(health.pastLimit(10_001)).isTrue();
    health.probeSucceeded(10_500);
    assertThat(health.pastLimit(100_000)).isFalse();
  }

  @Test
  void eventLagIsReadTimeMinusTheNewestEventTime() {
    HostHealth health = new HostHealth(Duration.ofSeconds(10));
    assertThat(health.eventTimeLagMillis()).isEqualTo(-1);
    assertThat(health.millisSinceLastEvent(5)).isEqualTo(-1);
    health.eventRead(1_000, 1_250);
    health.eventRead(
        900, 1_300); // an older event (another transaction order) does not move the newest back
    assertThat(health.lastEventTimeMillis()).isEqualTo(1_000);
    assertThat(health.eventTimeLagMillis()).isEqualTo(300);
    assertThat(health.millisSinceLastEvent(2_300)).isEqualTo(1_000);
    assertThat(health.eventsRead()).isEqualTo(2);
  }
}
