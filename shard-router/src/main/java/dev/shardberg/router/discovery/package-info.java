/**
 * Finding the shards: the MySQL hosts ({@link dev.shardberg.router.discovery.MySqlHost}), which of
 * their tables are shards of the logical table ({@link
 * dev.shardberg.router.discovery.LogicalTableSpec}), and {@link
 * dev.shardberg.router.discovery.ShardDiscovery}, which checks each host over JDBC, numbers the
 * shards and compares their schemas into one {@link dev.shardberg.router.discovery.ShardPlan}. Uses
 * the schema and types packages and the router's root.
 */
package dev.shardberg.router.discovery;
