package dev.shardberg.router.discovery;

/** An unnumbered table found on a host. */
record FoundTable(String hostName, String database, String table) {
  String qualifiedName() {
    return database + "." + table;
  }

  String describe() {
    return "'" + qualifiedName() + "' on host '" + hostName + "'";
  }
}
