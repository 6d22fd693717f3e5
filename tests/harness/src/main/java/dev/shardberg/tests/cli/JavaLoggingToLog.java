package dev.shardberg.tests.cli;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends java.util.logging records to SLF4J, so the log file gets them and the console does not. The
 * MySQL binlog client inside Flink CDC logs through java.util.logging, whose default handler writes
 * to the console: its warnings, with stack traces, would land between the CLI's own lines (a job
 * failing or a host going away). Levels are then those of the log configuration.
 */
final class JavaLoggingToLog extends Handler {
  private final SimpleFormatter formatter = new SimpleFormatter();

  /** Replaces the root handlers of java.util.logging (its console handler) with this one. */
  static void install() {
    java.util.logging.Logger root = LogManager.getLogManager().getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    root.addHandler(new JavaLoggingToLog());
    root.setLevel(Level.INFO);
  }

  @Override
  public void publish(LogRecord record) {
    Logger log =
        LoggerFactory.getLogger(
            record.getLoggerName() == null ? "java.util.logging" : record.getLoggerName());
    int level = record.getLevel().intValue();
    if (level >= Level.SEVERE.intValue()) {
      if (log.isErrorEnabled()) {
        log.error(formatter.formatMessage(record), record.getThrown());
      }
    } else if (level >= Level.WARNING.intValue()) {
      if (log.isWarnEnabled()) {
        log.warn(formatter.formatMessage(record), record.getThrown());
      }
    } else if (level >= Level.INFO.intValue()) {
      if (log.isInfoEnabled()) {
        log.info(formatter.formatMessage(record), record.getThrown());
      }
    } else if (log.isDebugEnabled()) {
      log.debug(formatter.formatMessage(record), record.getThrown());
    }
  }

  @Override
  public void flush() {}

  @Override
  public void close() {}
}
