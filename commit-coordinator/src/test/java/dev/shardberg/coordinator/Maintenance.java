package dev.shardberg.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Orphan-file removal for a table on the local file system, as Iceberg's orphan-file actions do it
 * (Spark's needs Spark; Flink's runs inside a maintenance stream): delete every file under the
 * table location that no metadata file, snapshot, manifest or statistics file reaches and that is
 * older than a cutoff.
 */
final class Maintenance {
  private Maintenance() {}

  /** Returns how many files it deleted. */
  static int removeOrphanFiles(Table table, long olderThanMillis) {
    table.refresh();
    Set<String> reachable = new HashSet<>();
    ReachableFileUtil.metadataFileLocations(table, true).forEach(l -> reachable.add(local(l)));
    reachable.add(local(ReachableFileUtil.versionHintLocation(table)));
    ReachableFileUtil.statisticsFilesLocations(table).forEach(l -> reachable.add(local(l)));
    for (Snapshot snapshot : table.snapshots()) {
      reachable.add(local(snapshot.manifestListLocation()));
      for (ManifestFile manifest : snapshot.allManifests(table.io())) {
        reachable.add(local(manifest.path()));
        reachable.addAll(filesOf(table, manifest));
      }
    }
    Path root = Path.of(local(table.location()));
    int deleted = 0;
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        String name = file.getFileName().toString();
        if (name.startsWith(".") && name.endsWith(".crc")) {
          continue; // Hadoop's checksum side files go with their file
        }
        if (!reachable.contains(file.toString())
            && Files.getLastModifiedTime(file).toMillis() < olderThanMillis) {
          Files.delete(file);
          deleted++;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return deleted;
  }

  private static List<String> filesOf(Table table, ManifestFile manifest) {
    List<String> paths = new java.util.ArrayList<>();
    try {
      if (manifest.content() == ManifestContent.DATA) {
        try (ManifestReader<DataFile> reader =
            ManifestFiles.read(manifest, table.io(), table.specs())) {
          for (ContentFile<?> file : reader) {
            paths.add(local(file.location()));
          }
        }
      } else {
        try (ManifestReader<DeleteFile> reader =
            ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
          for (ContentFile<?> file : reader) {
            paths.add(local(file.location()));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return paths;
  }

  private static String local(String location) {
    URI uri = URI.create(location);
    return Path.of(uri.getScheme() == null ? location : uri.getPath()).toString();
  }
}
