package dev.shardberg.job.config;

import java.util.List;

/**
 * The config cannot be used. The message lists every problem found, each naming the key at fault
 * and the fix; it never contains a secret.
 */
public class ConfigException extends IllegalArgumentException {
  private final List<String> problems;

  public ConfigException(String origin, List<String> problems) {
    super(render(origin, problems));
    this.problems = List.copyOf(problems);
  }

  public ConfigException(String message) {
    super(message);
    this.problems = List.of(message);
  }

  public List<String> problems() {
    return problems;
  }

  private static String render(String origin, List<String> problems) {
    if (problems.size() == 1) {
      return "Invalid config " + origin + ": " + problems.get(0);
    }
    StringBuilder sb =
        new StringBuilder("Invalid config ")
            .append(origin)
            .append(" (")
            .append(problems.size())
            .append(" problems):");
    for (String p : problems) {
      sb.append(System.lineSeparator()).append("  - ").append(p);
    }
    return sb.toString();
  }
}
