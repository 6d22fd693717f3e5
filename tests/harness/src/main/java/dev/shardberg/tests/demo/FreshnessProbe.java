package dev.shardberg.tests.demo;

import dev.shardberg.coordinator.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.InternalData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * End-to-end freshness, measured exactly: every row written by a change carries the UTC time of its
 * MySQL write in {@code updated_at}; it becomes visible in the snapshot whose added data files hold
 * it, so its freshness is that snapshot's commit time minus {@code updated_at}. The probe reads
 * only the data files each new snapshot of the pipeline added, and samples each row version (key
 * and write time) once, where it first appears. Deletes carry no timestamp and are not sampled.
 */
public final class FreshnessProbe {
  private final Table table;
  private final String pipelineId;
  private final String timeColumn;
  private final long sinceMillis;
  private final Set<Long> seen = new HashSet<>();
  private final List<Long> samplesMillis = new ArrayList<>();

  /** Per sample, when its row was written (epoch ms), in the order of {@link #samplesMillis}. */
  private final List<Long> writtenAtMillis = new ArrayList<>();

  /**
   * Row versions already sampled: a row rewritten later (an owner's compaction in {@code
   * target.delete-mode: position} re-adds the partition's live rows in the same commit as new
   * changes) was visible since its first snapshot and is not sampled again.
   */
  private final Set<List<Object>> counted = new HashSet<>();

  /** Samples only rows written at or after {@code since} (the start of the change phase). */
  public FreshnessProbe(Table table, String pipelineId, String timeColumn, LocalDateTime since) {
    this.table = table;
    this.pipelineId = pipelineId;
    this.timeColumn = timeColumn;
    this.sinceMillis = since.toInstant(ZoneOffset.UTC).toEpochMilli();
  }

  /** Reads the snapshots committed since the last poll; returns how many samples were added. */
  public synchronized int poll() {
    table.refresh();
    List<Snapshot> fresh = new ArrayList<>();
    for (Snapshot s = table.currentSnapshot();
        s != null && !seen.contains(s.snapshotId());
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      fresh.add(s);
    }
    int before = samplesMillis.size();
    java.util.Collections.reverse(fresh); // oldest first: a row counts where it first appears
    List<String> columns = new ArrayList<>(table.schema().identifierFieldNames());
    columns.add(timeColumn);
    Schema projection = table.schema().select(columns);
    int time = columns.size() - 1;
    for (Snapshot snapshot : fresh) {
      seen.add(snapshot.snapshotId());
      if (!pipelineId.equals(snapshot.summary().get(SnapshotSummaryKeys.PIPELINE_ID))) {
        continue;
      }
      for (DataFile file : snapshot.addedDataFiles(table.io())) {
        try (CloseableIterable<StructLike> rows =
            InternalData.read(file.format(), table.io().newInputFile(file.location()))
                .project(projection)
                .build()) {
          for (StructLike row : rows) {
            Long writtenMillis = epochMillis(row.get(time, Object.class));
            if (writtenMillis != null
                && writtenMillis >= sinceMillis
                && counted.add(rowVersion(row, time + 1))) {
              samplesMillis.add(snapshot.timestampMillis() - writtenMillis);
              writtenAtMillis.add(writtenMillis);
            }
          }
        } catch (IOException e) {
          throw new UncheckedIOException("Cannot read " + file.location(), e);
        }
      }
    }
    return samplesMillis.size() - before;
  }

  /** A row version: its key and write time (a rewrite of the row keeps both). */
  private static List<Object> rowVersion(StructLike row, int fields) {
    List<Object> version = new ArrayList<>(fields);
    for (int i = 0; i < fields; i++) {
      Object value = row.get(i, Object.class);
      version.add(value instanceof CharSequence chars ? chars.toString() : value);
    }
    return version;
  }

  /** Internal readers give timestamps as epoch microseconds; generic ones as LocalDateTime. */
  private static Long epochMillis(Object value) {
    if (value instanceof Long micros) {
      return Math.floorDiv(micros, 1000L);
    }
    if (value instanceof LocalDateTime local) {
      return local.toInstant(ZoneOffset.UTC).toEpochMilli();
    }
    return null;
  }

  /** Marks every snapshot committed so far as seen (call before the change phase starts). */
  public synchronized void skipExisting() {
    table.refresh();
    for (Snapshot s : table.snapshots()) {
      seen.add(s.snapshotId());
    }
  }

  public synchronized int samples() {
    return samplesMillis.size();
  }

  /** When the row of the stalest sample was written (epoch ms), -1 without samples. */
  public synchronized long stalestWrittenAtMillis() {
    int worst = -1;
    for (int i = 0; i < samplesMillis.size(); i++) {
      if (worst < 0 || samplesMillis.get(i) > samplesMillis.get(worst)) {
        worst = i;
      }
    }
    return worst < 0 ? -1 : writtenAtMillis.get(worst);
  }

  /** The {@code q}-quantile (0..1) of the freshness samples in milliseconds, -1 without samples. */
  public synchronized long quantileMillis(double q) {
    return quantileMillis(q, written -> true);
  }

  /**
   * As {@link #quantileMillis(double)}, over the samples of rows written when {@code writtenAt}
   * (epoch ms) says.
   */
  public synchronized long quantileMillis(double q, java.util.function.LongPredicate writtenAt) {
    List<Long> sorted = new ArrayList<>();
    for (int i = 0; i < samplesMillis.size(); i++) {
      if (writtenAt.test(writtenAtMillis.get(i))) {
        sorted.add(samplesMillis.get(i));
      }
    }
    if (sorted.isEmpty()) {
      return -1;
    }
    Collections.sort(sorted);
    int index = (int) Math.ceil(q * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }
}
