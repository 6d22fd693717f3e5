package dev.shardberg.coordinator;

import java.io.Serializable;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

/** One scripted change of the synthetic changelog. */
record Change(RowKind kind, int shard, long id, String name) implements Serializable {
  static Change insert(int shard, long id, String name) {
    return new Change(RowKind.INSERT, shard, id, name);
  }

  static Change updateBefore(int shard, long id, String name) {
    return new Change(RowKind.UPDATE_BEFORE, shard, id, name);
  }

  static Change updateAfter(int shard, long id, String name) {
    return new Change(RowKind.UPDATE_AFTER, shard, id, name);
  }

  static Change delete(int shard, long id, String name) {
    return new Change(RowKind.DELETE, shard, id, name);
  }

  RowData toRow() {
    return TestTables.row(kind, shard, id, name);
  }

  @Override
  public String toString() {
    return kind.shortString() + "(" + shard + "," + id + "," + name + ")";
  }

  /** The table that applying every step in order must leave. */
  static Set<TestTables.Row> expectedRows(Collection<List<Change>> steps) {
    Map<List<Long>, TestTables.Row> rows = new HashMap<>();
    for (List<Change> step : steps) {
      for (Change change : step) {
        List<Long> key = List.of((long) change.shard(), change.id());
        switch (change.kind()) {
          case INSERT, UPDATE_AFTER ->
              rows.put(key, new TestTables.Row(change.shard(), change.id(), change.name()));
          case DELETE -> rows.remove(key);
          case UPDATE_BEFORE -> {}
        }
      }
    }
    return new HashSet<>(rows.values());
  }
}
