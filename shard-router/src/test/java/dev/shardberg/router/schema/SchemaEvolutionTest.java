package dev.shardberg.router.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class SchemaEvolutionTest {
  private static final String WHERE = "shard 3 ('shop.orders_3' on host 'a')";
  private static final Schema TABLE =
      new Schema(
          Types.NestedField.required(1, "shard_number", Types.IntegerType.get()),
          Types.NestedField.required(2, "id", Types.LongType.get()),
          Types.NestedField.required(3, "qty", Types.IntegerType.get()),
          Types.NestedField.optional(4, "note", Types.StringType.get()),
          Types.NestedField.optional(5, "price", Types.DecimalType.of(10, 2)),
          Types.NestedField.optional(6, "ratio", Types.FloatType.get()));
  private static final List<MySqlColumn> BEFORE =
      List.of(
          MySqlColumn.of("id", "bigint", false),
          MySqlColumn.of("qty", "int", false),
          MySqlColumn.of("note", "varchar(20)", true),
          MySqlColumn.of("price", "decimal(10,2)", true),
          MySqlColumn.of("ratio", "float", true));

  private static List<SchemaEvolution.Change> plan(List<MySqlColumn> after, Schema table) {
    return SchemaEvolution.plan(
        WHERE, "ALTER …", BEFORE, after, List.of("id"), List.of("id"), Set.of("id"), table);
  }

  private static List<MySqlColumn> replace(String name, MySqlColumn column) {
    return BEFORE.stream().map(c -> c.name().equals(name) ? column : c).toList();
  }

  @Test
  void aNewColumnAtAnyPositionIsAddedOptionalWithItsMySqlTypeAsDoc() {
    List<MySqlColumn> after = new java.util.ArrayList<>(BEFORE);
    after.add(0, MySqlColumn.of("discount", "decimal(8,2)", false));
    assertThat(plan(after, TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.ADD,
                "discount",
                Types.DecimalType.of(8, 2),
                "decimal(8,2)"));
  }

  @Test
  void changesThatKeepTheIcebergTypeOrOnlyMoveColumnsDoNothing() {
    List<MySqlColumn> after =
        List.of(
            MySqlColumn.of("qty", "smallint", false), // int → smallint: both Iceberg int
            MySqlColumn.of("id", "bigint", false),
            MySqlColumn.of("note", "text", true),
            MySqlColumn.of("price", "decimal(10,2)", true),
            MySqlColumn.of("ratio", "float", true));
    assertThat(plan(after, TABLE)).isEmpty();
    assertThat(plan(replace("note", MySqlColumn.of("note", "varchar(200)", true)), TABLE))
        .isEmpty();
    assertThat(plan(BEFORE, TABLE)).isEmpty(); // ADD INDEX, ENGINE, COMMENT: the same columns
  }

  @Test
  void wideningsIcebergAllowsWidenTheTableOnce() {
    assertThat(plan(replace("qty", MySqlColumn.of("qty", "bigint", false)), TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.WIDEN, "qty", Types.LongType.get(), "bigint"));
    assertThat(plan(replace("price", MySqlColumn.of("price", "decimal(14,2)", true)), TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.WIDEN,
                "price",
                Types.DecimalType.of(14, 2),
                "decimal(14,2)"));
    assertThat(plan(replace("ratio", MySqlColumn.of("ratio", "double", true)), TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.WIDEN, "ratio", Types.DoubleType.get(), "double"));
    // a second shard with the same widening, or a replay: the table already has it
    Schema widened =
        new Schema(
            TABLE.columns().stream()
                .map(
                    f ->
                        f.name().equals("qty")
                            ? Types.NestedField.required(3, "qty", Types.LongType.get())
                            : f)
                .toList());
    assertThat(plan(replace("qty", MySqlColumn.of("qty", "bigint", false)), widened)).isEmpty();
    // a shard not yet widened writes into the wider column
    assertThat(
            SchemaEvolution.plan(
                WHERE, "ALTER …", BEFORE, BEFORE, null, null, Set.of("id"), widened))
        .isEmpty();
  }

  @Test
  void aDroppedOrNullableColumnBecomesOptionalAndARenameIsANewColumn() {
    List<MySqlColumn> dropped = BEFORE.stream().filter(c -> !c.name().equals("qty")).toList();
    assertThat(plan(dropped, TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.MAKE_OPTIONAL, "qty", Types.IntegerType.get(), null));
    assertThat(plan(replace("qty", MySqlColumn.of("qty", "int", true)), TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.MAKE_OPTIONAL, "qty", Types.IntegerType.get(), null));
    assertThat(plan(replace("note", MySqlColumn.of("remark", "varchar(20)", true)), TABLE))
        .containsExactly(
            new SchemaEvolution.Change(
                SchemaEvolution.Change.Kind.ADD, "remark", Types.StringType.get(), "varchar(20)"));
  }

  @Test
  void changesTheTableCannotFollowStopNamingShardColumnAndDdl() {
    assertThatThrownBy(
            () -> plan(replace("qty", MySqlColumn.of("qty", "varchar(10)", false)), TABLE))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot evolve the table for a schema change on shard 3 ('shop.orders_3' on host 'a'), column 'qty': column 'qty'"
                + " changes from int NOT NULL (Iceberg int) to varchar(10) NOT NULL (Iceberg string): a narrowing or incompatible"
                + " change (MySQL rewrote the shard's existing values, which the binlog does not carry). DDL: 'ALTER …'. The job"
                + " stops here for good (a restart would meet the same DDL); nothing after the last completed checkpoint is lost."
                + " Prefer evolvable changes (add a new column, widen a type); how to go on from here is in"
                + " docs/schema-evolution.md, section 'When the job stops'");
    assertThatThrownBy(
            () -> plan(replace("price", MySqlColumn.of("price", "decimal(10,3)", true)), TABLE))
        .hasMessageContaining(
            "column 'price' changes from decimal(10,2) NULL (Iceberg decimal(10, 2)) to decimal(10,3) NULL");
    List<MySqlColumn> narrowed = replace("id", MySqlColumn.of("id", "int", false));
    assertThatThrownBy(() -> plan(narrowed, TABLE))
        .hasMessageContaining(
            "column 'id': key column 'id' changes type from bigint NOT NULL to int NOT NULL");
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE,
                    "ALTER …",
                    BEFORE,
                    BEFORE,
                    List.of("id"),
                    List.of("id", "qty"),
                    Set.of("id"),
                    TABLE))
        .hasMessageContaining("column 'id, qty': the primary key changes from [id] to [id, qty]");
    List<MySqlColumn> keyDropped = BEFORE.stream().filter(c -> !c.name().equals("id")).toList();
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE, "ALTER …", BEFORE, keyDropped, null, null, Set.of("id"), TABLE))
        .hasMessageContaining("key column 'id' is dropped");
  }

  @Test
  void aDecimalWidenedPast38DigitsStopsNamingShardColumnAndWhatToDo() {
    List<MySqlColumn> wide = replace("price", MySqlColumn.of("price", "decimal(40,2)", true));
    assertThatThrownBy(() -> plan(wide, TABLE))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot evolve the table for a schema change on shard 3 ('shop.orders_3' on host 'a'), column 'price': column 'price'"
                + " changes from decimal(10,2) NULL to decimal(40,2) NULL: more than 38 digits, which Shardberg keeps as an"
                + " Iceberg string of its exact digits, but the table's column is an Iceberg decimal, and Iceberg cannot change a"
                + " decimal column into a string. Either keep the column at 38 digits or fewer on this shard (MODIFY price"
                + " decimal(38,2), if its values fit), or, if it needs the digits, give every shard the wider column and load a"
                + " new Iceberg table (its column is then a string of the exact digits; docs/type-mapping.md). DDL: 'ALTER …'."
                + " The job stops here for good (a restart would meet the same DDL); nothing after the last completed"
                + " checkpoint is lost. Prefer evolvable changes (add a new column, widen a type); how to go on from here is in"
                + " docs/schema-evolution.md, section 'When the job stops'");
    // the same shard at start-up (widened while the job was down): its column against the table's
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE,
                    "(the shards' current schemas)",
                    wide,
                    wide,
                    null,
                    null,
                    Set.of("id"),
                    TABLE))
        .hasMessageContaining(
            "column 'price': column 'price' is decimal(40,2) NULL on the shard, more than 38 digits, which Shardberg keeps as an"
                + " Iceberg string of its exact digits, but the table's column is decimal(10, 2), and Iceberg cannot change a"
                + " decimal column into a string. Either keep the column at 38 digits or fewer on this shard (MODIFY price"
                + " decimal(38,2), if its values fit)");
  }

  @Test
  void aDecimalOfMoreThan38DigitsOnlyGrowsItsPrecision() {
    Schema table =
        new Schema(
            TABLE.columns().stream()
                .map(
                    f ->
                        f.name().equals("price")
                            ? Types.NestedField.optional(5, "price", Types.StringType.get())
                            : f)
                .toList());
    List<MySqlColumn> before = replace("price", MySqlColumn.of("price", "decimal(40,2)", true));
    // more digits at the same scale: the string holds them, nothing to change
    assertThat(
            SchemaEvolution.plan(
                WHERE,
                "ALTER …",
                before,
                replace("price", MySqlColumn.of("price", "decimal(65,2)", true)),
                null,
                null,
                Set.of("id"),
                table))
        .isEmpty();
    // a scale change, fewer digits, back to 38 digits, or another text type: MySQL rewrote the
    // values
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE,
                    "ALTER …",
                    before,
                    replace("price", MySqlColumn.of("price", "decimal(40,4)", true)),
                    null,
                    null,
                    Set.of("id"),
                    table))
        .hasMessageContaining(
            "column 'price' changes from decimal(40,2) NULL to decimal(40,4) NULL: a DECIMAL scale change");
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE,
                    "ALTER …",
                    before,
                    replace("price", MySqlColumn.of("price", "decimal(39,2)", true)),
                    null,
                    null,
                    Set.of("id"),
                    table))
        .hasMessageContaining(
            "column 'price' changes from decimal(40,2) NULL to decimal(39,2) NULL: a narrowing");
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE,
                    "ALTER …",
                    before,
                    replace("price", MySqlColumn.of("price", "decimal(38,2)", true)),
                    null,
                    null,
                    Set.of("id"),
                    table))
        .hasMessageContaining(
            "column 'price' changes from decimal(40,2) NULL to decimal(38,2) NULL: the table's column is an Iceberg string of"
                + " the exact digits (more than 38 digits), and Iceberg cannot change a string column into a decimal. Give the"
                + " shard's column back its digits (MODIFY price decimal(40,2))");
    assertThatThrownBy(
            () ->
                SchemaEvolution.plan(
                    WHERE,
                    "ALTER …",
                    before,
                    replace("price", MySqlColumn.of("price", "varchar(80)", true)),
                    null,
                    null,
                    Set.of("id"),
                    table))
        .hasMessageContaining(
            "column 'price' changes from decimal(40,2) NULL to varchar(80) NULL: a DECIMAL of more than 38 digits");
  }
}
