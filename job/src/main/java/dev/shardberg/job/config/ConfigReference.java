package dev.shardberg.job.config;

/** Renders the key-by-key reference table of docs/config.md from {@link ShardbergOptions}. */
public final class ConfigReference {
  private ConfigReference() {}

  public static String markdownTable() {
    StringBuilder sb = new StringBuilder();
    sb.append("| key | type | default | description |\n");
    sb.append("|---|---|---|---|\n");
    for (ConfigKey key : ShardbergOptions.all()) {
      String def = key.required() ? "**required**" : key.defaultValue() == null ? "—" : "`" + key.defaultValue() + "`";
      sb.append("| `").append(key.key()).append("` | ").append(type(key)).append(" | ").append(def).append(" | ")
          .append(key.description().replace("|", "\\|")).append(" |\n");
    }
    return sb.toString();
  }

  private static String type(ConfigKey key) {
    return switch (key.kind()) {
      case STRING -> "string";
      case INT -> "int";
      case BOOLEAN -> "boolean";
      case DURATION -> "duration";
      case MAP -> "map";
      case LIST -> "list";
      case SECTION_LIST -> "list of hosts";
    };
  }

  public static void main(String[] args) {
    System.out.print(markdownTable());
  }
}
