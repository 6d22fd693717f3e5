package dev.shardberg.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.shardberg.job.config.ConfigLoader;
import dev.shardberg.job.config.ShardbergConfig;
import dev.shardberg.job.observe.HostLag;
import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.ShardTable;
import dev.shardberg.router.discovery.ShardPlan;
import dev.shardberg.router.schema.ShardSchema;
import dev.shardberg.router.types.MySqlColumn;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NewShardCheckTest {
  private static final ShardSchema SCHEMA =
      new ShardSchema(
          List.of(MySqlColumn.of("id", "bigint", false)), List.of("id"), null, List.of(), Map.of());

  private static ShardbergConfig config(String extraTables, String extraTop) {
    String yaml =
        """
        pipeline:
          id: orders
        sources:
          - name: a
            host: db-a
            user: cdc
            password-env: PW
            server-id-range: 5400-5403
          - name: b
            host: db-b
            user: cdc
            password-env: PW
            server-id-range: 5410-5413
        tables:
          database-pattern: shop
          table-pattern: 'orders_(?<shard>\\\\d+)'
        %s
        target:
          catalog:
            type: hadoop
            warehouse: file:///tmp/wh
          namespace: shop
          table: orders
        %s
        """
            // the adoption alone unless a test says otherwise (capture: its own test below)
            .formatted(extraTables.isEmpty() ? "  new-shards: adopt" : extraTables, extraTop);
    return ConfigLoader.parse(yaml, "test.yaml", Map.of("PW", "secret")::get);
  }

  private static ShardPlan plan(ShardTable... tables) {
    Map<String, List<ShardTable>> byHost = new LinkedHashMap<>();
    for (ShardTable t : tables) {
      byHost.computeIfAbsent(t.hostName(), h -> new ArrayList<>()).add(t);
    }
    return new ShardPlan(byHost, SCHEMA);
  }

  private static HostLag host(String name, long binlogPhase) {
    return new HostLag(name, "reachable", 0, null, -1, -1, 0, Map.of(), 0, 0, -1, binlogPhase);
  }

  /** With a table that has no data file of any new shard. */
  private static NewShardCheck.Outcome check(
      ShardbergConfig config,
      ShardPlan running,
      java.util.function.Supplier<ShardPlan> discover,
      List<HostLag> hosts) {
    return NewShardCheck.check(config, running, discover, hosts);
  }

  private static final ShardTable A0 = new ShardTable("a", "shop", "orders_0", 0);
  private static final ShardTable B1 = new ShardTable("b", "shop", "orders_1", 1);
  private static final ShardTable A7 = new ShardTable("a", "shop", "orders_7", 7);
  private static final ShardTable B8 = new ShardTable("b", "shop", "orders_8", 8);

  private static final List<HostLag> BOTH_IN_BINLOG = List.of(host("a", 1), host("b", 1));

  @Test
  void aNewTableOnAnyHostIsAdoptedOnceEveryHostReadsItsBinlog() {
    NewShardCheck.Outcome outcome =
        check(config("", ""), plan(A0, B1), () -> plan(A0, B1, B8, A7), BOTH_IN_BINLOG);
    assertThat(outcome).isEqualTo(new NewShardCheck.Adopt(List.of(A7, B8)));
    assertThat(NewShardCheck.describe(List.of(A7, B8)))
        .isEqualTo("7 ('shop.orders_7' on host 'a'), 8 ('shop.orders_8' on host 'b')");
  }

  /**
   * {@code tables.new-shards: capture} (the default): a table the running job captured is not new
   * to it; one it does not read (renamed into the patterns) waits {@link
   * NewShardCheck#captureGrace} from when it was first found unread (the job's gauges lag), then is
   * adopted.
   */
  @Test
  void underCaptureTheCapturedTableIsNotNewAndAnUnreadOneIsAdoptedAfterTheGrace() {
    ShardbergConfig capture = config("  discovery-interval: 5s", "");
    assertThat(capture.tables().newShards()).isEqualTo(dev.shardberg.router.NewShards.CAPTURE);
    assertThat(NewShardCheck.captureGrace(capture)).isEqualTo(java.time.Duration.ofSeconds(20));
    Map<String, Long> unreadSince = new java.util.HashMap<>();
    // orders_7 and orders_8 new to the plan, checked at the given time with the given host watches
    java.util.function.BiFunction<List<HostLag>, Long, NewShardCheck.Outcome> checkAt =
        (hosts, now) ->
            NewShardCheck.check(
                capture, plan(A0, B1), () -> plan(A0, B1, A7, B8), hosts, unreadSince, now);
    // orders_7 captured by the job; orders_8 unread: waited for, then adopted alone
    List<HostLag> capturedSeven = List.of(captured("a", 7), host("b", 1));
    assertThat(checkAt.apply(capturedSeven, 1_000L))
        .isEqualTo(new NewShardCheck.Waiting(List.of(B8)));
    assertThat(checkAt.apply(capturedSeven, 20_999L))
        .isEqualTo(new NewShardCheck.Waiting(List.of(B8)));
    assertThat(checkAt.apply(capturedSeven, 21_000L))
        .isEqualTo(new NewShardCheck.Adopt(List.of(B8)));
    // every new table captured: nothing to do, and nothing left waiting
    assertThat(checkAt.apply(List.of(captured("a", 7), captured("b", 8)), 30_000L))
        .isEqualTo(new NewShardCheck.Nothing());
    assertThat(unreadSince).isEmpty();
  }

  /** A host in its binlog phase whose job captured {@code shard}. */
  private static HostLag captured(String name, int shard) {
    return new HostLag(
        name, "reachable", 0, null, -1, -1, 0, Map.of(), 0, 0, -1, 1, java.util.Set.of(shard));
  }

  @Test
  void nothingNewIsNothingAndADroppedShardIsNotAReasonToResume() {
    assertThat(check(config("", ""), plan(A0, B1), () -> plan(A0, B1), BOTH_IN_BINLOG))
        .isEqualTo(new NewShardCheck.Nothing());
    assertThat(check(config("", ""), plan(A0, B1), () -> plan(A0), BOTH_IN_BINLOG))
        .isEqualTo(new NewShardCheck.Nothing());
  }

  @Test
  void aTableRenamedKeepingItsNumberIsNewToTheJob() {
    ShardTable renamed = new ShardTable("a", "shop", "orders_00", 0);
    assertThat(check(config("", ""), plan(A0, B1), () -> plan(renamed, B1), BOTH_IN_BINLOG))
        .isEqualTo(new NewShardCheck.Adopt(List.of(renamed)));
  }

  @Test
  void notWhileAHostStillReadsASnapshotNorWhenTheWatchesCannotBeRead() {
    NewShardCheck.Outcome snapshotting =
        check(
            config("", ""),
            plan(A0, B1),
            () -> plan(A0, B1, A7),
            List.of(host("a", 1), host("b", 0)));
    assertThat(snapshotting).isInstanceOf(NewShardCheck.Later.class);
    assertThat(((NewShardCheck.Later) snapshotting).why()).contains("[b]").contains("snapshot");
    assertThat(check(config("", ""), plan(A0, B1), () -> plan(A0, B1, A7), List.of()))
        .isInstanceOf(NewShardCheck.Later.class);
  }

  @Test
  void aHostThatCannotBeAskedIsAskedAgainLater() {
    NewShardCheck.Outcome outcome =
        check(
            config("", ""),
            plan(A0, B1),
            () -> {
              throw new ShardRouterException(
                  "Cannot connect to MySQL host 'a' (db-a:3306) as user 'cdc': refused",
                  new SQLException("refused"));
            },
            BOTH_IN_BINLOG);
    assertThat(outcome).isInstanceOf(NewShardCheck.Later.class);
    assertThat(((NewShardCheck.Later) outcome).added()).isEmpty();
  }

  @Test
  void anythingElseThatFailsTheCheckIsAskedAgainLaterNotAStop() {
    NewShardCheck.Outcome outcome =
        check(
            config("", ""),
            plan(A0, B1),
            () -> {
              throw new IllegalStateException("Cannot read the password file /run/secrets/cdc");
            },
            BOTH_IN_BINLOG);
    assertThat(outcome).isInstanceOf(NewShardCheck.Later.class);
  }

  @Test
  void aClashStopsTheRunWithDiscoverysMessage() {
    String clash =
        "Cannot assign shard numbers: shard number 7 is taken by 'shop.orders_7' on host 'a' and"
            + " 'shop.orders_07' on host 'a'";
    NewShardCheck.Outcome outcome =
        check(
            config("", ""),
            plan(A0, B1),
            () -> {
              throw new ShardRouterException(clash);
            },
            BOTH_IN_BINLOG);
    assertThat(outcome).isEqualTo(new NewShardCheck.Stop(clash));
  }

  @Test
  void warnModeAndModesThatCannotReadANewShardLeaveItToTheNextResume() {
    assertThat(
            check(
                config("  new-shards: warn", ""),
                plan(A0, B1),
                () -> plan(A0, B1, A7),
                BOTH_IN_BINLOG))
        .isInstanceOfSatisfying(
            NewShardCheck.Left.class,
            left -> assertThat(left.why()).contains("tables.new-shards = warn"));
    // with deletes by position, a new shard is adopted as with deletes by key, data files in the
    // table or not: the coordinator removes its old files with its first snapshot rows
    assertThat(
            check(
                config("", "  delete-mode: position"),
                plan(A0, B1),
                () -> plan(A0, B1, A7, B8),
                BOTH_IN_BINLOG))
        .isEqualTo(new NewShardCheck.Adopt(List.of(A7, B8)));
  }
}
