/**
 * MySQL types: the one type table ({@link dev.shardberg.router.types.MySqlType}), its mapping to
 * Flink and Iceberg types ({@link dev.shardberg.router.types.TypeMapping}), and what makes every
 * value arrive exactly: the Debezium converters for TIME and YEAR, the snapshot's JDBC driver
 * (FLOAT, TIME) and the binlog's TIME2 decoding. Uses only the router's root package.
 */
package dev.shardberg.router.types;
