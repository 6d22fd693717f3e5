package dev.shardberg.router;

/**
 * Templated argument checks in Iceberg's "Cannot X: reason" style (%s placeholders); shared by the
 * router's packages.
 */
public final class Preconditions {
  private Preconditions() {}

  public static void checkArgument(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalArgumentException(String.format(template, args));
    }
  }

  public static void checkState(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new ShardRouterException(String.format(template, args));
    }
  }
}
