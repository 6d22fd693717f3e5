package dev.shardberg.router.watch;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.MySqlHost;
import java.util.Collection;
import java.util.TreeSet;

/**
 * The server answering at a host's address is not the one the job's binlog position was read from
 * (a primary failover, a replaced server) and the position cannot be carried over: non-recoverable,
 * like every {@link ShardRouterException}; a restart would meet the same server.
 */
public final class SourceServerChangedException extends ShardRouterException {
  private static final long serialVersionUID = 1L;

  private SourceServerChangedException(String message) {
    super(message);
  }

  static SourceServerChangedException of(
      MySqlHost host,
      ServerIdentity expected,
      ServerIdentity found,
      Collection<ShardTable> tables,
      String when) {
    TreeSet<Integer> shards = new TreeSet<>();
    tables.forEach(t -> shards.add(t.shard()));
    return new SourceServerChangedException(
        String.format(
            "Cannot keep reading host %s: the job's binlog position for it was read from %s, but the host now"
                + " answers as %s (%s; a primary failover, or a replaced server?). A binlog file and position mean"
                + " nothing on another server%s, so the job stops instead of seeking one there; nothing after the last"
                + " completed checkpoint is committed. To go on, read this host's shards %s again from the server now"
                + " at the address, in two resumes from the job's checkpoints (docs/shard-fleet.md, \"A primary"
                + " failover\"): 1. remove source '%s' from `sources` and resume (its shards' rows stay with"
                + " tables.dropped-shards: keep, the default) until one checkpoint completes; 2. add it back as it was"
                + " and resume: its shards are read from a fresh snapshot and their rows replaced, the other hosts go on"
                + " from their position.",
            host.describe(),
            expected.describe(),
            found.describe(),
            when,
            found.serverUuid() == null
                ? " (Flink CDC reads MariaDB by file and position only, not by its GTIDs)"
                : " without GTIDs (gtid_mode ON on both servers lets Flink CDC go on by GTID set)",
            shards,
            host.name()));
  }
}
