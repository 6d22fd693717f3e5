/**
 * The MySQL side: finds the shards and checks their schemas, maps MySQL types to Iceberg, tags
 * every change with its shard; its config keys are the Flink ConfigOptions in {@link
 * dev.shardberg.router.RouterOptions}. May import Flink, Flink CDC (MySQL), Debezium, Iceberg and
 * JDBC; no other Shardberg module.
 *
 * <p>Its packages, by role; each uses only the ones below it (javadoc may link upwards, by full
 * name):
 *
 * <pre>
 *   tagging    the shard tagger (each source's deserializer) and its evolving layout
 *   watch      the host and binlog-format watches chained after each source
 *   discovery  the hosts, the shard rules, discovery and the plan it makes
 *   schema     the shared schema, the Iceberg table's layout and creation, schema evolution
 *   types      MySQL types, their mapping, and exact reading of TIME, YEAR and FLOAT
 *   (root)     what they all share: RouterOptions, SchemaChangeBehavior, ShardTable, Secret,
 *              ShardRouterException, Preconditions
 * </pre>
 *
 * tagging uses discovery, schema and types; watch uses discovery; discovery uses schema and types;
 * schema uses types; every package uses the root, and the root none of them.
 */
package dev.shardberg.router;
