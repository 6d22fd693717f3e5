package dev.shardberg.router.discovery;

import static dev.shardberg.router.MySqlIdentifiers.quote;
import static dev.shardberg.router.discovery.MySqlConnections.connect;
import static dev.shardberg.router.discovery.MySqlConnections.safeMessage;

import dev.shardberg.router.RouterOptions;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the values of a composite primary key on a few shards, so that the bucket column can
 * default to the key column that spreads rows best.
 */
final class KeySampler {
  /** Logs as discovery did before this class was split out of it: the log lines stay the same. */
  private static final Logger LOG = LoggerFactory.getLogger(ShardDiscovery.class);

  /**
   * Shards whose rows are sampled for the default bucket column: the first, a middle and the last.
   */
  static final int SAMPLED_SHARDS = 3;

  /** Rows read per sampled shard. */
  static final int SAMPLE_ROWS = 10_000;

  private KeySampler() {}

  /**
   * Distinct values per key column in the first {@value #SAMPLE_ROWS} rows of up to {@value
   * #SAMPLED_SHARDS} shards (summed over the shards): one cheap query per sampled shard that lets
   * the bucket column default to the key column that spreads rows best.
   */
  static Map<String, Long> sampleKey(
      LogicalTableSpec spec, Map<String, List<ShardTable>> assigned, List<String> key) {
    List<ShardTable> all =
        assigned.values().stream()
            .flatMap(List::stream)
            .sorted(Comparator.comparingInt(ShardTable::shard))
            .toList();
    Set<ShardTable> sampled = new LinkedHashSet<>();
    sampled.add(all.get(0));
    sampled.add(all.get(all.size() / 2));
    sampled.add(all.get(all.size() - 1));
    Map<String, Long> distinct = new LinkedHashMap<>();
    key.forEach(k -> distinct.put(k, 0L));
    for (ShardTable t : sampled) {
      MySqlHost host = spec.host(t.hostName());
      String counts =
          key.stream()
              .map(k -> "COUNT(DISTINCT " + quote(k) + ")")
              .collect(Collectors.joining(", "));
      String sql =
          "SELECT "
              + counts
              + " FROM (SELECT "
              + key.stream().map(k -> quote(k)).collect(Collectors.joining(", "))
              + " FROM "
              + quote(t.database())
              + "."
              + quote(t.table())
              + " LIMIT "
              + SAMPLE_ROWS
              + ") s";
      try (Connection c = connect(host);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery(sql)) {
        rs.next();
        for (int i = 0; i < key.size(); i++) {
          distinct.merge(key.get(i), rs.getLong(i + 1), Long::sum);
        }
      } catch (SQLException e) {
        throw new ShardRouterException(
            String.format(
                "Cannot sample the key columns %s of shard %d (%s) as user '%s' to choose the bucket column: %s; grant SELECT on the table, or name the bucket column in "
                    + RouterOptions.TARGET_KEY_COLUMN.key(),
                key,
                t.shard(),
                t.describe(),
                host.user(),
                safeMessage(e, host)));
      }
    }
    LOG.info(
        "Sampled the key columns of {} shard(s): distinct values {}", sampled.size(), distinct);
    return distinct;
  }
}
