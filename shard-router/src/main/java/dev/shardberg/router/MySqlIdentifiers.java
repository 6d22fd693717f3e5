package dev.shardberg.router;

/**
 * MySQL identifiers in SQL text that Shardberg writes itself (discovery samples, snapshot scans,
 * verify).
 */
public final class MySqlIdentifiers {
  private MySqlIdentifiers() {}

  /**
   * {@code identifier} in backticks, each backtick in it doubled: {@code my`db} becomes {@code
   * `my``db`}.
   */
  public static String quote(String identifier) {
    return "`" + identifier.replace("`", "``") + "`";
  }
}
