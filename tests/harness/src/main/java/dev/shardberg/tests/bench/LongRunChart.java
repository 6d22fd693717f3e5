package dev.shardberg.tests.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The long-run chart, drawn with XChart like the bench's other charts: one PNG of four panels over
 * the same time axis (seconds since the change stream started), each with the maintenance-off run
 * in red, the maintenance-on run in blue and the position-delete run in green: full-scan time
 * (Iceberg's generic reader solid, Flink's batch source dashed, the compacted copy's generic scan
 * dotted), live data files, live delete files (equality + position), bytes (on disk solid, live
 * dashed). The legend under each panel names the line styles.
 */
final class LongRunChart {
  private static final int WIDTH = 900;
  private static final int PANEL_HEIGHT = 300;
  private static final Color OFF = new Color(0xd6, 0x27, 0x28);
  private static final Color ON = new Color(0x1f, 0x77, 0xb4);
  private static final Color POSITION = new Color(0x2c, 0xa0, 0x2c);

  private LongRunChart() {}

  static void write(LongRun.Result result, Path file) throws IOException {
    double maxT = 1;
    for (LongRun.RunResult r : result.runs()) {
      for (LongRun.Sample s : r.samples()) {
        maxT = Math.max(maxT, s.elapsedSeconds());
      }
    }
    List<String> names = new ArrayList<>();
    for (LongRun.RunResult r : result.runs()) {
      names.add(r.run() + " (" + colorName(r) + ")");
    }
    XYChart scans =
        panel("Long run, " + String.join(" vs ", names) + ": full-scan time", "ms", maxT);
    XYChart dataFiles = panel("live data files", "files", maxT);
    XYChart deleteFiles = panel("live delete files (equality + position)", "files", maxT);
    XYChart bytes = panel("bytes on disk and of the live files", "MiB", maxT);
    for (LongRun.RunResult r : result.runs()) {
      Color color = color(r);
      String run = shortName(r);
      add(
          scans,
          run + ": generic",
          color,
          SeriesLines.SOLID,
          points(r, s -> s.genericScanMillis()));
      add(
          scans,
          run + ": Flink",
          color,
          SeriesLines.DASH_DASH,
          points(r, s -> s.flinkScanMillis()));
      if (r.compacted() != null && !r.samples().isEmpty()) {
        double end = r.samples().get(r.samples().size() - 1).elapsedSeconds();
        add(
            scans,
            run + ": compacted",
            color,
            SeriesLines.DOT_DOT,
            List.of(
                new double[] {0, r.compacted().genericScanMillis()},
                new double[] {end, r.compacted().genericScanMillis()}));
      }
      add(dataFiles, r.run(), color, SeriesLines.SOLID, points(r, s -> s.dataFiles()));
      add(
          deleteFiles,
          r.run(),
          color,
          SeriesLines.SOLID,
          points(r, s -> s.equalityDeleteFiles() + s.positionDeleteFiles()));
      add(
          bytes,
          run + ": on disk",
          color,
          SeriesLines.SOLID,
          points(r, s -> s.diskBytes() / 1048576.0));
      add(
          bytes,
          run + ": live files",
          color,
          SeriesLines.DASH_DASH,
          points(r, s -> s.liveBytes() / 1048576.0));
    }
    List<XYChart> panels = List.of(scans, dataFiles, deleteFiles, bytes);
    for (XYChart panel : panels) {
      if (panel.getSeriesMap().isEmpty()) {
        panel.addSeries("no samples", new double[] {0}, new double[] {0});
      }
    }
    try (OutputStream out = Files.newOutputStream(file)) {
      BitmapEncoder.saveBitmap(panels, panels.size(), 1, out, BitmapEncoder.BitmapFormat.PNG);
    }
  }

  private static boolean position(LongRun.RunResult r) {
    return "position".equals(r.deleteMode());
  }

  private static Color color(LongRun.RunResult r) {
    return position(r) ? POSITION : r.maintenance() ? ON : OFF;
  }

  private static String colorName(LongRun.RunResult r) {
    return position(r) ? "green" : r.maintenance() ? "blue" : "red";
  }

  private static String shortName(LongRun.RunResult r) {
    return position(r) ? "position" : r.maintenance() ? "on" : "off";
  }

  private static XYChart panel(String title, String yAxis, double maxT) {
    XYChart chart =
        new XYChartBuilder()
            .width(WIDTH)
            .height(PANEL_HEIGHT)
            .title(title)
            .xAxisTitle("seconds since the change stream started")
            .yAxisTitle(yAxis)
            .build();
    chart.getStyler().setXAxisMin(0.0).setXAxisMax(maxT).setYAxisMin(0.0);
    // the legend under the plot: every panel's plot as wide as the others, the time axes one under
    // the other
    chart
        .getStyler()
        .setLegendPosition(Styler.LegendPosition.OutsideS)
        .setLegendLayout(Styler.LegendLayout.Horizontal);
    chart.getStyler().setMarkerSize(5);
    return chart;
  }

  /** A series, markers on the solid ones; none where the run has no point. */
  private static void add(
      XYChart chart, String name, Color color, BasicStroke line, List<double[]> points) {
    if (points.isEmpty()) {
      return;
    }
    XYSeries series =
        chart.addSeries(
            name,
            points.stream().mapToDouble(p -> p[0]).toArray(),
            points.stream().mapToDouble(p -> p[1]).toArray());
    series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
    series.setLineColor(color);
    series.setLineStyle(line);
    series.setMarkerColor(color);
    series.setMarker(line == SeriesLines.SOLID ? SeriesMarkers.CIRCLE : SeriesMarkers.NONE);
  }

  private static List<double[]> points(LongRun.RunResult r, ToDoubleFunction<LongRun.Sample> y) {
    List<double[]> points = new ArrayList<>();
    for (LongRun.Sample s : r.samples()) {
      double v = y.applyAsDouble(s);
      if (v >= 0) { // a scan not read (over the run's scan budget) has no point
        points.add(new double[] {s.elapsedSeconds(), v});
      }
    }
    return points;
  }
}
