package dev.shardberg.coordinator;

/** A newer instance of the same pipeline holds a newer epoch: this instance must never commit again. */
public class CommitFencedException extends RuntimeException {
  public CommitFencedException(String message) {
    super(message);
  }
}
