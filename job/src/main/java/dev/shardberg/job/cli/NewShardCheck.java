package dev.shardberg.job.cli;

import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.config.StartupMode;
import dev.shardberg.job.observe.HostLag;
import dev.shardberg.router.NewShards;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.ShardPlan;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * What a local {@code run} does about shard tables created while it runs, decided from a fresh
 * discovery (as a start would run it) against the plan the running job was built with, and from
 * what the job's host watches say of each host's source ({@link HostLag#binlogPhase()}).
 *
 * <p>Pure decision; the run acts on it ({@link LocalRun}): adopting is a stop with a savepoint and
 * a resume from it, where the source reads the new shard tables alone from a fresh snapshot and the
 * coordinator replaces any old rows of their numbers, every other shard going on from its binlog
 * position (docs/shard-fleet.md).
 */
final class NewShardCheck {
  private NewShardCheck() {}

  /** What to do. */
  sealed interface Outcome {}

  /** No shard table the running job does not read. */
  record Nothing() implements Outcome {}

  /** Stop with a savepoint and resume with these new shard tables in the plan. */
  record Adopt(List<ShardTable> added) implements Outcome {}

  /** Not now (a snapshot is being read, a host cannot be asked); asked again at the next check. */
  record Later(List<ShardTable> added, String why) implements Outcome {}

  /**
   * {@code tables.new-shards: capture}: new tables the running job may still read from the binlog
   * by itself (its gauges lag); nothing to say or do yet.
   */
  record Waiting(List<ShardTable> added) implements Outcome {}

  /** Not by this run (the config's choice or a mode that cannot); said once, the job goes on. */
  record Left(List<ShardTable> added, String why) implements Outcome {}

  /**
   * The new tables cannot be read as they are (two tables with one number, columns that differ): a
   * start would refuse the same, so the run stops with a savepoint, saying why.
   */
  record Stop(String message) implements Outcome {}

  /**
   * @param running the plan the running job was built with
   * @param discover discovery now, as a start runs it
   * @param hosts the job's host watches, read just before; empty when they cannot be read
   */
  static Outcome check(
      ShardbergConfig config,
      ShardPlan running,
      Supplier<ShardPlan> discover,
      List<HostLag> hosts) {
    return check(config, running, discover, hosts, new java.util.HashMap<>(), 0);
  }

  /**
   * How long a table new to the plan must stay unread by the running job before a run adopts it
   * with a savepoint under {@code tables.new-shards: capture}: the job reads a {@code CREATE TABLE}
   * from the binlog within moments, but says so through gauges that Flink's REST API caches (10 s
   * by default).
   */
  static java.time.Duration captureGrace(ShardbergConfig config) {
    java.time.Duration twice = config.tables().discoveryInterval().multipliedBy(2);
    java.time.Duration floor = java.time.Duration.ofSeconds(20);
    return twice.compareTo(floor) > 0 ? twice : floor;
  }

  /**
   * As above, for a run that checks again and again: {@code unreadSince} (kept by the caller
   * between checks) holds when each new table was first found unread, {@code nowMillis} is now.
   * With {@code tables.new-shards: capture} tables the job reads from the binlog are not new to it,
   * and the others are adopted once unread for {@link #captureGrace}.
   */
  static Outcome check(
      ShardbergConfig config,
      ShardPlan running,
      Supplier<ShardPlan> discover,
      List<HostLag> hosts,
      Map<String, Long> unreadSince,
      long nowMillis) {
    ShardPlan now;
    try {
      now = discover.get();
    } catch (ShardRouterException e) {
      if (e.getCause() instanceof SQLException) {
        return new Later(List.of(), "the shards cannot be listed now: " + e.getMessage());
      }
      return new Stop(e.getMessage());
    } catch (RuntimeException e) {
      // a password file being rotated, …: the job goes on, the next check asks again
      return new Later(List.of(), "the shards cannot be listed now: " + e);
    }
    List<ShardTable> added = added(running, now);
    if (config.tables().newShards() == NewShards.CAPTURE) {
      Map<String, Set<Integer>> captured =
          hosts.stream()
              .collect(Collectors.toMap(HostLag::host, HostLag::capturedShards, (a, b) -> a));
      added =
          added.stream()
              .filter(t -> !captured.getOrDefault(t.hostName(), Set.of()).contains(t.shard()))
              .toList();
      Set<String> keys = new TreeSet<>();
      added.forEach(t -> keys.add(key(t)));
      unreadSince.keySet().retainAll(keys);
      keys.forEach(k -> unreadSince.putIfAbsent(k, nowMillis));
      long grace = captureGrace(config).toMillis();
      if (!added.isEmpty()
          && added.stream().anyMatch(t -> nowMillis - unreadSince.get(key(t)) < grace)) {
        return new Waiting(added);
      }
    }
    if (added.isEmpty()) {
      return new Nothing();
    }
    if (config.tables().newShards() == NewShards.WARN) {
      return new Left(
          added,
          RouterOptions.TABLES_NEW_SHARDS.key()
              + " = warn: the next resume reads them (stop with Ctrl-C, then `run` with the same config)");
    }
    if (config.cdc().startupMode() != StartupMode.INITIAL) {
      return new Left(
          added,
          "source.startup-mode = "
              + config.cdc().startupMode()
              + " has no snapshot to read them with; see docs/shard-fleet.md for the way"
              + " (tables.reread-shards at a resume)");
    }
    Map<String, Long> phase =
        hosts.stream().collect(Collectors.toMap(HostLag::host, HostLag::binlogPhase, (a, b) -> a));
    List<String> snapshotting =
        running.tablesByHost().keySet().stream()
            .filter(host -> phase.getOrDefault(host, -1L) != 1L)
            .sorted()
            .toList();
    if (!snapshotting.isEmpty()) {
      return new Later(
          added,
          hosts.isEmpty()
              ? "the job's host watches cannot be read now"
              : "host(s) "
                  + snapshotting
                  + " still read a snapshot (a state taken then cannot add a table)");
    }
    return new Adopt(added);
  }

  /** The shard tables of {@code now} that {@code running} does not read, by shard number. */
  static List<ShardTable> added(ShardPlan running, ShardPlan now) {
    Set<String> read = new TreeSet<>();
    running.allTables().forEach(t -> read.add(key(t)));
    return now.allTables().stream().filter(t -> !read.contains(key(t))).sorted(ORDER).toList();
  }

  /** "48 ('books.ledger_48' on host 'a'), 49 (…)". */
  static String describe(List<ShardTable> tables) {
    return tables.stream()
        .map(t -> t.shard() + " (" + t.describe() + ")")
        .collect(Collectors.joining(", "));
  }

  private static String key(ShardTable t) {
    return t.hostName() + "\u0000" + t.qualifiedName();
  }

  private static final java.util.Comparator<ShardTable> ORDER =
      java.util.Comparator.comparingInt(ShardTable::shard)
          .thenComparing(ShardTable::hostName)
          .thenComparing(ShardTable::qualifiedName);
}
