package dev.shardberg.router.tagging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.shardberg.router.types.MySqlColumn;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pure parts of the evolving layout; the whole path runs on real shards in tests/ (schema
 * package).
 */
class EvolvingLayoutTest {

  /**
   * Columns as Flink CDC 3.5.0 writes them into a schema change record's tableChanges (Debezium
   * 1.9's document).
   */
  static final String COLUMNS =
      "[{\"name\":\"id\",\"jdbcType\":-5,\"typeName\":\"BIGINT\",\"typeExpression\":\"BIGINT\",\"position\":1,"
          + "\"optional\":false,\"hasDefaultValue\":false},"
          + "{\"name\":\"tag\",\"jdbcType\":12,\"typeName\":\"VARCHAR\",\"typeExpression\":\"VARCHAR\",\"length\":16,"
          + "\"position\":2,\"optional\":true,\"hasDefaultValue\":true},"
          + "{\"name\":\"prio\",\"jdbcType\":4,\"typeName\":\"INT\",\"typeExpression\":\"INT\",\"position\":3,"
          + "\"optional\":false,\"hasDefaultValue\":true,\"defaultValueExpression\":\"5\"},"
          + "{\"name\":\"state\",\"jdbcType\":12,\"typeName\":\"VARCHAR\",\"typeExpression\":\"VARCHAR\",\"length\":8,"
          + "\"position\":4,\"optional\":true,\"hasDefaultValue\":true,\"defaultValueExpression\":\"new\"}]";

  @Test
  void debeziumColumnsKeepTheirDefault() throws Exception {
    List<MySqlColumn> columns = DebeziumTableChanges.columns(new ObjectMapper().readTree(COLUMNS));
    assertThat(columns).extracting(MySqlColumn::name).containsExactly("id", "tag", "prio", "state");
    assertThat(columns)
        .extracting(MySqlColumn::defaultValue)
        .containsExactly(null, null, "5", "new");
    assertThat(columns)
        .extracting(MySqlColumn::columnType)
        .containsExactly("bigint", "varchar(16)", "int", "varchar(8)");
  }

  @Test
  void onlyAddedColumnsWithADefaultOtherThanNullAreReported() throws Exception {
    List<MySqlColumn> after = DebeziumTableChanges.columns(new ObjectMapper().readTree(COLUMNS));
    List<MySqlColumn> before =
        List.of(
            MySqlColumn.of("id", "bigint", false),
            new MySqlColumn("state", "varchar", "varchar(8)", true, "new", 8, null, null, false));
    assertThat(ShardSchemaChanges.addedWithDefault(before, after))
        .extracting(MySqlColumn::name)
        .containsExactly("prio");
    List<MySqlColumn> fromInformationSchema =
        List.of(
            new MySqlColumn(
                "note",
                "varchar",
                "varchar(20)",
                true,
                "NULL",
                20,
                null,
                null,
                false)); // MariaDB's DEFAULT NULL
    assertThat(ShardSchemaChanges.addedWithDefault(before, fromInformationSchema)).isEmpty();
  }
}
