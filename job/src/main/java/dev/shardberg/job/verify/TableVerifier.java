package dev.shardberg.job.verify;

import com.mysql.cj.jdbc.ServerPreparedStatement;
import dev.shardberg.job.verify.VerifyReport.Difference;
import dev.shardberg.job.verify.VerifyReport.ShardResult;
import dev.shardberg.router.schema.TableSchemaEvolver;
import dev.shardberg.router.types.MySqlColumn;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an Iceberg table against the MySQL shards it is fed from: per shard, row counts and an
 * order-independent content checksum (the sum of 64-bit hashes of each row's canonical rendering,
 * see {@link CanonicalRow}) on both sides; for every shard that differs, a second pass finds the
 * first differing keys, each with the first differing column. Reads the table's current snapshot
 * with Iceberg's generic reader (deletes applied) and every shard with a streaming server-side
 * prepared {@code SELECT} (binary protocol, so FLOAT is read as stored; the connection must use
 * {@code useServerPrepStmts=true}, as {@code Reconciliation}'s connections do).
 *
 * <p>Across schema versions: a table column a shard lacks compares as NULL, unless the shard
 * dropped it while the job ran ({@link TableSchemaEvolver#droppedColumns}): the table keeps the
 * shard's older values there, which MySQL no longer has, so that column is not compared for that
 * shard.
 *
 * <p>Used by the CLI's {@code verify}, the demo, the end-to-end tests and the load harness.
 */
public final class TableVerifier {
  private static final Logger LOG = LoggerFactory.getLogger(TableVerifier.class);

  private final Table table;
  private final String shardColumn;
  private final CanonicalRow canonical;
  private final int maxDifferences;
  private final Map<Integer, Set<String>> present;

  /**
   * @param mysqlColumns the shards' columns (the plan's schema): their MySQL types choose the
   *     rendering
   * @param shardColumn the table's shard-number column ({@code shard_number})
   * @param maxDifferences how many differing keys to report per shard
   */
  public TableVerifier(
      Table table, List<MySqlColumn> mysqlColumns, String shardColumn, int maxDifferences) {
    this(table, mysqlColumns, shardColumn, maxDifferences, Map.of());
  }

  /**
   * @param shardColumns per shard whose columns differ from {@code mysqlColumns} (the shards'
   *     union): its own columns; a table column the shard lacks compares as NULL
   */
  public TableVerifier(
      Table table,
      List<MySqlColumn> mysqlColumns,
      String shardColumn,
      int maxDifferences,
      Map<Integer, List<MySqlColumn>> shardColumns) {
    this.present = new HashMap<>();
    shardColumns.forEach(
        (shard, columns) ->
            present.put(
                shard,
                columns.stream()
                    .map(MySqlColumn::name)
                    .collect(java.util.stream.Collectors.toSet())));
    this.table = table;
    this.shardColumn = shardColumn;
    this.canonical = new CanonicalRow(table.schema(), mysqlColumns, shardColumn);
    this.maxDifferences = maxDifferences;
  }

  public VerifyReport verify(List<ShardSource> shards) {
    return verify(shards, Set.of());
  }

  /** As {@link #verify(List)}; rows of {@code excluded} shards are counted, not compared. */
  public VerifyReport verify(List<ShardSource> shards, Set<Integer> excluded) {
    table.refresh();
    Map<Integer, Checksum> iceberg = icebergChecksums(shards);
    List<ShardResult> results = new ArrayList<>();
    for (ShardSource shard : shards) {
      Checksum mysql = mysqlChecksum(shard);
      Checksum ice = iceberg.getOrDefault(shard.shard(), new Checksum());
      List<Difference> differences = List.of();
      if (mysql.rows != ice.rows || mysql.sum != ice.sum) {
        differences = differences(shard);
      }
      results.add(
          new ShardResult(
              shard.shard(), shard.label(), mysql.rows, ice.rows, mysql.sum, ice.sum, differences));
    }
    Set<Integer> planned = new TreeSet<>();
    shards.forEach(s -> planned.add(s.shard()));
    Map<Integer, Long> unexpected = new TreeMap<>();
    Map<Integer, Long> left = new TreeMap<>();
    iceberg.forEach(
        (shard, sum) -> {
          if (excluded.contains(shard)) {
            left.put(shard, sum.rows);
          } else if (!planned.contains(shard)) {
            unexpected.put(shard, sum.rows);
          }
        });
    VerifyReport report =
        new VerifyReport(List.copyOf(results), Map.copyOf(unexpected), Map.copyOf(left));
    LOG.info(
        "Verified {} against {} shards: {} (MySQL {} rows, Iceberg {} rows)",
        table.name(),
        shards.size(),
        report.matches() ? "match" : "MISMATCH",
        report.mysqlRows(),
        report.icebergRows());
    return report;
  }

  private static final class Checksum {
    long rows;
    long sum;

    void add(String rendering) {
      rows++;
      sum += CanonicalRow.hash(rendering);
    }
  }

  /** Per shard, the columns it dropped while the job ran: not compared (see the class doc). */
  private Set<String> notCompared(int shard) {
    return TableSchemaEvolver.droppedColumns(table.properties(), shard);
  }

  private Map<Integer, Checksum> icebergChecksums(List<ShardSource> shards) {
    Map<Integer, Set<String>> notCompared = new HashMap<>();
    shards.forEach(s -> notCompared.put(s.shard(), notCompared(s.shard())));
    Map<Integer, Checksum> sums = new HashMap<>();
    if (table.currentSnapshot() == null) {
      return sums;
    }
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record row : rows) {
        Integer shard = (Integer) row.getField(shardColumn);
        List<String> values =
            canonical.mask(canonical.values(row), notCompared.getOrDefault(shard, Set.of()));
        sums.computeIfAbsent(shard, s -> new Checksum()).add(canonical.render(values));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Iceberg table " + table.name(), e);
    }
    return sums;
  }

  private Checksum mysqlChecksum(ShardSource shard) {
    Checksum sum = new Checksum();
    Set<String> notCompared = notCompared(shard.shard());
    forEachMysqlRow(
        shard, rs -> sum.add(canonical.render(canonical.mask(canonical.values(rs), notCompared))));
    return sum;
  }

  private List<Difference> differences(ShardSource shard) {
    Set<String> notCompared = notCompared(shard.shard());
    Map<String, List<String>> mysql = new HashMap<>();
    forEachMysqlRow(
        shard,
        rs -> {
          List<String> values = canonical.mask(canonical.values(rs), notCompared);
          mysql.put(canonical.key(values), values);
        });
    Map<String, List<String>> iceberg = new HashMap<>();
    if (table.currentSnapshot() != null) {
      try (CloseableIterable<Record> rows =
          IcebergGenerics.read(table)
              .where(Expressions.equal(shardColumn, shard.shard()))
              .build()) {
        for (Record row : rows) {
          List<String> values = canonical.mask(canonical.values(row), notCompared);
          String key = canonical.key(values);
          List<String> previous = iceberg.put(key, values);
          if (previous != null) {
            iceberg.put(key + " (duplicate)", previous);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Iceberg table " + table.name(), e);
      }
    }
    TreeSet<String> keys = new TreeSet<>(mysql.keySet());
    keys.addAll(iceberg.keySet());
    List<Difference> differences = new ArrayList<>();
    for (String key : keys) {
      List<String> m = mysql.get(key);
      List<String> i = iceberg.get(key);
      Difference d;
      if (m == null) {
        d = new Difference(key, null, null, canonical.render(i));
      } else if (i == null) {
        d = new Difference(key, null, canonical.render(m), null);
      } else {
        int column = canonical.firstDifference(m, i);
        if (column < 0) {
          continue;
        }
        d = new Difference(key, canonical.columnName(column), m.get(column), i.get(column));
      }
      differences.add(d);
      if (differences.size() >= maxDifferences) {
        break;
      }
    }
    return differences;
  }

  @FunctionalInterface
  private interface RowHandler {
    void accept(ResultSet rs) throws SQLException;
  }

  /**
   * Streams the shard's rows through a server-side prepared statement: the binary protocol carries
   * FLOAT's stored bits (the text protocol prints 6 digits), like the CDC snapshot reads them.
   */
  private void forEachMysqlRow(ShardSource shard, RowHandler handler) {
    try (Connection c = shard.connections().open();
        PreparedStatement s =
            c.prepareStatement(
                shard.selectFrom(canonical.selectList(present.get(shard.shard()))),
                ResultSet.TYPE_FORWARD_ONLY,
                ResultSet.CONCUR_READ_ONLY)) {
      if (!s.isWrapperFor(ServerPreparedStatement.class)) {
        throw new IllegalStateException(
            String.format(
                "Cannot verify shard %d (%s): its connection reads through the text protocol, which prints FLOAT with 6 digits; open it with the JDBC property useServerPrepStmts=true",
                shard.shard(), shard.label()));
      }
      s.setFetchSize(
          Integer.MIN_VALUE); // MySQL Connector/J: stream the rows, do not buffer the shard
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          handler.accept(rs);
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot read shard %d (%s): %s", shard.shard(), shard.label(), e.getMessage()),
          e);
    }
  }
}
