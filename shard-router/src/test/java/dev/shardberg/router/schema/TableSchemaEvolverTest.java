package dev.shardberg.router.schema;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The evolver reads and evolves a real table, and leaves its catalog closed after each call: the
 * taggers holding it have no close hook, so an open catalog would leak its file IO (on S3 an HTTP
 * client, "Unclosed S3FileIO instance" in the logs) at every restart.
 */
class TableSchemaEvolverTest {
  @TempDir Path dir;

  @Test
  void closesTheCatalogAfterEveryReadAndEvolution() {
    String location = dir.resolve("orders").toString();
    Configuration conf = new Configuration();
    new HadoopTables(conf)
        .create(
            new Schema(Types.NestedField.required(1, "id", Types.LongType.get())),
            PartitionSpec.unpartitioned(),
            location);
    CountingLoader loader = new CountingLoader(TableLoader.fromHadoopTable(location, conf));
    TableSchemaEvolver evolver = new TableSchemaEvolver(loader, "hadoop.shop.orders");

    assertThat(evolver.current().columns()).hasSize(1);
    assertThat(loader.isOpen()).as("open after current()").isFalse();

    Schema evolved =
        evolver.evolve(
            "a new column",
            schema ->
                schema.findField("note") != null
                    ? List.of()
                    : List.of(
                        new SchemaEvolution.Change(
                            SchemaEvolution.Change.Kind.ADD,
                            "note",
                            Types.StringType.get(),
                            null)));
    assertThat(evolved.findField("note")).isNotNull();
    assertThat(loader.isOpen()).as("open after evolve()").isFalse();
    assertThat(loader.opens).isEqualTo(2);
    assertThat(loader.closes).isEqualTo(2);
    // the next call opens it again
    assertThat(evolver.current().findField("note")).isNotNull();
    assertThat(loader.opens).isEqualTo(3);
    assertThat(loader.closes).isEqualTo(3);
  }

  /** A real loader that counts its opens and closes. */
  private static final class CountingLoader implements TableLoader {
    private final TableLoader delegate;
    int opens;
    int closes;
    private boolean open;

    CountingLoader(TableLoader delegate) {
      this.delegate = delegate;
    }

    @Override
    public void open() {
      opens++;
      open = true;
      delegate.open();
    }

    @Override
    public boolean isOpen() {
      return open; // as a catalog's loader: closed after close()
    }

    @Override
    public Table loadTable() {
      return delegate.loadTable();
    }

    @Override
    public TableLoader clone() {
      return new CountingLoader(delegate.clone());
    }

    @Override
    public void close() throws IOException {
      closes++;
      open = false;
      delegate.close();
    }
  }
}
