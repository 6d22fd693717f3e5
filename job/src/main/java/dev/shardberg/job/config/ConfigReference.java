package dev.shardberg.job.config;

import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.Formatter;
import org.apache.flink.configuration.description.TextElement.TextStyle;

/**
 * Renders the key-by-key reference table of docs/config.md from the {@link ConfigOption}s listed in
 * {@link ShardbergOptions#all()}: key, type, default (or required) and description.
 */
public final class ConfigReference {
  private ConfigReference() {}

  public static String markdownTable() {
    StringBuilder sb = new StringBuilder();
    sb.append("| key | type | default | description |\n");
    sb.append("|---|---|---|---|\n");
    for (ConfigOption<?> option : ShardbergOptions.all()) {
      sb.append("| `")
          .append(option.key())
          .append("` | ")
          .append(ValueType.of(option).label())
          .append(" | ")
          .append(defaultOf(option))
          .append(" | ")
          .append(description(option).replace("|", "\\|"))
          .append(" |\n");
    }
    return sb.toString();
  }

  /** The option's description as plain text (Flink's own formatter writes HTML). */
  static String description(ConfigOption<?> option) {
    return new PlainText().format(option.description());
  }

  private static String defaultOf(ConfigOption<?> option) {
    if (ShardbergOptions.isRequired(option)) {
      return "**required**";
    }
    return option.hasDefaultValue() ? "`" + render(option.defaultValue()) + "`" : "—";
  }

  /** A value as one would write it in the YAML file. */
  static String render(Object value) {
    if (value instanceof Duration d) {
      return duration(d);
    } else if (value instanceof Map<?, ?> map && map.isEmpty()) {
      return "{}";
    } else if (value instanceof Collection<?> list && list.isEmpty()) {
      return "[]";
    }
    return String.valueOf(value);
  }

  private static String duration(Duration d) {
    long ms = d.toMillis();
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
    String[] units = {"d", "h", "min", "s"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms != 0 && ms % sizes[i] == 0) {
        return ms / sizes[i] + units[i];
      }
    }
    return ms + "ms";
  }

  private static final class PlainText extends Formatter {
    @Override
    protected void formatLink(StringBuilder state, String link, String description) {
      state.append(description).append(" (").append(link).append(')');
    }

    @Override
    protected void formatLineBreak(StringBuilder state) {
      state.append(' ');
    }

    @Override
    protected void formatText(
        StringBuilder state, String format, String[] elements, EnumSet<TextStyle> styles) {
      state.append(elements.length == 0 ? format : String.format(format, (Object[]) elements));
    }

    @Override
    protected void formatList(StringBuilder state, String[] entries) {
      state.append(String.join("; ", entries));
    }

    @Override
    protected Formatter newInstance() {
      return new PlainText();
    }
  }

  public static void main(String[] args) {
    System.out.print(markdownTable());
  }
}
