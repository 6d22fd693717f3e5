package dev.shardberg.router.types;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;

/**
 * One column as information_schema describes it. {@code dataType} is the lower-case base type
 * ("bigint", "varchar"), {@code columnType} the full declaration ("bigint(20) unsigned"). {@code
 * length} is the character length of string types; {@code precision} the numeric precision
 * (decimal, bit) or the fractional-seconds precision (time, datetime, timestamp); {@code scale} the
 * decimal scale.
 */
public record MySqlColumn(
    String name,
    String dataType,
    String columnType,
    boolean nullable,
    String defaultValue,
    Integer length,
    Integer precision,
    Integer scale,
    boolean unsigned)
    implements Serializable {

  public MySqlColumn {
    Objects.requireNonNull(name, "name");
    dataType = dataType.toLowerCase(Locale.ROOT);
    columnType = columnType == null ? dataType : columnType.toLowerCase(Locale.ROOT);
  }

  /** A column without default and length details, mostly for tests. */
  public static MySqlColumn of(String name, String columnType, boolean nullable) {
    String ct = columnType.toLowerCase(Locale.ROOT).trim();
    int paren = ct.indexOf('(');
    int space = ct.indexOf(' ');
    int end = paren >= 0 ? paren : (space >= 0 ? space : ct.length());
    String dataType = ct.substring(0, end);
    Integer a = null;
    Integer b = null;
    if (paren >= 0) {
      String inner = ct.substring(paren + 1, ct.indexOf(')', paren));
      if (!dataType.equals("enum") && !dataType.equals("set")) {
        String[] parts = inner.split(",");
        a = Integer.valueOf(parts[0].trim());
        b = parts.length > 1 ? Integer.valueOf(parts[1].trim()) : null;
      }
    }
    boolean unsigned = ct.contains("unsigned");
    Integer length = null;
    Integer precision = null;
    Integer scale = null;
    switch (dataType) {
      case "char", "varchar", "binary", "varbinary" -> length = a;
      case "decimal", "numeric" -> {
        precision = a == null ? 10 : a;
        scale = b == null ? 0 : b;
      }
      case "bit" -> precision = a == null ? 1 : a;
      case "time", "datetime", "timestamp" -> precision = a == null ? 0 : a;
      default -> precision = a;
    }
    return new MySqlColumn(name, dataType, ct, nullable, null, length, precision, scale, unsigned);
  }

  /**
   * The part of a column that must be equal on every shard: type details and nullability, not
   * defaults.
   */
  public String signature() {
    return dataType
        + "|"
        + length
        + "|"
        + precision
        + "|"
        + scale
        + "|"
        + unsigned
        + "|"
        + nullable
        + (dataType.equals("enum") || dataType.equals("set") ? "|" + columnType : "");
  }

  /** "decimal(10,2) NOT NULL" for messages. */
  public String describeType() {
    return columnType + (nullable ? " NULL" : " NOT NULL");
  }
}
