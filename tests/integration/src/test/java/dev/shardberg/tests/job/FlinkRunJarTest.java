package dev.shardberg.tests.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The {@code flink run} jar (built by the job module before this module's tests run): it holds
 * Shardberg, Flink CDC, Iceberg and the MySQL driver, names ShardbergJob as its main class, and
 * holds neither Flink's own runtime (provided by the cluster) nor anything test-only.
 */
class FlinkRunJarTest {

  @Test
  void shadedJarHoldsTheJobAndNothingItMustNot() throws IOException {
    Path jar = shadedJar();
    List<String> entries = new ArrayList<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      assertThat(file.getManifest().getMainAttributes().getValue("Main-Class"))
          .isEqualTo("dev.shardberg.job.ShardbergJob");
      file.stream().forEach(e -> entries.add(e.getName()));
    }
    assertThat(entries)
        .contains(
            "dev/shardberg/job/ShardbergJob.class",
            "dev/shardberg/job/ShardbergPipeline.class",
            "dev/shardberg/router/tagging/ShardTaggingDeserializer.class",
            "dev/shardberg/coordinator/ShardbergSink.class",
            "org/apache/flink/cdc/connectors/mysql/source/MySqlSource.class",
            "org/apache/iceberg/flink/TableLoader.class",
            "com/mysql/cj/jdbc/Driver.class",
            "picocli/CommandLine.class");
    List<String> forbidden =
        List.of(
            "org/apache/flink/runtime/",
            "org/apache/flink/streaming/",
            "org/apache/flink/api/",
            "org/apache/flink/configuration/",
            "org/apache/flink/table/runtime/",
            "org/apache/flink/table/data/",
            "org/apache/flink/client/",
            "org/apache/logging/log4j/",
            "org/slf4j/impl/",
            "dev/shardberg/tests/",
            "ch/vorburger/",
            "org/junit/",
            "org/assertj/",
            "org/awaitility/",
            "org/apache/derby/",
            "org/apache/curator/test/");
    assertThat(entries).noneMatch(e -> forbidden.stream().anyMatch(e::startsWith));
    assertThat(entries)
        .noneMatch(
            e ->
                e.contains("mariadb")
                    && (e.endsWith(".zip") || e.endsWith(".tar.gz") || e.contains("/bin/")));
  }

  /**
   * The binlog row deserializers in the jar are shard-router's (they read MySQL TIME exactly), not
   * the ones Debezium ships under the same names inside flink-sql-connector-mysql-cdc: the shade
   * plugin keeps the first class of a name, and shard-router comes before the CDC connector.
   */
  @Test
  void shadedJarCarriesShardRoutersBinlogRowDeserializers() throws IOException {
    try (JarFile file = new JarFile(shadedJar().toFile())) {
      for (String kind : List.of("Write", "Update", "Delete")) {
        String entry =
            "io/debezium/connector/mysql/RowDeserializers$" + kind + "RowsDeserializer.class";
        assertThat(file.getJarEntry(entry)).as(entry).isNotNull();
        byte[] bytes = file.getInputStream(file.getJarEntry(entry)).readAllBytes();
        // the class names the interface that marks shard-router's classes (in its constant pool)
        assertThat(new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1))
            .as(entry)
            .contains("dev/shardberg/router/types/BinlogTime2$Installed");
      }
    }
  }

  private static Path shadedJar() throws IOException {
    Path target = Path.of("..", "..", "job", "target");
    try (DirectoryStream<Path> jars =
        Files.newDirectoryStream(target, "shardberg-job-*-flink.jar")) {
      for (Path jar : jars) {
        return jar;
      }
    }
    throw new IllegalStateException(
        "No shaded job jar in "
            + target.toAbsolutePath()
            + ": build with `mvn -B verify` (or package)");
  }
}
