/**
 * Table maintenance inside the job ({@link dev.shardberg.coordinator.maintenance.TableMaintainer}):
 * per-partition health, compaction chosen by pressure, snapshot expiry, orphan-file removal,
 * manifest rewrite; every commit made by the coordinator's thread under its guard. Its options are
 * {@link dev.shardberg.coordinator.maintenance.MaintenanceOptions}.
 */
package dev.shardberg.coordinator.maintenance;
