package dev.shardberg.router.watch;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.discovery.MySqlHost;

/**
 * A host's binlog stopped being full row images while the job was reading it: the binlog reader
 * would skip (lose) every later change. Non-recoverable, like every {@link ShardRouterException}.
 */
public final class BinlogFormatException extends ShardRouterException {
  private static final long serialVersionUID = 1L;

  private BinlogFormatException(String message) {
    super(message);
  }

  static BinlogFormatException changed(
      MySqlHost host, String variable, String found, String needed) {
    return new BinlogFormatException(
        String.format(
            "Cannot keep reading host %s: @@GLOBAL.%s changed to %s while the job was running; the binlog reader"
                + " skips changes that are not logged %s, so they would be lost. The job stops for good. Set it back"
                + " on that server (SET GLOBAL %s = '%s'), then restart the job from its last checkpoint"
                + " (`bin/shardberg run` resumes by itself; `flink run -s <retained checkpoint>`). Changes written to"
                + " this host's shards while it was %s are not in the binlog as rows and no restart can replay them:"
                + " if there were any, re-snapshot instead (start without state with pipeline.on-stateless-start:"
                + " resnapshot).",
            host.describe(),
            variable,
            found,
            needed.equals("FULL") ? "with full row images" : "as ROW events",
            variable,
            needed,
            found));
  }
}
