/**
 * The Iceberg side: the writers and the single commit coordinator (one snapshot per checkpoint,
 * ZooKeeper HA in {@code zk}, table maintenance committed through the coordinator in {@code
 * maintenance}); its config keys are the Flink ConfigOptions in {@link
 * dev.shardberg.coordinator.CoordinatorConfigOptions} and {@code maintenance.MaintenanceOptions}.
 * May import Flink, Iceberg, Hadoop and Curator/ZooKeeper; no other Shardberg module.
 */
package dev.shardberg.coordinator;
