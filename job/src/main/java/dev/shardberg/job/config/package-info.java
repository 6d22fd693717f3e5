/**
 * The config file: YAML flattened into a Flink {@code Configuration} ({@link
 * dev.shardberg.job.config.ConfigLoader}, with the rules across keys in {@link
 * dev.shardberg.job.config.CrossKeyRules}), the typed records the job reads ({@link
 * dev.shardberg.job.config.ShardbergConfig}), the job's own ConfigOptions and the register of every
 * module's keys ({@link dev.shardberg.job.config.ShardbergOptions}: how to add one), and
 * docs/config.md's table ({@link dev.shardberg.job.config.ConfigReference}). May import Flink's
 * configuration classes, Jackson YAML and the other modules' options classes.
 */
package dev.shardberg.job.config;
