/**
 * The ZooKeeper (Curator) HA mode of the commit coordinator, on when {@code
 * coordinator.zookeeper.*} is set: one connection with its state machine ({@link
 * dev.shardberg.coordinator.zk.ZooKeeperConnection}), two recipes over it — the table's commit lock
 * ({@link dev.shardberg.coordinator.zk.ZooKeeperTableLock}) and the pipeline's fencing epoch
 * ({@link dev.shardberg.coordinator.zk.FencingEpoch}) — the coordinator's guard composing them
 * ({@link dev.shardberg.coordinator.zk.ZooKeeperCommitGuard}), and their options ({@link
 * dev.shardberg.coordinator.zk.ZooKeeperOptions}, keys and defaults from {@link
 * dev.shardberg.coordinator.CoordinatorConfigOptions}). Imports Curator and the coordinator
 * package's guard contract and config options only. See docs/high-availability.md.
 */
package dev.shardberg.coordinator.zk;
