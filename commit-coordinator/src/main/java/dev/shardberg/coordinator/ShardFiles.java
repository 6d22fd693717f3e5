package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/** Which shard numbers have data files in a table (partitions by {@code identity(shard)}). */
public final class ShardFiles {
  private ShardFiles() {}

  /**
   * Of {@code shards}, those with a data file in the current snapshot of {@code table} (refreshed
   * first); read from the manifests' partition summaries, not the files. A shard whose every row is
   * deleted but whose files are still live counts as having files.
   */
  public static SortedSet<Integer> withFiles(
      Table table, String shardColumn, Collection<Integer> shards) {
    table.refresh();
    SortedSet<Integer> withFiles = new TreeSet<>();
    if (table.currentSnapshot() == null) {
      return withFiles;
    }
    for (int shard : shards) {
      try (CloseableIterable<FileScanTask> tasks =
          table
              .newScan()
              .filter(Expressions.equal(shardColumn, shard))
              .ignoreResiduals()
              .planFiles()) {
        if (tasks.iterator().hasNext()) {
          withFiles.add(shard);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return withFiles;
  }
}
