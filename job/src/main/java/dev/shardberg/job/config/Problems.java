package dev.shardberg.job.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What is wrong with a config file so far: every message in the order it was found, and the keys
 * whose value could not be parsed (they are left unset, so the rules that read them stay quiet).
 */
final class Problems {
  private final List<String> messages = new ArrayList<>();
  private final Set<String> invalidKeys = new HashSet<>();

  void add(String message) {
    messages.add(message);
  }

  boolean isEmpty() {
    return messages.isEmpty();
  }

  List<String> messages() {
    return messages;
  }

  /** The value of {@code key} could not be parsed and was removed from its configuration. */
  void markInvalid(String key) {
    invalidKeys.add(key);
  }

  boolean isInvalid(String key) {
    return invalidKeys.contains(key);
  }
}
