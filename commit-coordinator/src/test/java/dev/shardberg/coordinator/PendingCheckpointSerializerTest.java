package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PendingCheckpointSerializerTest {
  private static final PendingCheckpoint SAMPLE =
      new PendingCheckpoint(
          42,
          40,
          List.of(new byte[] {1, 2, 3}),
          List.of(new byte[] {4}, new byte[] {5, 6}),
          List.of("file:/warehouse/shop/orders/data/a.parquet"),
          new TreeMap<>(Map.of(0, new ShardCounts(10, 2), 127, new ShardCounts(0, 1))));

  /** Version 1 bytes of {@link #SAMPLE}, frozen: a change here breaks restores of old state. */
  private static final String VERSION_1_HEX =
      "000000000000002a"
          + "0000000000000028"
          + "00000001" + "00000003" + "010203"
          + "00000002" + "00000001" + "04" + "00000002" + "0506"
          + "00000001" + "002a" + hex("file:/warehouse/shop/orders/data/a.parquet")
          + "00000002"
          + "00000000" + "000000000000000a" + "0000000000000002"
          + "0000007f" + "0000000000000000" + "0000000000000001";

  private final PendingCheckpointSerializer serializer = PendingCheckpointSerializer.INSTANCE;

  @Test
  void startsAtVersionOne() {
    assertThat(serializer.getVersion()).isEqualTo(1);
  }

  @Test
  void latestVersionRoundTrips() throws IOException {
    PendingCheckpoint copy = serializer.deserialize(serializer.getVersion(), serializer.serialize(SAMPLE));
    assertSame(copy, SAMPLE);
  }

  @Test
  void frozenVersionOneBytesStillRead() throws IOException {
    assertThat(HexFormat.of().formatHex(serializer.serialize(SAMPLE))).isEqualTo(VERSION_1_HEX);
    PendingCheckpoint restored = serializer.deserialize(1, HexFormat.of().parseHex(VERSION_1_HEX));
    assertSame(restored, SAMPLE);
  }

  @Test
  void unsupportedVersionIsRejectedWithTheFix() {
    assertThatThrownBy(() -> serializer.deserialize(2, serializer.serialize(SAMPLE)))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "Cannot restore a pending Shardberg checkpoint: state version 2 is not supported by"
                + " this release (it reads version 1). Restore with the release that wrote the"
                + " checkpoint, or start the pipeline without state.");
  }

  private static void assertSame(PendingCheckpoint actual, PendingCheckpoint expected) {
    assertThat(actual.checkpointId()).isEqualTo(expected.checkpointId());
    assertThat(actual.flinkCheckpointId()).isEqualTo(expected.flinkCheckpointId());
    assertThat(actual.dataManifests()).containsExactlyElementsOf(expected.dataManifests());
    assertThat(actual.deleteManifests()).containsExactlyElementsOf(expected.deleteManifests());
    assertThat(actual.referencedDataFiles()).isEqualTo(expected.referencedDataFiles());
    assertThat(actual.shardCounts()).isEqualTo(expected.shardCounts());
  }

  private static String hex(String text) {
    return HexFormat.of().formatHex(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
