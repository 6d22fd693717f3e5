package dev.shardberg.coordinator;

import java.io.Serializable;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.iceberg.io.WriteResult;

/**
 * What one writer subtask completed for one checkpoint: its closed files and per-shard counts. Sent
 * from the writers to the coordinator; never kept in state (the coordinator turns it into manifests
 * at snapshot time).
 */
final class WriterResult implements Serializable {
  private static final long serialVersionUID = 1L;

  private final long checkpointId;
  private final int subtask;
  private final WriteResult files;
  private final TreeMap<Integer, ShardCounts> shardCounts;

  WriterResult(long checkpointId, int subtask, WriteResult files, Map<Integer, ShardCounts> counts) {
    this.checkpointId = checkpointId;
    this.subtask = subtask;
    this.files = files;
    this.shardCounts = new TreeMap<>(counts);
  }

  long checkpointId() {
    return checkpointId;
  }

  int subtask() {
    return subtask;
  }

  WriteResult files() {
    return files;
  }

  SortedMap<Integer, ShardCounts> shardCounts() {
    return Collections.unmodifiableSortedMap(shardCounts);
  }

  boolean isEmpty() {
    return files.dataFiles().length == 0 && files.deleteFiles().length == 0;
  }

  @Override
  public String toString() {
    return "WriterResult{checkpoint="
        + checkpointId
        + ", subtask="
        + subtask
        + ", dataFiles="
        + files.dataFiles().length
        + ", deleteFiles="
        + files.deleteFiles().length
        + ", shards="
        + shardCounts.keySet()
        + '}';
  }
}
