package dev.shardberg.router;

/** A discovery, schema or routing problem that stops the job from starting (or running). */
public class ShardRouterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ShardRouterException(String message) {
    super(message);
  }

  public ShardRouterException(String message, Throwable cause) {
    super(message, cause);
  }
}
