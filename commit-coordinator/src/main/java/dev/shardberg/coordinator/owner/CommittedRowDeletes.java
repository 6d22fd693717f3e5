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
import org.apache.iceberg.util.ContentFileUtil;
import org.apache.iceberg.util.StructLikeUtil;

/**
 * The rows of committed data files that one checkpoint deletes, by position, and the delete files
 * that say so: exactly one per data file, holding every position deleted in it so far — the file's
 * earlier position deletes merged in, and those of them that name only that file listed as
 * rewritten ({@link DeleteWriteResult#rewrittenDeleteFiles()}), which the commit must remove. On a
 * format-v3 table they are <b>deletion vectors</b>, all of them in one Puffin file; on a v2 table
 * <b>file-scoped position-delete files</b>, one per data file. So a data file never gathers more
 * than one delete file of ours, and the one it has goes with it when its owner rewrites it.
 *
 * <p>Why every earlier position delete is merged, not only the file's last vector: a v3 reader that
 * finds a deletion vector for a data file ignores the position-delete files that apply to it (the
 * spec makes the vector hold them). A table written before as v2 (the equality mode's deletes of
 * its own checkpoint's rows, another tool's {@code DELETE}) and upgraded keeps such files; a vector
 * written without their positions would bring those rows back. A position-delete file that names
 * several data files is merged but stays in the table (it still applies to the others; on v2 it
 * repeats positions the new file holds too, which readers take once).
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
   * @param previous each data file's position deletes in the table now (its deletion vector, or the
   *     position-delete files that apply to it), or none: merged into the new file, and those that
   *     name only that data file listed as rewritten
   */
  public DeleteWriteResult write(
      Function<FileFormat, OutputFileFactory> files, Map<String, List<DeleteFile>> previous) {
    if (byFile.isEmpty()) {
      return new DeleteWriteResult(List.of());
    }
    try {
      return TableUtil.formatVersion(table) >= 3
          ? writeDeletionVectors(files.apply(FileFormat.PUFFIN), previous)
          : writePositionDeletes(files, previous);
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
      OutputFileFactory files, Map<String, List<DeleteFile>> previous) throws IOException {
    BaseDeleteLoader loader = loader();
    BaseDVFileWriter writer =
        new BaseDVFileWriter(
            files,
            file -> {
              List<DeleteFile> before = previous.get(file);
              return before == null || before.isEmpty()
                  ? null
                  : loader.loadPositionDeletes(before, file);
            });
    try (writer) {
      for (Map.Entry<String, Target> e : byFile.entrySet()) {
        Target t = e.getValue();
        for (long position : t.positions()) {
          writer.delete(e.getKey(), position, t.spec(), t.partition());
        }
      }
    }
    return writer.result(); // lists only the file-scoped previous files as rewritten
  }

  private DeleteWriteResult writePositionDeletes(
      Function<FileFormat, OutputFileFactory> files, Map<String, List<DeleteFile>> previous)
      throws IOException {
    FileFormat format = TableFormats.deletes(table);
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table).deleteFileFormat(format).build();
    BaseDeleteLoader loader = loader();
    List<DeleteFile> written = new ArrayList<>();
    List<DeleteFile> rewritten = new ArrayList<>();
    CharSequenceSet referenced = CharSequenceSet.empty();
    for (Map.Entry<String, Target> e : byFile.entrySet()) {
      String file = e.getKey();
      Target t = e.getValue();
      NavigableSet<Long> positions = new TreeSet<>(t.positions());
      List<DeleteFile> before = previous.get(file);
      if (before != null && !before.isEmpty()) {
        loader.loadPositionDeletes(before, file).forEach(positions::add);
        for (DeleteFile delete : before) {
          if (ContentFileUtil.isFileScoped(delete)) {
            rewritten.add(delete);
          }
        }
      }
      // one file per data file, its positions sorted as the spec requires: it names that file
      // alone (its path bounds say so), so it can be merged and replaced as a vector is
      PositionDeleteWriter<Record> writer =
          writers.newPositionDeleteWriter(
              files.apply(format).newOutputFile(t.spec(), t.partition()), t.spec(), t.partition());
      try (writer) {
        PositionDelete<Record> delete = PositionDelete.create();
        for (long position : positions) {
          writer.write(delete.set(file, position));
        }
      }
      written.addAll(writer.result().deleteFiles());
      referenced.addAll(writer.result().referencedDataFiles());
    }
    return new DeleteWriteResult(written, referenced, rewritten);
  }

  private BaseDeleteLoader loader() {
    return new BaseDeleteLoader(delete -> table.io().newInputFile(delete));
  }
}
