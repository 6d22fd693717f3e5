/**
 * The one schema and the one table: compares the shards' schemas and derives the schema they share
 * ({@link dev.shardberg.router.schema.SchemaComparison}), lays out the Iceberg table ({@link
 * dev.shardberg.router.schema.TableLayout}) and creates or checks it ({@link
 * dev.shardberg.router.schema.TableCreator}), and evolves it when a shard's schema changes: the
 * rules ({@link dev.shardberg.router.schema.SchemaEvolution}) and the commit under the table's lock
 * ({@link dev.shardberg.router.schema.TableSchemaEvolver}). Uses the types package and the router's
 * root.
 */
package dev.shardberg.router.schema;
