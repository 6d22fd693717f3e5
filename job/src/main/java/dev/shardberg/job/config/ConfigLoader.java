package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.shardberg.router.RouterOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * YAML → Flink {@link Configuration} → {@link ShardbergConfig}. The YAML tree is flattened into
 * dotted keys (a map key's entries become {@code key.name} entries, which Flink reads back as a
 * map); each {@code sources[]} entry becomes a configuration of its own ({@link YamlFlattener}).
 * Only keys listed in {@link ShardbergOptions#all()} are accepted, values are parsed by Flink's own
 * conversions ({@code 10s}, {@code 5min}, {@code true}, enum names; {@link KeyChecks}), then the
 * rules across keys are checked ({@link CrossKeyRules}). Every problem is collected and reported at
 * once, each naming the key (with the list index for {@code sources[i]}), the bad value and the
 * fix. Nothing is started before this passes.
 */
public final class ConfigLoader {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private final String origin;
  private final Function<String, String> env;

  private ConfigLoader(String origin, Function<String, String> env) {
    this.origin = origin;
    this.env = env;
  }

  public static ShardbergConfig load(Path file) {
    String yaml;
    try {
      yaml = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(
          "Cannot read config file '"
              + file
              + "': "
              + e.getMessage()
              + ". Check the --config path.");
    }
    return parse(yaml, file.toString(), System::getenv);
  }

  /**
   * @param origin the file name, used in messages
   * @param env environment lookup (for {@code password-env}); {@code System::getenv} outside tests
   */
  public static ShardbergConfig parse(String yaml, String origin, Function<String, String> env) {
    return new ConfigLoader(origin, env).parse(yaml);
  }

  private ShardbergConfig parse(String yaml) {
    JsonNode root;
    try {
      root = YAML.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new ConfigException(
          origin,
          List.of(
              "Cannot parse YAML: "
                  + e.getOriginalMessage()
                  + (e.getLocation() != null ? " (line " + e.getLocation().getLineNr() + ")" : "")
                  + ". Fix the YAML syntax."));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new ConfigException(
          origin, List.of("The file is empty. Start from docs/example-config.yaml."));
    }
    if (!root.isObject()) {
      throw new ConfigException(
          origin,
          List.of(
              "The top level must be a mapping of keys (pipeline:, sources:, tables:, source:, target:)."));
    }
    Problems problems = new Problems();
    YamlFlattener flattener = new YamlFlattener(problems);
    flattener.flatten(root);
    if (!problems.isEmpty()) {
      throw new ConfigException(origin, problems.messages());
    }
    KeyChecks keys = new KeyChecks(problems);
    FlatConfig top = flattener.top();
    List<FlatConfig> sourceEntries = flattener.sourceEntries();
    Configuration conf = top.toConfiguration();
    keys.checkTypes(conf, top, topLevel(), ConfigOption::key);
    List<Configuration> sources = new ArrayList<>();
    for (int i = 0; i < sourceEntries.size(); i++) {
      int index = i;
      Configuration source = sourceEntries.get(i).toConfiguration();
      keys.checkTypes(
          source, sourceEntries.get(i), perSource(), o -> RouterOptions.sourceKey(o, index));
      sources.add(source);
    }
    keys.checkRequired(conf, topLevel(), ConfigOption::key);
    new CrossKeyRules(problems, keys, top, env).check(conf, sources);
    if (!problems.isEmpty()) {
      throw new ConfigException(origin, problems.messages());
    }
    return ShardbergConfig.from(conf, sources);
  }
}
