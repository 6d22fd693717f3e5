package dev.shardberg.tests.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The bench's correctness check: per shard, the row count and an order-independent checksum (sum of
 * 64-bit hashes of each row's canonical rendering) of the MySQL shard and of the Iceberg table's
 * current snapshot (deletes applied, Iceberg's generic reader). A minimal stand-in for the job's
 * {@code TableVerifier} until that lands on main.
 */
final class BenchVerifier {
  /** One shard's two sides. */
  record ShardCheck(int shard, long mysqlRows, long icebergRows, long mysqlChecksum, long icebergChecksum) {
    boolean matches() {
      return mysqlRows == icebergRows && mysqlChecksum == icebergChecksum;
    }
  }

  /** The whole check; {@code passed} only if every shard matches and the table holds no other shard. */
  record Result(boolean passed, long mysqlRows, long icebergRows, List<ShardCheck> mismatches, List<Integer> unexpectedShards) {}

  private static final List<String> COLUMNS =
      List.of("id", "customer_id", "sku", "status", "quantity", "amount", "priority", "note", "order_date", "updated_at", "mysql_commit_ts");

  private BenchVerifier() {}

  static Result verify(Workload workload, Table table) {
    table.refresh();
    Map<Integer, long[]> iceberg = new TreeMap<>();
    if (table.currentSnapshot() != null) {
      try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
        for (Record row : rows) {
          int shard = (Integer) row.getField("shard_number");
          Object[] values = new Object[COLUMNS.size()];
          for (int i = 0; i < values.length; i++) {
            values[i] = row.getField(COLUMNS.get(i));
          }
          long[] sums = iceberg.computeIfAbsent(shard, s -> new long[2]);
          sums[0]++;
          sums[1] += hash(shard, values);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Iceberg table " + table.name() + " to verify it", e);
      }
    }
    List<ShardCheck> mismatches = new ArrayList<>();
    long mysqlRows = 0;
    long icebergRows = 0;
    for (int shard = 0; shard < workload.shards(); shard++) {
      long[] mysql = mysqlChecksum(workload, shard);
      long[] ice = iceberg.getOrDefault(shard, new long[2]);
      mysqlRows += mysql[0];
      icebergRows += ice[0];
      ShardCheck check = new ShardCheck(shard, mysql[0], ice[0], mysql[1], ice[1]);
      if (!check.matches()) {
        mismatches.add(check);
      }
    }
    List<Integer> unexpected = new ArrayList<>();
    for (Map.Entry<Integer, long[]> e : iceberg.entrySet()) {
      if (e.getKey() < 0 || e.getKey() >= workload.shards()) {
        unexpected.add(e.getKey());
        icebergRows += e.getValue()[0];
      }
    }
    return new Result(mismatches.isEmpty() && unexpected.isEmpty(), mysqlRows, icebergRows, mismatches, unexpected);
  }

  private static long[] mysqlChecksum(Workload workload, int shard) {
    long[] sums = new long[2];
    try (Connection c = workload.hostOf(shard).connect(Workload.DATABASE);
        Statement st = c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
      st.setFetchSize(Integer.MIN_VALUE); // stream the rows
      try (ResultSet rs = st.executeQuery("SELECT " + String.join(", ", COLUMNS) + " FROM " + Workload.table(shard))) {
        while (rs.next()) {
          Object[] values = {
            rs.getLong(1),
            rs.getLong(2),
            rs.getString(3),
            rs.getString(4),
            rs.getInt(5),
            rs.getBigDecimal(6),
            rs.getObject(7) == null ? null : rs.getInt(7),
            rs.getString(8),
            rs.getObject(9, LocalDate.class),
            rs.getObject(10, LocalDateTime.class),
            rs.getLong(11)
          };
          sums[0]++;
          sums[1] += hash(shard, values);
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          String.format("Cannot read shard %d (%s.%s on %s) to verify it: %s",
              shard, Workload.DATABASE, Workload.table(shard), workload.hostOf(shard).name(), e.getMessage()), e);
    }
    return sums;
  }

  private static long hash(int shard, Object[] values) {
    StringBuilder sb = new StringBuilder().append(shard);
    for (Object v : values) {
      sb.append('\u0001');
      if (v == null) {
        sb.append("\u0000null");
      } else if (v instanceof BigDecimal d) {
        sb.append(d.toPlainString());
      } else {
        sb.append(v);
      }
    }
    // FNV-1a over the UTF-8 bytes, then a SplitMix64 finalizer to spread the bits before summing
    long h = 0xcbf29ce484222325L;
    for (byte b : sb.toString().getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 30;
    h *= 0xbf58476d1ce4e5b9L;
    h ^= h >>> 27;
    h *= 0x94d049bb133111ebL;
    return h ^ (h >>> 31);
  }
}
