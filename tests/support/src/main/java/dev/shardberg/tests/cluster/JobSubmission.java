package dev.shardberg.tests.cluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What {@code flink run -d} submits: a job jar, its program arguments and the optional {@code -c},
 * {@code -p} and {@code -s} options.
 *
 * @param jar the job jar
 * @param entryClass {@code -c}; null to use the jar manifest's Main-Class
 * @param programArgs the arguments passed to the job's main method
 * @param parallelism {@code -p}; 0 for the cluster's default
 * @param fromSavepoint {@code -s}; the savepoint or retained checkpoint to resume from, or null
 */
public record JobSubmission(
    Path jar, String entryClass, List<String> programArgs, int parallelism, String fromSavepoint) {

  public JobSubmission {
    Objects.requireNonNull(jar, "jar");
    programArgs = List.copyOf(programArgs);
    if (parallelism < 0) {
      throw new IllegalArgumentException(
          "Cannot submit "
              + jar
              + ": parallelism must be positive (or 0 for the default), was "
              + parallelism);
    }
  }

  public static JobSubmission of(Path jar, String... programArgs) {
    return new JobSubmission(jar, null, List.of(programArgs), 0, null);
  }

  public JobSubmission withEntryClass(String className) {
    return new JobSubmission(jar, className, programArgs, parallelism, fromSavepoint);
  }

  public JobSubmission withParallelism(int newParallelism) {
    return new JobSubmission(jar, entryClass, programArgs, newParallelism, fromSavepoint);
  }

  public JobSubmission fromSavepoint(String savepointPath) {
    return new JobSubmission(jar, entryClass, programArgs, parallelism, savepointPath);
  }

  /** The arguments of {@code flink}: {@code run -d [-c C] [-p P] [-s S] jar args...}. */
  List<String> cliArgs() {
    List<String> args = new ArrayList<>(List.of("run", "-d"));
    if (entryClass != null) {
      args.addAll(List.of("-c", entryClass));
    }
    if (parallelism > 0) {
      args.addAll(List.of("-p", Integer.toString(parallelism)));
    }
    if (fromSavepoint != null) {
      args.addAll(List.of("-s", fromSavepoint));
    }
    args.add(jar.toAbsolutePath().toString());
    args.addAll(programArgs);
    return args;
  }
}
