package dev.shardberg.job.config;

import static dev.shardberg.job.config.ShardbergOptions.*;

import dev.shardberg.job.config.ShardbergConfig.ServerIdRange;
import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.types.ExactSnapshotDriver;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import org.apache.flink.configuration.Configuration;

/**
 * The rules across keys of the MySQL side: every {@code sources[]} entry (a unique name, a port,
 * exactly one readable password, a server-id range wide enough for the parallelism and shared with
 * no other source) and the CDC source's {@code source.*} keys (startup mode and timestamp, time
 * zone, the Debezium properties Shardberg owns, health-check timing).
 */
final class SourceRules {
  private final Problems problems;
  private final KeyChecks keys;
  private final Function<String, String> env;

  /**
   * @param env environment lookup (for {@code password-env}); {@code System::getenv} outside tests
   */
  SourceRules(Problems problems, KeyChecks keys, Function<String, String> env) {
    this.problems = problems;
    this.keys = keys;
    this.env = env;
  }

  void sources(int parallelism, List<Configuration> sources) {
    if (sources.isEmpty()) {
      problems.add(
          "Missing key '"
              + RouterOptions.SOURCES.key()
              + "': list at least one MySQL host (name, host, port, user,"
              + " password-env or password-file, server-id-range).");
      return;
    }
    List<String> names = new ArrayList<>();
    List<ServerIdRange> ranges = new ArrayList<>();
    for (int i = 0; i < sources.size(); i++) {
      int index = i;
      Configuration source = sources.get(i);
      keys.checkRequired(source, perSource(), o -> RouterOptions.sourceKey(o, index));
      String name = source.get(RouterOptions.SOURCE_NAME);
      int first = names.indexOf(name);
      if (name != null && first >= 0) {
        problems.add(
            "Source name '"
                + name
                + "' is used by sources["
                + first
                + "] and sources["
                + i
                + "]: give every source a unique 'name' (it names the operator uids).");
      }
      names.add(name);
      int port = source.get(RouterOptions.SOURCE_PORT);
      if (port < 1) {
        problems.add(
            "Cannot use '"
                + RouterOptions.sourceKey(RouterOptions.SOURCE_PORT, i)
                + "' = "
                + port
                + ": it must be at least 1.");
      } else if (port > 65535) {
        problems.add(
            "Cannot use '"
                + RouterOptions.sourceKey(RouterOptions.SOURCE_PORT, i)
                + "' = "
                + port
                + ": a port is between 1 and 65535.");
      }
      password(
          name,
          i,
          source.get(RouterOptions.SOURCE_PASSWORD_ENV),
          source.get(RouterOptions.SOURCE_PASSWORD_FILE));
      ranges.add(
          serverIdRange(
              RouterOptions.sourceKey(RouterOptions.SOURCE_SERVER_ID_RANGE, i),
              source.get(RouterOptions.SOURCE_SERVER_ID_RANGE),
              parallelism));
    }
    for (int i = 0; i < ranges.size(); i++) {
      for (int j = i + 1; j < ranges.size(); j++) {
        ServerIdRange a = ranges.get(i);
        ServerIdRange b = ranges.get(j);
        if (a != null && b != null && a.overlaps(b)) {
          int width = b.size();
          int free =
              ranges.stream().filter(r -> r != null).mapToInt(ServerIdRange::last).max().orElse(0)
                  + 1;
          problems.add(
              "Server-id ranges of sources '"
                  + names.get(i)
                  + "' ("
                  + RouterOptions.sourceKey(RouterOptions.SOURCE_SERVER_ID_RANGE, i)
                  + " = "
                  + a
                  + ") and '"
                  + names.get(j)
                  + "' ("
                  + RouterOptions.sourceKey(RouterOptions.SOURCE_SERVER_ID_RANGE, j)
                  + " = "
                  + b
                  + ") overlap: give every source its own range, e.g. "
                  + free
                  + "-"
                  + (free + width - 1)
                  + " for '"
                  + names.get(j)
                  + "'.");
        }
      }
    }
  }

  /** Exactly one password source, and it can be read; the password itself is never read here. */
  private void password(String sourceName, int index, String passwordEnv, String passwordFile) {
    PasswordRule.check(
        problems,
        env,
        sourceName == null ? "sources[" + index + "]" : "source '" + sourceName + "'",
        RouterOptions.sourceKey(RouterOptions.SOURCE_PASSWORD_ENV, index),
        passwordEnv,
        RouterOptions.sourceKey(RouterOptions.SOURCE_PASSWORD_FILE, index),
        passwordFile);
  }

  private ServerIdRange serverIdRange(String key, String raw, int parallelism) {
    if (raw == null) {
      return null;
    }
    Matcher m = ServerIdRange.SYNTAX.matcher(raw);
    if (!m.matches()) {
      problems.add("Cannot parse '" + key + "' = '" + raw + "': write FIRST-LAST, e.g. 5400-5403.");
      return null;
    }
    long first = Long.parseLong(m.group(1));
    long last = m.group(2) == null ? first : Long.parseLong(m.group(2));
    if (first < 1 || last > 0xFFFFFFFFL || first > last || last > Integer.MAX_VALUE) {
      problems.add(
          "Cannot use '"
              + key
              + "' = '"
              + raw
              + "': FIRST must be >= 1 and <= LAST, both below 2147483648.");
      return null;
    }
    ServerIdRange range = ServerIdRange.parse(raw);
    if (range.size() < parallelism) {
      problems.add(
          "'"
              + key
              + "' = "
              + range
              + " holds "
              + range.size()
              + " server id(s) but "
              + PIPELINE_PARALLELISM.key()
              + " is "
              + parallelism
              + " (each source reader needs its own id): widen it to "
              + first
              + "-"
              + (first + parallelism - 1)
              + " or lower "
              + PIPELINE_PARALLELISM.key()
              + ".");
    }
    return range;
  }

  void cdc(Configuration conf) {
    StartupMode mode =
        problems.isInvalid(SOURCE_STARTUP_MODE.key()) ? null : conf.get(SOURCE_STARTUP_MODE);
    String timestamp = conf.get(SOURCE_STARTUP_TIMESTAMP);
    if (timestamp != null) {
      try {
        ShardbergConfig.CdcConfig.parseTimestamp(timestamp);
      } catch (DateTimeException | NumberFormatException e) {
        problems.add(
            "Cannot parse '"
                + SOURCE_STARTUP_TIMESTAMP.key()
                + "' = '"
                + timestamp
                + "': use an ISO-8601 instant such as 2026-01-31T12:00:00Z, or epoch milliseconds.");
      }
    }
    if (mode == StartupMode.TIMESTAMP && timestamp == null) {
      problems.add(
          "Missing key '"
              + SOURCE_STARTUP_TIMESTAMP.key()
              + "': '"
              + SOURCE_STARTUP_MODE.key()
              + "' is timestamp; set the"
              + " instant to start reading the binlog from (e.g. 2026-01-31T12:00:00Z).");
    }
    if (mode != null && mode != StartupMode.TIMESTAMP && timestamp != null) {
      problems.add(
          "'"
              + SOURCE_STARTUP_TIMESTAMP.key()
              + "' is set but '"
              + SOURCE_STARTUP_MODE.key()
              + "' is "
              + mode
              + ": set the mode to timestamp or remove the timestamp.");
    }
    String zone = conf.get(SOURCE_SERVER_TIME_ZONE);
    try {
      ZoneId.of(zone);
    } catch (DateTimeException e) {
      problems.add(
          "Cannot use '"
              + SOURCE_SERVER_TIME_ZONE.key()
              + "' = '"
              + zone
              + "': not a time zone id; use e.g. UTC or Europe/Berlin.");
    }
    Map<String, String> debezium = conf.get(SOURCE_DEBEZIUM_PROPERTIES);
    for (String driverKey : new TreeSet<>(ExactSnapshotDriver.DEBEZIUM_PROPERTIES.keySet())) {
      if (debezium.containsKey(driverKey)) {
        problems.add(
            "Cannot set '"
                + SOURCE_DEBEZIUM_PROPERTIES.key()
                + "."
                + driverKey
                + "': Shardberg sets it to its own driver, which reads MySQL FLOAT and TIME exactly in the snapshot"
                + " (docs/sources.md); remove the key.");
      }
    }
    if (debezium.containsKey("connect.keep.alive.interval.ms")) {
      problems.add(
          "Cannot set '"
              + SOURCE_DEBEZIUM_PROPERTIES.key()
              + ".connect.keep.alive.interval.ms': use '"
              + SOURCE_KEEP_ALIVE_INTERVAL.key()
              + "' instead.");
    }
    Duration healthCheck = conf.get(RouterOptions.SOURCE_HEALTH_CHECK_INTERVAL);
    Duration unreachable = conf.get(RouterOptions.SOURCE_UNREACHABLE_TIMEOUT);
    if (unreachable.compareTo(healthCheck) <= 0) {
      problems.add(
          "Cannot use '"
              + RouterOptions.SOURCE_UNREACHABLE_TIMEOUT.key()
              + "' = "
              + unreachable
              + ": it must be longer than '"
              + RouterOptions.SOURCE_HEALTH_CHECK_INTERVAL.key()
              + "' ("
              + healthCheck
              + ").");
    }
    keys.positive(conf, SOURCE_SNAPSHOT_CHUNK_SIZE);
    keys.positive(conf, SOURCE_FETCH_SIZE);
    keys.positive(conf, SOURCE_CONNECTION_POOL_SIZE);
  }
}
