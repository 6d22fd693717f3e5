package dev.shardberg.router.schema;

import dev.shardberg.router.types.MySqlColumn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the namespace and the table when missing; when the table exists, checks it against the
 * derived layout and fails with every difference. It never alters an existing table.
 */
public final class TableCreator {
  private static final Logger LOG = LoggerFactory.getLogger(TableCreator.class);

  /** Namespace property naming the owner (Hive Metastore database owner). */
  public static final String NAMESPACE_OWNER = "owner";

  private TableCreator() {}

  public static Table createOrValidate(Catalog catalog, TableIdentifier id, TableLayout layout) {
    return createOrValidate(catalog, id, layout, Map.of());
  }

  /**
   * @param namespaceProperties properties of a namespace created here (e.g. {@link
   *     #NAMESPACE_OWNER}); dropped for catalogs that keep no namespace metadata (Hadoop)
   */
  public static Table createOrValidate(
      Catalog catalog,
      TableIdentifier id,
      TableLayout layout,
      Map<String, String> namespaceProperties) {
    Objects.requireNonNull(catalog, "catalog");
    Objects.requireNonNull(id, "id");
    if (catalog.tableExists(id)) {
      Table table = catalog.loadTable(id);
      validate(table, id, layout);
      LOG.info("Iceberg table {} exists and matches the derived layout", id);
      return table;
    }
    ensureNamespace(catalog, id.namespace(), namespaceProperties);
    try {
      Table table =
          catalog
              .buildTable(id, layout.icebergSchema())
              .withPartitionSpec(layout.spec())
              .withProperties(layout.createProperties())
              .create();
      LOG.info(
          "Created Iceberg table {} ({} columns, spec {}, identifier fields {})",
          id,
          table.schema().columns().size(),
          table.spec(),
          table.schema().identifierFieldNames());
      return table;
    } catch (AlreadyExistsException e) {
      // created concurrently (another job instance): it must match too
      Table table = catalog.loadTable(id);
      validate(table, id, layout);
      return table;
    }
  }

  /**
   * schema.change-behavior=evolve: creates the table when missing; when it exists, checks
   * everything but the columns as {@link #validate} does, and evolves its columns through Iceberg's
   * schema API so that every shard's rows fit ({@link #evolvableChanges}): columns the shards
   * gained while the job was down are added (optional), types widened, columns made optional. Never
   * drops or narrows.
   *
   * @param columns the shards' (union) columns the layout was derived from
   */
  public static Table createOrEvolve(
      Catalog catalog,
      TableIdentifier id,
      TableLayout layout,
      List<MySqlColumn> columns,
      Map<String, String> namespaceProperties) {
    if (!catalog.tableExists(id)) {
      return createOrValidate(catalog, id, layout, namespaceProperties);
    }
    Table table = catalog.loadTable(id);
    List<SchemaEvolution.Change> changes = evolvableChanges(table, id, layout, columns);
    if (!changes.isEmpty()) {
      UpdateSchema update = table.updateSchema();
      changes.forEach(c -> c.applyTo(update));
      update.commit();
      table.refresh();
      LOG.info(
          "Evolved Iceberg table {} at start-up to schema {} to fit the shards: {}",
          id,
          table.schema().schemaId(),
          changes);
    } else {
      LOG.info("Iceberg table {} exists and holds every shard's columns", id);
    }
    return table;
  }

  /**
   * The column changes that make the existing table hold the shards' columns (empty: it does);
   * throws {@link TableLayoutMismatchException} for differences other than columns (identifier
   * fields, spec, format) and {@link dev.shardberg.router.ShardRouterException} for a column the
   * table cannot follow. Writes nothing.
   */
  public static List<SchemaEvolution.Change> evolvableChanges(
      Table table, TableIdentifier id, TableLayout layout, List<MySqlColumn> columns) {
    List<String> diffs =
        differences(table, layout).stream().filter(d -> !d.startsWith("column")).toList();
    if (!diffs.isEmpty()) {
      throw new TableLayoutMismatchException(
          String.format(
              "Cannot use existing Iceberg table %s: it does not match the layout derived from the shards (%d difference(s)):%n%s%nShardberg evolves only columns: fix the table (or drop it to let Shardberg create it), or change the config to match.",
              id,
              diffs.size(),
              String.join(System.lineSeparator(), diffs.stream().map(d -> "  - " + d).toList())),
          diffs);
    }
    Set<String> keys = new HashSet<>(layout.equalityColumns());
    keys.remove(TableLayout.SHARD_COLUMN);
    return SchemaEvolution.plan(
        "the shards at start-up",
        "(the shards' current schemas)",
        columns,
        columns,
        null,
        null,
        keys,
        table.schema());
  }

  private static void ensureNamespace(
      Catalog catalog, Namespace namespace, Map<String, String> properties) {
    if (namespace.isEmpty() || !(catalog instanceof SupportsNamespaces namespaces)) {
      return;
    }
    if (namespaces.namespaceExists(namespace)) {
      return;
    }
    // a HashMap: Iceberg's REST client checks containsKey(null), which Map.of() refuses with an NPE
    Map<String, String> props =
        catalog instanceof HadoopCatalog ? new HashMap<>() : new HashMap<>(properties);
    try {
      namespaces.createNamespace(namespace, props);
      LOG.info("Created namespace {} with properties {}", namespace, props.keySet());
    } catch (AlreadyExistsException e) {
      LOG.debug("Namespace {} was created concurrently", namespace);
    }
  }

  /**
   * The source column of the table's bucket partition field (current spec), if it has one. An
   * existing table keeps the bucket column it was created with: when {@code target.key-column} is
   * unset, this is the column the layout is derived with, so a default that changed since creation
   * never fails it.
   */
  public static Optional<String> bucketColumn(Table table) {
    for (PartitionField f : table.spec().fields()) {
      if (f.transform().toString().startsWith("bucket[")) {
        return Optional.ofNullable(table.schema().findColumnName(f.sourceId()));
      }
    }
    return Optional.empty();
  }

  /**
   * Throws {@link TableLayoutMismatchException} listing every difference between table and layout.
   */
  public static void validate(Table table, TableIdentifier id, TableLayout layout) {
    List<String> diffs = differences(table, layout);
    if (!diffs.isEmpty()) {
      throw new TableLayoutMismatchException(
          String.format(
              "Cannot use existing Iceberg table %s: it does not match the layout derived from the shards (%d difference(s)):%n%s%nShardberg never alters an existing table: fix the table (or drop it to let Shardberg create it), or change the config to match.",
              id,
              diffs.size(),
              String.join(System.lineSeparator(), diffs.stream().map(d -> "  - " + d).toList())),
          diffs);
    }
    for (Map.Entry<String, String> e : layout.properties().entrySet()) {
      if (e.getKey().equals("format-version")) {
        continue; // table metadata, not a property: a table keeps the version it was created with
      }
      String actual = table.properties().get(e.getKey());
      if (!e.getValue().equals(actual)) {
        LOG.warn(
            "Iceberg table {} has property {}={} where the config asks for {}; it is left as is (set it with ALTER TABLE ... SET TBLPROPERTIES if intended)",
            id,
            e.getKey(),
            actual,
            e.getValue());
      }
    }
  }

  static List<String> differences(Table table, TableLayout layout) {
    List<String> diffs = new ArrayList<>();
    Schema actual = table.schema();
    Schema expected = layout.icebergSchema();
    List<Types.NestedField> a = actual.columns();
    List<Types.NestedField> e = expected.columns();
    for (int i = 0; i < Math.max(a.size(), e.size()); i++) {
      Types.NestedField ef = i < e.size() ? e.get(i) : null;
      Types.NestedField af = i < a.size() ? a.get(i) : null;
      if (ef == null) {
        diffs.add(String.format("column #%d: expected (none), found %s", i + 1, describe(af)));
      } else if (af == null) {
        diffs.add(String.format("column #%d: expected %s, found (none)", i + 1, describe(ef)));
      } else if (!ef.name().equals(af.name())) {
        diffs.add(
            String.format("column #%d: expected %s, found %s", i + 1, describe(ef), describe(af)));
      } else if (!ef.type().equals(af.type()) || ef.isRequired() != af.isRequired()) {
        diffs.add(
            String.format(
                "column '%s': expected %s, found %s", ef.name(), describe(ef), describe(af)));
      }
    }
    Set<String> expectedIds = new HashSet<>(expected.identifierFieldNames());
    Set<String> actualIds = new HashSet<>(actual.identifierFieldNames());
    if (!expectedIds.equals(actualIds)) {
      diffs.add(
          String.format(
              "identifier fields: expected %s, found %s", sorted(expectedIds), sorted(actualIds)));
    }
    List<String> expectedSpec = describe(layout.spec(), expected);
    List<String> actualSpec = describe(table.spec(), actual);
    if (!expectedSpec.equals(actualSpec)) {
      diffs.add(String.format("partition spec: expected %s, found %s", expectedSpec, actualSpec));
    }
    if (table instanceof HasTableOperations ops) {
      int version = ops.operations().current().formatVersion();
      if (version < TableLayout.FORMAT_VERSION) {
        diffs.add(
            String.format(
                "format version: expected >= %d (row-level deletes), found %d",
                TableLayout.FORMAT_VERSION, version));
      }
    }
    return diffs;
  }

  private static String describe(Types.NestedField f) {
    return "'" + f.name() + "' " + (f.isRequired() ? "required " : "optional ") + f.type();
  }

  private static List<String> describe(PartitionSpec spec, Schema schema) {
    List<String> fields = new ArrayList<>();
    for (PartitionField f : spec.fields()) {
      fields.add(f.transform() + "(" + schema.findColumnName(f.sourceId()) + ")");
    }
    return fields;
  }

  private static List<String> sorted(Set<String> s) {
    return s.stream().sorted().toList();
  }
}
