package dev.shardberg.router.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.shardberg.router.DroppedShards;
import dev.shardberg.router.Secret;
import dev.shardberg.router.discovery.MySqlHost;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.runtime.throwable.ThrowableClassifier;
import org.apache.flink.runtime.throwable.ThrowableType;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;
import org.slf4j.helpers.MessageFormatter;

/**
 * The host watch against a port nobody listens on; the restart of a real host is in
 * SourceReconnectTest.
 */
class SourceHostWatchTest {

  @Test
  void aHostThatNeverAnswersFailsTheJobPastTheLimitNamingIt() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort(); // closed again: connections are refused
    }
    MySqlHost host = new MySqlHost("gone", "127.0.0.1", port, "cdc", Secret.of("pw"), Map.of());
    SourceHostWatch watch =
        new SourceHostWatch(host, Duration.ofMillis(100), Duration.ofMillis(600));
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (OneInputStreamOperatorTestHarness<RowData, RowData> harness =
        new OneInputStreamOperatorTestHarness<>(watch)) {
      harness.open();
      AtomicLong time = new AtomicLong();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                try {
                  harness.setProcessingTime(time.addAndGet(100));
                } catch (Exception e) {
                  failure.set(e);
                }
                return failure.get() != null;
              });
    }
    Throwable unreachable =
        ThrowableClassifier.findThrowableOfThrowableType(
                failure.get(), ThrowableType.NonRecoverableError)
            .orElseThrow();
    assertThat(unreachable).isInstanceOf(HostUnreachableException.class);
    assertThat(unreachable.getMessage())
        .startsWith(
            "Cannot keep reading host 'gone' (127.0.0.1:" + port + "): it has not answered for ")
        .contains(
            "longer than source.unreachable-timeout (PT0.6S); last error: CommunicationsException: ")
        .endsWith("raise source.unreachable-timeout to wait longer.");
  }

  /**
   * A probe's outcome is the host's state as soon as it is known (the gauges the console and status
   * read), not at the task's next timer, up to a probe interval later: here no timer fires at all.
   */
  @Test
  void aFailedProbeMakesTheHostUnreachableWithoutWaitingForTheTasksTimer() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort(); // closed again: connections are refused
    }
    MySqlHost host = new MySqlHost("gone", "127.0.0.1", port, "cdc", Secret.of("pw"), Map.of());
    SourceHostWatch watch =
        new SourceHostWatch(host, Duration.ofMinutes(1), Duration.ofMinutes(10));
    try (OneInputStreamOperatorTestHarness<RowData, RowData> harness =
        new OneInputStreamOperatorTestHarness<>(watch)) {
      harness.open(); // the first probe runs at once; the processing time stays where it is
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> watch.summary(System.currentTimeMillis()).contains(": UNREACHABLE for "));
    }
  }

  @Test
  void countsTheSnapshotRowsPerShardAndTheBinlogChangesApart() throws Exception {
    MySqlHost host = new MySqlHost("a", "127.0.0.1", 1, "cdc", Secret.of("pw"), Map.of());
    SourceHostWatch watch =
        new SourceHostWatch(host, Duration.ofMinutes(1), Duration.ofMinutes(10));
    try (OneInputStreamOperatorTestHarness<RowData, RowData> harness =
        new OneInputStreamOperatorTestHarness<>(watch)) {
      harness.open();
      harness.processElement(
          GenericRowData.ofKind(RowKind.INSERT, 3, 1L), 0); // snapshot reads carry no time
      harness.processElement(GenericRowData.ofKind(RowKind.INSERT, 3, 2L), 0);
      harness.processElement(GenericRowData.ofKind(RowKind.INSERT, 5, 1L), 0);
      harness.processElement(GenericRowData.ofKind(RowKind.UPDATE_AFTER, 3, 1L), 1_000);
      harness.processElement(GenericRowData.ofKind(RowKind.DELETE, 5, 1L), 2_000);
      assertThat(harness.extractOutputValues()).hasSize(5);
      assertThat(watch.summary(3_000))
          .contains("; 3 snapshot rows of 2 shards and 2 binlog changes read, newest written ");
    }
  }

  /**
   * The server check does not hold a checkpoint up while the host does not answer (an outage: the
   * binlog reader reconnects by itself), also after binlog changes, at the start or restore and at
   * the checkpoint; a restore from such a checkpoint asks again.
   */
  @Test
  void aHostThatDoesNotAnswerDoesNotFailTheCheckpointsOfItsChanges() throws Exception {
    MySqlHost host = new MySqlHost("a", "127.0.0.1", 1, "cdc", Secret.of("pw"), Map.of());
    org.apache.flink.runtime.checkpoint.OperatorSubtaskState state;
    try (OneInputStreamOperatorTestHarness<RowData, RowData> harness =
        new OneInputStreamOperatorTestHarness<>(
            new SourceHostWatch(host, Duration.ofMinutes(1), Duration.ofMinutes(10)))) {
      harness.open();
      harness.processElement(GenericRowData.ofKind(RowKind.UPDATE_AFTER, 3, 1L), 1_000);
      state = harness.snapshot(1, 2_000);
      harness.processElement(GenericRowData.ofKind(RowKind.DELETE, 3, 1L), 3_000);
      harness.snapshot(2, 4_000);
    }
    try (OneInputStreamOperatorTestHarness<RowData, RowData> restored =
        new OneInputStreamOperatorTestHarness<>(
            new SourceHostWatch(host, Duration.ofMinutes(1), Duration.ofMinutes(10)))) {
      restored.initializeState(state);
      restored.open();
      restored.processElement(GenericRowData.ofKind(RowKind.DELETE, 3, 2L), 5_000);
      restored.snapshot(3, 6_000);
      assertThat(restored.extractOutputValues()).hasSize(1);
    }
  }

  /**
   * A shard dropped while the job runs: this run never deletes its rows; the WARN says what the
   * next resume does with them, per tables.dropped-shards.
   */
  @Test
  void aDroppedShardsWarningSaysWhatTheNextResumeDoesWithItsRows() {
    Object[] shard = {2, "shop.orders_2", "a (db-a:3306)", 2};
    assertThat(
            MessageFormatter.arrayFormat(
                    SourceHostWatch.droppedShardWarning(DroppedShards.KEEP), shard)
                .getMessage())
        .isEqualTo(
            "Shard 2 ('shop.orders_2') no longer exists on MySQL host a (db-a:3306) (dropped?): its rows stay in"
                + " the Iceberg table, also after the next resume (tables.dropped-shards: keep). Delete them"
                + " yourself if they must go (DELETE … WHERE shard_number = 2)");
    assertThat(
            MessageFormatter.arrayFormat(
                    SourceHostWatch.droppedShardWarning(DroppedShards.DELETE), shard)
                .getMessage())
        .isEqualTo(
            "Shard 2 ('shop.orders_2') no longer exists on MySQL host a (db-a:3306) (dropped?): its rows stay in"
                + " the Iceberg table while this run goes on, and leave it in one commit at the next resume of"
                + " the job (tables.dropped-shards: delete; a delete by shard_number = 2). To remove them sooner,"
                + " stop the job with a savepoint and resume it with the same config");
  }

  @Test
  void theLimitMustBeLongerThanTheProbeInterval() {
    MySqlHost host = new MySqlHost("a", "db-a", 3306, "cdc", Secret.of("pw"), Map.of());
    assertThatThrownBy(
            () -> new SourceHostWatch(host, Duration.ofSeconds(5), Duration.ofSeconds(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot watch host 'a': source.unreachable-timeout (PT5S) must be longer than source.health-check-interval (PT5S)");
  }
}
