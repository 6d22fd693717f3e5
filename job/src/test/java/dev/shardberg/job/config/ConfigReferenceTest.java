package dev.shardberg.job.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ConfigReferenceTest {
  @Test
  void docsListEveryKeyExactlyAsTheOptionsClass() throws Exception {
    String table = ConfigReference.markdownTable();
    Path generated = Files.writeString(Path.of("target", "config-reference.md"), table);
    String docs = Files.readString(Path.of("..", "docs", "config.md"));
    assertThat(docs)
        .as(
            "docs/config.md is out of date: replace its table under 'Every key' with job/"
                + generated
                + " (written by this test from the ConfigOptions in ShardbergOptions.all())")
        .contains(table);
  }
}
