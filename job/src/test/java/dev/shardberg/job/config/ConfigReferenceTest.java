package dev.shardberg.job.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ConfigReferenceTest {
  @Test
  void docsListEveryKeyExactlyAsTheOptionsClass() throws Exception {
    String docs = Files.readString(Path.of("..", "docs", "config.md"));
    assertThat(docs)
        .as("docs/config.md is out of date: regenerate its table with"
            + " `java -cp job/target/classes dev.shardberg.job.config.ConfigReference`")
        .contains(ConfigReference.markdownTable());
  }
}
