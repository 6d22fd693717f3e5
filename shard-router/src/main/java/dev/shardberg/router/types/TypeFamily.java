package dev.shardberg.router.types;

import java.sql.ResultSet;
import java.sql.SQLException;
import org.apache.flink.cdc.connectors.shaded.org.apache.kafka.connect.data.Schema;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.iceberg.types.Type;

/**
 * The code of one {@link MySqlType} constant: its types, its conversion and its renderings. {@link
 * MySqlType} documents each method; its constants delegate here.
 */
interface TypeFamily {
  /** See {@link MySqlType#flinkType}. */
  LogicalType flinkType(MySqlColumn c);

  /** See {@link MySqlType#icebergType}. */
  Type icebergType(MySqlColumn c);

  /** See {@link MySqlType#toFlink}. */
  Object toFlink(Object value, Schema s, MySqlColumn c);

  /** See {@link MySqlType#renderIceberg}. */
  String renderIceberg(Object value);

  /** The canonical text of the non-null value at {@code index}, read through JDBC. */
  String jdbc(ResultSet rs, int index, MySqlColumn c) throws SQLException;

  /** See {@link MySqlType#selectExpression}. */
  default String selectExpression(String quotedColumn) {
    return quotedColumn;
  }
}
