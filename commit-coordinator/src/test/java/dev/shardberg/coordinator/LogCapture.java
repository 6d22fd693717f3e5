package dev.shardberg.coordinator;

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
 * The lines one class logs at a level and above while a test runs (log4j2, the tests' logging
 * backend; MiniCluster tasks log in the test's JVM), so a test can assert what an operator would
 * find in the log. Close to detach.
 */
public final class LogCapture implements AutoCloseable {
  /** One line: its level, its SLF4J format and arguments, and the formatted message. */
  public record Line(Level level, String format, List<Object> arguments, String message) {
    @Override
    public String toString() {
      return level + " " + message;
    }
  }

  private final List<Line> lines = new CopyOnWriteArrayList<>();
  private final LoggerContext context = (LoggerContext) LogManager.getContext(false);
  private final String loggerName;
  private final AbstractAppender appender;

  public LogCapture(Class<?> logger, Level level) {
    this(logger.getName(), level);
  }

  /** By logger name (for a package-private class elsewhere: its fully qualified name). */
  public LogCapture(String loggerName, Level level) {
    this.loggerName = loggerName;
    this.appender =
        new AbstractAppender("captured-" + loggerName, null, null, true, Property.EMPTY_ARRAY) {
          @Override
          public void append(LogEvent event) {
            Object[] arguments = event.getMessage().getParameters();
            lines.add(
                new Line(
                    event.getLevel(),
                    event.getMessage().getFormat(),
                    arguments == null ? List.of() : java.util.Arrays.asList(arguments.clone()),
                    event.getMessage().getFormattedMessage()));
          }
        };
    appender.start();
    Configuration config = context.getConfiguration();
    LoggerConfig own = new LoggerConfig(loggerName, level, true);
    own.addAppender(appender, level, null);
    config.addLogger(loggerName, own);
    context.updateLoggers();
  }

  /** Every line so far, oldest first. */
  public List<Line> lines() {
    return List.copyOf(lines);
  }

  /** The lines at WARN or above so far. */
  public List<Line> warnings() {
    return lines.stream().filter(l -> l.level().isMoreSpecificThan(Level.WARN)).toList();
  }

  @Override
  public void close() {
    context.getConfiguration().removeLogger(loggerName);
    context.updateLoggers();
    appender.stop();
  }
}
