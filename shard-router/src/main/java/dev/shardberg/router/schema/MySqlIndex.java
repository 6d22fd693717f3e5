package dev.shardberg.router.schema;

import java.io.Serializable;
import java.util.List;

/**
 * An index of a shard table as information_schema.STATISTICS lists it: name, uniqueness and columns
 * in index order. The primary key is the unique index named {@code PRIMARY}.
 */
public record MySqlIndex(String name, boolean unique, List<String> columns)
    implements Serializable {
  public static final String PRIMARY = "PRIMARY";

  public MySqlIndex {
    columns = List.copyOf(columns);
  }

  public static MySqlIndex primary(List<String> columns) {
    return new MySqlIndex(PRIMARY, true, columns);
  }

  public boolean isPrimary() {
    return PRIMARY.equals(name);
  }

  /** "PRIMARY(a, b)", "UNIQUE uk_x(a)" or "INDEX ix_y(a)": how messages list an index. */
  public String describe() {
    String cols = "(" + String.join(", ", columns) + ")";
    if (isPrimary()) {
      return PRIMARY + cols;
    }
    return (unique ? "UNIQUE " : "INDEX ") + name + cols;
  }

  /**
   * "PRIMARY KEY (a, b)" or "UNIQUE INDEX uk_x (a)": how {@code validate} names the key's index.
   */
  public String describeAsKey() {
    String cols = " (" + String.join(", ", columns) + ")";
    return (isPrimary() ? "PRIMARY KEY" : "UNIQUE INDEX " + name) + cols;
  }
}
