package dev.shardberg.job.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * A password is given by reference, never in the config file: exactly one of an environment
 * variable's name and a file's path, and it can be read. The password itself is not read here.
 */
final class PasswordRule {
  private PasswordRule() {}

  /**
   * @param who what the password is for, as messages name it (e.g. {@code source 'eu-1'})
   */
  static void check(
      Problems problems,
      Function<String, String> env,
      String who,
      String envKey,
      String passwordEnv,
      String fileKey,
      String passwordFile) {
    if (passwordEnv != null && passwordFile != null) {
      problems.add(
          "Both '" + envKey + "' and '" + fileKey + "' are set for " + who + ": keep exactly one.");
    } else if (passwordEnv == null && passwordFile == null) {
      problems.add(
          "Missing password for "
              + who
              + ": set '"
              + envKey
              + "' (name of an environment variable) or '"
              + fileKey
              + "' (path of a file holding it). Passwords never go into the config file.");
    } else if (passwordEnv != null) {
      if (env.apply(passwordEnv) == null) {
        problems.add(
            "Cannot read the password of "
                + who
                + ": environment variable '"
                + passwordEnv
                + "' ("
                + envKey
                + ") is not set. Export it before starting, or use '"
                + fileKey
                + "'.");
      }
    } else if (!Files.isReadable(Path.of(passwordFile))) {
      problems.add(
          "Cannot read the password of "
              + who
              + ": file '"
              + passwordFile
              + "' ("
              + fileKey
              + ") does not exist or is not readable. Fix the path or its permissions.");
    }
  }
}
