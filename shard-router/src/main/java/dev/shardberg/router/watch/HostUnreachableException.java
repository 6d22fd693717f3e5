package dev.shardberg.router.watch;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.discovery.MySqlHost;
import java.time.Duration;

/**
 * A MySQL host did not answer for longer than {@code source.unreachable-timeout}: the job stops
 * (for good, like every {@link ShardRouterException}) instead of stalling that host's shards
 * silently while the other hosts keep the table looking fresh.
 */
public final class HostUnreachableException extends ShardRouterException {
  private static final long serialVersionUID = 1L;

  HostUnreachableException(MySqlHost host, Duration down, Duration limit, String lastError) {
    super(
        String.format(
            "Cannot keep reading host %s: it has not answered for %d s, longer than source.unreachable-timeout (%s);"
                + " last error: %s. Its shards have had no changes read since. Bring the server back (or fix the network"
                + " or credentials), then restart the job from its last checkpoint (`bin/shardberg run` resumes by itself;"
                + " `flink run -s <retained checkpoint>`); raise source.unreachable-timeout to wait longer.",
            host.describe(), down.toSeconds(), limit, lastError));
  }
}
