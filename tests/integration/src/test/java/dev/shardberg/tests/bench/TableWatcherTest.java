package dev.shardberg.tests.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's freshness is per row version: a commit that writes rows again (an owner's compaction
 * in {@code target.delete-mode: position} travels in its checkpoint's own commit, an {@code
 * overwrite}, next to that checkpoint's new rows) must not time the rewritten rows a second time. A
 * real table on disk, committed as the owner's compaction commits.
 */
class TableWatcherTest {
  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.required(3, "mysql_commit_ts", Types.LongType.get()));

  @TempDir Path dir;

  @Test
  void aRowRewrittenByACompactionIsTimedOnceWhereItFirstAppeared() throws Exception {
    Table table =
        new HadoopTables(new Configuration())
            .create(
                SCHEMA,
                PartitionSpec.builderFor(SCHEMA).identity("shard_number").build(),
                dir.resolve("orders").toString());
    long now = System.currentTimeMillis() * 1000;
    try (TableWatcher watcher = new TableWatcher(table, 2)) {
      watcher.trackFreshness(now - 60_000_000L);
      DataFile first = write(table, 0, new long[][] {{1, now - 2_000_000L}, {2, now - 1_000_000L}});
      table.newAppend().appendFile(first).commit();
      awaitSamples(watcher, 2);

      // the compaction of shard 0 (rows 1 and 2 again, same versions) with a new version of row 2
      // and a new row 3, in one commit
      DataFile rewritten =
          write(
              table,
              0,
              new long[][] {{1, now - 2_000_000L}, {2, now - 1_000_000L}, {3, now}, {2, now + 1}});
      table.newOverwrite().deleteFile(first).addFile(rewritten).commit();
      awaitCommits(watcher, 2);
      Thread.sleep(1_000); // several polls after the watcher saw the commit

      assertThat(watcher.freshness())
          .as("rows 1 and 2 at their first versions, row 3, row 2's new version: each once")
          .hasSize(4);
      assertThat(watcher.commits().get(1).deletedDataFiles()).isEqualTo(1);
    }
  }

  @Test
  void aFingerprintSetKeepsEveryVersionApartAndFindsEachAgain() {
    SeenRowVersions seen = new SeenRowVersions();
    for (int shard = 0; shard < 4; shard++) {
      for (long key = 0; key < 50_000; key++) {
        assertThat(seen.add(shard, key, 1_700_000_000_000_000L + key)).isTrue();
      }
    }
    assertThat(seen.size()).isEqualTo(200_000);
    for (int shard = 0; shard < 4; shard++) {
      for (long key = 0; key < 50_000; key += 7) {
        assertThat(seen.add(shard, key, 1_700_000_000_000_000L + key)).isFalse();
        assertThat(seen.add(shard, key, 1_700_000_000_000_001L + key + 50_000)).isTrue();
      }
    }
  }

  private static DataFile write(Table table, int shard, long[][] rows) throws IOException {
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), table.spec());
    Record partition = GenericRecord.create(table.schema());
    partition.setField("shard_number", shard);
    org.apache.iceberg.PartitionKey key =
        new org.apache.iceberg.PartitionKey(table.spec(), table.schema());
    key.partition(partition);
    String location =
        table.locationProvider().newDataLocation(table.spec(), key, UUID.randomUUID() + ".parquet");
    DataWriter<Record> writer =
        factory.newDataWriter(
            EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
            FileFormat.PARQUET,
            key);
    try (writer) {
      for (long[] row : rows) {
        Record r = GenericRecord.create(table.schema());
        r.setField("shard_number", shard);
        r.setField("id", row[0]);
        r.setField("mysql_commit_ts", row[1]);
        writer.write(r);
      }
    }
    return writer.toDataFile();
  }

  private static void awaitSamples(TableWatcher watcher, int samples) throws InterruptedException {
    for (int i = 0; i < 150 && watcher.freshness().size() < samples; i++) {
      Thread.sleep(100);
    }
    watcher.checkHealthy();
    assertThat(watcher.freshness()).hasSize(samples);
  }

  private static void awaitCommits(TableWatcher watcher, int commits) throws InterruptedException {
    for (int i = 0; i < 150 && watcher.commitCount() < commits; i++) {
      Thread.sleep(100);
    }
    watcher.checkHealthy();
    assertThat(watcher.commitCount()).isEqualTo(commits);
  }
}
