package dev.shardberg.coordinator.maintenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * File deletion for maintenance, always on the maintenance thread, never on the committer's: the
 * files only expired snapshots held, and orphan files (what no metadata reaches).
 *
 * <p>Iceberg core has no engine-free orphan-file action (Spark's needs Spark, Flink's is a stream
 * of its own operators), and its snapshot expiry computes the files to delete inside its commit,
 * which here runs on the committer's thread; so expiry commits with {@code
 * cleanExpiredFiles(false)} and this class deletes what the expired snapshots alone reached, from
 * the metadata before and after.
 */
final class FileCleanup {
  private FileCleanup() {}

  /**
   * Deletes manifest lists, manifests and content files reachable from {@code before} but not from
   * {@code after} (the metadata around an expiry commit). Returns how many files it deleted.
   */
  static int deleteExpired(FileIO io, TableMetadata before, TableMetadata after) {
    Set<Long> kept = new HashSet<>();
    after.snapshots().forEach(s -> kept.add(s.snapshotId()));
    Reachable stillReachable = new Reachable(io, after.specsById());
    after.snapshots().forEach(stillReachable::addSnapshot);
    Reachable expired = new Reachable(io, before.specsById());
    for (Snapshot snapshot : before.snapshots()) {
      if (!kept.contains(snapshot.snapshotId())) {
        expired.addSnapshot(snapshot);
      }
    }
    int deleted = 0;
    for (String location : expired.locations) {
      if (!stillReachable.paths.contains(path(location)) && delete(io, location)) {
        deleted++;
      }
    }
    return deleted;
  }

  /**
   * Deletes every file under the table location older than {@code olderThanMillis} that neither the
   * table's metadata, nor {@code collectedFiles} (writers' files the coordinator holds for a
   * checkpoint it has not staged yet), nor {@code pendingManifests} (the coordinator's pending
   * checkpoints: their temporary manifests and every file they list) reach. Hidden files (names
   * starting with '.' or '_') are left alone. Returns how many it deleted, or -1 when the table's
   * FileIO cannot list.
   *
   * <p>Order matters, because the coordinator stages and commits meanwhile: list first; then read
   * the collected files; then the pending checkpoints; then refresh the table and collect what it
   * reaches. A listed file a checkpoint needs is collected at the second step, or pending at the
   * third (the coordinator publishes a staged checkpoint before it forgets its collected files), or
   * committed before the fourth (it publishes a committed checkpoint's removal after the commit),
   * so it is kept either way. A writer's file that reaches the coordinator after the second step
   * was closed at the checkpoint in progress, younger than any cutoff the configuration allows.
   */
  static int deleteOrphans(
      Table table,
      long olderThanMillis,
      Supplier<? extends Collection<String>> collectedFiles,
      Supplier<? extends Collection<byte[]>> pendingManifests) {
    if (!(table.io() instanceof SupportsPrefixOperations listing)) {
      return -1;
    }
    List<String> candidates = new ArrayList<>();
    for (FileInfo file : listing.listPrefix(table.location())) {
      String name = file.location().substring(file.location().lastIndexOf('/') + 1);
      if (!name.startsWith(".")
          && !name.startsWith("_")
          && file.createdAtMillis() < olderThanMillis) {
        candidates.add(file.location());
      }
    }
    if (candidates.isEmpty()) {
      return 0;
    }
    Collection<String> collected = List.copyOf(collectedFiles.get());
    Collection<byte[]> pending = pendingManifests.get();
    table.refresh();
    Reachable reachable = new Reachable(table.io(), table.specs());
    collected.forEach(reachable::addPath);
    for (byte[] encoded : pending) {
      try {
        ManifestFile manifest = ManifestFiles.decode(encoded);
        reachable.addPath(manifest.path());
        reachable.addManifestFiles(manifest);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    ReachableFileUtil.metadataFileLocations(table, true).forEach(reachable::addPath);
    reachable.addPath(ReachableFileUtil.versionHintLocation(table));
    ReachableFileUtil.statisticsFilesLocations(table).forEach(reachable::addPath);
    table.snapshots().forEach(reachable::addSnapshot);
    int deleted = 0;
    for (String location : candidates) {
      if (!reachable.paths.contains(path(location)) && delete(table.io(), location)) {
        deleted++;
      }
    }
    return deleted;
  }

  private static boolean delete(FileIO io, String location) {
    try {
      io.deleteFile(location);
      return true;
    } catch (RuntimeException e) {
      return false; // a later run finds it again
    }
  }

  /** Locations compared by path: listings and metadata may spell the scheme differently. */
  static String path(String location) {
    try {
      URI uri = URI.create(location);
      return uri.getPath() == null ? location : uri.getPath();
    } catch (IllegalArgumentException e) {
      return location;
    }
  }

  /** Files reachable from snapshots, each manifest read once. */
  private static final class Reachable {
    private final FileIO io;
    private final java.util.Map<Integer, org.apache.iceberg.PartitionSpec> specs;
    private final Set<String> paths = new HashSet<>();
    private final Set<String> locations = new java.util.LinkedHashSet<>();
    private final Set<String> manifestsRead = new HashSet<>();

    Reachable(FileIO io, java.util.Map<Integer, org.apache.iceberg.PartitionSpec> specs) {
      this.io = io;
      this.specs = specs;
    }

    void addPath(String location) {
      if (location != null) {
        paths.add(path(location));
        locations.add(location);
      }
    }

    void addSnapshot(Snapshot snapshot) {
      addPath(snapshot.manifestListLocation());
      for (ManifestFile manifest : snapshot.allManifests(io)) {
        addPath(manifest.path());
        if (manifestsRead.add(manifest.path())) {
          try {
            addManifestFiles(manifest);
          } catch (IOException e) {
            throw new UncheckedIOException("Cannot read manifest " + manifest.path(), e);
          }
        }
      }
    }

    /**
     * Every live file the manifest lists (a removed entry's file is live in an older snapshot or
     * needed by none).
     */
    void addManifestFiles(ManifestFile manifest) throws IOException {
      if (manifest.content() == ManifestContent.DATA) {
        try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io, specs)) {
          for (DataFile file : reader) {
            addPath(file.location());
          }
        }
      } else {
        try (ManifestReader<DeleteFile> reader =
            ManifestFiles.readDeleteManifest(manifest, io, specs)) {
          for (DeleteFile file : reader) {
            addPath(file.location());
          }
        }
      }
    }
  }
}
