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
  private static final String JOB = "0123456789abcdef0123456789abcdef";

  static final PendingCheckpoint SAMPLE =
      new PendingCheckpoint(
          42,
          40,
          List.of(new byte[] {1, 2, 3}),
          List.of(new byte[] {4}, new byte[] {5, 6}),
          List.of("file:/warehouse/shop/orders/data/a.parquet"),
          new TreeMap<>(Map.of(0, new ShardCounts(10, 2), 127, new ShardCounts(0, 1))),
          JOB,
          new TreeMap<>(Map.of(3, 77L, 5, PendingCheckpoint.NO_SNAPSHOT)));

  /** {@link #SAMPLE} as version 1 held it: no staging job, no insert-only scans. */
  private static final PendingCheckpoint SAMPLE_V1 =
      new PendingCheckpoint(
          SAMPLE.checkpointId(),
          SAMPLE.flinkCheckpointId(),
          SAMPLE.dataManifests(),
          SAMPLE.deleteManifests(),
          SAMPLE.referencedDataFiles(),
          SAMPLE.shardCounts(),
          null,
          new TreeMap<>());

  /** Version 1 bytes of {@link #SAMPLE}, frozen: a change here breaks restores of old state. */
  private static final String VERSION_1_HEX =
      "000000000000002a"
          + "0000000000000028"
          + "00000001"
          + "00000003"
          + "010203"
          + "00000002"
          + "00000001"
          + "04"
          + "00000002"
          + "0506"
          + "00000001"
          + "002a"
          + hex("file:/warehouse/shop/orders/data/a.parquet")
          + "00000002"
          + "00000000"
          + "000000000000000a"
          + "0000000000000002"
          + "0000007f"
          + "0000000000000000"
          + "0000000000000001";

  /**
   * Version 2 bytes of {@link #SAMPLE}, frozen: version 1's, then the staging job and the scans.
   */
  static final String VERSION_2_HEX =
      VERSION_1_HEX
          + "0020"
          + hex(JOB)
          + "00000002"
          + "00000003"
          + "000000000000004d"
          + "00000005"
          + "ffffffffffffffff";

  /** Version 3 bytes of {@link #SAMPLE}, frozen: version 2's, then no removed delete files. */
  static final String VERSION_3_HEX = VERSION_2_HEX + "00000000";

  /** {@link #SAMPLE} with two manifests of delete files to remove (deletion vectors replaced). */
  static final PendingCheckpoint SAMPLE_REMOVING =
      new PendingCheckpoint(
          SAMPLE.checkpointId(),
          SAMPLE.flinkCheckpointId(),
          SAMPLE.dataManifests(),
          SAMPLE.deleteManifests(),
          SAMPLE.referencedDataFiles(),
          SAMPLE.shardCounts(),
          SAMPLE.stagedBy(),
          SAMPLE.insertOnlyScans(),
          List.of(new byte[] {7, 8}, new byte[] {9}),
          new TreeMap<>(),
          List.of());

  /** Version 3 bytes of {@link #SAMPLE_REMOVING}, frozen. */
  private static final String VERSION_3_REMOVING_HEX =
      VERSION_2_HEX + "00000002" + "00000002" + "0708" + "00000001" + "09";

  /**
   * {@link #SAMPLE_REMOVING} with the owners' checks of two shards (deletes by position) and a
   * manifest of data files their compaction removes.
   */
  static final PendingCheckpoint SAMPLE_OWNED =
      new PendingCheckpoint(
          SAMPLE.checkpointId(),
          SAMPLE.flinkCheckpointId(),
          SAMPLE.dataManifests(),
          SAMPLE.deleteManifests(),
          SAMPLE.referencedDataFiles(),
          SAMPLE.shardCounts(),
          SAMPLE.stagedBy(),
          SAMPLE.insertOnlyScans(),
          SAMPLE_REMOVING.removedDeleteManifests(),
          new TreeMap<>(Map.of(3, 77L, 9, PendingCheckpoint.NO_SNAPSHOT)),
          List.of(new byte[] {10, 11, 12}));

  /**
   * Version 4 bytes of {@link #SAMPLE}, frozen: version 3's, then no owner check, no removed data
   * file and no removed shard.
   */
  static final String VERSION_4_HEX = VERSION_3_HEX + "00000000" + "00000000" + "00000000";

  /** Version 4 bytes of {@link #SAMPLE_OWNED}, frozen. */
  private static final String VERSION_4_OWNED_HEX =
      VERSION_3_REMOVING_HEX
          + "00000002"
          + "00000003"
          + "000000000000004d"
          + "00000009"
          + "ffffffffffffffff"
          + "00000001"
          + "00000003"
          + "0a0b0c"
          + "00000000";

  /** {@link #SAMPLE} removing shard 7 as a whole (its MySQL table is gone). */
  static final PendingCheckpoint SAMPLE_REMOVING_SHARD =
      new PendingCheckpoint(
          SAMPLE.checkpointId(),
          SAMPLE.flinkCheckpointId(),
          SAMPLE.dataManifests(),
          SAMPLE.deleteManifests(),
          SAMPLE.referencedDataFiles(),
          new TreeMap<>(
              Map.of(
                  0, new ShardCounts(10, 2), 7, ShardCounts.REMOVED, 127, new ShardCounts(0, 1))),
          SAMPLE.stagedBy(),
          SAMPLE.insertOnlyScans(),
          List.of(),
          new TreeMap<>(),
          List.of());

  /**
   * Version 4 bytes of {@link #SAMPLE_REMOVING_SHARD}, frozen: shard 7 among the counts (0 added, 0
   * deleted), then listed as removed at the end.
   */
  private static final String VERSION_4_REMOVING_SHARD_HEX =
      "000000000000002a"
          + "0000000000000028"
          + "00000001"
          + "00000003"
          + "010203"
          + "00000002"
          + "00000001"
          + "04"
          + "00000002"
          + "0506"
          + "00000001"
          + "002a"
          + hex("file:/warehouse/shop/orders/data/a.parquet")
          + "00000003"
          + "00000000"
          + "000000000000000a"
          + "0000000000000002"
          + "00000007"
          + "0000000000000000"
          + "0000000000000000"
          + "0000007f"
          + "0000000000000000"
          + "0000000000000001"
          + "0020"
          + hex(JOB)
          + "00000002"
          + "00000003"
          + "000000000000004d"
          + "00000005"
          + "ffffffffffffffff"
          + "00000000"
          + "00000000"
          + "00000000"
          + "00000001"
          + "00000007";

  private final PendingCheckpointSerializer serializer = PendingCheckpointSerializer.INSTANCE;

  @Test
  void isAtVersionFour() {
    assertThat(serializer.getVersion()).isEqualTo(4);
  }

  @Test
  void frozenVersionFourBytesStillRead() throws IOException {
    assertThat(HexFormat.of().formatHex(serializer.serialize(SAMPLE))).isEqualTo(VERSION_4_HEX);
    assertThat(HexFormat.of().formatHex(serializer.serialize(SAMPLE_OWNED)))
        .isEqualTo(VERSION_4_OWNED_HEX);
    assertSame(serializer.deserialize(4, HexFormat.of().parseHex(VERSION_4_HEX)), SAMPLE);
    assertSame(
        serializer.deserialize(4, HexFormat.of().parseHex(VERSION_4_OWNED_HEX)), SAMPLE_OWNED);
  }

  @Test
  void frozenVersionFourBytesCarryTheRemovedShards() throws IOException {
    assertThat(HexFormat.of().formatHex(serializer.serialize(SAMPLE_REMOVING_SHARD)))
        .isEqualTo(VERSION_4_REMOVING_SHARD_HEX);
    PendingCheckpoint restored =
        serializer.deserialize(4, HexFormat.of().parseHex(VERSION_4_REMOVING_SHARD_HEX));
    assertSame(restored, SAMPLE_REMOVING_SHARD);
    assertThat(restored.shardCounts().get(7).removed()).isTrue();
    assertThat(restored.shardCounts().get(0).removed()).isFalse();
  }

  @Test
  void frozenVersionThreeBytesStillReadWithoutOwnerChecks() throws IOException {
    assertSame(serializer.deserialize(3, HexFormat.of().parseHex(VERSION_3_HEX)), SAMPLE);
    assertSame(
        serializer.deserialize(3, HexFormat.of().parseHex(VERSION_3_REMOVING_HEX)),
        SAMPLE_REMOVING);
  }

  @Test
  void latestVersionRoundTrips() throws IOException {
    PendingCheckpoint copy =
        serializer.deserialize(serializer.getVersion(), serializer.serialize(SAMPLE));
    assertSame(copy, SAMPLE);
    assertSame(
        serializer.deserialize(serializer.getVersion(), serializer.serialize(SAMPLE_REMOVING)),
        SAMPLE_REMOVING);
    assertSame(
        serializer.deserialize(serializer.getVersion(), serializer.serialize(SAMPLE_OWNED)),
        SAMPLE_OWNED);
    assertSame(
        serializer.deserialize(
            serializer.getVersion(), serializer.serialize(SAMPLE_REMOVING_SHARD)),
        SAMPLE_REMOVING_SHARD);
  }

  @Test
  void frozenVersionTwoBytesStillReadRemovingNothing() throws IOException {
    PendingCheckpoint restored = serializer.deserialize(2, HexFormat.of().parseHex(VERSION_2_HEX));
    assertSame(restored, SAMPLE);
  }

  @Test
  void frozenVersionOneBytesStillReadWithoutLineage() throws IOException {
    PendingCheckpoint restored = serializer.deserialize(1, HexFormat.of().parseHex(VERSION_1_HEX));
    assertSame(restored, SAMPLE_V1);
    // written again (at the next checkpoint) it stays without lineage
    assertSame(serializer.deserialize(4, serializer.serialize(restored)), SAMPLE_V1);
  }

  @Test
  void unsupportedVersionIsRejectedWithTheFix() {
    assertThatThrownBy(() -> serializer.deserialize(5, serializer.serialize(SAMPLE)))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "Cannot restore a pending Shardberg checkpoint: state version 5 is not supported by"
                + " this release (it reads versions 1 to 4). Restore with the release that wrote"
                + " the checkpoint, or start the pipeline without state.");
  }

  static void assertSame(PendingCheckpoint actual, PendingCheckpoint expected) {
    assertThat(actual.checkpointId()).isEqualTo(expected.checkpointId());
    assertThat(actual.flinkCheckpointId()).isEqualTo(expected.flinkCheckpointId());
    assertThat(actual.dataManifests()).containsExactlyElementsOf(expected.dataManifests());
    assertThat(actual.deleteManifests()).containsExactlyElementsOf(expected.deleteManifests());
    assertThat(actual.referencedDataFiles()).isEqualTo(expected.referencedDataFiles());
    assertThat(actual.shardCounts()).isEqualTo(expected.shardCounts());
    assertThat(actual.stagedBy()).isEqualTo(expected.stagedBy());
    assertThat(actual.insertOnlyScans()).isEqualTo(expected.insertOnlyScans());
    assertThat(actual.removedDeleteManifests())
        .containsExactlyElementsOf(expected.removedDeleteManifests());
    assertThat(actual.ownerChecks()).isEqualTo(expected.ownerChecks());
    assertThat(actual.removedDataManifests())
        .containsExactlyElementsOf(expected.removedDataManifests());
  }

  static String hex(String text) {
    return HexFormat.of().formatHex(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
