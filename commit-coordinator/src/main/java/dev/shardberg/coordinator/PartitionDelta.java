package dev.shardberg.coordinator;

import dev.shardberg.coordinator.owner.FilePosition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.io.DataWriteResult;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.io.RollingDataWriter;
import org.apache.iceberg.io.RollingEqualityDeleteWriter;
import org.apache.iceberg.io.RollingPositionDeleteWriter;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeMap;
import org.apache.iceberg.util.StructLikeUtil;

/**
 * One partition's files of one {@link DeltaTaskWriter} for one checkpoint: a data file, a key-only
 * equality-delete file and a position-delete file, each opened only when needed, and the keys
 * written so far with their positions; and the closing of many partitions at once ({@link
 * #closeAll}).
 *
 * <p>{@link #write} and {@link #deleteKey} run on the writer's thread and take the writer's current
 * file writers (they change at a schema switch); {@link #close} touches nothing of the writer, so
 * it may run on a close thread.
 */
final class PartitionDelta {
  /**
   * What closing one partition produced: its files, and the position-delete files it opened to
   * close.
   */
  record Closed(
      List<DataFile> dataFiles,
      List<DeleteFile> deleteFiles,
      List<CharSequence> referencedDataFiles,
      long filesOpened) {}

  /** Where a row written in this checkpoint lives. */
  private record Position(CharSequence path, long row) {}

  private final PartitionKey partition;
  private final PartitionSpec spec;
  private final OutputFileFactory outputFiles;
  private final FileIO io;
  private final long targetFileSize;

  /** The writer's key wrapper, shared by its partitions (used on the writer's thread only). */
  private final RowDataWrapper keyWrapper;

  private final StructLikeMap<Position> writtenKeys;
  private final List<Position> deletedPositions = new ArrayList<>();
  private RollingDataWriter<RowData> data;
  private CharSequence currentPath;

  /** Where the last row written went (the partition owner's index records it). */
  private FilePosition lastWritten;

  private RollingEqualityDeleteWriter<RowData> equalityDeletes;

  PartitionDelta(
      PartitionKey partition,
      PartitionSpec spec,
      OutputFileFactory outputFiles,
      FileIO io,
      long targetFileSize,
      Types.StructType keyType,
      RowDataWrapper keyWrapper) {
    this.partition = partition;
    this.spec = spec;
    this.outputFiles = outputFiles;
    this.io = io;
    this.targetFileSize = targetFileSize;
    this.keyWrapper = keyWrapper;
    this.writtenKeys = StructLikeMap.create(keyType);
  }

  /**
   * Writes {@code row}, whose key columns are {@code key}; a row of the same key written earlier in
   * this checkpoint is deleted by position. A null {@code key}: the row is not remembered here (the
   * partition's owner keeps every row's place itself, {@link #lastWritten()}).
   *
   * @return files opened (a new data file, or a roll-over to one at the target size)
   */
  int write(FileWriterFactory<RowData> fileWriters, RowData row, RowData key) {
    int opened = 0;
    if (data == null) {
      data = new RollingDataWriter<>(fileWriters, outputFiles, io, targetFileSize, spec, partition);
      opened++;
    }
    long rowInFile = data.currentFileRows();
    if (rowInFile == 0 || currentPath == null) {
      currentPath = data.currentFilePath(); // a new file; computing the location costs per call
    }
    if (key != null) {
      StructLike copy = StructLikeUtil.copy(keyWrapper.wrap(key));
      Position previous = writtenKeys.put(copy, new Position(currentPath, rowInFile));
      if (previous != null) {
        deletedPositions.add(previous); // the same key twice in one checkpoint: the later row wins
      }
    }
    lastWritten = new FilePosition(currentPath.toString(), rowInFile);
    data.write(row);
    if (data.currentFileRows() <= rowInFile) {
      opened++; // rolled over to a new file at the target size
    }
    return opened;
  }

  /** Where the row of the last {@link #write} went. */
  FilePosition lastWritten() {
    return lastWritten;
  }

  /**
   * Deletes the row of {@code key}: by position when written in this checkpoint, else by an
   * equality delete.
   *
   * @return files opened (the equality-delete file)
   */
  int deleteKey(FileWriterFactory<RowData> fileWriters, RowData key) {
    Position written = writtenKeys.remove(keyWrapper.wrap(key));
    if (written != null) {
      deletedPositions.add(written); // written in this checkpoint: no older version to delete
      return 0;
    }
    int opened = 0;
    if (equalityDeletes == null) {
      equalityDeletes =
          new RollingEqualityDeleteWriter<>(
              fileWriters, outputFiles, io, targetFileSize, spec, partition);
      opened++;
    }
    equalityDeletes.write(key);
    return opened;
  }

  /**
   * Closes this partition's open data file (a schema switch); returns its files. Touches nothing of
   * the enclosing writer.
   */
  List<DataFile> closeData() throws IOException {
    if (data == null) {
      return List.of();
    }
    data.close();
    DataWriteResult result = data.result();
    data = null;
    currentPath = null;
    return result.dataFiles();
  }

  /**
   * Closes this partition's files, its position deletes written with {@code fileWriters}; touches
   * nothing of the enclosing writer (it may run on a close thread).
   */
  Closed close(FileWriterFactory<RowData> fileWriters) throws IOException {
    List<DataFile> closedData = new ArrayList<>();
    List<DeleteFile> closedDeletes = new ArrayList<>();
    List<CharSequence> referenced = new ArrayList<>();
    long opened = 0;
    try {
      closedData.addAll(closeData());
      if (equalityDeletes != null) {
        equalityDeletes.close();
        DeleteWriteResult result = equalityDeletes.result();
        closedDeletes.addAll(result.deleteFiles());
        equalityDeletes = null;
      }
      if (!deletedPositions.isEmpty()) {
        DeleteWriteResult result = writePositionDeletes(fileWriters);
        closedDeletes.addAll(result.deleteFiles());
        referenced.addAll(result.referencedDataFiles());
        opened++;
      }
      return new Closed(closedData, closedDeletes, referenced, opened);
    } finally {
      writtenKeys.clear();
      deletedPositions.clear();
    }
  }

  private DeleteWriteResult writePositionDeletes(FileWriterFactory<RowData> fileWriters)
      throws IOException {
    deletedPositions.sort(
        Comparator.comparing((Position p) -> p.path().toString()).thenComparingLong(Position::row));
    RollingPositionDeleteWriter<RowData> writer =
        new RollingPositionDeleteWriter<>(
            fileWriters, outputFiles, io, targetFileSize, spec, partition);
    PositionDelete<RowData> delete = PositionDelete.create();
    try (writer) {
      for (Position p : deletedPositions) {
        writer.write(delete.set(p.path(), p.row()));
      }
    }
    return writer.result();
  }

  /**
   * Closes every partition's files, on {@code closePool} when there is one (null: one after the
   * other on the calling thread); waits for all of them and hands each result to {@code closed} on
   * the calling thread. Every partition is closed even when one fails; the first failure is thrown
   * with the others suppressed.
   */
  static void closeAll(
      List<PartitionDelta> open,
      FileWriterFactory<RowData> fileWriters,
      ExecutorService closePool,
      Consumer<Closed> closed)
      throws IOException {
    List<CompletableFuture<Closed>> closes = new ArrayList<>(open.size());
    for (PartitionDelta partition : open) {
      closes.add(
          closePool == null || open.size() == 1
              ? closeNow(partition, fileWriters)
              : CompletableFuture.supplyAsync(
                  () -> closeUnchecked(partition, fileWriters), closePool));
    }
    IOException failure = null;
    for (CompletableFuture<Closed> close : closes) {
      try {
        closed.accept(close.join());
      } catch (CompletionException | UncheckedIOException e) {
        Throwable cause = e instanceof CompletionException ? e.getCause() : e;
        IOException io =
            cause instanceof UncheckedIOException u
                ? u.getCause()
                : cause instanceof IOException ioe
                    ? ioe
                    : new IOException("Cannot close a partition's files", cause);
        if (failure == null) {
          failure = io;
        } else {
          failure.addSuppressed(io);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static CompletableFuture<Closed> closeNow(
      PartitionDelta partition, FileWriterFactory<RowData> fileWriters) {
    try {
      return CompletableFuture.completedFuture(partition.close(fileWriters));
    } catch (IOException | UncheckedIOException | CompletionException e) {
      return CompletableFuture.failedFuture(
          e instanceof IOException io ? new UncheckedIOException(io) : e);
    }
  }

  private static Closed closeUnchecked(
      PartitionDelta partition, FileWriterFactory<RowData> fileWriters) {
    try {
      return partition.close(fileWriters);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
