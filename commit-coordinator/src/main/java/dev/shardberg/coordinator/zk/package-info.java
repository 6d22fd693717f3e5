/**
 * The ZooKeeper (Curator) HA mode of the commit coordinator, on when {@code coordinator.zookeeper.*}
 * is set: a lock per table around every commit ({@link
 * dev.shardberg.coordinator.zk.ZooKeeperTableLock}), a fencing epoch per pipeline ({@link
 * dev.shardberg.coordinator.zk.ZooKeeperCommitGuard}), and their options ({@link
 * dev.shardberg.coordinator.zk.ZooKeeperOptions}). See docs/high-availability.md.
 */
package dev.shardberg.coordinator.zk;
