package dev.shardberg.tests.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.InternalData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the Iceberg table from outside the job, as a reader would: polls the table's snapshots
 * and records every new one (time, files, bytes, records). Once {@link #trackFreshness} is on, it
 * also reads the {@code shard_number} and {@code mysql_commit_ts} of every row in each new
 * snapshot's added data files: a row's freshness is the time this watcher first saw the snapshot
 * (the refresh that found it: the moment it was visible to a reader, at most one poll late) minus
 * the MySQL commit time of the change that wrote it (inserts and updates; a delete leaves no row to
 * time). Not {@link Snapshot#timestampMillis()}: the committer stamps that before it swaps the
 * metadata pointer, so it is earlier than any reader can see the rows. Each row version (shard,
 * key, commit ts) is timed once, in the snapshot that first holds it: a compaction that writes it
 * again (an owner's, in the checkpoint's own commit, with {@code target.delete-mode: position})
 * does not make it fresh again. Per shard it keeps the newest commit ts made visible, which tells
 * when the table has caught up.
 */
final class TableWatcher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TableWatcher.class);
  private static final long POLL_MS = 200;
  private static final int READERS = 16;

  /** One observed snapshot. */
  record Commit(
      long snapshotId,
      long timestampMillis,
      long firstSeenMillis,
      String operation,
      long addedDataFiles,
      long addedDeleteFiles,
      long addedFilesBytes,
      long addedRecords,
      long totalRecords,
      long deletedDataFiles,
      String maintenance) {}

  /**
   * Freshness of one committed row: when the watcher first saw the snapshot that holds it (visible
   * to a reader), and its lag in ms from its MySQL commit to then.
   */
  record FreshnessSample(long firstSeenMillis, long freshnessMillis) {}

  private final Table table;
  private final Schema projection;
  private final int shardField;
  private final int keyField;
  private final int commitTsField;
  private final SeenRowVersions timed = new SeenRowVersions();
  private final ScheduledExecutorService poller;

  /**
   * Reads a snapshot's added data files at once: one after the other, a poll over a store with
   * request latency (an object store: a few requests per file) falls behind the commits, and every
   * later snapshot is then seen late.
   */
  private final ExecutorService readers;

  private final Set<Long> seen = new HashSet<>();
  private final ConcurrentLinkedQueue<Commit> commits = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<FreshnessSample> freshness = new ConcurrentLinkedQueue<>();
  private final AtomicLongArray newestVisibleTs;
  private final Map<Long, Long> liveRows = new java.util.concurrent.ConcurrentHashMap<>();
  private volatile long freshnessFromMicros = Long.MAX_VALUE;
  private volatile long totalRecords;
  private final AtomicLong newestVisibleOverall = new AtomicLong();
  private volatile RuntimeException failure;

  TableWatcher(Table table, int shards) {
    this.table = table;
    this.projection = table.schema().select("shard_number", "id", "mysql_commit_ts");
    List<String> fields =
        projection.columns().stream()
            .map(org.apache.iceberg.types.Types.NestedField::name)
            .toList();
    this.shardField = fields.indexOf("shard_number");
    this.keyField = fields.indexOf("id");
    this.commitTsField = fields.indexOf("mysql_commit_ts");
    this.newestVisibleTs = new AtomicLongArray(shards);
    this.poller =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "bench-table-watcher");
              t.setDaemon(true);
              return t;
            });
    AtomicInteger readerThreads = new AtomicInteger();
    this.readers =
        Executors.newFixedThreadPool(
            READERS,
            r -> {
              Thread t = new Thread(r, "bench-table-reader-" + readerThreads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    poller.scheduleWithFixedDelay(this::pollSafely, 0, POLL_MS, TimeUnit.MILLISECONDS);
  }

  /** From now on, time every committed row whose MySQL commit is at or after {@code fromMicros}. */
  void trackFreshness(long fromMicros) {
    freshnessFromMicros = fromMicros;
  }

  long totalRecords() {
    return totalRecords;
  }

  int commitCount() {
    return commits.size();
  }

  List<Commit> commits() {
    List<Commit> list = new ArrayList<>(commits);
    list.sort(
        Comparator.comparingLong(Commit::firstSeenMillis)
            .thenComparingLong(Commit::timestampMillis));
    return list;
  }

  List<FreshnessSample> freshness() {
    return new ArrayList<>(freshness);
  }

  /** Lag now: wall clock minus the newest MySQL commit visible in the table (ms). */
  long visibleLagMillis() {
    long newest = newestVisibleOverall.get();
    return newest == 0 ? -1 : System.currentTimeMillis() - newest / 1000;
  }

  /** True when every shard's newest visible commit ts is at least its {@code mark}. */
  boolean caughtUp(long[] marks) {
    for (int s = 0; s < marks.length; s++) {
      if (newestVisibleTs.get(s) < marks[s]) {
        return false;
      }
    }
    return true;
  }

  void checkHealthy() {
    if (failure != null) {
      throw failure;
    }
  }

  private void pollSafely() {
    try {
      poll();
    } catch (RuntimeException e) {
      LOG.warn("Cannot follow Iceberg table {}: {}", table.name(), e.toString());
      failure = e;
    }
  }

  private void poll() {
    table.refresh();
    // every snapshot found by this refresh was visible to a reader by now, and not before the last
    // one
    long seenAt = System.currentTimeMillis();
    List<Snapshot> fresh = new ArrayList<>();
    for (Snapshot snapshot : table.snapshots()) {
      if (!seen.contains(snapshot.snapshotId())) {
        fresh.add(snapshot);
      }
    }
    fresh.sort(Comparator.comparingLong(Snapshot::sequenceNumber));
    for (Snapshot snapshot : fresh) {
      seen.add(snapshot.snapshotId());
      Map<String, String> summary = snapshot.summary();
      Commit commit =
          new Commit(
              snapshot.snapshotId(),
              snapshot.timestampMillis(),
              seenAt,
              snapshot.operation(),
              number(summary, SnapshotSummary.ADDED_FILES_PROP),
              number(summary, SnapshotSummary.ADDED_DELETE_FILES_PROP),
              number(summary, SnapshotSummary.ADDED_FILE_SIZE_PROP),
              number(summary, SnapshotSummary.ADDED_RECORDS_PROP),
              number(summary, SnapshotSummary.TOTAL_RECORDS_PROP),
              number(summary, SnapshotSummary.DELETED_FILES_PROP),
              summary == null ? null : summary.get("shardberg.maintenance"));
      commits.add(commit);
      totalRecords = Math.max(totalRecords, commit.totalRecords());
      // a rewrite (compaction: operation replace) re-adds old rows; they are not fresh changes
      if (freshnessFromMicros != Long.MAX_VALUE && !"replace".equals(snapshot.operation())) {
        readCommitTimes(snapshot, seenAt);
      }
    }
  }

  private void readCommitTimes(Snapshot snapshot, long seenAt) {
    long from = freshnessFromMicros;
    List<Future<?>> reads = new ArrayList<>();
    for (DataFile file : snapshot.addedDataFiles(table.io())) {
      reads.add(readers.submit(() -> readCommitTimes(file, seenAt, from)));
    }
    for (Future<?> read : reads) {
      try {
        read.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted reading the files of a snapshot", e);
      } catch (ExecutionException e) {
        throw e.getCause() instanceof RuntimeException r
            ? r
            : new IllegalStateException(e.getCause());
      }
    }
  }

  private void readCommitTimes(DataFile file, long seenAt, long from) {
    try (CloseableIterable<StructLike> rows =
        InternalData.read(file.format(), table.io().newInputFile(file.location()))
            .project(projection)
            .build()) {
      for (StructLike row : rows) {
        int shard = row.get(shardField, Integer.class);
        long ts = row.get(commitTsField, Long.class);
        if (shard >= 0 && shard < newestVisibleTs.length()) {
          newestVisibleTs.accumulateAndGet(shard, ts, Math::max);
        }
        newestVisibleOverall.accumulateAndGet(ts, Math::max);
        if (ts >= from && timed.add(shard, row.get(keyField, Long.class), ts)) {
          freshness.add(new FreshnessSample(seenAt, seenAt - ts / 1000));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read data file " + file.location() + " of " + table.name(), e);
    }
  }

  /**
   * Distinct live rows of a snapshot: its rows read with Iceberg's generic reader, deletes applied
   * (unlike the {@code total-records} summary, which counts every row in the data files, including
   * those a delete file hides). Cached per snapshot.
   */
  long liveRows(long snapshotId) {
    return liveRows.computeIfAbsent(
        snapshotId,
        id -> {
          long n = 0;
          try (CloseableIterable<org.apache.iceberg.data.Record> rows =
              org.apache.iceberg.data.IcebergGenerics.read(table)
                  .useSnapshot(id)
                  .select("shard_number")
                  .build()) {
            for (org.apache.iceberg.data.Record ignored : rows) {
              n++;
            }
          } catch (IOException e) {
            throw new UncheckedIOException(
                "Cannot count the rows of snapshot " + id + " of " + table.name(), e);
          }
          return n;
        });
  }

  /**
   * The first observed commit (in the order the watcher saw them) whose snapshot holds at least
   * {@code rows} distinct live rows, or null. Only commits whose {@code total-records} reach {@code
   * rows} are read: fewer rows in the files cannot hold that many live rows.
   */
  Commit firstWithLiveRows(long rows) {
    for (Commit c : commits()) {
      if (c.totalRecords() >= rows && liveRows(c.snapshotId()) >= rows) {
        return c;
      }
    }
    return null;
  }

  private static long number(Map<String, String> summary, String key) {
    String v = summary == null ? null : summary.get(key);
    return v == null ? 0 : Long.parseLong(v);
  }

  @Override
  public void close() {
    poller.shutdownNow();
    readers.shutdownNow();
    try {
      poller.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
