package dev.shardberg.router.schema;

import dev.shardberg.router.ShardRouterException;
import java.util.List;

/**
 * An existing Iceberg table does not match the layout derived from the shards; lists every
 * difference.
 */
public class TableLayoutMismatchException extends ShardRouterException {
  private static final long serialVersionUID = 1L;

  private final List<String> differences;

  public TableLayoutMismatchException(String message, List<String> differences) {
    super(message);
    this.differences = List.copyOf(differences);
  }

  public List<String> differences() {
    return differences;
  }
}
