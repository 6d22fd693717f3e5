package dev.shardberg.tests.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The long-run chart, written by hand as SVG (no plotting library): four panels over the same time
 * axis (seconds since the change stream started), each with the maintenance-off run in red and the
 * maintenance-on run in blue: full-scan time (generic reader solid, Flink batch source dashed, the
 * compacted copy's generic scan dotted), live data files, live delete files (equality + position),
 * bytes (on disk solid, live dashed).
 */
final class LongRunChart {
  private static final int WIDTH = 900;
  private static final int PANEL_HEIGHT = 200;
  private static final int LEFT = 80;
  private static final int RIGHT = 20;
  private static final int TOP = 50;
  private static final int GAP = 45;
  private static final String OFF = "#d62728";
  private static final String ON = "#1f77b4";

  private LongRunChart() {}

  private record Series(String color, String dash, List<double[]> points) {}

  static String svg(LongRun.Result result) {
    List<LongRun.RunResult> runs = result.runs();
    double maxT = 1;
    for (LongRun.RunResult r : runs) {
      for (LongRun.Sample s : r.samples()) {
        maxT = Math.max(maxT, s.elapsedSeconds());
      }
    }
    int height = TOP + 4 * (PANEL_HEIGHT + GAP) + 20;
    StringBuilder svg = new StringBuilder();
    svg.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n",
        WIDTH, height));
    svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s</text>%n", LEFT,
        "Long run: maintenance off (red) vs on (blue), x = seconds since the change stream started"));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"38\" fill=\"#555\">%s</text>%n", LEFT,
        escape(result.settings().toString())));
    String[] titles = {
        "full-scan time, ms (generic reader solid, Flink batch source dashed, compacted copy dotted)",
        "live data files",
        "live delete files (equality + position)",
        "MiB (on disk solid, live files dashed)"};
    for (int panel = 0; panel < 4; panel++) {
      List<Series> series = new ArrayList<>();
      for (LongRun.RunResult r : runs) {
        String color = r.maintenance() ? ON : OFF;
        switch (panel) {
          case 0 -> {
            series.add(new Series(color, null, points(r, s -> s.genericScanMillis())));
            series.add(new Series(color, "6,4", points(r, s -> s.flinkScanMillis())));
            if (r.compacted() != null && !r.samples().isEmpty()) {
              series.add(new Series(color, "2,3", List.of(new double[] {0, r.compacted().genericScanMillis()},
                  new double[] {r.samples().get(r.samples().size() - 1).elapsedSeconds(), r.compacted().genericScanMillis()})));
            }
          }
          case 1 -> series.add(new Series(color, null, points(r, s -> s.dataFiles())));
          case 2 -> series.add(new Series(color, null, points(r, s -> s.equalityDeleteFiles() + s.positionDeleteFiles())));
          default -> {
            series.add(new Series(color, null, points(r, s -> s.diskBytes() / 1048576.0)));
            series.add(new Series(color, "6,4", points(r, s -> s.liveBytes() / 1048576.0)));
          }
        }
      }
      panel(svg, TOP + panel * (PANEL_HEIGHT + GAP), titles[panel], series, maxT);
    }
    svg.append("</svg>\n");
    return svg.toString();
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

  private static void panel(StringBuilder svg, int top, String title, List<Series> series, double maxT) {
    double maxY = 1;
    for (Series s : series) {
      for (double[] p : s.points()) {
        maxY = Math.max(maxY, p[1]);
      }
    }
    maxY = niceCeiling(maxY);
    int plotWidth = WIDTH - LEFT - RIGHT;
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n", LEFT, top - 8, escape(title)));
    svg.append(String.format(Locale.ROOT,
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>%n", LEFT, top, plotWidth, PANEL_HEIGHT));
    for (int i = 0; i <= 4; i++) {
      double v = maxY * i / 4;
      double y = top + PANEL_HEIGHT - PANEL_HEIGHT * i / 4.0;
      svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>%n", LEFT, y, LEFT + plotWidth, y));
      svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", LEFT - 6, y + 4, label(v)));
    }
    for (int i = 0; i <= 6; i++) {
      double t = maxT * i / 6;
      double x = LEFT + plotWidth * i / 6.0;
      svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s s</text>%n",
          x, top + PANEL_HEIGHT + 15, label(t)));
    }
    for (Series s : series) {
      if (s.points().isEmpty()) {
        continue;
      }
      StringBuilder pts = new StringBuilder();
      for (double[] p : s.points()) {
        double x = LEFT + plotWidth * p[0] / maxT;
        double y = top + PANEL_HEIGHT - PANEL_HEIGHT * p[1] / maxY;
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        if (s.dash() == null) {
          svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>%n", x, y, s.color()));
        }
      }
      svg.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
          pts.toString().trim(), s.color(), s.dash() == null ? "" : " stroke-dasharray=\"" + s.dash() + "\""));
    }
  }

  private static double niceCeiling(double v) {
    double magnitude = Math.pow(10, Math.floor(Math.log10(v)));
    for (double step : new double[] {1, 2, 2.5, 5, 10}) {
      if (step * magnitude >= v) {
        return step * magnitude;
      }
    }
    return 10 * magnitude;
  }

  private static String label(double v) {
    return v == Math.rint(v) ? String.format(Locale.ROOT, "%,d", (long) v) : String.format(Locale.ROOT, "%.1f", v);
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
