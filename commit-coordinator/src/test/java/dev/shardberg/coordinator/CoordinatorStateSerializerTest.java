package dev.shardberg.coordinator;

import static dev.shardberg.coordinator.PendingCheckpointSerializerTest.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class CoordinatorStateSerializerTest {
  private static final LinkedHashMap<String, Long> LINEAGE = new LinkedHashMap<>();

  static {
    LINEAGE.put("00000000000000aa", 7L);
    LINEAGE.put("00000000000000bb", 3L);
  }

  private static final CoordinatorState SAMPLE =
      new CoordinatorState(
          "orders",
          5,
          40,
          LINEAGE,
          new TreeSet<>(List.of(0, 127)),
          List.of(PendingCheckpointSerializerTest.SAMPLE));

  /**
   * Version 1 bytes of {@link #SAMPLE}, frozen: a change here breaks restores of this release's
   * state.
   */
  private static final String VERSION_1_HEX =
      stateWithEntry(2, PendingCheckpointSerializerTest.VERSION_2_HEX);

  /** The same state as the release with deletion vectors wrote it: its entry at version 3. */
  private static final String VERSION_1_ENTRY_3_HEX =
      stateWithEntry(3, PendingCheckpointSerializerTest.VERSION_3_HEX);

  /**
   * The same state as this release writes it: its pending entry at version 4 (owner checks, removed
   * data manifests and removed shards, none of each).
   */
  private static final String VERSION_1_ENTRY_4_HEX =
      stateWithEntry(4, PendingCheckpointSerializerTest.VERSION_4_HEX);

  private static String stateWithEntry(int entryVersion, String entryHex) {
    return "0006"
        + hex("orders")
        + "0000000000000005"
        + "0000000000000028"
        + "00000002"
        + "0010"
        + hex("00000000000000aa")
        + "0000000000000007"
        + "0010"
        + hex("00000000000000bb")
        + "0000000000000003"
        + "00000002"
        + "00000000"
        + "0000007f"
        + "00000001"
        + String.format("%08x", entryVersion)
        + String.format("%08x", entryHex.length() / 2)
        + entryHex;
  }

  /**
   * Version 2 bytes of {@link #SAMPLE} with shard 5 captured while the job ran, frozen: version 1's
   * layout, then the state's Flink job id and the captured shards.
   */
  private static final String VERSION_2_HEX =
      VERSION_1_ENTRY_4_HEX
          + "0020"
          + hex("0123456789abcdef0123456789abcdef")
          + "00000001"
          + "00000005";

  private static final CoordinatorState SAMPLE_CAPTURED =
      new CoordinatorState(
          "orders",
          5,
          40,
          LINEAGE,
          new TreeSet<>(List.of(0, 127)),
          new TreeSet<>(List.of(5)),
          "0123456789abcdef0123456789abcdef",
          List.of(PendingCheckpointSerializerTest.SAMPLE));

  private final CoordinatorStateSerializer serializer = CoordinatorStateSerializer.INSTANCE;

  @Test
  void latestVersionRoundTripsWithAndWithoutKnownShards() throws IOException {
    assertThat(serializer.getVersion()).isEqualTo(2);
    assertSame(serializer.deserialize(2, serializer.serialize(SAMPLE)), SAMPLE);
    assertSame(serializer.deserialize(2, serializer.serialize(SAMPLE_CAPTURED)), SAMPLE_CAPTURED);
    CoordinatorState untracked =
        new CoordinatorState("orders", 0, 1, new LinkedHashMap<>(), null, List.of());
    assertSame(serializer.deserialize(2, serializer.serialize(untracked)), untracked);
  }

  @Test
  void frozenVersionTwoBytesHoldTheCapturedShards() throws IOException {
    assertThat(HexFormat.of().formatHex(serializer.serialize(SAMPLE_CAPTURED)))
        .isEqualTo(VERSION_2_HEX);
    assertSame(serializer.deserialize(2, HexFormat.of().parseHex(VERSION_2_HEX)), SAMPLE_CAPTURED);
    assertThat(serializer.deserialize(2, HexFormat.of().parseHex(VERSION_2_HEX)).capturedShards())
        .containsExactly(5);
  }

  @Test
  void frozenVersionOneBytesStillRead() throws IOException {
    // as the release before the captured shards wrote it: version 1, read with none captured
    assertSame(serializer.deserialize(1, HexFormat.of().parseHex(VERSION_1_ENTRY_4_HEX)), SAMPLE);
    assertSame(serializer.deserialize(1, HexFormat.of().parseHex(VERSION_1_ENTRY_3_HEX)), SAMPLE);
    // as the release before deletion vectors wrote it: its pending entry at version 2
    assertSame(serializer.deserialize(1, HexFormat.of().parseHex(VERSION_1_HEX)), SAMPLE);
  }

  @Test
  void anUnknownVersionIsRefusedWithTheWayOn() {
    assertThatThrownBy(() -> serializer.deserialize(3, new byte[0]))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(
            "state version 3 is not supported by this release (it reads versions 1 to 2)")
        .hasMessageContaining(
            "Restore with the Shardberg release that wrote this checkpoint, or start the pipeline without state");
  }

  private static void assertSame(CoordinatorState actual, CoordinatorState expected) {
    assertThat(actual.pipelineId()).isEqualTo(expected.pipelineId());
    assertThat(actual.checkpointOffset()).isEqualTo(expected.checkpointOffset());
    assertThat(actual.flinkCheckpointId()).isEqualTo(expected.flinkCheckpointId());
    assertThat(actual.lineage()).containsExactlyEntriesOf(expected.lineage());
    assertThat(actual.knownShards()).isEqualTo(expected.knownShards());
    assertThat(actual.capturedShards()).isEqualTo(expected.capturedShards());
    assertThat(actual.planId()).isEqualTo(expected.planId());
    assertThat(actual.pending()).hasSameSizeAs(expected.pending());
    for (int i = 0; i < actual.pending().size(); i++) {
      PendingCheckpointSerializerTest.assertSame(
          actual.pending().get(i), expected.pending().get(i));
    }
  }
}
