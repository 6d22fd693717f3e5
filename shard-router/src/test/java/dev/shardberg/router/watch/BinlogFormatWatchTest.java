package dev.shardberg.router.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.Secret;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.schema.TableLayoutMismatchException;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.runtime.throwable.ThrowableClassifier;
import org.apache.flink.runtime.throwable.ThrowableType;
import org.junit.jupiter.api.Test;

/**
 * The rule of the binlog watch; the live check against a real server is in RestartsConvergeTest.
 */
class BinlogFormatWatchTest {
  private static final MySqlHost HOST =
      new MySqlHost("b", "db-b.example", 3307, "cdc", Secret.of("pw"), Map.of());

  @Test
  void rowWithFullImagesPasses() {
    assertThatCode(() -> BinlogFormatWatch.verify(HOST, "ROW", "FULL")).doesNotThrowAnyException();
    assertThatCode(() -> BinlogFormatWatch.verify(HOST, "row", "full")).doesNotThrowAnyException();
  }

  @Test
  void anotherFormatStopsNamingHostVariableAndFix() {
    assertThatThrownBy(() -> BinlogFormatWatch.verify(HOST, "MIXED", "FULL"))
        .isInstanceOf(BinlogFormatException.class)
        .hasMessage(
            "Cannot keep reading host 'b' (db-b.example:3307): @@GLOBAL.binlog_format changed to MIXED while the"
                + " job was running; the binlog reader skips changes that are not logged as ROW events, so they would be"
                + " lost. The job stops for good. Set it back on that server (SET GLOBAL binlog_format = 'ROW'), then"
                + " restart the job from its last checkpoint (`bin/shardberg run` resumes by itself; `flink run -s"
                + " <retained checkpoint>`). Changes written to this host's shards while it was MIXED are not in the binlog"
                + " as rows and no restart can replay them: if there were any, re-snapshot instead (start without state"
                + " with pipeline.on-stateless-start: resnapshot).");
  }

  @Test
  void aPartialRowImageStops() {
    assertThatThrownBy(() -> BinlogFormatWatch.verify(HOST, "ROW", "MINIMAL"))
        .isInstanceOf(BinlogFormatException.class)
        .hasMessageStartingWith(
            "Cannot keep reading host 'b' (db-b.example:3307): @@GLOBAL.binlog_row_image changed to"
                + " MINIMAL while the job was running; the binlog reader skips changes that are not logged with full row"
                + " images")
        .hasMessageContaining("SET GLOBAL binlog_row_image = 'FULL'");
  }

  @Test
  void routerErrorsAreNonRecoverableEvenWhenWrapped() {
    Throwable wrapped =
        new RuntimeException(
            "One or more fetchers have encountered exception",
            new IllegalStateException(new ShardRouterException("Cannot apply a schema change")));
    assertThat(
            ThrowableClassifier.findThrowableOfThrowableType(
                wrapped, ThrowableType.NonRecoverableError))
        .get()
        .isInstanceOf(ShardRouterException.class);
    assertThat(
            ThrowableClassifier.getThrowableType(
                new TableLayoutMismatchException("x", java.util.List.of("y"))))
        .isEqualTo(ThrowableType.NonRecoverableError);
  }

  @Test
  void theIntervalMustBePositive() {
    assertThatThrownBy(() -> new BinlogFormatWatch(HOST, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot watch the binlog format of host 'b': the check interval PT0S is not positive"
                + " (source.binlog-format-check-interval)");
  }
}
