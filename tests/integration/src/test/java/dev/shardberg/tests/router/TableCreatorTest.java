package dev.shardberg.tests.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.schema.TableCreator;
import dev.shardberg.router.schema.TableLayout;
import dev.shardberg.router.schema.TableLayoutMismatchException;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.tests.lakehouse.RestCatalogServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.hive.HiveCatalog;
import org.apache.iceberg.hive.TestHiveMetastore;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Create and validate the derived table in Iceberg's Hadoop catalog, in a real Hive Metastore
 * (Thrift, Derby) and through a real REST catalog (Iceberg's client and servlet).
 */
class TableCreatorTest {

  static final ShardSchema SCHEMA =
      new ShardSchema(
          List.of(
              MySqlColumn.of("id", "bigint", false),
              MySqlColumn.of("customer", "varchar(40)", false),
              MySqlColumn.of("amount", "decimal(12,2)", true),
              MySqlColumn.of("created", "datetime(3)", false)),
          List.of("id"));
  static final TableLayout LAYOUT = TableLayout.derive(SCHEMA);

  @TempDir static Path warehouse;
  static TestHiveMetastore metastore;
  static HiveCatalog hive;
  static HadoopCatalog hadoop;

  @BeforeAll
  static void startCatalogs() {
    HiveConf conf = new HiveConf();
    conf.set(
        "hive.metastore.expression.proxy",
        "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy");
    metastore = new TestHiveMetastore();
    metastore.start(conf);
    hive =
        (HiveCatalog)
            CatalogUtil.loadCatalog(
                HiveCatalog.class.getName(),
                "hive",
                Map.of(
                    CatalogProperties.WAREHOUSE_LOCATION,
                    warehouse.resolve("hive").toUri().toString()),
                metastore.hiveConf());
    hadoop = new HadoopCatalog(new Configuration(), warehouse.resolve("hadoop").toUri().toString());
  }

  @AfterAll
  static void stopCatalogs() throws Exception {
    if (hive != null) {
      hive.close();
    }
    if (metastore != null) {
      metastore.stop();
    }
    if (hadoop != null) {
      hadoop.close();
    }
  }

  @Test
  void createsTheTableInHadoopAndValidatesItOnTheNextStart() {
    TableIdentifier id = TableIdentifier.of("shop", "orders_h");
    Table created =
        TableCreator.createOrValidate(
            hadoop, id, LAYOUT, Map.of(TableCreator.NAMESPACE_OWNER, "etl"));
    assertCreatedAsDerived(created);
    String metadata = ((HasTableOperations) created).operations().current().metadataFileLocation();
    Table again = TableCreator.createOrValidate(hadoop, id, LAYOUT);
    assertThat(((HasTableOperations) again).operations().current().metadataFileLocation())
        .isEqualTo(metadata);
  }

  @Test
  void createsNamespaceWithOwnerAndTableInHiveMetastore() throws Exception {
    TableIdentifier id = TableIdentifier.of("shop_hive", "orders");
    Table created =
        TableCreator.createOrValidate(
            hive, id, LAYOUT, Map.of(TableCreator.NAMESPACE_OWNER, "etl"));
    assertCreatedAsDerived(created);
    assertThat(hive.loadNamespaceMetadata(Namespace.of("shop_hive"))).containsEntry("owner", "etl");
    assertThat(metastore.getTable("shop_hive", "orders").getParameters())
        .containsEntry("table_type", "ICEBERG");
    String metadata = ((HasTableOperations) created).operations().current().metadataFileLocation();
    Table again = TableCreator.createOrValidate(hive, id, LAYOUT);
    assertThat(((HasTableOperations) again).operations().current().metadataFileLocation())
        .isEqualTo(metadata);
  }

  /**
   * Through a REST catalog: Iceberg's own REST client against Iceberg's REST servlet ({@link
   * RestCatalogServer}, an in-memory backend catalog). The client's create-namespace request checks
   * {@code properties.containsKey(null)}, which an immutable {@code Map.of(...)} answers with a
   * NullPointerException: the namespace properties the callers hand over as {@code Map.of} (the
   * owner, and the empty map of the three-argument overload) must reach the catalog in a map that
   * answers it (commit f7a458b).
   */
  @Test
  void createsNamespacesAndTablesThroughARestCatalogFromImmutableProperties() throws Exception {
    Map<String, String> backend =
        Map.of(
            CatalogProperties.CATALOG_IMPL,
            "org.apache.iceberg.inmemory.InMemoryCatalog",
            CatalogProperties.WAREHOUSE_LOCATION,
            warehouse.resolve("rest").toUri().toString(),
            CatalogProperties.FILE_IO_IMPL,
            "org.apache.iceberg.hadoop.HadoopFileIO");
    try (RestCatalogServer server = RestCatalogServer.start(backend);
        RESTCatalog rest =
            (RESTCatalog)
                CatalogUtil.buildIcebergCatalog(
                    "rest",
                    Map.of(
                        CatalogUtil.ICEBERG_CATALOG_TYPE,
                        "rest",
                        CatalogProperties.URI,
                        server.uri()),
                    new Configuration())) {
      TableIdentifier owned = TableIdentifier.of("shop_rest", "orders");
      assertCreatedAsDerived(
          TableCreator.createOrValidate(
              rest, owned, LAYOUT, Map.of(TableCreator.NAMESPACE_OWNER, "etl")));
      assertThat(rest.loadNamespaceMetadata(Namespace.of("shop_rest")))
          .containsEntry(TableCreator.NAMESPACE_OWNER, "etl");

      TableIdentifier plain = TableIdentifier.of("shop_rest_plain", "orders");
      assertCreatedAsDerived(TableCreator.createOrValidate(rest, plain, LAYOUT));
      assertThat(rest.namespaceExists(Namespace.of("shop_rest_plain"))).isTrue();
      assertThat(server.backend().tableExists(plain)).isTrue();
    }
  }

  /**
   * schema.change-behavior=evolve at start-up, in a real Hive Metastore: a table created by an
   * earlier run is evolved through Iceberg's schema API to the shards' union (a new column, a
   * widened decimal, a column made optional), which the metastore accepts; a second start changes
   * nothing.
   */
  @Test
  void anExistingTableIsEvolvedToTheShardsUnionInHiveMetastore() {
    TableIdentifier id = TableIdentifier.of("shop_hive", "orders_evolving");
    TableCreator.createOrValidate(hive, id, LAYOUT, Map.of(TableCreator.NAMESPACE_OWNER, "etl"));
    ShardSchema union =
        new ShardSchema(
            List.of(
                MySqlColumn.of("id", "bigint", false),
                MySqlColumn.of("customer", "varchar(80)", true),
                MySqlColumn.of("amount", "decimal(16,2)", true),
                MySqlColumn.of("created", "datetime(3)", false),
                MySqlColumn.of("discount", "decimal(8,2)", true)),
            List.of("id"));
    Table evolved =
        TableCreator.createOrEvolve(hive, id, TableLayout.derive(union), union.columns(), Map.of());
    assertThat(evolved.schema().findField("discount").isOptional()).isTrue();
    assertThat(evolved.schema().findField("discount").doc()).isEqualTo("decimal(8,2)");
    assertThat(evolved.schema().findField("amount").type())
        .isEqualTo(org.apache.iceberg.types.Types.DecimalType.of(16, 2));
    assertThat(evolved.schema().findField("customer").isOptional()).isTrue();
    Table reloaded = hive.loadTable(id);
    assertThat(reloaded.schema().sameSchema(evolved.schema())).isTrue();
    int schemaId = reloaded.schema().schemaId();
    assertThat(
            TableCreator.createOrEvolve(
                    hive, id, TableLayout.derive(union), union.columns(), Map.of())
                .schema()
                .schemaId())
        .isEqualTo(schemaId);
  }

  @Test
  void existingTableThatDiffersIsNeverAlteredAndEveryDifferenceIsListed() {
    for (Catalog catalog : List.<Catalog>of(hadoop, hive)) {
      TableIdentifier id = TableIdentifier.of("legacy", "orders");
      if (catalog instanceof HiveCatalog h && !h.namespaceExists(Namespace.of("legacy"))) {
        h.createNamespace(Namespace.of("legacy"));
      }
      Schema userSchema =
          new Schema(
              List.of(
                  Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
                  Types.NestedField.required(2, "id", Types.LongType.get()),
                  Types.NestedField.required(3, "customer", Types.StringType.get()),
                  Types.NestedField.optional(4, "amount", Types.DecimalType.of(10, 2))),
              Set.of(2));
      Table user =
          catalog
              .buildTable(id, userSchema)
              .withPartitionSpec(
                  PartitionSpec.builderFor(userSchema).identity("shard_number").build())
              .create();
      String metadata = ((HasTableOperations) user).operations().current().metadataFileLocation();
      assertThatThrownBy(() -> TableCreator.createOrValidate(catalog, id, LAYOUT))
          .isInstanceOf(TableLayoutMismatchException.class)
          .hasMessage(
              String.join(
                  System.lineSeparator(),
                  "Cannot use existing Iceberg table "
                      + id
                      + ": it does not match the layout derived from the shards (4 difference(s)):",
                  "  - column 'amount': expected 'amount' optional decimal(12, 2), found 'amount' optional decimal(10, 2)",
                  "  - column #5: expected 'created' required timestamp, found (none)",
                  "  - identifier fields: expected [id, shard_number], found [id]",
                  "  - partition spec: expected [identity(shard_number), bucket[5](id)], found [identity(shard_number)]",
                  "Shardberg never alters an existing table: fix the table (or drop it to let Shardberg create it), or change the config to match."));
      Table after = catalog.loadTable(id);
      assertThat(((HasTableOperations) after).operations().current().metadataFileLocation())
          .isEqualTo(metadata);
      catalog.dropTable(id);
    }
  }

  private static void assertCreatedAsDerived(Table table) {
    assertThat(table.schema().asStruct()).isEqualTo(LAYOUT.icebergSchema().asStruct());
    assertThat(table.schema().identifierFieldNames())
        .containsExactlyInAnyOrder("shard_number", "id");
    assertThat(table.spec().fields()).hasSize(2);
    assertThat(table.spec().fields().get(0).transform().toString()).isEqualTo("identity");
    assertThat(table.spec().fields().get(1).transform().toString()).isEqualTo("bucket[5]");
    assertThat(table.schema().findColumnName(table.spec().fields().get(1).sourceId()))
        .isEqualTo("id");
    assertThat(((HasTableOperations) table).operations().current().formatVersion()).isEqualTo(2);
    assertThat(table.properties()).containsAllEntriesOf(TableLayout.DEFAULT_PROPERTIES);
  }
}
