/**
 * The MySQL side: finds the shards and checks their schemas, maps MySQL types to Iceberg, tags every change with its shard;
 * its config keys are the Flink ConfigOptions in {@link dev.shardberg.router.RouterOptions}.
 * May import Flink, Flink CDC (MySQL), Debezium, Iceberg and JDBC; no other Shardberg module.
 */
package dev.shardberg.router;
