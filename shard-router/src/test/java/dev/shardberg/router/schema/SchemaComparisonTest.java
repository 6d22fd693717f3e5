package dev.shardberg.router.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.schema.SchemaComparison.ShardColumns;
import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import org.junit.jupiter.api.Test;

class SchemaComparisonTest {

  static final List<MySqlColumn> COLUMNS =
      List.of(
          MySqlColumn.of("id", "bigint(20)", false),
          MySqlColumn.of("amount", "decimal(10,2)", false),
          MySqlColumn.of("note", "varchar(20)", true));

  static ShardColumns shard(int n, List<MySqlColumn> columns, List<String> pk) {
    return new ShardColumns(
        new ShardTable(n % 2 == 0 ? "a" : "b", "shop", "orders_" + n, n), columns, pk);
  }

  @Test
  void identicalShardsShareTheirSchema() {
    ShardSchema s =
        SchemaComparison.sharedSchema(
            List.of(shard(0, COLUMNS, List.of("id")), shard(1, COLUMNS, List.of("id"))), List.of());
    assertThat(s.columns()).isEqualTo(COLUMNS);
    assertThat(s.primaryKey()).containsExactly("id");
  }

  @Test
  void oneMessageListsEveryShardThatDiffersFromTheMajority() {
    List<MySqlColumn> widerAmount =
        List.of(COLUMNS.get(0), MySqlColumn.of("amount", "decimal(12,2)", false), COLUMNS.get(2));
    List<MySqlColumn> missingNote = List.of(COLUMNS.get(0), COLUMNS.get(1));
    List<MySqlColumn> nullableNoteRenamed =
        List.of(COLUMNS.get(0), COLUMNS.get(1), MySqlColumn.of("remark", "varchar(20)", true));
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(
                        shard(0, COLUMNS, List.of("id")),
                        shard(1, widerAmount, List.of("id")),
                        shard(2, COLUMNS, List.of("id")),
                        shard(3, missingNote, List.of("id", "amount")),
                        shard(4, COLUMNS, List.of("id")),
                        shard(5, nullableNoteRenamed, List.of("id"))),
                    List.of()))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            String.join(
                System.lineSeparator(),
                "Cannot use the shards as one table: 3 of 6 shard(s) differ from the schema of the majority (3 shard(s), e.g. shard 0 'shop.orders_0' on host 'a'):",
                "  - shard 1 ('shop.orders_1' on host 'b'): column 'amount': expected decimal(10,2) NOT NULL, found decimal(12,2) NOT NULL",
                "  - shard 3 ('shop.orders_3' on host 'b'): column #3: expected 'note' varchar(20) NULL, found (none)",
                "  - shard 3 ('shop.orders_3' on host 'b'): primary key: expected [id], found [id, amount]",
                "  - shard 5 ('shop.orders_5' on host 'b'): column #3: expected 'note' varchar(20) NULL, found 'remark' varchar(20) NULL",
                "Make every shard's table identical (same columns in the same order, types, nullability and primary key), then start again."));
  }

  /**
   * With schema.change-behavior evolve, shards that differ in evolvable ways are one table; when
   * some shard also differs in a way the table cannot follow, the refusal names only what blocks
   * (not the added, widened or moved columns evolve takes) and a way on that fits evolve.
   */
  @Test
  void inEvolveModeTheRefusalNamesOnlyTheDifferencesThatBlock() {
    List<MySqlColumn> widerAmount =
        List.of(COLUMNS.get(0), MySqlColumn.of("amount", "decimal(12,2)", false), COLUMNS.get(2));
    List<MySqlColumn> taxAfterId =
        List.of(
            COLUMNS.get(0),
            MySqlColumn.of("tax", "decimal(5,2)", true),
            COLUMNS.get(1),
            COLUMNS.get(2));
    List<MySqlColumn> missingNote = List.of(COLUMNS.get(0), COLUMNS.get(1));
    List<MySqlColumn> textAmount =
        List.of(COLUMNS.get(0), MySqlColumn.of("amount", "varchar(20)", false), COLUMNS.get(2));
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(
                        shard(0, COLUMNS, List.of("id")),
                        shard(1, widerAmount, List.of("id")),
                        shard(2, taxAfterId, List.of("id")),
                        shard(3, missingNote, List.of("id")),
                        shard(4, textAmount, List.of("id")),
                        shard(5, COLUMNS, List.of("id", "amount")),
                        shard(6, COLUMNS, List.of("id"))),
                    List.of(),
                    true))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            String.join(
                System.lineSeparator(),
                "Cannot use the shards as one table: 2 of 7 shard(s) differ from the others in a way the table cannot follow"
                    + " (schema.change-behavior is evolve: columns added, dropped or in another order, wider types and NULL-able"
                    + " columns are taken, and are not listed here):",
                "  - shard 4 ('shop.orders_4' on host 'a'): column 'amount' is varchar(20) NOT NULL, and decimal(12,2) NOT NULL"
                    + " on 6 other shard(s) (e.g. shard 1): neither type widens to the other",
                "  - shard 5 ('shop.orders_5' on host 'b'): primary key [id, amount], and [id] on 6 other shard(s) (e.g. shard 0)",
                "Give these shards the primary key and column types of the others (a type may differ by a widening only:"
                    + " INT/BIGINT, FLOAT/DOUBLE, DECIMAL(p,s) with another precision p), or leave them out with"
                    + " tables.exclude-shards: [4, 5] and read them again later with tables.reread-shards"
                    + " (docs/schema-evolution.md, \"Re-reading one shard\"); then start again."));
  }

  @Test
  void inEvolveModeShardsThatDifferOnlyInEvolvableWaysShareTheirUnion() {
    List<MySqlColumn> taxAfterId =
        List.of(
            COLUMNS.get(0),
            MySqlColumn.of("tax", "decimal(5,2)", true),
            MySqlColumn.of("amount", "decimal(12,2)", false),
            COLUMNS.get(2));
    ShardSchema s =
        SchemaComparison.sharedSchema(
            List.of(
                shard(0, COLUMNS, List.of("id")),
                shard(1, taxAfterId, List.of("id")),
                shard(2, COLUMNS, List.of("id"))),
            List.of(),
            true);
    assertThat(s.columns())
        .extracting(MySqlColumn::name)
        .containsExactly("id", "amount", "note", "tax");
    assertThat(s.columns().get(1).columnType()).isEqualTo("decimal(12,2)");
  }

  static ShardColumns shard(int n, List<String> pk, MySqlIndex... indexes) {
    return new ShardColumns(
        new ShardTable(n % 2 == 0 ? "a" : "b", "shop", "orders_" + n, n),
        COLUMNS,
        pk,
        List.of(indexes));
  }

  static final MySqlIndex UNIQUE_ID_AMOUNT =
      new MySqlIndex("uq_id_amount", true, List.of("amount", "id"));
  static final MySqlIndex INDEX_ID = new MySqlIndex("ix_id", false, List.of("id"));
  static final MySqlIndex UNIQUE_NOTE = new MySqlIndex("uq_note", true, List.of("note"));

  @Test
  void noPrimaryKeyWithoutKeyColumnsIsAnError() {
    assertThatThrownBy(
            () -> SchemaComparison.sharedSchema(List.of(shard(0, COLUMNS, List.of())), List.of()))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot use table 'shop.orders_0' on host 'a' as an upsert source: it has no primary key; add a primary key to every shard or name the columns of a UNIQUE index whose columns are all NOT NULL in tables.key-columns (the table has no such index)");
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(shard(0, List.of(), UNIQUE_ID_AMOUNT, INDEX_ID, UNIQUE_NOTE)),
                    List.of()))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageEndingWith(
            "in tables.key-columns (candidates: UNIQUE uq_id_amount(amount, id))");
  }

  @Test
  void keyColumnsMayNameAUniqueNotNullIndexInAnyOrder() {
    ShardSchema s =
        SchemaComparison.sharedSchema(
            List.of(
                shard(0, List.of(), INDEX_ID, UNIQUE_ID_AMOUNT),
                shard(1, List.of(), UNIQUE_ID_AMOUNT)),
            List.of("id", "amount"));
    assertThat(s.primaryKey()).containsExactly("id", "amount");
    assertThat(s.keyIndex()).isEqualTo("UNIQUE INDEX uq_id_amount (amount, id)");
    assertThat(s.tablePrimaryKey()).isEmpty();
  }

  @Test
  void thePrimaryKeyIsNamedAsTheKeyIndex() {
    ShardSchema s =
        SchemaComparison.sharedSchema(List.of(shard(0, COLUMNS, List.of("id"))), List.of());
    assertThat(s.keyIndex()).isEqualTo("PRIMARY KEY (id)");
    assertThat(s.tablePrimaryKey()).containsExactly("id");
  }

  @Test
  void keyColumnsThatAreNoUniqueIndexAreRefusedOnEveryShard() {
    MySqlIndex primary = MySqlIndex.primary(List.of("id", "amount"));
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(
                        shard(0, List.of("id", "amount"), primary, INDEX_ID),
                        shard(1, List.of("id", "amount"), primary),
                        shard(2, List.of("id", "amount"), primary, INDEX_ID)),
                    List.of("id")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            String.join(
                System.lineSeparator(),
                "Cannot use tables.key-columns [id] as the row key: on 3 of 3 shard(s) no PRIMARY KEY or UNIQUE index has exactly these columns, all NOT NULL, so two different rows could share one key and be merged into one:",
                "  - shard 0 (shop.orders_0 on host a): key-columns (id) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: PRIMARY(id, amount), INDEX ix_id(id)",
                "  - shard 1 (shop.orders_1 on host b): key-columns (id) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: PRIMARY(id, amount)",
                "  - shard 2 (shop.orders_2 on host a): key-columns (id) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: PRIMARY(id, amount), INDEX ix_id(id)",
                "Name the columns of the primary key or of such a UNIQUE index in tables.key-columns, or add the index on every shard."));
  }

  @Test
  void aShardMissingTheUniqueIndexIsNamed() {
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(
                        shard(0, List.of(), UNIQUE_ID_AMOUNT),
                        shard(1, List.of(), INDEX_ID),
                        shard(2, List.of(), UNIQUE_ID_AMOUNT)),
                    List.of("id", "amount")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessageContaining("on 1 of 3 shard(s)")
        .hasMessageContaining(
            "  - shard 1 (shop.orders_1 on host b): key-columns (id, amount) match no PRIMARY KEY or UNIQUE index with NOT NULL columns; indexes: INDEX ix_id(id)");
  }

  @Test
  void keyColumnsMustExistAndBeNotNull() {
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(shard(0, COLUMNS, List.of())), List.of("nope")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot use key column 'nope' from tables.key-columns: table 'shop.orders_0' on host 'a' has no such column (columns: [id, amount, note])");
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(shard(0, COLUMNS, List.of())), List.of("note")))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot use column 'note' as a key column: it is nullable in table 'shop.orders_0' on host 'a'; Iceberg identifier fields must be NOT NULL (make the column NOT NULL or pick other tables.key-columns)");
  }

  @Test
  void aShardWhoseDecimalHasMoreThan38DigitsCannotShareTheColumnOfShardsWithFewer() {
    List<MySqlColumn> wide =
        List.of(COLUMNS.get(0), MySqlColumn.of("amount", "decimal(40,2)", false), COLUMNS.get(2));
    for (boolean union : new boolean[] {false, true}) {
      assertThatThrownBy(
              () ->
                  SchemaComparison.sharedSchema(
                      List.of(
                          shard(0, COLUMNS, List.of("id")),
                          shard(1, wide, List.of("id")),
                          shard(2, COLUMNS, List.of("id"))),
                      List.of(),
                      union))
          .isInstanceOf(ShardRouterException.class)
          .hasMessageContaining(
              union
                  ? "  - shard 1 ('shop.orders_1' on host 'b'): column 'amount' is decimal(40,2) NOT NULL, and decimal(10,2) NOT NULL"
                      + " on 2 other shard(s) (e.g. shard 0): neither type widens to the other"
                  : "  - shard 1 ('shop.orders_1' on host 'b'): column 'amount': expected decimal(10,2) NOT NULL, found decimal(40,2)"
                      + " NOT NULL")
          .hasMessageContaining(
              " (a DECIMAL of more than 38 digits is an Iceberg string of its exact digits, one of 38 or fewer an"
                  + " Iceberg decimal, and Iceberg cannot change a decimal column into a string: give the column 38 digits or"
                  + " fewer on this shard, or more than 38 on every shard)");
    }
    // more than 38 digits on every shard: the union has the most digits; a different scale is
    // refused
    List<MySqlColumn> wider =
        List.of(COLUMNS.get(0), MySqlColumn.of("amount", "decimal(50,2)", false), COLUMNS.get(2));
    ShardSchema shared =
        SchemaComparison.sharedSchema(
            List.of(
                shard(0, wide, List.of("id")),
                shard(1, wider, List.of("id")),
                shard(2, wide, List.of("id"))),
            List.of(),
            true);
    assertThat(shared.columns().get(1).columnType()).isEqualTo("decimal(50,2)");
    List<MySqlColumn> otherScale =
        List.of(COLUMNS.get(0), MySqlColumn.of("amount", "decimal(40,4)", false), COLUMNS.get(2));
    assertThatThrownBy(
            () ->
                SchemaComparison.sharedSchema(
                    List.of(
                        shard(0, wide, List.of("id")),
                        shard(1, otherScale, List.of("id")),
                        shard(2, wide, List.of("id"))),
                    List.of(),
                    true))
        .hasMessageContaining(
            "shard 1 ('shop.orders_1' on host 'b'): column 'amount' is decimal(40,4) NOT NULL, and decimal(40,2) NOT NULL on 2"
                + " other shard(s) (e.g. shard 0): neither type widens to the other");
  }
}
