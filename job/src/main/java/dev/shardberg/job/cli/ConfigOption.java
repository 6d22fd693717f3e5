package dev.shardberg.job.cli;

import dev.shardberg.job.config.ShardbergConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --config FILE} option every command shares. */
public class ConfigOption {
  @Option(
      names = {"-c", "--config"},
      required = true,
      paramLabel = "FILE",
      description = "The logical table's YAML config (see docs/config.md).")
  Path file;

  public ShardbergConfig load() {
    return ShardbergConfig.load(file);
  }
}
