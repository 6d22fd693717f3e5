package dev.shardberg.coordinator.zk;

import dev.shardberg.coordinator.CommitDeferredException;
import dev.shardberg.coordinator.CommitGuard;
import dev.shardberg.coordinator.NoopCommitGuard;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.HistogramStatistics;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

/**
 * Several committers on ONE Iceberg table (Hadoop catalog on local disk), each with its own catalog
 * and table instance as separate jobs would have: pipelines that append one data file per
 * "checkpoint" with the coordinator's commit protocol (refresh, already-committed check from the
 * snapshot summaries, fencing check, commit with {@code shardberg.*} summary), and a maintenance
 * loop (manifest rewrites, and a marker file appended and deleted again). With ZooKeeper options
 * every commit goes through the table lock; without, they race as the seed team's N jobs did.
 *
 * <p>Iceberg's own commit retries are off on this table ({@code commit.retry.num-retries=0}), so
 * every stale-base conflict surfaces as a {@link CommitFailedException}, is counted, and is retried
 * by the committer from a fresh table.
 *
 * <p>Lock waits are measured as the coordinator's {@code lockWaitMs} histogram measures them: from
 * asking for the lock to running under it, in a Flink histogram per committer.
 */
final class SharedTableWorkload {
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.optional(3, "payload", Types.StringType.get()));
  static final PartitionSpec SPEC =
      PartitionSpec.builderFor(SCHEMA).identity("shard_number").build();
  static final TableIdentifier TABLE = TableIdentifier.of(Namespace.of("shop"), "orders");
  static final String TABLE_NAME = "hadoop.shop.orders";
  static final int SHARDS_PER_PIPELINE = 4;
  static final int ROWS_PER_COMMIT = 5;
  static final int MARKER_SHARD = 999;

  /** Lock waits kept per committer, the most recent ones. */
  static final int LOCK_WAIT_WINDOW = 4096;

  /** What a run did. Conflicts are Iceberg {@link CommitFailedException}s (stale base). */
  record Result(
      long pipelineCommits,
      long maintenanceCommits,
      long conflicts,
      long lockTimeouts,
      Duration elapsed,
      List<HistogramStatistics> lockWaitsMs,
      Set<Long> expectedIds,
      Set<Long> actualIds,
      long rowsRead) {

    double commitsPerMinute() {
      return (pipelineCommits + maintenanceCommits) * 60_000.0 / Math.max(1, elapsed.toMillis());
    }

    @Override
    public String toString() {
      return String.format(
          "%d pipeline + %d maintenance commits in %d ms (%.0f commits/min), %d conflicts"
              + " (CommitFailedException), %d lock timeouts, %d rows read / %d expected, lock"
              + " waits p50/p99/max ms %s",
          pipelineCommits,
          maintenanceCommits,
          elapsed.toMillis(),
          commitsPerMinute(),
          conflicts,
          lockTimeouts,
          rowsRead,
          expectedIds.size(),
          lockWaitsMs.stream().map(SharedTableWorkload::describe).toList());
    }
  }

  /** A committer's lock waits: {@code p50/p99/max} in ms. */
  static String describe(HistogramStatistics waitsMs) {
    return String.format(
        "%.0f/%.0f/%d",
        waitsMs.getQuantile(0.5),
        waitsMs.getQuantile(0.99),
        waitsMs.size() == 0 ? 0 : waitsMs.getMax());
  }

  /** A new histogram of lock waits in ms. */
  static Histogram lockWaitHistogram() {
    return new DescriptiveStatisticsHistogram(LOCK_WAIT_WINDOW);
  }

  private final String warehouse;
  private final ZooKeeperOptions zooKeeper; // null: no lock
  private final int pipelines;

  SharedTableWorkload(String warehouse, ZooKeeperOptions zooKeeper, int pipelines) {
    this.warehouse = warehouse;
    this.zooKeeper = zooKeeper;
    this.pipelines = pipelines;
  }

  void createTable() {
    HadoopCatalog catalog = catalog();
    catalog.createTable(
        TABLE,
        SCHEMA,
        SPEC,
        Map.of(
            TableProperties.FORMAT_VERSION, "2",
            TableProperties.COMMIT_NUM_RETRIES, "0"));
  }

  private HadoopCatalog catalog() {
    return new HadoopCatalog(new Configuration(), warehouse);
  }

  /**
   * Runs every pipeline until it committed {@code commitsPerPipeline} checkpoints or the deadline
   * passed (whichever is set), with the maintenance loop running until the pipelines are done.
   */
  Result run(int commitsPerPipeline, Duration duration) throws Exception {
    long start = System.nanoTime();
    long deadline = duration == null ? Long.MAX_VALUE : start + duration.toNanos();
    AtomicLong conflicts = new AtomicLong();
    AtomicLong lockTimeouts = new AtomicLong();
    AtomicLong pipelinesRunning = new AtomicLong(pipelines);
    List<CommitGuard> guards = new ArrayList<>();
    List<Histogram> lockWaits = new ArrayList<>();
    ExecutorService executor = Executors.newFixedThreadPool(pipelines + 1);
    try {
      List<Future<Long>> pipelineRuns = new ArrayList<>();
      for (int p = 0; p < pipelines; p++) {
        CommitGuard guard =
            zooKeeper == null
                ? NoopCommitGuard.INSTANCE
                : ZooKeeperCommitGuard.open(zooKeeper, "pipeline-" + p, TABLE_NAME);
        guards.add(guard);
        Histogram waits = lockWaitHistogram();
        if (zooKeeper != null) {
          lockWaits.add(waits);
        }
        int pipeline = p;
        pipelineRuns.add(
            executor.submit(
                () -> {
                  try {
                    return runPipeline(
                        pipeline,
                        guard,
                        commitsPerPipeline,
                        deadline,
                        conflicts,
                        lockTimeouts,
                        waits);
                  } finally {
                    pipelinesRunning.decrementAndGet();
                  }
                }));
      }
      ZooKeeperTableLock maintenanceLock =
          zooKeeper == null ? null : ZooKeeperTableLock.open(zooKeeper, TABLE_NAME);
      Histogram maintenanceWaits = lockWaitHistogram();
      if (maintenanceLock != null) {
        lockWaits.add(maintenanceWaits);
      }
      Future<Long> maintenance =
          executor.submit(
              () ->
                  maintain(
                      catalog().loadTable(TABLE),
                      maintenanceLock,
                      () -> pipelinesRunning.get() > 0,
                      conflicts,
                      lockTimeouts,
                      Duration.ZERO,
                      maintenanceWaits));
      long pipelineCommits = 0;
      for (Future<Long> run : pipelineRuns) {
        pipelineCommits += run.get();
      }
      long maintenanceCommits = maintenance.get();
      Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

      if (maintenanceLock != null) {
        maintenanceLock.close();
      }
      Table table = catalog().loadTable(TABLE);
      Set<Long> expected = expectedIds(table);
      List<Long> actual = readIds(table);
      return new Result(
          pipelineCommits,
          maintenanceCommits,
          conflicts.get(),
          lockTimeouts.get(),
          elapsed,
          lockWaits.stream().map(Histogram::getStatistics).toList(),
          expected,
          new HashSet<>(actual),
          actual.size());
    } finally {
      executor.shutdownNow();
      for (CommitGuard guard : guards) {
        guard.close();
      }
    }
  }

  private long runPipeline(
      int pipeline,
      CommitGuard guard,
      int commitsPerPipeline,
      long deadline,
      AtomicLong conflicts,
      AtomicLong lockTimeouts,
      Histogram lockWaits)
      throws Exception {
    Table table = catalog().loadTable(TABLE);
    String pipelineId = "pipeline-" + pipeline;
    long committed = 0;
    for (long checkpoint = 1;
        checkpoint <= commitsPerPipeline && System.nanoTime() < deadline;
        checkpoint++) {
      DataFile file = writeDataFile(table, pipeline, checkpoint); // writers work outside the lock
      long checkpointId = checkpoint;
      while (true) {
        try {
          long askedForLock = System.nanoTime();
          guard.runExclusive(
              zooKeeper == null ? Duration.ofMinutes(1) : zooKeeper.lockTimeout(),
              () -> {
                lockWaits.update((System.nanoTime() - askedForLock) / 1_000_000);
                return commitCheckpoint(table, guard, pipelineId, checkpointId, file);
              });
          committed++;
          break;
        } catch (CommitFailedException e) {
          conflicts.incrementAndGet(); // stale base: refresh and try again, as the coordinator does
        } catch (CommitDeferredException e) {
          lockTimeouts.incrementAndGet();
        }
      }
    }
    return committed;
  }

  /** The coordinator's protocol for one checkpoint, in miniature. */
  private static boolean commitCheckpoint(
      Table table, CommitGuard guard, String pipelineId, long checkpointId, DataFile file) {
    table.refresh();
    if (maxCommittedCheckpoint(table, pipelineId) >= checkpointId) {
      return false; // landed on an earlier attempt
    }
    // the guard checked its fencing epoch under the lock before this action, as for the coordinator
    table
        .newRowDelta()
        .addRows(file)
        .set("shardberg.pipeline-id", pipelineId)
        .set("shardberg.checkpoint-id", Long.toString(checkpointId))
        .set("shardberg.epoch", Long.toString(guard.epoch()))
        .commit();
    return true;
  }

  private static long maxCommittedCheckpoint(Table table, String pipelineId) {
    for (Snapshot snapshot = table.currentSnapshot();
        snapshot != null;
        snapshot = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId())) {
      if (pipelineId.equals(snapshot.summary().get("shardberg.pipeline-id"))) {
        return Long.parseLong(snapshot.summary().get("shardberg.checkpoint-id"));
      }
    }
    return 0;
  }

  /**
   * Maintenance stand-in until {@code keepGoing} turns false: rewrites all manifests, then appends
   * a marker file and deletes it again, and so on, resting {@code pause} after each round (a
   * maintenance run that does not spin); through {@code lock} when given, its waits in {@code
   * lockWaits}. Returns the number of commits; a stale-base {@link CommitFailedException} is
   * counted in {@code conflicts} and retried from a fresh table.
   */
  static long maintain(
      Table table,
      ZooKeeperTableLock lock,
      BooleanSupplier keepGoing,
      AtomicLong conflicts,
      AtomicLong lockTimeouts,
      Duration pause,
      Histogram lockWaits)
      throws Exception {
    long commits = 0;
    for (long round = 0; keepGoing.getAsBoolean(); round++) {
      if (round > 0 && !pause.isZero()) {
        Thread.sleep(pause.toMillis());
      }
      DataFile marker = round % 2 == 0 ? null : writeMarkerFile(table, round);
      Callable<Integer> work =
          () -> {
            table.refresh();
            if (marker == null) {
              if (table.currentSnapshot() == null) {
                return 0; // nothing to rewrite yet
              }
              table.rewriteManifests().rewriteIf(manifest -> true).commit();
              return 1;
            }
            table.newAppend().appendFile(marker).commit();
            table.newDelete().deleteFile(marker).commit();
            return 2;
          };
      boolean done = false;
      while (!done) {
        try {
          long askedForLock = System.nanoTime();
          commits +=
              lock == null
                  ? work.call()
                  : lock.runExclusive(
                      lock.connection().options().lockTimeout(),
                      () -> {
                        lockWaits.update((System.nanoTime() - askedForLock) / 1_000_000);
                        return work.call();
                      });
          done = true;
        } catch (CommitFailedException e) {
          conflicts.incrementAndGet();
          if (marker != null && markerIsLive(table, marker)) {
            // the append landed, the delete lost the race: delete it on the next attempt
            commits++;
            while (true) {
              try {
                table.refresh();
                table.newDelete().deleteFile(marker).commit();
                commits++;
                break;
              } catch (CommitFailedException again) {
                conflicts.incrementAndGet();
              }
            }
            done = true;
          }
        } catch (CommitDeferredException e) {
          lockTimeouts.incrementAndGet();
        }
      }
    }
    return commits;
  }

  private static boolean markerIsLive(Table table, DataFile marker) throws IOException {
    table.refresh();
    try (CloseableIterable<org.apache.iceberg.FileScanTask> tasks = table.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        if (task.file().location().equals(marker.location())) {
          return true;
        }
      }
    }
    return false;
  }

  static long rowId(int pipeline, long checkpoint, int row) {
    return pipeline * 1_000_000_000L + checkpoint * 1_000L + row;
  }

  private static int shardOf(int pipeline, long checkpoint) {
    return pipeline * SHARDS_PER_PIPELINE + (int) (checkpoint % SHARDS_PER_PIPELINE);
  }

  private static DataFile writeDataFile(Table table, int pipeline, long checkpoint) {
    List<Record> rows = new ArrayList<>();
    for (int r = 0; r < ROWS_PER_COMMIT; r++) {
      rows.add(row(shardOf(pipeline, checkpoint), rowId(pipeline, checkpoint, r)));
    }
    return write(table, pipeline, checkpoint, rows);
  }

  private static DataFile writeMarkerFile(Table table, long round) {
    return write(table, 900, round, List.of(row(MARKER_SHARD, -round)));
  }

  private static Record row(int shard, long id) {
    GenericRecord record = GenericRecord.create(SCHEMA);
    record.setField("shard_number", shard);
    record.setField("id", id);
    record.setField("payload", "row-" + id);
    return record;
  }

  private static DataFile write(Table table, int writer, long attempt, List<Record> rows) {
    PartitionKey partition = new PartitionKey(table.spec(), table.schema());
    partition.partition(rows.get(0));
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, writer, attempt).format(FileFormat.PARQUET).build();
    DataWriter<Record> dataWriter =
        new GenericAppenderFactory(table.schema(), table.spec())
            .newDataWriter(files.newOutputFile(partition), FileFormat.PARQUET, partition);
    try (dataWriter) {
      rows.forEach(dataWriter::write);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return dataWriter.toDataFile();
  }

  /** Every row of every checkpoint the table's summaries say each pipeline committed. */
  private Set<Long> expectedIds(Table table) {
    Set<Long> ids = new HashSet<>();
    for (int p = 0; p < pipelines; p++) {
      long committed = maxCommittedCheckpoint(table, "pipeline-" + p);
      for (long c = 1; c <= committed; c++) {
        for (int r = 0; r < ROWS_PER_COMMIT; r++) {
          ids.add(rowId(p, c, r));
        }
      }
    }
    return ids;
  }

  private static List<Long> readIds(Table table) throws IOException {
    List<Long> ids = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record row : rows) {
        ids.add((Long) row.getField("id"));
      }
    }
    return ids;
  }
}
