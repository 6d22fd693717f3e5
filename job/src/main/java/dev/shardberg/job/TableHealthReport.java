package dev.shardberg.job;

import dev.shardberg.coordinator.maintenance.TableHealth;
import dev.shardberg.coordinator.maintenance.TableHealth.ShardHealth;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.observe.Durations;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.iceberg.Table;

/**
 * The table's health per shard for {@code status}: data files, equality and position delete files,
 * average data file size, rows a scan reads per live row, last compaction — read from the current
 * snapshot's manifests (the same figures as the coordinator's {@code shardberg.maintenance.shard.*}
 * metrics).
 */
public record TableHealthReport(
    String table, TableHealth health, boolean maintenanceOn, Instant now) {

  public static TableHealthReport read(ShardbergConfig config) {
    Table table = Catalogs.loadTable(config.target());
    table.refresh();
    long small = config.maintenance().targetFileSizeBytes() * 3 / 4;
    return new TableHealthReport(
        table.name(), TableHealth.of(table, small), config.maintenance().enabled(), Instant.now());
  }

  public String render() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        String.format(
            "Table health of %s (snapshot %d; maintenance %s)%n",
            table, health.snapshotId(), maintenanceOn ? "on" : "off"));
    Map<Integer, ShardHealth> shards = health.byShard();
    if (shards.isEmpty()) {
      return sb.append("  no data files yet").append(System.lineSeparator()).toString();
    }
    sb.append(
        String.format(
            "  %-6s %10s %10s %10s %12s %12s   %s%n",
            "shard",
            "data files",
            "eq deletes",
            "pos deletes",
            "avg file",
            "read/live",
            "last compaction"));
    for (ShardHealth h : shards.values()) {
      String last =
          h.lastCompactionMillis().isPresent()
              ? Instant.ofEpochMilli(h.lastCompactionMillis().getAsLong())
                  + " ("
                  + Durations.human(
                      Duration.between(
                          Instant.ofEpochMilli(h.lastCompactionMillis().getAsLong()), now))
                  + " ago)"
              : "none in the retained history";
      sb.append(
          String.format(
              "  %-6d %10d %10d %10d %12s %12.2f   %s%n",
              h.shard(),
              h.dataFiles(),
              h.equalityDeleteFiles(),
              h.positionDeleteFiles(),
              bytes(h.averageDataFileBytes()),
              h.readPerLiveRow(),
              last));
    }
    sb.append(
            "  read/live: data + delete records per live row, estimated as data minus delete records;"
                + " 1.00 is a compacted shard")
        .append(System.lineSeparator());
    return sb.toString();
  }

  static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    if (n < 1024 * 1024) {
      return String.format("%.1f KiB", n / 1024.0);
    }
    if (n < 1024L * 1024 * 1024) {
      return String.format("%.1f MiB", n / (1024.0 * 1024));
    }
    return String.format("%.2f GiB", n / (1024.0 * 1024 * 1024));
  }
}
