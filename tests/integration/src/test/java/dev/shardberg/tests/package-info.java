/**
 * The suites (test sources only), against real servers: MariaDB, Flink MiniCluster and session
 * cluster, Iceberg, ZooKeeper, Hive, Spark. May import every module, tests/support, and
 * tests/harness where a suite tests the harness (the CLI, demo, bench); nothing imports them.
 */
package dev.shardberg.tests;
