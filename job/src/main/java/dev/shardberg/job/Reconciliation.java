package dev.shardberg.job;

import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.verify.ShardSource;
import dev.shardberg.job.verify.TableVerifier;
import dev.shardberg.job.verify.VerifyReport;
import dev.shardberg.router.discovery.LogicalTableSpec;
import dev.shardberg.router.discovery.MySqlHost;
import dev.shardberg.router.discovery.ShardDiscovery;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.TableLayout;
import java.sql.DriverManager;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;

/** {@code verify} from a config: discovers the shards and reconciles the table against them. */
public final class Reconciliation {
  private Reconciliation() {}

  public static VerifyReport verify(ShardbergConfig config, int maxDifferences) {
    LogicalTableSpec spec = ShardbergPipeline.logicalTable(config);
    ShardPlan plan = ShardDiscovery.discover(spec, ShardbergPipeline.evolves(config));
    Table table = Catalogs.loadTable(config.target());
    return new TableVerifier(
            table,
            plan.schema().columns(),
            TableLayout.SHARD_COLUMN,
            maxDifferences,
            plan.shardColumns())
        .verify(shardSources(spec, plan), spec.excludedShards());
  }

  /** The plan's shard tables as the verifier reads them, over JDBC with each host's credentials. */
  public static List<ShardSource> shardSources(LogicalTableSpec spec, ShardPlan plan) {
    Map<String, MySqlHost> hosts =
        spec.hosts().stream().collect(Collectors.toMap(MySqlHost::name, Function.identity()));
    return plan.allTables().stream()
        .map(
            t -> {
              MySqlHost host = hosts.get(t.hostName());
              return new ShardSource(
                  t.shard(),
                  t.hostName() + ":" + t.qualifiedName(),
                  t.database(),
                  t.table(),
                  () -> {
                    Properties props = new Properties();
                    props.putAll(host.jdbcProperties());
                    props.putAll(
                        MySqlHost
                            .VERIFY_JDBC_PROPERTIES); // binary protocol: FLOAT exactly as stored
                    props.setProperty("user", host.user());
                    props.setProperty("password", host.password().reveal());
                    return DriverManager.getConnection(host.jdbcUrl(), props);
                  });
            })
        .sorted(java.util.Comparator.comparingInt(ShardSource::shard))
        .toList();
  }
}
