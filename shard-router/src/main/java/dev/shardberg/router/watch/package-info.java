/**
 * Watching the hosts while the job reads them: pass-through operators chained after each host's
 * source that probe the host ({@link dev.shardberg.router.watch.SourceHostWatch}, its bookkeeping
 * in {@link dev.shardberg.router.watch.HostHealth}) and its binlog format ({@link
 * dev.shardberg.router.watch.BinlogFormatWatch}), and stop the job, naming the host, when it stays
 * unreachable or stops logging full row images. Uses the discovery package (the host) and the
 * router's root.
 */
package dev.shardberg.router.watch;
