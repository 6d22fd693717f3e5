package dev.shardberg.router.watch;

import dev.shardberg.router.Preconditions;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.discovery.MySqlHost;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pass-through operator chained after one host's MySQL source: every {@code interval} it reads the
 * host's {@code @@GLOBAL.binlog_format} and {@code @@GLOBAL.binlog_row_image} over JDBC and fails
 * the job for good ({@link BinlogFormatException}, non-recoverable) when they are not ROW / FULL.
 *
 * <p>Why: Flink CDC checks both when a source starts, but a {@code SET GLOBAL
 * binlog_format='STATEMENT'} on a live server makes the binlog reader skip every later change with
 * only a Debezium WARN, while the job keeps committing — silent loss. A restart cannot help (the
 * skipped events are not in the binlog as rows), hence non-recoverable.
 *
 * <p>Only subtask 0 checks (one connection per host, whatever the source parallelism). A failed
 * query (host unreachable, failover) is logged and tried again at the next interval: losing the
 * connection is the source's concern, this operator only acts on a value it has read. Limits: a
 * SESSION-level {@code SET binlog_format} on one client connection is not visible to a global
 * check, and changes made between a switch and the next check are already lost when the job stops.
 */
public final class BinlogFormatWatch extends AbstractStreamOperator<RowData>
    implements OneInputStreamOperator<RowData, RowData>, ProcessingTimeCallback {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(BinlogFormatWatch.class);

  static final String QUERY = "SELECT @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image";

  private final MySqlHost host;
  private final long intervalMillis;

  private transient Connection connection;

  public BinlogFormatWatch(MySqlHost host, Duration interval) {
    this.host = Objects.requireNonNull(host, "host");
    Preconditions.checkArgument(
        interval != null && !interval.isNegative() && !interval.isZero(),
        "Cannot watch the binlog format of host '%s': the check interval %s is not positive ("
            + RouterOptions.SOURCE_BINLOG_FORMAT_CHECK_INTERVAL.key()
            + ")",
        host.name(),
        interval);
    this.intervalMillis = interval.toMillis();
    this.chainingStrategy = ChainingStrategy.ALWAYS;
  }

  @Override
  public void open() throws Exception {
    super.open();
    if (getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0) {
      check();
      schedule();
    }
  }

  @Override
  public void processElement(StreamRecord<RowData> element) {
    output.collect(element);
  }

  @Override
  public void onProcessingTime(long time) {
    check();
    schedule();
  }

  private void schedule() {
    long now = getProcessingTimeService().getCurrentProcessingTime();
    getProcessingTimeService().registerTimer(now + intervalMillis, this);
  }

  /**
   * Reads both variables; throws when either is wrong, logs and returns when they cannot be read.
   */
  private void check() {
    String format;
    String rowImage;
    try {
      if (connection == null || connection.isClosed()) {
        connection = connect();
      }
      try (Statement st = connection.createStatement();
          ResultSet rs = st.executeQuery(QUERY)) {
        rs.next();
        format = rs.getString(1);
        rowImage = rs.getString(2);
      }
    } catch (SQLException e) {
      LOG.warn(
          "Cannot read the binlog format of host {}: {}; checking again in {} ms (the source reports lost connections itself)",
          host.describe(),
          e.getMessage(),
          intervalMillis);
      closeQuietly();
      return;
    }
    verify(host, format, rowImage);
  }

  /** The rule, on its own for unit tests: ROW and FULL, case-insensitive; anything else is loss. */
  static void verify(MySqlHost host, String format, String rowImage) {
    if (!"ROW".equals(upper(format))) {
      throw BinlogFormatException.changed(host, "binlog_format", format, "ROW");
    }
    if (!"FULL".equals(upper(rowImage))) {
      throw BinlogFormatException.changed(host, "binlog_row_image", rowImage, "FULL");
    }
  }

  private static String upper(String value) {
    return value == null ? null : value.trim().toUpperCase(Locale.ROOT);
  }

  private Connection connect() throws SQLException {
    // the check runs in the source task: never block it for long
    return host.openWatchConnection(Math.max(1000L, Math.min(intervalMillis, 30_000L)));
  }

  private void closeQuietly() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException ignored) {
        // already broken
      }
      connection = null;
    }
  }

  @Override
  public void close() throws Exception {
    closeQuietly();
    super.close();
  }
}
