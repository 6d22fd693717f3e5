package dev.shardberg.coordinator;

import java.util.Locale;

/**
 * How the writers delete rows ({@code target.delete-mode}).
 *
 * <ul>
 *   <li>{@link #EQUALITY}: by key, an equality-delete file per touched partition and checkpoint
 *       (every reader loads them); the coordinator's maintenance compacts them away.
 *   <li>{@link #POSITION}: by position, as the owner of each partition (issue 28; the job's default
 *       for a table it creates): a deletion vector per data file on format-v3 tables,
 *       position-delete files on v2; no equality delete is written. See docs/owner-write-path.md
 *       for what it does not follow yet.
 * </ul>
 */
public enum DeleteMode {
  EQUALITY,
  POSITION;

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
