package dev.shardberg.coordinator.owner;

import java.io.Serializable;

/** Where one row is: its data file's location and its position (0-based) in that file. */
public record FilePosition(String file, long position) implements Serializable {
  public FilePosition {
    if (file == null || file.isEmpty()) {
      throw new IllegalArgumentException("Cannot locate a row without its data file");
    }
    if (position < 0) {
      throw new IllegalArgumentException(
          String.format("Cannot locate a row at position %s of %s", position, file));
    }
  }
}
