package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer loads the table at its start and refreshes it only when a row of a newer schema arrives.
 * On a Hadoop table whose old metadata files the commits clean up, that refresh looked for the
 * metadata file of the version loaded at the start, long deleted: Iceberg's "Metadata file for
 * version 1 is missing" failed the writers at the first schema change after enough commits (seen in
 * the fleet benchmark, a new shard's CREATE TABLE evolving the table; the job restarted).
 */
class WriterTableRefreshTest {
  @TempDir Path warehouse;

  @Test
  void aTableLoadedLongAgoIsLoadedAnewWhenItsMetadataFileWasCleanedUp() throws Exception {
    Table created = TestTables.create(warehouse, 2);
    created
        .updateProperties()
        .set(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
        .set(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "1")
        .commit();
    TableLoader loader = TestTables.loader(warehouse);
    loader.open();
    Table atStart = loader.loadTable(); // what a writer holds from its start
    Table committer = TestTables.load(warehouse);
    for (int i = 0; i < 4; i++) { // the coordinator's commits
      committer.updateProperties().set("shardberg.test.commit", Integer.toString(i)).commit();
    }
    committer.updateSchema().addColumn("loyalty_tier", Types.StringType.get()).commit();

    // what the writer did before: the refresh itself fails
    Table stale = loader.loadTable();
    for (int i = 4; i < 8; i++) {
      committer.updateProperties().set("shardberg.test.commit", Integer.toString(i)).commit();
    }
    assertThatThrownBy(stale::refresh)
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("is missing");

    Table refreshed = ShardbergWriter.refreshed(atStart, loader);
    assertThat(refreshed.schema().findField("loyalty_tier")).isNotNull();
    assertThat(refreshed.properties()).containsEntry("shardberg.test.commit", "7");
    loader.close();
  }
}
