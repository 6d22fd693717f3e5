package dev.shardberg.router.tagging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.shardberg.router.types.MySqlColumn;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads the parts of Debezium's schema history record ({@code tableChanges}) the evolving layout
 * needs: a table's id as {@code db.table}, and its column documents as {@link MySqlColumn}s.
 */
final class DebeziumTableChanges {
  private DebeziumTableChanges() {}

  /** {@code "db"."table"} (Debezium's double-quoted id) as {@code db.table}. */
  static String qualifiedName(String id) {
    List<String> parts = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c == '"') {
        if (quoted && i + 1 < id.length() && id.charAt(i + 1) == '"') {
          current.append('"');
          i++;
        } else {
          quoted = !quoted;
        }
      } else if (c == '.' && !quoted) {
        parts.add(current.toString());
        current.setLength(0);
      } else {
        current.append(c);
      }
    }
    parts.add(current.toString());
    return String.join(".", parts);
  }

  /**
   * Debezium's column documents as MySQL columns (the fields information_schema would give; the
   * default is Debezium's {@code defaultValueExpression}).
   */
  static List<MySqlColumn> columns(JsonNode columns) {
    List<MySqlColumn> result = new ArrayList<>();
    for (JsonNode c : columns) {
      String typeName = c.path("typeName").asText().toLowerCase(Locale.ROOT).trim();
      boolean unsigned = typeName.contains("unsigned");
      String dataType = typeName.replace("unsigned", "").replace("zerofill", "").trim();
      Integer length = c.hasNonNull("length") ? c.get("length").asInt() : null;
      Integer scale = c.hasNonNull("scale") ? c.get("scale").asInt() : null;
      Integer len = null;
      Integer precision = null;
      Integer sc = null;
      switch (dataType) {
        case "char", "varchar", "binary", "varbinary" -> len = length;
        case "decimal", "numeric" -> {
          precision = length == null ? 10 : length;
          sc = scale == null ? 0 : scale;
        }
        case "bit" -> precision = length == null ? 1 : length;
        case "time", "datetime", "timestamp" ->
            precision = length == null || length < 0 ? 0 : length;
        default -> precision = length;
      }
      String columnType;
      if (dataType.equals("enum") || dataType.equals("set")) {
        List<String> labels = new ArrayList<>();
        c.path("enumValues").forEach(v -> labels.add("'" + v.asText().replace("'", "''") + "'"));
        columnType = dataType + "(" + String.join(",", labels) + ")";
      } else if (dataType.equals("decimal") || dataType.equals("numeric")) {
        columnType = dataType + "(" + precision + "," + sc + ")";
      } else if (len != null) {
        columnType = dataType + "(" + len + ")";
      } else if (precision != null
          && (dataType.equals("bit")
              || (precision > 0 && (dataType.startsWith("time") || dataType.equals("datetime"))))) {
        columnType = dataType + "(" + precision + ")";
      } else {
        columnType = dataType;
      }
      if (unsigned) {
        columnType += " unsigned";
      }
      String defaultValue =
          c.path("hasDefaultValue").asBoolean(false)
              ? c.path("defaultValueExpression").asText(null)
              : null;
      result.add(
          new MySqlColumn(
              c.path("name").asText(),
              dataType,
              columnType,
              c.path("optional").asBoolean(true),
              defaultValue,
              len,
              precision,
              sc,
              unsigned));
    }
    return result;
  }
}
