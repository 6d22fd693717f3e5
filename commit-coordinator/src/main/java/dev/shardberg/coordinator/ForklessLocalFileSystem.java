package dev.shardberg.coordinator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's checksummed local file system, minus one process fork per file. Without Hadoop's native
 * library (the usual case outside a Hadoop install), {@link RawLocalFileSystem} sets the permission
 * of every file and directory it creates by running {@code chmod} in a child process; for a local
 * warehouse that was ~90% of the cost of writing a small Iceberg file (measured with
 * WriterCostBenchmark: 22 ms → 2.3 ms per file). This one sets the same permission bits through
 * {@code java.nio}. Shardberg uses it for {@code file:} paths unless the Hadoop configuration names
 * its own {@code fs.file.impl}; HDFS, S3 and other schemes are untouched.
 *
 * <p>{@code job} installs it (its catalog configuration), but it lives here, beside the writers it
 * speeds up: this module's writer benchmark measures them with and without it ({@code
 * -Dbenchmark.local-fs=forkless}), and a test dependency on {@code job} would be a module cycle.
 */
public class ForklessLocalFileSystem extends LocalFileSystem {
  public ForklessLocalFileSystem() {
    super(new Raw());
  }

  /** Sets {@code fs.file.impl} to this class unless the configuration already names one. */
  public static Configuration install(Configuration conf) {
    if (conf.get("fs.file.impl") == null) {
      conf.set("fs.file.impl", ForklessLocalFileSystem.class.getName());
      // Hadoop caches file systems by scheme, not by configuration: without this, a local file
      // system created earlier in the JVM with the default implementation would be reused.
      conf.setBoolean("fs.file.impl.disable.cache", true);
    }
    return conf;
  }

  /** The raw local file system with a fork-free {@link #setPermission}. */
  static final class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      String bits =
          permission.getUserAction().SYMBOL
              + permission.getGroupAction().SYMBOL
              + permission.getOtherAction().SYMBOL;
      Files.setPosixFilePermissions(
          pathToFile(path).toPath(), PosixFilePermissions.fromString(bits));
    }
  }
}
