package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.ShardbergSink;
import dev.shardberg.router.tagging.VersionedRows;
import org.junit.jupiter.api.Test;

/**
 * The shard tagger (router) and the sink (coordinator) do not depend on each other; the job wires
 * them, so the job holds them to the one convention they share besides the row layout.
 */
class VersionedRowsContractTest {
  @Test
  void taggerAndSinkAgreeOnTheTruncateMarker() {
    assertThat(VersionedRows.TRUNCATE_MARKER).isEqualTo(ShardbergSink.TRUNCATE_MARKER);
    assertThat(VersionedRows.truncateMarker(3, 1).getInt(2))
        .isEqualTo(ShardbergSink.TRUNCATE_MARKER);
  }
}
