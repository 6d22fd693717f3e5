/**
 * The storage side of a lakehouse, started in-process for the suites (issue 29): an S3-compatible
 * object store ({@link dev.shardberg.tests.lakehouse.S3Server}, S3Proxy) and an Iceberg REST
 * catalog ({@link dev.shardberg.tests.lakehouse.RestCatalogServer}, Iceberg's REST servlet on Jetty
 * 12). Real servers speaking their real protocols on loopback ports; no Shardberg module. Their
 * libraries are optional dependencies of support: a module that starts them declares them.
 */
package dev.shardberg.tests.lakehouse;
