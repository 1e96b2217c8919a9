package io.scythe.bench.report;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code report.html}: a self-contained page (inline SVG and CSS, no script, nothing fetched) drawn from a
 * {@code results.json}. Sections: throughput and P99 against clients per protocol (the shape of Scythe Figs. 22-25),
 * latency CDFs, the per-stage breakdown, transaction types, aborts by reason, verbs and CPU per transaction,
 * invariants, parameters and every run's numbers. A section whose fields a workload does not report (the micro
 * workloads have other fields) says so instead of drawing.
 */
public final class HtmlReport {
    public static final String REPORT_FILE = "report.html";
    /** The sections, by element id, in page order. */
    public static final List<String> SECTIONS = List.of("throughput", "p99", "cdf", "stages", "types", "aborts",
        "verbs", "invariants", "params", "runs");

    private static final String[] PALETTE = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    private static final int WIDTH = 640;
    private static final int HEIGHT = 320;
    private static final int LEFT = 70;
    private static final int RIGHT = 150;
    private static final int TOP = 20;
    private static final int BOTTOM = 45;

    private final JsonObject results;
    private final List<JsonObject> runs = new ArrayList<>();
    private final StringBuilder html = new StringBuilder(64 * 1024);

    private HtmlReport(final JsonObject results) {
        this.results = results;
        final JsonArray array = results.getJsonArray("runs", new JsonArray());
        for (int i = 0; i < array.size(); i++) {
            if (array.getValue(i) instanceof JsonObject run) {
                runs.add(run);
            }
        }
    }

    /** The page for {@code results} (a parsed results.json). */
    public static String render(final JsonObject results) {
        return new HtmlReport(results).page();
    }

    /** Writes {@code dir/report.html} from {@code results}. @return the file written */
    public static Path write(final Path dir, final JsonObject results) throws IOException {
        Files.createDirectories(dir);
        final Path file = dir.resolve(REPORT_FILE);
        Files.writeString(file, render(results), StandardCharsets.UTF_8);
        return file;
    }

    /**
     * Rebuilds {@code dir/report.html} from {@code dir/results.json} ({@code scythe report DIR}).
     *
     * @throws IllegalArgumentException when there is no results.json or it is not a results object
     */
    public static Path rebuild(final Path dir) throws IOException {
        final Path json = dir.resolve(BenchReport.RESULTS_FILE);
        final JsonObject results;
        try {
            results = new JsonObject(Files.readString(json, StandardCharsets.UTF_8));
        } catch (final NoSuchFileException e) {
            throw new IllegalArgumentException("no " + BenchReport.RESULTS_FILE + " in " + dir);
        } catch (final io.vertx.core.json.DecodeException | ClassCastException e) {
            throw new IllegalArgumentException(json + " is not valid JSON: " + e.getMessage());
        }
        if (!(results.getValue("runs") instanceof JsonArray)) {
            throw new IllegalArgumentException(json + " has no \"runs\" array: not a scythe bench results file");
        }
        return write(dir, results);
    }

    // ------------------------------------------------------------------------------------------------------ page

    private String page() {
        final String workload = results.getString("workload", "?");
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
            .append("<title>scythe bench: ").append(esc(workload)).append("</title><style>")
            .append("body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}")
            .append("h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;margin-top:2em}")
            .append("table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;")
            .append("text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}")
            .append(".ok{color:#2a2}.bad{color:#c22;font-weight:bold}.none{color:#888;font-style:italic}")
            .append("svg{display:block;margin:.5em 0}svg text{font:11px system-ui,sans-serif}")
            .append("nav a{margin-right:1em}</style></head><body>\n");
        html.append("<h1>scythe bench: ").append(esc(workload)).append("</h1>\n<p>")
            .append(runs.size()).append(" runs; created ").append(esc(results.getString("created", "?")));
        final JsonObject host = results.getJsonObject("host");
        if (host != null) {
            html.append("; ").append(esc(String.valueOf(host.getValue("cpus")))).append(" CPUs, Java ")
                .append(esc(String.valueOf(host.getValue("java")))).append(", ")
                .append(esc(String.valueOf(host.getValue("os"))));
        }
        html.append(".</p>\n<nav>");
        for (final String s : SECTIONS) {
            html.append("<a href=\"#").append(s).append("\">").append(s).append("</a>");
        }
        html.append("</nav>\n");
        throughput();
        p99();
        cdfs();
        stages();
        types();
        aborts();
        verbs();
        invariants();
        params();
        runTable();
        html.append("</body></html>\n");
        return html.toString();
    }

    private void section(final String id, final String title) {
        html.append("<section id=\"").append(id).append("\"><h2>").append(esc(title)).append("</h2>\n");
    }

    private void none(final String what) {
        html.append("<p class=\"none\">").append(esc(what)).append("</p>\n");
    }

    private void throughput() {
        section("throughput", "Throughput vs clients");
        vsClients(run -> number(run, "committed_per_s"), "committed/s");
        html.append("</section>\n");
    }

    private void p99() {
        section("p99", "P99 latency vs clients");
        vsClients(run -> {
            final JsonObject latency = run.getJsonObject("latency_us");
            return latency == null ? null : number(latency, "p99");
        }, "P99 latency (us)");
        html.append("</section>\n");
    }

    /** One line per protocol over the client counts of {@code value}. */
    private void vsClients(final java.util.function.Function<JsonObject, Double> value, final String yLabel) {
        final Map<String, List<double[]>> series = new LinkedHashMap<>();
        for (final JsonObject run : runs) {
            final Double y = value.apply(run);
            final Double x = number(run, "clients");
            if (y != null && x != null) {
                series.computeIfAbsent(String.valueOf(run.getValue("protocol")), p -> new ArrayList<>())
                    .add(new double[] {x, y});
            }
        }
        if (series.isEmpty()) {
            none("These results have no " + yLabel + " per run.");
            return;
        }
        final TreeSet<Double> xs = new TreeSet<>();
        series.values().forEach(points -> points.forEach(p -> xs.add(p[0])));
        final List<Double> categories = new ArrayList<>(xs);
        final Chart chart = new Chart("clients", yLabel, 0, Math.max(0, categories.size() - 1), 0, maxY(series));
        chart.categoricalX(categories);
        int color = 0;
        for (final Map.Entry<String, List<double[]>> s : series.entrySet()) {
            final List<double[]> points = new ArrayList<>();
            for (final double[] p : s.getValue()) {
                points.add(new double[] {categories.indexOf(p[0]), p[1]});
            }
            points.sort((a, b) -> Double.compare(a[0], b[0]));
            chart.line(s.getKey(), PALETTE[color++ % PALETTE.length], points, x -> fmt(categories.get((int) x)));
        }
        html.append(chart.svg());
    }

    private static double maxY(final Map<String, List<double[]>> series) {
        double max = 0;
        for (final List<double[]> points : series.values()) {
            for (final double[] p : points) {
                max = Math.max(max, p[1]);
            }
        }
        return max;
    }

    /** Latency against percentile on a nines scale (90, 99, 99.9, ...), log latency; one chart per client count. */
    private void cdfs() {
        section("cdf", "Latency CDFs");
        final Map<Object, List<JsonObject>> byClients = new LinkedHashMap<>();
        for (final JsonObject run : runs) {
            if (run.getValue("latency_cdf_us") instanceof JsonArray a && !a.isEmpty()) {
                byClients.computeIfAbsent(run.getValue("clients"), c -> new ArrayList<>()).add(run);
            }
        }
        if (byClients.isEmpty()) {
            none("These results have no latency_cdf_us.");
        }
        html.append("<p>x: percentile on a nines scale; y: latency in us, log scale.</p>\n");
        for (final Map.Entry<Object, List<JsonObject>> e : byClients.entrySet()) {
            html.append("<h3>").append(esc(String.valueOf(e.getKey()))).append(" clients</h3>\n");
            double minY = Double.MAX_VALUE;
            double maxY = 0;
            final Map<String, List<double[]>> series = new LinkedHashMap<>();
            for (final JsonObject run : e.getValue()) {
                final List<double[]> points = new ArrayList<>();
                final JsonArray cdf = run.getJsonArray("latency_cdf_us");
                for (int i = 0; i < cdf.size(); i++) {
                    if (!(cdf.getValue(i) instanceof JsonArray point) || point.size() < 2) {
                        continue;
                    }
                    final double p = ((Number) point.getValue(0)).doubleValue();
                    final double us = Math.max(0.001, ((Number) point.getValue(1)).doubleValue());
                    points.add(new double[] {nines(p), Math.log10(us)});
                    minY = Math.min(minY, us);
                    maxY = Math.max(maxY, us);
                }
                series.put(String.valueOf(run.getValue("protocol")), points);
            }
            final Chart chart = new Chart("percentile", "latency (us)", 0, 5.5,
                Math.floor(Math.log10(minY)), Math.ceil(Math.log10(Math.max(maxY, minY * 10))));
            chart.logY();
            chart.ninesX();
            int color = 0;
            for (final Map.Entry<String, List<double[]>> s : series.entrySet()) {
                chart.line(s.getKey(), PALETTE[color++ % PALETTE.length], s.getValue(),
                    x -> fmt(100 * (1 - Math.pow(10, -x))) + " %");
            }
            html.append(chart.svg());
        }
        html.append("</section>\n");
    }

    /** The x position of percentile {@code p} on the nines scale: 0 at 0 %, 1 at 90 %, 2 at 99 %, ... capped. */
    static double nines(final double p) {
        return p >= 100 ? 5.5 : Math.min(5.5, -Math.log10(1 - p / 100));
    }

    private void stages() {
        section("stages", "Per-stage breakdown (mean us per committed transaction)");
        stackedBars("stages_us", "us per commit", Set.of());
        html.append("</section>\n");
    }

    private void types() {
        section("types", "Transaction types");
        final List<JsonObject> typed = runsWith("by_type");
        if (typed.isEmpty()) {
            none("These results have no by_type.");
            html.append("</section>\n");
            return;
        }
        final Bars bars = new Bars("committed/s");
        for (final JsonObject run : typed) {
            final Map<String, Double> segments = new LinkedHashMap<>();
            run.getJsonObject("by_type").forEach(t -> {
                if (t.getValue() instanceof JsonObject type) {
                    segments.put(t.getKey(), orZero(number(type, "committed_per_s")));
                }
            });
            bars.add(label(run), segments);
        }
        html.append(bars.svg());
        html.append("<table><tr><th class=\"l\">run</th><th class=\"l\">type</th><th>committed/s</th>")
            .append("<th>committed</th><th>abort rate</th><th>gave up</th><th>user rollbacks</th>")
            .append("<th>P50 us</th><th>P99 us</th><th>P99.9 us</th></tr>\n");
        for (final JsonObject run : typed) {
            run.getJsonObject("by_type").forEach(t -> {
                if (!(t.getValue() instanceof JsonObject type)) {
                    return;
                }
                final JsonObject latency = type.getJsonObject("latency_us", new JsonObject());
                html.append("<tr><td class=\"l\">").append(esc(label(run))).append("</td><td class=\"l\">")
                    .append(esc(t.getKey())).append("</td>");
                cells(type.getValue("committed_per_s"), type.getValue("committed"), type.getValue("abort_rate"),
                    type.getValue("gave_up"), type.getValue("user_rollbacks"), latency.getValue("p50"),
                    latency.getValue("p99"), latency.getValue("p999"));
                html.append("</tr>\n");
            });
        }
        html.append("</table></section>\n");
    }

    private void aborts() {
        section("aborts", "Aborts by reason (aborted attempts)");
        // "user" rollbacks (SmallBank's SendPayment without funds) are outcomes, not conflicts: listed, not drawn.
        stackedBars("aborts_by_reason", "aborted attempts (user rollbacks not drawn)", Set.of("user"));
        final List<JsonObject> with = runsWith("aborts_by_reason");
        if (!with.isEmpty()) {
            html.append("<table><tr><th class=\"l\">run</th><th>abort rate</th><th class=\"l\">by reason</th>")
                .append("</tr>\n");
            for (final JsonObject run : with) {
                html.append("<tr><td class=\"l\">").append(esc(label(run))).append("</td>");
                cells(run.getValue("abort_rate"));
                html.append("<td class=\"l\">").append(esc(run.getJsonObject("aborts_by_reason").encode()))
                    .append("</td></tr>\n");
            }
            html.append("</table>\n");
        }
        html.append("</section>\n");
    }

    private void verbs() {
        section("verbs", "Verbs, bytes and CPU per committed transaction");
        final List<JsonObject> counted = runsWith("verbs_per_txn");
        if (counted.isEmpty()) {
            none("These results have no verbs_per_txn.");
            html.append("</section>\n");
            return;
        }
        final Bars bars = new Bars("verbs and RPC calls per commit");
        for (final JsonObject run : counted) {
            final Map<String, Double> segments = new LinkedHashMap<>();
            final JsonObject perTxn = run.getJsonObject("verbs_per_txn");
            perTxn.forEach(e -> {
                if (!"total".equals(e.getKey()) && !"doorbells".equals(e.getKey()) && !"rpc".equals(e.getKey())
                    && !"rpc_buckets".equals(e.getKey()) && e.getValue() instanceof Number n) {
                    segments.put(e.getKey(), n.doubleValue());
                }
            });
            // RPC calls by service (lock requests, address lookups, ...), or all of them as one segment.
            final JsonObject services = perTxn.getJsonObject("rpc_by_service");
            if (services != null && !services.isEmpty()) {
                services.forEach(e -> segments.put("rpc " + e.getKey(), ((Number) e.getValue()).doubleValue()));
            } else if (perTxn.getValue("rpc") instanceof Number n) {
                segments.put("rpc", n.doubleValue());
            }
            bars.add(label(run), segments);
        }
        html.append(bars.svg());
        html.append("<table><tr><th class=\"l\">run</th><th>verbs</th><th>doorbells</th><th>bytes</th>")
            .append("<th>RPC calls</th><th>RPC bytes</th><th>CPU us (process)</th><th>CPU us (loops)</th>")
            .append("<th>loop bytes allocated</th><th>cores busy</th></tr>\n");
        for (final JsonObject run : counted) {
            final JsonObject v = run.getJsonObject("verbs_per_txn");
            final JsonObject b = run.getJsonObject("bytes_per_txn", new JsonObject());
            html.append("<tr><td class=\"l\">").append(esc(label(run))).append("</td>");
            cells(v.getValue("total"), v.getValue("doorbells"), b.getValue("total"), v.getValue("rpc"),
                b.getValue("rpc"), run.getValue("cpu_us_per_txn"), run.getValue("loop_cpu_us_per_txn"),
                run.getValue("loop_alloc_bytes_per_txn"), run.getValue("cpu_cores"));
            html.append("</tr>\n");
        }
        html.append("</table></section>\n");
    }

    private void invariants() {
        section("invariants", "Invariants");
        if (runs.isEmpty()) {
            none("No runs.");
            html.append("</section>\n");
            return;
        }
        // A strip of squares, green where the run's invariants held, red where not, grey where not reported.
        final int size = 18;
        final int perRow = 30;
        final int rows = (runs.size() + perRow - 1) / perRow;
        html.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(perRow * (size + 4))
            .append("\" height=\"").append(rows * (size + 4)).append("\">");
        for (int i = 0; i < runs.size(); i++) {
            final Object ok = runs.get(i).getValue("invariants_ok");
            final String fill = Boolean.TRUE.equals(ok) ? "#2a2" : Boolean.FALSE.equals(ok) ? "#c22" : "#bbb";
            html.append("<rect x=\"").append(i % perRow * (size + 4)).append("\" y=\"")
                .append(i / perRow * (size + 4)).append("\" width=\"").append(size).append("\" height=\"")
                .append(size).append("\" fill=\"").append(fill).append("\"><title>").append(esc(label(runs.get(i))))
                .append(": ").append(esc(String.valueOf(ok))).append("</title></rect>");
        }
        html.append("</svg>\n<table><tr><th class=\"l\">run</th><th class=\"l\">invariants</th>")
            .append("<th class=\"l\">details</th></tr>\n");
        for (final JsonObject run : runs) {
            final Object ok = run.getValue("invariants_ok");
            html.append("<tr><td class=\"l\">").append(esc(label(run))).append("</td><td class=\"l ")
                .append(Boolean.TRUE.equals(ok) ? "ok\">ok" : Boolean.FALSE.equals(ok) ? "bad\">VIOLATED"
                    : "none\">not reported").append("</td><td class=\"l\">");
            final JsonObject conserved = run.getJsonObject("conserved");
            if (conserved != null) {
                html.append(esc(conserved.getString("quantity", "quantity"))).append(": initial ")
                    .append(esc(String.valueOf(conserved.getValue("initial")))).append(" + committed ")
                    .append(esc(String.valueOf(conserved.getValue("committed_delta")))).append(" = final ")
                    .append(esc(String.valueOf(conserved.getValue("final")))).append("; ");
            }
            if (run.containsKey("locks_left_held")) {
                html.append("locks left held ").append(esc(String.valueOf(run.getValue("locks_left_held"))));
            }
            html.append("</td></tr>\n");
        }
        html.append("</table></section>\n");
    }

    private void params() {
        section("params", "Parameters");
        final JsonObject params = results.getJsonObject("params", new JsonObject());
        if (params.isEmpty()) {
            none("No parameters recorded.");
        } else {
            html.append("<table>");
            params.forEach(e -> html.append("<tr><th class=\"l\">").append(esc(e.getKey()))
                .append("</th><td class=\"l\">").append(esc(String.valueOf(e.getValue()))).append("</td></tr>\n"));
            html.append("</table>\n");
        }
        html.append("</section>\n");
    }

    /** Every run's scalar fields (nested objects are drawn above). */
    private void runTable() {
        section("runs", "Runs");
        final Set<String> columns = new LinkedHashSet<>();
        for (final JsonObject run : runs) {
            run.forEach(e -> {
                if (!(e.getValue() instanceof JsonObject) && !(e.getValue() instanceof JsonArray)) {
                    columns.add(e.getKey());
                }
            });
            if (run.getValue("latency_us") instanceof JsonObject) {
                columns.add("latency_us.p50");
                columns.add("latency_us.p99");
                columns.add("latency_us.p999");
            }
        }
        html.append("<table><tr>");
        columns.forEach(c -> html.append("<th>").append(esc(c)).append("</th>"));
        html.append("</tr>\n");
        for (final JsonObject run : runs) {
            html.append("<tr>");
            for (final String c : columns) {
                Object v = run.getValue(c);
                if (c.startsWith("latency_us.") && run.getValue("latency_us") instanceof JsonObject l) {
                    v = l.getValue(c.substring("latency_us.".length()));
                }
                html.append(v instanceof Number || v == null ? "<td>" : "<td class=\"l\">")
                    .append(v == null ? "" : esc(v instanceof Number n ? fmt(n.doubleValue()) : String.valueOf(v)))
                    .append("</td>");
            }
            html.append("</tr>\n");
        }
        html.append("</table></section>\n");
    }

    /** Horizontal stacked bars, one per run, of the numeric members of the run's object {@code field}. */
    private void stackedBars(final String field, final String unit, final Set<String> leftOut) {
        final List<JsonObject> with = runsWith(field);
        if (with.isEmpty()) {
            none("These results have no " + field + ".");
            return;
        }
        final Bars bars = new Bars(unit);
        for (final JsonObject run : with) {
            final Map<String, Double> segments = new LinkedHashMap<>();
            run.getJsonObject(field).forEach(e -> {
                if (e.getValue() instanceof Number n && !leftOut.contains(e.getKey())) {
                    segments.put(e.getKey(), n.doubleValue());
                }
            });
            bars.add(label(run), segments);
        }
        html.append(bars.svg());
    }

    private List<JsonObject> runsWith(final String field) {
        final List<JsonObject> with = new ArrayList<>();
        for (final JsonObject run : runs) {
            if (run.getValue(field) instanceof JsonObject) {
                with.add(run);
            }
        }
        return with;
    }

    private void cells(final Object... values) {
        for (final Object v : values) {
            html.append("<td>").append(v instanceof Number n ? fmt(n.doubleValue()) : v == null ? ""
                : esc(String.valueOf(v))).append("</td>");
        }
    }

    private static String label(final JsonObject run) {
        return run.getValue("protocol") + " @" + run.getValue("clients");
    }

    private static Double number(final JsonObject o, final String key) {
        return o.getValue(key) instanceof Number n ? n.doubleValue() : null;
    }

    private static double orZero(final Double d) {
        return d == null ? 0 : d;
    }

    static String fmt(final double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return String.format(Locale.ROOT, "%,d", (long) v);
        }
        final double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%,.1f" : a >= 1 ? "%.2f" : "%.3g", v);
    }

    static String esc(final String s) {
        final StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    /** A step of 1, 2 or 5 times a power of ten giving about {@code ticks} ticks over {@code range}. */
    static double niceStep(final double range, final int ticks) {
        if (range <= 0) {
            return 1;
        }
        final double raw = range / ticks;
        final double power = Math.pow(10, Math.floor(Math.log10(raw)));
        final double f = raw / power;
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
    }

    // ---------------------------------------------------------------------------------------------- line chart

    /** An SVG line chart with a legend on the right; y from 0 (or a log range), x linear over its range. */
    private static final class Chart {
        private final String xLabel;
        private final String yLabel;
        private final double minX;
        private final double maxX;
        private final double minY;
        private final double maxY;
        private boolean logY;
        private List<Double> categories;
        private boolean ninesX;
        private final StringBuilder body = new StringBuilder();
        private final StringBuilder legend = new StringBuilder();
        private int series;

        Chart(final String xLabel, final String yLabel, final double minX, final double maxX, final double minY,
              final double maxY) {
            this.xLabel = xLabel;
            this.yLabel = yLabel;
            this.minX = minX;
            this.maxX = maxX;
            this.minY = minY;
            final double top = maxY <= minY ? minY + 1 : maxY;
            final double step = niceStep(top - minY, 5);
            this.maxY = minY + Math.ceil((top - minY) / step) * step;
        }

        void categoricalX(final List<Double> values) {
            this.categories = values;
        }

        void logY() {
            this.logY = true;
        }

        void ninesX() {
            this.ninesX = true;
        }

        private double px(final double x) {
            final double span = maxX - minX;
            final double inner = WIDTH - LEFT - RIGHT - 30;
            return LEFT + 15 + (span == 0 ? inner / 2 : (x - minX) / span * inner);
        }

        private double py(final double y) {
            return HEIGHT - BOTTOM - (y - minY) / (maxY - minY) * (HEIGHT - TOP - BOTTOM);
        }

        void line(final String name, final String color, final List<double[]> points,
                  final java.util.function.DoubleFunction<String> xText) {
            final StringBuilder path = new StringBuilder();
            for (final double[] p : points) {
                path.append(path.length() == 0 ? "M" : " L").append(num(px(p[0]))).append(',').append(num(py(p[1])));
            }
            body.append("<path d=\"").append(path).append("\" fill=\"none\" stroke=\"").append(color)
                .append("\" stroke-width=\"2\"/>");
            for (final double[] p : points) {
                body.append("<circle cx=\"").append(num(px(p[0]))).append("\" cy=\"").append(num(py(p[1])))
                    .append("\" r=\"3.5\" fill=\"").append(color).append("\"><title>").append(esc(name))
                    .append(": ").append(esc(xText.apply(p[0]))).append(" -> ")
                    .append(fmt(logY ? Math.pow(10, p[1]) : p[1])).append("</title></circle>");
            }
            final int y = TOP + 14 * series++;
            legend.append("<rect x=\"").append(WIDTH - RIGHT + 10).append("\" y=\"").append(y)
                .append("\" width=\"12\" height=\"10\" fill=\"").append(color).append("\"/><text x=\"")
                .append(WIDTH - RIGHT + 26).append("\" y=\"").append(y + 9).append("\">").append(esc(name))
                .append("</text>");
        }

        String svg() {
            final StringBuilder s = new StringBuilder();
            s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
                .append(HEIGHT).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT).append("\">");
            // y grid and labels
            if (logY) {
                for (double e = minY; e <= maxY + 1e-9; e++) {
                    yTick(s, e, fmt(Math.pow(10, e)));
                }
            } else {
                final double step = niceStep(maxY - minY, 5);
                for (double v = minY; v <= maxY + step / 1000; v += step) {
                    yTick(s, v, fmt(v));
                }
            }
            // x ticks
            if (categories != null) {
                for (int i = 0; i < categories.size(); i++) {
                    xTick(s, i, fmt(categories.get(i)));
                }
            } else if (ninesX) {
                final String[] labels = {"0", "90", "99", "99.9", "99.99", "99.999"};
                for (int i = 0; i < labels.length; i++) {
                    xTick(s, i, labels[i]);
                }
                xTick(s, 5.5, "max");
            }
            s.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(HEIGHT - BOTTOM).append("\" x2=\"")
                .append(WIDTH - RIGHT).append("\" y2=\"").append(HEIGHT - BOTTOM).append("\" stroke=\"#444\"/>");
            s.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(TOP).append("\" x2=\"").append(LEFT)
                .append("\" y2=\"").append(HEIGHT - BOTTOM).append("\" stroke=\"#444\"/>");
            s.append("<text x=\"").append((LEFT + WIDTH - RIGHT) / 2).append("\" y=\"").append(HEIGHT - 8)
                .append("\" text-anchor=\"middle\">").append(esc(xLabel)).append("</text>");
            s.append("<text transform=\"translate(14,").append((TOP + HEIGHT - BOTTOM) / 2)
                .append(") rotate(-90)\" text-anchor=\"middle\">").append(esc(yLabel)).append("</text>");
            s.append(body).append(legend).append("</svg>\n");
            return s.toString();
        }

        private void yTick(final StringBuilder s, final double v, final String text) {
            final String y = num(py(v));
            s.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(y).append("\" x2=\"")
                .append(WIDTH - RIGHT).append("\" y2=\"").append(y).append("\" stroke=\"#eee\"/><text x=\"")
                .append(LEFT - 5).append("\" y=\"").append(y).append("\" dy=\"4\" text-anchor=\"end\">")
                .append(esc(text)).append("</text>");
        }

        private void xTick(final StringBuilder s, final double x, final String text) {
            s.append("<text x=\"").append(num(px(x))).append("\" y=\"").append(HEIGHT - BOTTOM + 16)
                .append("\" text-anchor=\"middle\">").append(esc(text)).append("</text>");
        }
    }

    // ------------------------------------------------------------------------------------------ stacked bars

    /** Horizontal stacked bars: one bar per run, one colour per segment key, a legend on the right. */
    private static final class Bars {
        private static final int BAR = 18;
        private static final int LABEL = 150;
        private final String unit;
        private final List<String> labels = new ArrayList<>();
        private final List<Map<String, Double>> bars = new ArrayList<>();
        private final Set<String> keys = new LinkedHashSet<>();

        Bars(final String unit) {
            this.unit = unit;
        }

        void add(final String label, final Map<String, Double> segments) {
            labels.add(label);
            bars.add(segments);
            keys.addAll(segments.keySet());
        }

        String svg() {
            double max = 0;
            for (final Map<String, Double> bar : bars) {
                double sum = 0;
                for (final double v : bar.values()) {
                    sum += Math.max(0, v);
                }
                max = Math.max(max, sum);
            }
            final double step = niceStep(max, 5);
            final double top = max <= 0 ? 1 : Math.ceil(max / step) * step;
            final int plot = WIDTH - LABEL - RIGHT;
            final int height = TOP + bars.size() * (BAR + 6) + BOTTOM;
            final List<String> keyList = new ArrayList<>(keys);
            final StringBuilder s = new StringBuilder();
            s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
                .append(Math.max(height, TOP + 14 * keyList.size() + 10)).append("\">");
            for (double v = 0; v <= top + step / 1000; v += step) {
                final String x = num(LABEL + v / top * plot);
                s.append("<line x1=\"").append(x).append("\" y1=\"").append(TOP).append("\" x2=\"").append(x)
                    .append("\" y2=\"").append(height - BOTTOM).append("\" stroke=\"#eee\"/><text x=\"").append(x)
                    .append("\" y=\"").append(height - BOTTOM + 14).append("\" text-anchor=\"middle\">")
                    .append(fmt(v)).append("</text>");
            }
            s.append("<text x=\"").append(LABEL + plot / 2).append("\" y=\"").append(height - 10)
                .append("\" text-anchor=\"middle\">").append(esc(unit)).append("</text>");
            for (int i = 0; i < bars.size(); i++) {
                final int y = TOP + i * (BAR + 6);
                s.append("<text x=\"").append(LABEL - 6).append("\" y=\"").append(y + BAR - 5)
                    .append("\" text-anchor=\"end\">").append(esc(labels.get(i))).append("</text>");
                double at = 0;
                for (final Map.Entry<String, Double> seg : bars.get(i).entrySet()) {
                    final double v = Math.max(0, seg.getValue());
                    if (v == 0) {
                        continue;
                    }
                    s.append("<rect x=\"").append(num(LABEL + at / top * plot)).append("\" y=\"").append(y)
                        .append("\" width=\"").append(num(Math.max(0.5, v / top * plot))).append("\" height=\"")
                        .append(BAR).append("\" fill=\"")
                        .append(PALETTE[keyList.indexOf(seg.getKey()) % PALETTE.length]).append("\"><title>")
                        .append(esc(labels.get(i))).append(" ").append(esc(seg.getKey())).append(": ")
                        .append(fmt(seg.getValue())).append("</title></rect>");
                    at += v;
                }
            }
            for (int k = 0; k < keyList.size(); k++) {
                final int y = TOP + 14 * k;
                s.append("<rect x=\"").append(WIDTH - RIGHT + 10).append("\" y=\"").append(y)
                    .append("\" width=\"12\" height=\"10\" fill=\"").append(PALETTE[k % PALETTE.length])
                    .append("\"/><text x=\"").append(WIDTH - RIGHT + 26).append("\" y=\"").append(y + 9)
                    .append("\">").append(esc(keyList.get(k))).append("</text>");
            }
            s.append("</svg>\n");
            return s.toString();
        }
    }

    private static String num(final double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
