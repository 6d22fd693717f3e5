package dev.shardberg.tests.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Keeps the harness from rotting: a tiny {@code bench} (2 hosts, 4 shards, a few hundred rows, a
 * few seconds of changes) through every default mode, then the report's structure and the
 * correctness check of {@code consolidated}; and one through the opt-in {@code source-only} next to
 * {@code consolidated}: its exact row count and the ratio it anchors. Never a timing.
 */
class BenchCommandTest {
  private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G'};

  @TempDir Path dir;

  @Test
  void benchIsRegisteredInTheLocalCli() {
    assertThat(dev.shardberg.tests.cli.ShardbergDevCli.commandLine().getSubcommands())
        .containsKeys("demo", "bench");
  }

  @Test
  void tinyBenchWritesACompleteReportAndConsolidatedMatchesTheShards() throws Exception {
    Path out = dir.resolve("report");
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand()).setErr(new PrintWriter(err));
    int exit =
        cli.execute(
            "--shards",
            "4",
            "--rows-per-shard",
            "200",
            "--hosts",
            "2",
            "--duration",
            "4s",
            "--change-rate",
            "40",
            "--checkpoint-interval",
            "1s",
            "--modes",
            "consolidated,per-shard,consolidated+zk",
            "--phase-timeout",
            "3m",
            "--no-warm-up",
            "--output",
            out.toString());
    assertThat(exit).as("exit code; stderr: %s", err).isZero();

    JsonNode results = new ObjectMapper().readTree(out.resolve(Report.RESULTS_JSON).toFile());
    assertThat(results.get("command").asText()).startsWith("bin/shardberg bench --shards 4");
    assertThat(results.at("/machine/cores").asInt())
        .isEqualTo(Runtime.getRuntime().availableProcessors());
    assertThat(results.at("/machine/physicalMemoryBytes").asLong()).isPositive();
    assertThat(results.at("/versions/flink").asText()).isEqualTo("1.20.4");
    assertThat(results.at("/versions/iceberg").asText()).startsWith("1.11.0");
    assertThat(results.at("/settings/shards").asInt()).isEqualTo(4);
    assertThat(results.at("/settings/mixUpdateInsertDelete").asText()).isEqualTo("96/2/2");

    List<String> modes = new ArrayList<>();
    results.get("modes").forEach(m -> modes.add(m.get("mode").asText()));
    assertThat(modes).containsExactly("consolidated", "per-shard", "consolidated+zk");

    JsonNode consolidated = results.get("modes").get(0);
    assertThat(consolidated.get("status").asText())
        .as("reason: %s", consolidated.get("reason"))
        .isEqualTo("PASSED");
    long inserts = consolidated.at("/changes/inserts").asLong();
    long deletes = consolidated.at("/changes/deletes").asLong();
    assertThat(consolidated.at("/verification/passed").asBoolean()).isTrue();
    assertThat(consolidated.at("/verification/mysqlRows").asLong())
        .isEqualTo(800 + inserts - deletes);
    assertThat(consolidated.at("/verification/icebergRows").asLong())
        .isEqualTo(800 + inserts - deletes);
    assertThat(consolidated.at("/verification/mismatches").size()).isZero();
    // one committer: nothing to race against (the coordinator's own retries are counted too)
    assertThat(consolidated.at("/commits/commitFailedRetries").asLong()).isZero();
    assertThat(consolidated.at("/restarts").asLong()).isZero();
    // the coordinator's commit durations (its commitDurationMs histogram): present, not -1
    assertThat(consolidated.at("/commits/reported").asLong())
        .as("coordinator commits measured")
        .isPositive();
    assertThat(consolidated.at("/commits/durationP50Millis").asLong())
        .as("commit ms p50")
        .isPositive();
    assertThat(consolidated.at("/commits/durationP99Millis").asLong())
        .as("commit ms p99")
        .isGreaterThanOrEqualTo(consolidated.at("/commits/durationP50Millis").asLong());

    for (JsonNode mode : results.get("modes")) {
      if (!mode.get("status").asText().equals("PASSED")) {
        continue;
      }
      for (String field :
          List.of(
              "/snapshot/rowsPerSecond",
              "/snapshot/rowsPerSecondPerSourceParallelism",
              "/changes/appliedPerSecond",
              "/freshness/p50Millis",
              "/freshness/p99Millis",
              "/freshness/maxMillis",
              "/commits/snapshots",
              "/commits/durationP50Millis",
              "/commits/commitFailedRetries",
              "/files/filesPerCommit",
              "/files/bytesPerCommit",
              "/files/smallFiles",
              "/peakHeapBytes",
              "/restarts")) {
        assertThat(mode.at(field).isMissingNode())
            .as("%s of %s", field, mode.get("mode"))
            .isFalse();
      }
    }
    JsonNode perShard = results.get("modes").get(1);
    assertThat(perShard.get("status").asText())
        .as("reason: %s", perShard.get("reason"))
        .isEqualTo("PASSED");
    assertThat(perShard.at("/verification/passed").asBoolean()).isTrue();
    // the initial load: insert-only in a fresh table, a key delete per row with the stock upsert
    // sink
    assertThat(consolidated.at("/snapshot/equalityDeletes").asLong()).isZero();
    assertThat(consolidated.at("/snapshot/deleteFiles").asLong()).isZero();
    assertThat(consolidated.at("/snapshot/commits").asLong()).isPositive();
    assertThat(perShard.at("/snapshot/equalityDeletes").asLong()).isEqualTo(800);
    JsonNode zk = results.get("modes").get(2);
    assertThat(zk.get("status").asText()).as("reason: %s", zk.get("reason")).isEqualTo("PASSED");
    assertThat(zk.at("/verification/passed").asBoolean()).isTrue();
    // the coordinator and the maintenance committer share the ZooKeeper lock: no stale base, ever
    assertThat(zk.at("/commits/commitFailedRetries").asLong()).isZero();
    assertThat(zk.at("/commits/durationP50Millis").asLong())
        .as("coordinator commit ms p50 with the lock")
        .isPositive();
    assertThat(zk.at("/maintenance/commitFailedRetries").asLong()).isZero();
    assertThat(zk.at("/maintenance/failures").asLong()).isZero();

    assertThat(results.at("/querySide/shards").asInt()).isEqualTo(4);
    assertThat(results.at("/querySide/rows").asLong()).isEqualTo(800 + inserts - deletes);
    assertThat(results.at("/querySide/ratio").isNumber()).isTrue();
    assertThat(results.at("/ratios").has("snapshot throughput consolidated / per-shard")).isTrue();

    String markdown = Files.readString(out.resolve(Report.REPORT_MD));
    assertThat(markdown).doesNotContain(" | -1 / -1 | ");
    assertThat(markdown)
        .contains(
            "# Shardberg bench report",
            "| consolidated | 4 | PASSED",
            "| per-shard | 4 | PASSED",
            "| consolidated+zk | 4 | PASSED",
            "## Query side",
            "## How each figure is measured",
            "### Snapshot phase",
            "| per-shard | 800 |");
    for (String chart : Report.CHARTS) {
      Path file = out.resolve(chart);
      assertThat(file).exists();
      byte[] head = new byte[4];
      System.arraycopy(Files.readAllBytes(file), 0, head, 0, 4);
      assertThat(head).as(chart).isEqualTo(PNG_MAGIC);
    }
  }

  @Test
  void tinySchemaRolloutRunAltersEveryShardAndTheTableStillMatchesTheShards() throws Exception {
    Path out = dir.resolve("ddl");
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand()).setErr(new PrintWriter(err));
    int exit =
        cli.execute(
            "--shards",
            "4",
            "--rows-per-shard",
            "200",
            "--hosts",
            "2",
            "--duration",
            "8s",
            "--change-rate",
            "40",
            "--checkpoint-interval",
            "1s",
            "--modes",
            "consolidated+ddl",
            "--phase-timeout",
            "3m",
            "--no-query-side",
            "--no-warm-up",
            "--output",
            out.toString());
    assertThat(exit).as("exit code; stderr: %s", err).isZero();
    JsonNode mode =
        new ObjectMapper().readTree(out.resolve(Report.RESULTS_JSON).toFile()).get("modes").get(0);
    assertThat(mode.get("mode").asText()).isEqualTo("consolidated+ddl");
    assertThat(mode.get("status").asText())
        .as("reason: %s", mode.get("reason"))
        .isEqualTo("PASSED");
    assertThat(mode.at("/verification/passed").asBoolean()).isTrue();
    assertThat(mode.at("/restarts").asLong()).isZero();
    assertThat(mode.at("/schemaRollout/shardsAltered").asInt()).isEqualTo(4);
    assertThat(mode.at("/schemaRollout/columnInTable").asBoolean()).isTrue();
    assertThat(mode.at("/schemaRollout/samplesInWindow").asLong()).isPositive();
    assertThat(Files.readString(out.resolve("report.md")))
        .contains("Change phase with a schema rollout");
  }

  @Test
  void tinySourceOnlyRunCountsEveryLoadedRowAndIsTheConsolidatedRatiosDenominator()
      throws Exception {
    Path out = dir.resolve("source-only");
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand()).setErr(new PrintWriter(err));
    int exit =
        cli.execute(
            "--shards",
            "4",
            "--rows-per-shard",
            "200",
            "--hosts",
            "2",
            "--duration",
            "2s",
            "--change-rate",
            "20",
            "--checkpoint-interval",
            "1s",
            "--modes",
            "source-only,consolidated",
            "--phase-timeout",
            "3m",
            "--no-query-side",
            "--output",
            out.toString());
    assertThat(exit).as("exit code; stderr: %s", err).isZero();

    JsonNode results = new ObjectMapper().readTree(out.resolve(Report.RESULTS_JSON).toFile());
    assertThat(results.at("/settings/modes").toString())
        .isEqualTo("[\"source-only\",\"consolidated\"]");
    // the warm-up (on by default) ran both modes first; only the timed runs are reported
    assertThat(results.at("/settings/warmUp").asBoolean()).isTrue();
    assertThat(results.get("modes").size()).isEqualTo(2);
    JsonNode sourceOnly = results.get("modes").get(0);
    assertThat(sourceOnly.get("mode").asText()).isEqualTo("source-only");
    assertThat(sourceOnly.get("status").asText())
        .as("reason: %s", sourceOnly.get("reason"))
        .isEqualTo("PASSED");
    assertThat(sourceOnly.at("/sourceCount/expectedRows").asLong()).isEqualTo(800);
    assertThat(sourceOnly.at("/sourceCount/countedRows").asLong()).isEqualTo(800);
    assertThat(sourceOnly.at("/sourceCount/passed").asBoolean()).isTrue();
    assertThat(sourceOnly.at("/snapshot/rows").asLong()).isEqualTo(800);
    assertThat(sourceOnly.at("/snapshot/rowsPerSecond").asDouble()).isPositive();
    assertThat(sourceOnly.at("/snapshot/rowsPerSecondAfterFirstCommit").asDouble()).isPositive();
    // two hosts, source parallelism 2 each: the consolidated mode's sources
    assertThat(sourceOnly.get("sourceParallelismTotal").asInt()).isEqualTo(4);
    assertThat(sourceOnly.get("changes").isNull()).isTrue();
    assertThat(sourceOnly.get("verification").isNull()).isTrue();
    assertThat(sourceOnly.get("restarts").asLong()).isZero();

    JsonNode consolidated = results.get("modes").get(1);
    assertThat(consolidated.get("status").asText())
        .as("reason: %s", consolidated.get("reason"))
        .isEqualTo("PASSED");
    assertThat(consolidated.get("sourceCount").isNull()).isTrue();
    assertThat(consolidated.get("sourceParallelismTotal").asInt()).isEqualTo(4);
    double expected =
        Math.round(
                consolidated.at("/snapshot/rowsPerSecond").asDouble()
                    / sourceOnly.at("/snapshot/rowsPerSecond").asDouble()
                    * 100)
            / 100.0;
    assertThat(results.at("/ratios").get("snapshot rows/s consolidated / source-only").asDouble())
        .isEqualTo(expected);
    assertThat(results.at("/ratios").has("snapshot rows/s consolidated+zk / source-only"))
        .isFalse();
    // the writers had every row before the commit that made the last of them visible
    long writersMillis = consolidated.at("/snapshot/writersMillis").asLong();
    assertThat(writersMillis).isPositive();
    assertThat(writersMillis).isLessThanOrEqualTo(consolidated.at("/snapshot/millis").asLong());
    assertThat(sourceOnly.at("/snapshot/writersMillis").asLong()).isEqualTo(-1);
    assertThat(
            results
                .at("/ratios")
                .get("snapshot rows/s into the writers consolidated / source-only")
                .asDouble())
        .isGreaterThanOrEqualTo(
            results.at("/ratios").get("snapshot rows/s consolidated / source-only").asDouble());

    String markdown = Files.readString(out.resolve(Report.REPORT_MD));
    assertThat(markdown)
        .contains(
            "| source-only | 4 | PASSED",
            "| n/a | n/a |",
            "800 of 800 rows counted",
            "| consolidated | 4 | PASSED",
            "| snapshot rows/s consolidated / source-only |",
            "| snapshot rows/s into the writers consolidated / source-only |");
  }

  @Test
  void tinyLongRunMeasuresEachRunAndWritesTheChart() throws Exception {
    Path out = dir.resolve("long-run");
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand()).setErr(new PrintWriter(err));
    int exit =
        cli.execute(
            "--shards",
            "2",
            "--rows-per-shard",
            "100",
            "--hosts",
            "1",
            "--long-run",
            "3s",
            "--long-run-runs",
            "off,on,position",
            "--sample-interval",
            "2s",
            "--maintenance-interval",
            "1s",
            "--compaction-min-small-files",
            "2",
            "--change-rate",
            "40",
            "--checkpoint-interval",
            "1s",
            "--phase-timeout",
            "3m",
            "--output",
            out.toString());
    assertThat(exit).as("exit code; stderr: %s", err).isZero();

    JsonNode results = new ObjectMapper().readTree(out.resolve(LongRun.JSON).toFile());
    assertThat(results.get("command").asText()).startsWith("bin/shardberg bench --shards 2");
    assertThat(results.at("/settings/longRunSeconds").asLong()).isEqualTo(3);
    assertThat(results.at("/settings/maintenanceIntervalMillis").asLong()).isEqualTo(1000);
    assertThat(results.at("/settings/compactionMinSmallFiles").asInt()).isEqualTo(2);
    JsonNode runs = results.get("runs");
    assertThat(runs.size()).isEqualTo(3);
    assertThat(runs.get(0).get("maintenance").asBoolean()).isFalse();
    assertThat(runs.get(1).get("maintenance").asBoolean()).isTrue();
    assertThat(runs.get(1).get("deleteMode").asText()).isEqualTo("equality");
    assertThat(runs.get(2).get("deleteMode").asText()).isEqualTo("position");
    // the position run's table: deletes by position only, read at every sample
    assertThat(runs.get(2).get("samples"))
        .allSatisfy(s -> assertThat(s.get("equalityDeleteFiles").asLong()).isZero());
    assertThat(runs.get(1).get("samples"))
        .as("the equality run deletes by key: the position run's check is not empty")
        .anySatisfy(s -> assertThat(s.get("equalityDeleteFiles").asLong()).isPositive());
    for (JsonNode run : runs) {
      assertThat(run.get("status").asText())
          .as("reason: %s", run.get("reason"))
          .isEqualTo("PASSED");
      assertThat(run.get("verified").asBoolean()).isTrue();
      assertThat(run.get("icebergRows").asLong()).isEqualTo(run.get("mysqlRows").asLong());
      // one committer, maintenance through its commit sequence: nothing to race against
      assertThat(run.get("commitFailedRetries").asLong()).isZero();
      assertThat(run.get("compactionsFailed").asLong()).isZero();
      assertThat(run.get("restarts").asLong()).isZero();
      assertThat(run.get("samples").size()).isGreaterThanOrEqualTo(2);
      JsonNode end = run.get("end");
      assertThat(end.get("phase").asText()).isEqualTo("end");
      assertThat(end.get("liveRows").asLong()).isEqualTo(run.get("icebergRows").asLong());
      assertThat(end.get("dataFiles").asLong()).isPositive();
      assertThat(end.get("diskBytes").asLong())
          .isGreaterThanOrEqualTo(end.get("liveBytes").asLong());
      assertThat(end.get("flinkScanMillis").asLong()).isNotNegative();
      assertThat(run.at("/compacted/rows").asLong()).isEqualTo(run.get("icebergRows").asLong());
      assertThat(run.at("/freshness/samples").asLong()).isPositive();
    }
    List<String> csv = Files.readAllLines(out.resolve(LongRun.CSV));
    assertThat(csv.get(0)).startsWith("run,phase,elapsed_s,");
    assertThat(csv)
        .hasSize(
            1
                + runs.get(0).get("samples").size()
                + runs.get(1).get("samples").size()
                + runs.get(2).get("samples").size());
    byte[] chart = Files.readAllBytes(out.resolve(LongRun.CHART));
    assertThat(java.util.Arrays.copyOf(chart, 4)).isEqualTo(PNG_MAGIC);
    java.awt.image.BufferedImage image =
        javax.imageio.ImageIO.read(out.resolve(LongRun.CHART).toFile());
    assertThat(image.getWidth()).isEqualTo(900);
    assertThat(image.getHeight()).as("four panels of 300 px, one under the other").isEqualTo(1200);
    assertThat(Files.readString(out.resolve(LongRun.MD)))
        .contains(
            "| maintenance off | PASSED",
            "| maintenance on | PASSED",
            "| position deletes (owners) | PASSED",
            "end generic scan / compacted copy",
            LongRun.CHART);
  }

  @Test
  void anObjectStoreWarehouseTakesALatencyAndTheCloseConcurrencyOthersRefuseTheLatency() {
    BenchConfig s3 =
        parse("--warehouse", "s3", "--store-latency", "50ms", "--close-concurrency", "32");
    assertThat(s3.warehouseFs()).isEqualTo(BenchConfig.WarehouseFs.S3);
    assertThat(s3.storeLatency()).isEqualTo(java.time.Duration.ofMillis(50));
    assertThat(s3.closeConcurrency()).isEqualTo(32);
    BenchConfig local = parse();
    assertThat(local.warehouseFs()).isEqualTo(BenchConfig.WarehouseFs.LOCAL);
    assertThat(local.storeLatency()).isZero();
    assertThat(local.closeConcurrency()).isNull();
    assertThat(local.checkpointMinPause()).isZero();
    assertThat(parse("--checkpoint-min-pause", "3s").checkpointMinPause())
        .isEqualTo(java.time.Duration.ofSeconds(3));

    assertThatThrownBy(() -> parse("--warehouse", "hdfs", "--store-latency", "50ms"))
        .hasMessage(
            "Cannot run the bench: --store-latency needs --warehouse s3 (the bench injects latency"
                + " only at its S3-compatible store), got --warehouse hdfs");
    assertThatThrownBy(() -> parse("--warehouse", "s3", "--close-concurrency", "0"))
        .hasMessage(
            "Cannot run the bench: --close-concurrency (target.close-concurrency) must be >= 1,"
                + " got 0");
    assertThatThrownBy(() -> parse("--warehouse", "gcs"))
        .hasMessage("Cannot use --warehouse 'gcs': use local, hdfs or s3");
  }

  private static BenchConfig parse(String... args) {
    BenchCommand command = new BenchCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig("bin/shardberg bench");
  }

  @Test
  void aLongRunPastItsScanBudgetStopsReadingAndSaysSo() {
    LongRun.ScanBudget budget = new LongRun.ScanBudget(java.time.Duration.ofSeconds(60));
    budget.record(0, 2_000, 3_000);
    assertThat(budget.exceeded()).isNull();
    budget.record(360, 95_000, 70_000);
    budget.record(540, 200_000, 10);
    assertThat(budget.exceeded())
        .isEqualTo(
            "not read after t=360 s: a full scan took 95,000 ms, over the scan budget of 60,000 ms");

    List<LongRun.Sample> samples =
        List.of(
            new LongRun.Sample(
                "maintenance off", 0, "changes", 1, 100, 8, 0, 0, 10, 20, 2_000, 3_000),
            new LongRun.Sample(
                "maintenance off", 360, "changes", 70, 100, 400, 390, 390, 10, 20, 95_000, 70_000),
            new LongRun.Sample(
                "maintenance off",
                540,
                "changes",
                100,
                LongRun.NOT_READ,
                600,
                590,
                590,
                10,
                20,
                LongRun.NOT_READ,
                LongRun.NOT_READ));
    LongRun.Sample end =
        new LongRun.Sample(
            "maintenance off",
            600,
            "end",
            110,
            LongRun.NOT_READ,
            650,
            640,
            640,
            10,
            20,
            LongRun.NOT_READ,
            LongRun.NOT_READ);
    List<LongRun.Sample> all = new java.util.ArrayList<>(samples);
    all.add(end);
    LongRun.RunResult off =
        new LongRun.RunResult(
            "maintenance off",
            false,
            "equality",
            ModeResult.PASSED,
            "",
            1000,
            2.0,
            new ModeResult.Freshness(10, 1, 2, 3, 4),
            100,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            false,
            -1,
            -1,
            all,
            end,
            null,
            budget.exceeded());
    assertThat(LongRun.lastRead(off).elapsedSeconds()).isEqualTo(360);
    assertThat(
            LongRun.comparison(List.of(off)).get("maintenance off: generic scan ms start -> end"))
        .isEqualTo("2000 -> not read (over the scan budget; last read at t=360 s: 95000)");
  }
}
