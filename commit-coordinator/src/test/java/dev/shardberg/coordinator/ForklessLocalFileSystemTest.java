package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ForklessLocalFileSystemTest {
  @TempDir java.nio.file.Path dir;

  @Test
  void installedForFileUrisKeepsPermissionsAndChecksums() throws Exception {
    Configuration conf = ForklessLocalFileSystem.install(new Configuration());
    Path file = new Path(dir.toUri().toString(), "a/b/data.parquet");
    FileSystem fs = file.getFileSystem(conf);
    assertThat(fs).isInstanceOf(ForklessLocalFileSystem.class);

    try (FSDataOutputStream out =
        fs.create(file, new FsPermission((short) 0640), false, 4096, (short) 1, 1 << 20, null)) {
      out.writeUTF("row");
    }
    java.nio.file.Path local = dir.resolve("a/b/data.parquet");
    assertThat(Files.getPosixFilePermissions(local))
        .isEqualTo(PosixFilePermissions.fromString("rw-r-----"));
    assertThat(dir.resolve("a/b/.data.parquet.crc"))
        .exists(); // still Hadoop's checksummed local FS
    try (var in = fs.open(file)) {
      assertThat(in.readUTF()).isEqualTo("row");
    }

    fs.setPermission(file, new FsPermission((short) 0604));
    assertThat(Files.getPosixFilePermissions(local))
        .isEqualTo(PosixFilePermissions.fromString("rw----r--"));
    assertThat(fs.rename(file, new Path(dir.toUri().toString(), "a/moved.parquet"))).isTrue();
    assertThat(dir.resolve("a/moved.parquet")).exists();
  }

  @Test
  void aConfiguredImplementationWins() {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
    ForklessLocalFileSystem.install(conf);
    assertThat(conf.get("fs.file.impl")).isEqualTo("org.apache.hadoop.fs.RawLocalFileSystem");
    assertThat(conf.get("fs.file.impl.disable.cache")).isNull();
  }
}
