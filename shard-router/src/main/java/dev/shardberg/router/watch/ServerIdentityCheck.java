package dev.shardberg.router.watch;

import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.MySqlHost;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One host watch subtask's check that the binlog changes it passes on come from the server the
 * job's binlog position belongs to ({@link ServerIdentity}), so that a position is never read on a
 * server it does not belong to without the job stopping (docs/shard-fleet.md, "A primary
 * failover").
 *
 * <p>Two moments: at the start of every run and restore (before the source reads anything: a
 * chain's operators are opened from its end), the server at the address is compared with the one in
 * the restored state; and at every checkpoint whose records include binlog changes read since the
 * last look, on the task thread before the checkpoint's state is taken. A change the binlog reader
 * made by itself (it reconnects to the address after a lost connection, where a promoted replica
 * may now answer) is therefore seen before the checkpoint holding the first change read there can
 * complete: none of them is ever committed. A server that cannot be asked at such a checkpoint
 * fails the checkpoint (and so restarts the job from the last one) rather than letting it complete
 * unchecked.
 *
 * <p>Not caught before a commit: a failover whose new server also stops answering within one
 * checkpoint of the binlog reader's reconnecting to it (the changes read in between can be
 * committed; the job stops at the next checkpoint after the server answers again). Not told apart:
 * two MariaDB servers with the same {@code server_id} (a server rebuilt from a backup under its old
 * id); a connection of the binlog reader still open to the old primary while the address already
 * leads elsewhere is told apart, and stops the job too.
 */
final class ServerIdentityCheck {
  private static final Logger LOG = LoggerFactory.getLogger(ServerIdentityCheck.class);

  private final MySqlHost host;
  private final List<ShardTable> tables;
  private final long timeoutMillis;

  /** The server the job's position for this host belongs to; null until first known. */
  private ServerIdentity expected;

  /** Binlog changes passed on since the server was last asked. */
  private boolean changesSinceAsked;

  /** The last ask failed (logged once per outage). */
  private boolean unanswered;

  private Connection connection; // task thread only

  ServerIdentityCheck(MySqlHost host, List<ShardTable> tables, long timeoutMillis) {
    this.host = host;
    this.tables = List.copyOf(tables);
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * At the start of a run or restore: {@code restored} the identities in the restored state (empty
   * without state, or state from before this check). Compares the server now at the address with
   * them, or learns it; a server that cannot be asked now is asked at the first checkpoint with
   * binlog changes.
   */
  void start(Iterable<String> restored) {
    List<ServerIdentity> known = new ArrayList<>();
    restored.forEach(s -> known.add(ServerIdentity.parse(s)));
    ServerIdentity current;
    try {
      current = ask();
    } catch (SQLException e) {
      expected = known.isEmpty() ? null : known.get(0);
      LOG.warn(
          "Cannot ask MySQL host {} which server it is ({}); asked again before the first checkpoint that holds"
              + " binlog changes of it",
          host.describe(),
          e.getMessage());
      return;
    }
    if (known.isEmpty()) {
      expected = current;
      LOG.info(
          "MySQL host {} is {}: the job's binlog position for it is read on that server only",
          host.describe(),
          current.describe());
      return;
    }
    expected =
        known.stream()
            .filter(k -> k.comparedWith(current) == ServerIdentity.Change.SAME)
            .findFirst()
            .orElse(known.get(0));
    apply(current, "at the restore, before anything was read");
  }

  /** A binlog change passed (snapshot rows do not count: they are read by query). */
  void binlogChange() {
    changesSinceAsked = true;
  }

  /**
   * Before a checkpoint's state is taken: if binlog changes passed since the server was last asked,
   * the server at the address must still be the expected one; throws (non-recoverable) when it is
   * not. A host that does not answer at that moment (an outage: the binlog reader waits and
   * reconnects by itself) lets the checkpoint go on, with one WARN per outage, and is asked again
   * at the first checkpoint after another binlog change passed: the reader can only have read that
   * change from a server that answered.
   */
  void beforeCheckpoint(long checkpointId) {
    if (!changesSinceAsked) {
      return;
    }
    changesSinceAsked = false;
    ServerIdentity current;
    try {
      current = ask();
    } catch (SQLException e) {
      if (!unanswered) {
        unanswered = true;
        LOG.warn(
            "Cannot ask MySQL host {} which server it is at checkpoint {} ({}); asked again at the first checkpoint"
                + " after its next binlog change",
            host.describe(),
            checkpointId,
            e.getMessage());
      }
      return;
    }
    unanswered = false;
    apply(current, "at checkpoint " + checkpointId + ", after binlog changes were read");
  }

  /** What goes into the checkpoint: the expected server, if known. */
  List<String> state() {
    return expected == null ? List.of() : List.of(expected.encode());
  }

  ServerIdentity expected() {
    return expected;
  }

  private void apply(ServerIdentity current, String when) {
    if (expected == null) {
      expected = current;
      return;
    }
    switch (expected.comparedWith(current)) {
      case SAME -> {}
      case ANOTHER_WITH_GTIDS -> {
        LOG.warn(
            "MySQL host {} now answers as {}, not {} ({}): another server. Both have gtid_mode ON, so the binlog"
                + " reader goes on from the GTID set in its position, which the new server serves",
            host.describe(),
            current.describe(),
            expected.describe(),
            when);
        expected = current;
      }
      case ANOTHER -> throw SourceServerChangedException.of(host, expected, current, tables, when);
    }
  }

  /** The server at the address, over this subtask's own connection (one new try if it broke). */
  private ServerIdentity ask() throws SQLException {
    for (int attempt = 0; ; attempt++) {
      try {
        if (connection == null || connection.isClosed()) {
          connection = host.openWatchConnection(timeoutMillis);
        }
        return ServerIdentity.read(connection);
      } catch (SQLException e) {
        close();
        if (attempt > 0) {
          throw e;
        }
      }
    }
  }

  void close() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException ignored) {
        // already broken
      }
      connection = null;
    }
  }
}
