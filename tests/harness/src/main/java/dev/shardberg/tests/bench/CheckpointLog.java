package dev.shardberg.tests.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * The pipeline's own account of each checkpoint, from its log lines (the bench's MiniCluster runs
 * in this JVM, so every subtask logs here): {@code ShardbergWriter} logs at DEBUG, per writer
 * subtask and checkpoint, how many files it closed and how long {@code DeltaTaskWriter.complete()}
 * took; {@code CommitCoordinator} logs at INFO each data commit with its duration (refresh, lock,
 * RowDelta and progress record in one transaction). Iceberg's CommitReport does not cover the
 * coordinator's transactional commits, so this is where the consolidated modes' commit time comes
 * from.
 *
 * <p>While open, the writer logger's DEBUG events go only here (not additive: they stay out of the
 * log file); the coordinator's INFO lines go here and to the log file as before.
 */
final class CheckpointLog implements AutoCloseable {
  private static final String WRITER_LOGGER = "dev.shardberg.coordinator.ShardbergWriter";
  private static final String COORDINATOR_LOGGER = "dev.shardberg.coordinator.CheckpointCommitter";
  private static final String FLUSH_MESSAGE =
      "Writer {} of {} closed {} files for checkpoint {} in {} ms";
  private static final String COMMIT_MESSAGE_START =
      "Committed checkpoint {} (Flink checkpoint {})";

  /** One writer subtask's flush of one checkpoint. */
  record Flush(long atMillis, int subtask, long checkpointId, long files, long millis) {}

  /** One data commit of the coordinator. */
  record Commit(long atMillis, long checkpointId, long millis) {}

  private final List<Flush> flushes = new CopyOnWriteArrayList<>();
  private final List<Commit> commits = new CopyOnWriteArrayList<>();
  private final LoggerContext context;
  private final Appender appender;

  private CheckpointLog() {
    this.context = (LoggerContext) LogManager.getContext(false);
    this.appender = new Appender(flushes, commits);
    appender.start();
    Configuration config = context.getConfiguration();
    LoggerConfig writer = new LoggerConfig(WRITER_LOGGER, Level.DEBUG, false);
    writer.addAppender(appender, Level.DEBUG, null);
    config.addLogger(WRITER_LOGGER, writer);
    LoggerConfig coordinator = new LoggerConfig(COORDINATOR_LOGGER, Level.INFO, true);
    coordinator.addAppender(appender, Level.INFO, null);
    config.addLogger(COORDINATOR_LOGGER, coordinator);
    context.updateLoggers();
  }

  static CheckpointLog start() {
    return new CheckpointLog();
  }

  /**
   * Per checkpoint whose flushes happened at or after {@code fromMillis} and closed at least one
   * file: the files of every writer subtask together, and the slowest subtask's time (the
   * checkpoint waits for it); and the coordinator's data commits from then on.
   */
  ModeResult.WriterFlush figures(long fromMillis) {
    Map<Long, long[]> byCheckpoint = new TreeMap<>(); // checkpoint -> {files, max ms}
    for (Flush f : flushes) {
      if (f.atMillis() >= fromMillis) {
        long[] c = byCheckpoint.computeIfAbsent(f.checkpointId(), k -> new long[2]);
        c[0] += f.files();
        c[1] = Math.max(c[1], f.millis());
      }
    }
    List<long[]> withFiles = new ArrayList<>();
    byCheckpoint.values().stream().filter(c -> c[0] > 0).forEach(withFiles::add);
    long[] commitMillis =
        commits.stream()
            .filter(c -> c.atMillis() >= fromMillis)
            .mapToLong(Commit::millis)
            .sorted()
            .toArray();
    long commitP50 = commitMillis.length == 0 ? -1 : ModeRunner.percentile(commitMillis, 50);
    long commitP99 = commitMillis.length == 0 ? -1 : ModeRunner.percentile(commitMillis, 99);
    if (withFiles.isEmpty()) {
      return new ModeResult.WriterFlush(
          0, 0, -1, -1, -1, 0, commitMillis.length, commitP50, commitP99);
    }
    long[] millis = withFiles.stream().mapToLong(c -> c[1]).sorted().toArray();
    long files = withFiles.stream().mapToLong(c -> c[0]).sum();
    long totalMillis = withFiles.stream().mapToLong(c -> c[1]).sum();
    return new ModeResult.WriterFlush(
        withFiles.size(),
        files / (double) withFiles.size(),
        ModeRunner.percentile(millis, 50),
        ModeRunner.percentile(millis, 99),
        millis[millis.length - 1],
        totalMillis / (double) files,
        commitMillis.length,
        commitP50,
        commitP99);
  }

  @Override
  public void close() {
    Configuration config = context.getConfiguration();
    config.removeLogger(WRITER_LOGGER);
    config.removeLogger(COORDINATOR_LOGGER);
    context.updateLoggers();
    appender.stop();
  }

  private static final class Appender extends AbstractAppender {
    private final List<Flush> flushes;
    private final List<Commit> commits;

    Appender(List<Flush> flushes, List<Commit> commits) {
      super("bench-checkpoint-log", null, null, true, Property.EMPTY_ARRAY);
      this.flushes = flushes;
      this.commits = commits;
    }

    @Override
    public void append(LogEvent event) {
      String format = event.getMessage().getFormat();
      Object[] p = event.getMessage().getParameters();
      if (FLUSH_MESSAGE.equals(format)) {
        flushes.add(
            new Flush(
                event.getTimeMillis(),
                ((Number) p[0]).intValue(),
                ((Number) p[3]).longValue(),
                ((Number) p[2]).longValue(),
                ((Number) p[4]).longValue()));
      } else if (format != null && format.startsWith(COMMIT_MESSAGE_START) && p.length >= 10) {
        commits.add(
            new Commit(
                event.getTimeMillis(), ((Number) p[0]).longValue(), ((Number) p[9]).longValue()));
      }
    }
  }
}
