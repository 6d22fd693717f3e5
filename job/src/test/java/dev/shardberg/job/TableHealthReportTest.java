package dev.shardberg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.coordinator.maintenance.PartitionHealth;
import dev.shardberg.coordinator.maintenance.TableHealth;
import java.time.Instant;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class TableHealthReportTest {
  @Test
  void oneLinePerShardWithFilesDeletesSizeReadAmplificationAndLastCompaction() {
    Instant now = Instant.parse("2026-12-01T06:00:00Z");
    TreeMap<Integer, Long> lastCompaction = new TreeMap<>();
    lastCompaction.put(3, now.minusSeconds(90).toEpochMilli());
    TableHealth health =
        new TableHealth(
            42,
            List.of(
                // shard, files, small, bytes, records, eq, pos, delete bytes, delete records
                new PartitionHealth(
                    0, "shard_number=3/id_bucket=0", 3, 2, 2, 2048, 100, 3, 1, 10, 50),
                new PartitionHealth(
                    0, "shard_number=3/id_bucket=1", 3, 2, 2, 2048, 100, 0, 0, 0, 0),
                new PartitionHealth(
                    0, "shard_number=7/id_bucket=0", 7, 1, 1, 5 << 20, 10, 0, 0, 0, 0)),
            lastCompaction);
    String text = new TableHealthReport("hadoop.shop.orders", health, true, now).render();
    assertThat(text)
        .contains("Table health of hadoop.shop.orders (snapshot 42; maintenance on)")
        // shard 3: 4 data files of 1 KiB, 3 eq + 1 pos delete files, (200 + 50) / (200 - 50) rows
        // read
        .containsPattern(
            "\\n  3 +4 +3 +1 +1\\.0 KiB +1\\.67 +2026-12-01T05:58:30Z \\(90\\.0 s ago\\)")
        .containsPattern("\\n  7 +1 +0 +0 +5\\.0 MiB +1\\.00 +none in the retained history");
  }
}
