package io.cerberus.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Charts of a report as hand-written SVG (no dependency): a line chart of one figure by thread
 * count, one line per peer, and horizontal bars of one or more figures per peer. The y axis of a
 * line chart turns logarithmic when its values span more than {@value #LOG_SPAN}× (the in-JVM floor
 * beside network locks), and says so.
 */
final class Charts {
    private static final String[] COLOURS = {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"
    };
    private static final double LOG_SPAN = 50;
    private static final int WIDTH = 760;
    private static final int PLOT_LEFT = 80;
    private static final int PLOT_RIGHT = 520;
    private static final int PLOT_TOP = 50;
    private static final int PLOT_BOTTOM = 300;
    private static final int HEIGHT = 350;

    private Charts() {}

    /**
     * A line chart: x is the thread counts, evenly spaced; one line per series.
     *
     * @param series values by series name, one per thread count (NaN or missing: no point)
     */
    static String lines(String title, String yLabel, List<Integer> threads, Map<String, double[]> series) {
        double min = Double.MAX_VALUE;
        double max = 0;
        for (double[] values : series.values()) {
            for (double v : values) {
                if (v > 0 && Double.isFinite(v)) {
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
            }
        }
        if (max == 0) {
            min = 1;
            max = 1;
        }
        boolean log = max / min > LOG_SPAN;
        Axis axis = log ? Axis.log(min, max) : Axis.linear(max);
        StringBuilder svg = open(WIDTH, HEIGHT);
        text(svg, WIDTH / 2.0, 24, "middle", 15, "bold", title);
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>%n",
                PLOT_LEFT,
                PLOT_TOP,
                PLOT_RIGHT - PLOT_LEFT,
                PLOT_BOTTOM - PLOT_TOP));
        for (double tick : axis.ticks) {
            double y = axis.y(tick);
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>%n",
                    PLOT_LEFT,
                    y,
                    PLOT_RIGHT,
                    y));
            text(svg, PLOT_LEFT - 6, y + 4, "end", 11, "normal", compact(tick));
        }
        double[] xs = new double[threads.size()];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * (i + 0.5) / xs.length;
            text(
                    svg,
                    xs[i],
                    PLOT_BOTTOM + 18,
                    "middle",
                    11,
                    "normal",
                    threads.get(i).toString());
        }
        text(svg, (PLOT_LEFT + PLOT_RIGHT) / 2.0, PLOT_BOTTOM + 40, "middle", 12, "normal", "threads");
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 18 %.1f)\">%s</text>%n",
                (PLOT_TOP + PLOT_BOTTOM) / 2.0,
                (PLOT_TOP + PLOT_BOTTOM) / 2.0,
                escape(yLabel + (log ? " (log scale)" : ""))));
        int index = 0;
        for (Map.Entry<String, double[]> entry : series.entrySet()) {
            String colour = COLOURS[index % COLOURS.length];
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < xs.length && i < entry.getValue().length; i++) {
                double v = entry.getValue()[i];
                if (v > 0 && Double.isFinite(v)) {
                    double y = axis.y(v);
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", xs[i], y));
                    svg.append(String.format(
                            Locale.ROOT,
                            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>%n",
                            xs[i],
                            y,
                            colour));
                }
            }
            svg.append(String.format(
                    Locale.ROOT,
                    "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                    points.toString().strip(),
                    colour));
            double legendY = PLOT_TOP + 8 + index * 20;
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>%n",
                    PLOT_RIGHT + 16,
                    legendY - 10,
                    colour));
            text(svg, PLOT_RIGHT + 34, legendY, "start", 11, "normal", entry.getKey());
            index++;
        }
        return svg.append("</svg>\n").toString();
    }

    /**
     * Horizontal bars, one panel per figure, one bar per peer in each.
     *
     * @param panels values by peer, by panel title (NaN: "not counted")
     */
    static String bars(String title, Map<String, Map<String, Double>> panels) {
        int rows = panels.values().stream().mapToInt(Map::size).sum();
        int height = 50 + panels.size() * 40 + rows * 24;
        StringBuilder svg = open(WIDTH, height);
        text(svg, WIDTH / 2.0, 24, "middle", 15, "bold", title);
        int labelRight = 250;
        int barRight = WIDTH - 110;
        double y = 50;
        for (Map.Entry<String, Map<String, Double>> panel : panels.entrySet()) {
            text(svg, 10, y + 14, "start", 12, "bold", panel.getKey());
            y += 24;
            double max = panel.getValue().values().stream()
                    .filter(v -> Double.isFinite(v) && v > 0)
                    .mapToDouble(Double::doubleValue)
                    .max()
                    .orElse(1);
            int index = 0;
            for (Map.Entry<String, Double> bar : panel.getValue().entrySet()) {
                text(svg, labelRight - 8, y + 13, "end", 11, "normal", bar.getKey());
                double v = bar.getValue();
                if (Double.isFinite(v)) {
                    double length = Math.max(0, v) / max * (barRight - labelRight);
                    svg.append(String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>%n",
                            labelRight,
                            y + 2,
                            length,
                            COLOURS[index % COLOURS.length]));
                    text(
                            svg,
                            labelRight + length + 6,
                            y + 14,
                            "start",
                            11,
                            "normal",
                            String.format(Locale.ROOT, v < 10 ? "%.3f" : "%,.0f", v));
                } else {
                    text(svg, labelRight + 6, y + 14, "start", 11, "italic", "not counted");
                }
                y += 24;
                index++;
            }
            y += 16;
        }
        return svg.append("</svg>\n").toString();
    }

    /** The y axis of a line chart, maps values to pixels. */
    private record Axis(double low, double high, boolean log, List<Double> ticks) {
        static Axis linear(double max) {
            double step = niceStep(max / 5);
            double top = Math.ceil(max / step) * step;
            List<Double> ticks = new ArrayList<>();
            for (double t = 0; t <= top + step / 2; t += step) {
                ticks.add(t);
            }
            return new Axis(0, top, false, ticks);
        }

        static Axis log(double min, double max) {
            double low = Math.floor(Math.log10(min));
            double high = Math.ceil(Math.log10(max));
            List<Double> ticks = new ArrayList<>();
            for (double e = low; e <= high; e++) {
                ticks.add(Math.pow(10, e));
            }
            return new Axis(low, high, true, ticks);
        }

        double y(double value) {
            double fraction = log ? (Math.log10(value) - low) / (high - low) : value / high;
            return PLOT_BOTTOM - fraction * (PLOT_BOTTOM - PLOT_TOP);
        }

        private static double niceStep(double rough) {
            double power = Math.pow(10, Math.floor(Math.log10(rough)));
            double scaled = rough / power;
            return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
        }
    }

    private static StringBuilder open(int width, int height) {
        return new StringBuilder(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">%n"
                        + "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                width,
                height,
                width,
                height));
    }

    private static void text(
            StringBuilder svg, double x, double y, String anchor, int size, String weight, String text) {
        String style = weight.equals("italic")
                ? " font-style=\"italic\""
                : weight.equals("bold") ? " font-weight=\"bold\"" : "";
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s>%s</text>%n",
                x,
                y,
                anchor,
                size,
                style,
                escape(text)));
    }

    /** @return 1,500 as "1.5k", 2,000,000 as "2M" */
    static String compact(double value) {
        String[] units = {"", "k", "M", "G"};
        int unit = 0;
        while (Math.abs(value) >= 1000 && unit < units.length - 1) {
            value /= 1000;
            unit++;
        }
        String number = value == Math.rint(value)
                ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.1f", value);
        return number + units[unit];
    }

    static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
