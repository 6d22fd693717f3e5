/**
 * The job: configuration, the pipeline (sources, shard tagging, writers, coordinator) and the CLI
 * in the flink run jar. May import shard-router and commit-coordinator (and their libraries);
 * nothing under tests/.
 */
package dev.shardberg.job;
