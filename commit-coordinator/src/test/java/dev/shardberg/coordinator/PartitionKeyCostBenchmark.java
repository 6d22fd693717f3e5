package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.flink.RowDataWrapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What keying a row by its partition costs the writers' input: the key as {@link
 * PartitionSpec#partitionToPath} builds it (formatting and URL-encoding every value, what the
 * selector did before) against {@link PartitionKeySelector#getKey} now, on the same rows in one
 * run, alternated over several rounds. Not a timed test: it runs only with {@code -Dbenchmark=true}
 * and prints ns per row and the ratio.
 */
class PartitionKeyCostBenchmark {
  @Test
  void nanosPerRowBeforeAndAfter() {
    Assumptions.assumeTrue(Boolean.getBoolean("benchmark"), "run with -Dbenchmark=true");
    PartitionSpec spec =
        PartitionSpec.builderFor(TestTables.SCHEMA)
            .identity("shard_number")
            .bucket("id", 5)
            .build();
    List<RowData> rows = new ArrayList<>();
    for (int shard = 0; shard < 16; shard++) {
      for (long id = 0; id < 20_000; id++) {
        rows.add(TestTables.row(RowKind.INSERT, shard, id * 7919, "name"));
      }
    }
    PartitionKeySelector selector =
        new PartitionKeySelector(TestTables.SCHEMA, spec, TestTables.ROW_TYPE, false);
    PartitionKey key = new PartitionKey(spec, TestTables.SCHEMA);
    RowDataWrapper wrapper = new RowDataWrapper(TestTables.ROW_TYPE, TestTables.SCHEMA.asStruct());
    long before = 0;
    long after = 0;
    long check = 0;
    for (int round = 0; round < 12; round++) {
      long t0 = System.nanoTime();
      for (RowData row : rows) {
        key.partition(wrapper.wrap(row));
        check += spec.partitionToPath(key).length();
      }
      long t1 = System.nanoTime();
      for (RowData row : rows) {
        check -= selector.getKey(row).length();
      }
      long t2 = System.nanoTime();
      if (round >= 2) { // the first rounds warm the JIT up
        before += t1 - t0;
        after += t2 - t1;
      }
    }
    assertThat(check).as("the same keys, so the same lengths").isZero();
    double n = rows.size() * 10.0;
    System.out.printf(
        "%n| rows keyed | partitionToPath, ns per row | getKey now, ns per row | now / before |%n"
            + "|---|---|---|---|%n| %,.0f | %.0f | %.0f | %.2f |%n",
        n, before / n, after / n, (double) after / before);
  }
}
