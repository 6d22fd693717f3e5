package dev.shardberg.coordinator.maintenance;

/**
 * What a reader pays in one partition (shard x bucket) of the current snapshot: live data and
 * delete files, read from the manifests (no data file is opened).
 *
 * @param specId partition spec of the files; compaction only rewrites the table's current spec
 * @param path the partition as Iceberg prints it, e.g. {@code shard_number=3/id_bucket=1}
 * @param shard the shard of the partition, {@code null} when the spec has no identity shard field
 * @param smallDataFiles data files under 3/4 of the compaction target size
 */
public record PartitionHealth(
    int specId,
    String path,
    Integer shard,
    int dataFiles,
    int smallDataFiles,
    long dataBytes,
    long dataRecords,
    int equalityDeleteFiles,
    int positionDeleteFiles,
    long deleteBytes,
    long deleteRecords) {

  public int deleteFiles() {
    return equalityDeleteFiles + positionDeleteFiles;
  }

  public long bytes() {
    return dataBytes + deleteBytes;
  }

  /**
   * Rows a full scan reads per live row: data and delete records over the live rows, estimated as
   * data records minus delete records (a delete is counted as removing one row; at least 1).
   */
  public double readPerLiveRow() {
    return readPerLiveRow(dataRecords, deleteRecords);
  }

  static double readPerLiveRow(long dataRecords, long deleteRecords) {
    if (dataRecords == 0 && deleteRecords == 0) {
      return 0;
    }
    long live = Math.max(1, dataRecords - deleteRecords);
    return (double) (dataRecords + deleteRecords) / live;
  }

  PartitionHealth plus(PartitionHealth other) {
    return new PartitionHealth(
        specId,
        path,
        shard,
        dataFiles + other.dataFiles,
        smallDataFiles + other.smallDataFiles,
        dataBytes + other.dataBytes,
        dataRecords + other.dataRecords,
        equalityDeleteFiles + other.equalityDeleteFiles,
        positionDeleteFiles + other.positionDeleteFiles,
        deleteBytes + other.deleteBytes,
        deleteRecords + other.deleteRecords);
  }
}
