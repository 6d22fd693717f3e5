package dev.shardberg.router.types;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.schema.TableLayout;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TypeMappingTest {

  @ParameterizedTest(name = "{0} -> {1} -> {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "tinyint(4)             | INT                      | int",
        "tinyint(3) unsigned    | INT                      | int",
        "tinyint(1)             | INT                      | int",
        "smallint(6)            | INT                      | int",
        "smallint(5) unsigned   | INT                      | int",
        "mediumint(9)           | INT                      | int",
        "mediumint(8) unsigned  | INT                      | int",
        "int(11)                | INT                      | int",
        "int(10) unsigned       | BIGINT                   | long",
        "bigint(20)             | BIGINT                   | long",
        "bigint(20) unsigned    | DECIMAL(20, 0)           | decimal(20, 0)",
        "decimal(38,10)         | DECIMAL(38, 10)          | decimal(38, 10)",
        "decimal(10,0)          | DECIMAL(10, 0)           | decimal(10, 0)",
        "decimal(39,0)          | STRING                   | string",
        "decimal(65,30)         | STRING                   | string",
        "numeric(65,1) unsigned | STRING                   | string",
        "float                  | FLOAT                    | float",
        "double                 | DOUBLE                   | double",
        "bit(1)                 | BOOLEAN                  | boolean",
        "bit(10)                | BYTES                    | binary",
        "char(3)                | STRING                   | string",
        "varchar(255)           | STRING                   | string",
        "text                   | STRING                   | string",
        "longtext               | STRING                   | string",
        "json                   | STRING                   | string",
        "enum('a','b')          | STRING                   | string",
        "set('x','y')           | STRING                   | string",
        "binary(4)              | BYTES                    | binary",
        "varbinary(16)          | BYTES                    | binary",
        "blob                   | BYTES                    | binary",
        "longblob               | BYTES                    | binary",
        "geometry               | BYTES                    | binary",
        "point                  | BYTES                    | binary",
        "date                   | DATE                     | date",
        "time                   | BIGINT                   | long",
        "time(3)                | BIGINT                   | long",
        "time(6)                | BIGINT                   | long",
        "datetime               | TIMESTAMP(6)             | timestamp",
        "datetime(6)            | TIMESTAMP(6)             | timestamp",
        "timestamp(3)           | TIMESTAMP_LTZ(6)         | timestamptz",
        "year(4)                | INT                      | int",
      })
  void mapsEveryType(String mysql, String flink, String iceberg) {
    MySqlColumn c = MySqlColumn.of("c", mysql, true);
    TypeMapping.Mapped m = TypeMapping.map(c);
    assertThat(m.flinkType().asSummaryString()).isEqualTo(flink);
    assertThat(m.icebergType().toString()).isEqualTo(iceberg);
    assertThat(TypeMapping.map(MySqlColumn.of("c", mysql, false)).flinkType().isNullable())
        .isFalse();
  }

  @Test
  void flinkAndIcebergSidesAgreeForIcebergsOwnConverter() {
    String[] types = {
      "tinyint", "int unsigned", "bigint", "bigint unsigned", "decimal(20,4)", "decimal(65,1)",
          "float", "double", "bit(1)",
      "bit(7)", "varchar(3)", "blob", "date", "time(3)", "time(6)", "datetime(6)", "timestamp(6)",
          "year"
    };
    List<MySqlColumn> columns = new ArrayList<>();
    columns.add(MySqlColumn.of("id", "bigint", false));
    for (int i = 0; i < types.length; i++) {
      columns.add(MySqlColumn.of("c" + i, types[i], true));
    }
    TableLayout layout = TableLayout.derive(new ShardSchema(columns, List.of("id")));
    // Iceberg's own Flink -> Iceberg conversion of our row type gives our Iceberg schema
    org.apache.iceberg.Schema converted =
        FlinkSchemaUtil.convert(FlinkSchemaUtil.toSchema(layout.rowType()));
    assertThat(
            converted.asStruct().fields().stream()
                .map(f -> f.name() + ":" + f.type() + ":" + f.isOptional())
                .toList())
        .isEqualTo(
            layout.icebergSchema().asStruct().fields().stream()
                .map(f -> f.name() + ":" + f.type() + ":" + f.isOptional())
                .toList());
    // and back: Iceberg -> Flink gives the same type roots
    List<LogicalTypeRoot> back =
        FlinkSchemaUtil.convert(layout.icebergSchema()).getChildren().stream()
            .map(LogicalType::getTypeRoot)
            .toList();
    assertThat(back)
        .isEqualTo(layout.rowType().getChildren().stream().map(LogicalType::getTypeRoot).toList());
  }

  @Test
  void unsupportedTypesNameColumnAndType() {
    assertThatThrownBy(() -> TypeMapping.map(MySqlColumn.of("ip", "inet6", true)))
        .isInstanceOf(ShardRouterException.class)
        .hasMessage(
            "Cannot map column 'ip' of MySQL type 'inet6': unsupported; see docs/type-mapping.md for the supported types; change the column type or leave the table out");
  }
}
