package dev.shardberg.tests.job;

import java.util.List;
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
 * The log4j2 events of one logger (and its children) at {@code level} and above, kept in memory
 * while a test runs: the test asserts on what an operator would read in the log. Close to detach.
 */
public final class CapturedLog implements AutoCloseable {
  public record Line(Level level, String logger, String message) {
    @Override
    public String toString() {
      return level + " " + logger + " - " + message;
    }
  }

  private final List<Line> lines = new CopyOnWriteArrayList<>();
  private final LoggerContext context = (LoggerContext) LogManager.getContext(false);
  private final String loggerName;
  private final Level previousLevel;
  private final boolean addedConfig;
  private final AbstractAppender appender;

  public CapturedLog(String loggerName, Level level) {
    this.loggerName = loggerName;
    this.appender =
        new AbstractAppender("captured-" + loggerName, null, null, true, Property.EMPTY_ARRAY) {
          @Override
          public void append(LogEvent event) {
            lines.add(
                new Line(
                    event.getLevel(),
                    event.getLoggerName(),
                    event.getMessage().getFormattedMessage()));
          }
        };
    appender.start();
    Configuration config = context.getConfiguration();
    LoggerConfig existing = config.getLoggers().get(loggerName);
    if (existing == null) {
      existing = new LoggerConfig(loggerName, level, true);
      config.addLogger(loggerName, existing);
      addedConfig = true;
      previousLevel = null;
    } else {
      addedConfig = false;
      previousLevel = existing.getLevel();
      existing.setLevel(level);
    }
    existing.addAppender(appender, level, null);
    context.updateLoggers();
  }

  public List<Line> lines() {
    return List.copyOf(lines);
  }

  public boolean has(Level level, String... fragments) {
    return lines.stream()
        .anyMatch(l -> l.level().equals(level) && containsAll(l.message(), fragments));
  }

  private static boolean containsAll(String message, String... fragments) {
    for (String f : fragments) {
      if (!message.contains(f)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    Configuration config = context.getConfiguration();
    if (addedConfig) {
      config.removeLogger(loggerName);
    } else {
      LoggerConfig existing = config.getLoggers().get(loggerName);
      existing.removeAppender(appender.getName());
      existing.setLevel(previousLevel);
    }
    context.updateLoggers();
    appender.stop();
  }
}
