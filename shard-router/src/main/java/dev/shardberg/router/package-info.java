/**
 * The MySQL side: finds the shards and checks their schemas, maps MySQL types to Iceberg, tags every change with its shard.
 * May import Flink, Flink CDC (MySQL), Debezium, Iceberg and JDBC; no other Shardberg module.
 */
package dev.shardberg.router;
