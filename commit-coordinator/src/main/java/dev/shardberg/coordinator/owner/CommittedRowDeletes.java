package dev.shardberg.coordinator.owner;

import dev.shardberg.coordinator.TableFormats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.util.CharSequenceSet;
import org.apache.iceberg.util.StructLikeUtil;

/**
 * The rows of committed data files that one checkpoint deletes, by position, and the delete files
 * that say so. On a format-v3 table they become <b>deletion vectors</b>: one per data file, merged
 * with the file's previous vector (which the commit must remove: {@link
 * DeleteWriteResult#rewrittenDeleteFiles()}), all of them in one Puffin file. On a v2 table they
 * become one position-delete file per partition, sorted by file and position as the spec requires
 * (v2 readers merge several position-delete files of one data file themselves).
 *
 * <p>Not thread-safe; one instance per writer subtask and checkpoint.
 */
public final class CommittedRowDeletes {
  private final Table table;

  /** Data file → its partition and the positions deleted in it, in file order. */
  private final Map<String, Target> byFile = new TreeMap<>();

  private record Target(PartitionSpec spec, StructLike partition, NavigableSet<Long> positions) {}

  public CommittedRowDeletes(Table table) {
    this.table = table;
  }

  /**
   * Deletes the row at {@code at}, a committed data file of {@code partition} (of {@code spec}).
   */
  public void delete(FilePosition at, PartitionSpec spec, StructLike partition) {
    Target target = byFile.get(at.file());
    if (target == null) {
      target = new Target(spec, StructLikeUtil.copy(partition), new TreeSet<>());
      byFile.put(at.file(), target);
    }
    target.positions().add(at.position());
  }

  /** Drops the deletes of {@code file}: it is rewritten without those rows, and removed. */
  public void forget(String file) {
    byFile.remove(file);
  }

  public boolean isEmpty() {
    return byFile.isEmpty();
  }

  /** The data files with deleted rows. */
  public int files() {
    return byFile.size();
  }

  /**
   * Writes the delete files and clears this instance.
   *
   * @param files where the new files of a format go (the writer subtask's factories: deletion
   *     vectors are Puffin files, position deletes the table's delete format)
   * @param previousDvs each data file's current deletion vector in the table, or none (v3 only;
   *     merged into the new vector, and listed as rewritten)
   */
  public DeleteWriteResult write(
      Function<FileFormat, OutputFileFactory> files, Map<String, DeleteFile> previousDvs) {
    if (byFile.isEmpty()) {
      return new DeleteWriteResult(List.of());
    }
    try {
      return TableUtil.formatVersion(table) >= 3
          ? writeDeletionVectors(files.apply(FileFormat.PUFFIN), previousDvs)
          : writePositionDeletes(files);
    } catch (IOException e) {
      throw new UncheckedIOException(
          String.format(
              "Cannot write the deletes of %d data file(s) of table %s",
              byFile.size(), table.name()),
          e);
    } finally {
      byFile.clear();
    }
  }

  private DeleteWriteResult writeDeletionVectors(
      OutputFileFactory files, Map<String, DeleteFile> previousDvs) throws IOException {
    BaseDeleteLoader loader = new BaseDeleteLoader(dv -> table.io().newInputFile(dv));
    BaseDVFileWriter writer =
        new BaseDVFileWriter(
            files,
            file -> {
              DeleteFile previous = previousDvs.get(file);
              return previous == null ? null : loader.loadPositionDeletes(List.of(previous), file);
            });
    try (writer) {
      for (Map.Entry<String, Target> e : byFile.entrySet()) {
        Target t = e.getValue();
        for (long position : t.positions()) {
          writer.delete(e.getKey(), position, t.spec(), t.partition());
        }
      }
    }
    return writer.result();
  }

  private DeleteWriteResult writePositionDeletes(Function<FileFormat, OutputFileFactory> files)
      throws IOException {
    FileFormat format = TableFormats.deletes(table);
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table).deleteFileFormat(format).build();
    // one file per partition, its positions sorted by file then position
    Map<String, List<Map.Entry<String, Target>>> byPartition = new TreeMap<>();
    for (Map.Entry<String, Target> e : byFile.entrySet()) {
      Target t = e.getValue();
      byPartition
          .computeIfAbsent(t.spec().partitionToPath(t.partition()), p -> new ArrayList<>())
          .add(e);
    }
    List<DeleteFile> written = new ArrayList<>();
    CharSequenceSet referenced = CharSequenceSet.empty();
    for (List<Map.Entry<String, Target>> partition : byPartition.values()) {
      Target first = partition.get(0).getValue();
      PositionDeleteWriter<Record> writer =
          writers.newPositionDeleteWriter(
              files.apply(format).newOutputFile(first.spec(), first.partition()),
              first.spec(),
              first.partition());
      try (writer) {
        PositionDelete<Record> delete = PositionDelete.create();
        for (Map.Entry<String, Target> e : partition) {
          String file = e.getKey();
          for (long position : e.getValue().positions()) {
            writer.write(delete.set(file, position));
          }
        }
      }
      written.addAll(writer.result().deleteFiles());
      referenced.addAll(writer.result().referencedDataFiles());
    }
    return new DeleteWriteResult(written, referenced);
  }
}
