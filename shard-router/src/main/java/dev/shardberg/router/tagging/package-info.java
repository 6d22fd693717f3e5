/**
 * Tagging every change with its shard: {@link
 * dev.shardberg.router.tagging.ShardTaggingDeserializer} turns one host's Debezium records into
 * Flink rows with {@code shard_number} first; with {@code schema.change-behavior=evolve} its {@link
 * dev.shardberg.router.tagging.EvolvingLayout} lays rows out by the table's current schema as
 * {@link dev.shardberg.router.tagging.VersionedRows} and evolves the table on DDL; with {@code
 * fail} its {@link dev.shardberg.router.tagging.FixedLayout} keeps the layout the job started with
 * and stops the job at any schema change. The top of the router: uses discovery, schema, types and
 * the root.
 */
package dev.shardberg.router.tagging;
