package dev.shardberg.router;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A password or other secret. Its value never appears in {@link #toString()}, logs or messages;
 * only {@link #origin()} (where it came from, e.g. "environment variable 'SHARD_PASSWORD'") may be
 * shown.
 */
public final class Secret implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String value;
  private final String origin;

  private Secret(String value, String origin) {
    this.value = Objects.requireNonNull(value, "value");
    this.origin = origin;
  }

  /** Reads the secret from environment variable {@code var} now; fails if it is not set. */
  public static Secret fromEnv(String var) {
    Preconditions.checkArgument(
        var != null && !var.isBlank(),
        "Cannot read a secret: the environment variable name is empty");
    String value = System.getenv(var);
    Preconditions.checkArgument(
        value != null,
        "Cannot read the secret from environment variable '%s': it is not set; export it before starting",
        var);
    return new Secret(value, "environment variable '" + var + "'");
  }

  /**
   * Reads the secret from a file now (UTF-8, one trailing line break removed); fails if unreadable.
   */
  public static Secret fromFile(Path file) {
    Objects.requireNonNull(file, "file");
    try {
      String value = Files.readString(file, StandardCharsets.UTF_8);
      if (value.endsWith("\r\n")) {
        value = value.substring(0, value.length() - 2);
      } else if (value.endsWith("\n")) {
        value = value.substring(0, value.length() - 1);
      }
      return new Secret(value, "file '" + file + "'");
    } catch (IOException e) {
      throw new IllegalArgumentException(
          String.format(
              "Cannot read the secret from file '%s': %s; check the path and its permissions",
              file, e.getClass().getSimpleName()),
          e);
    }
  }

  /** A secret given inline (tests, or values already read from a vault). */
  public static Secret of(String value) {
    return new Secret(value, "inline value");
  }

  /** The secret itself. Never log or print it. */
  public String reveal() {
    return value;
  }

  /** Where the secret came from, safe to show in messages. */
  public String origin() {
    return origin;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Secret other && value.equals(other.value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public String toString() {
    return "******";
  }
}
