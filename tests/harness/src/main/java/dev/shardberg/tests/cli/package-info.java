/**
 * The developer CLI behind {@code bin/shardberg}: the job's commands plus {@code demo} and the load
 * harness {@code bench}. May import job (and through it router and coordinator), tests/support, a
 * local Flink, picocli and XChart; never the suites.
 */
package dev.shardberg.tests.cli;
