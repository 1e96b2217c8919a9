package io.scythe.bench.report;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Two {@code results.json} side by side ({@code scythe report A B}): before and after a change, or one protocol against
 * another. Runs are paired by protocol and client count; when each side ran one protocol and they differ (protocol vs
 * protocol), by client count alone. Each pair gets every figure both sides have, with B/A.
 *
 * <p>Figures compared: throughput, abort rate, latency percentiles, attempts per commit, and every per-transaction cost
 * the results carry (any numeric field ending in {@code _per_txn} or {@code _per_commit}: verbs, bytes, CPU,
 * allocation), so a figure a newer bench adds is compared without touching this class.
 */
public final class Comparison {
    /** One figure of a run: where it is in the run's JSON, and its label. */
    private record Figure(String label, String[] path) {
        Double of(final JsonObject run) {
            Object v = run;
            for (final String key : path) {
                if (!(v instanceof JsonObject o) || !o.containsKey(key)) {
                    return null;
                }
                v = o.getValue(key);
            }
            return v instanceof Number n ? n.doubleValue() : null;
        }
    }

    private static final List<Figure> FIXED = List.of(
        new Figure("committed/s", new String[] {"committed_per_s"}),
        new Figure("abort rate", new String[] {"abort_rate"}),
        new Figure("P50 µs", new String[] {"latency_us", "p50"}),
        new Figure("P99 µs", new String[] {"latency_us", "p99"}),
        new Figure("P99.9 µs", new String[] {"latency_us", "p999"}),
        new Figure("attempts/commit", new String[] {"attempts_per_commit"}));

    /** A pair of runs and its rows: figure, A, B, B/A. */
    public record Pair(String key, JsonObject a, JsonObject b, List<Row> rows) {
    }

    /** A figure of both runs. */
    public record Row(String figure, double a, double b) {
        /** B/A; NaN when A is 0 (no ratio). */
        public double ratio() {
            return a == 0 ? Double.NaN : b / a;
        }
    }

    private final String workloadA;
    private final String workloadB;
    private final List<Pair> pairs = new ArrayList<>();
    private final List<String> unpaired = new ArrayList<>();

    private Comparison(final JsonObject a, final JsonObject b) {
        workloadA = a.getString("workload", "?");
        workloadB = b.getString("workload", "?");
        final Map<String, JsonObject> runsA = runs(a);
        final Map<String, JsonObject> runsB = runs(b);
        final TreeSet<String> protocolsA = protocols(runsA);
        final TreeSet<String> protocolsB = protocols(runsB);
        // One protocol a side, different ones: protocol vs protocol, paired by client count.
        final boolean acrossProtocols = protocolsA.size() == 1 && protocolsB.size() == 1
            && !protocolsA.equals(protocolsB);
        final Map<String, JsonObject> byKeyB = new LinkedHashMap<>();
        for (final JsonObject run : runsB.values()) {
            byKeyB.put(acrossProtocols ? "clients=" + run.getValue("clients") : key(run), run);
        }
        for (final JsonObject runA : runsA.values()) {
            final String k = acrossProtocols ? "clients=" + runA.getValue("clients") : key(runA);
            final JsonObject runB = byKeyB.remove(k);
            if (runB == null) {
                unpaired.add("A only: " + key(runA));
                continue;
            }
            final String label = acrossProtocols ? runA.getString("protocol") + " vs " + runB.getString("protocol")
                + ", " + k : k;
            pairs.add(new Pair(label, runA, runB, rows(runA, runB)));
        }
        for (final JsonObject runB : byKeyB.values()) {
            unpaired.add("B only: " + key(runB));
        }
    }

    /** Compares results {@code a} (the baseline) and {@code b}. */
    public static Comparison of(final JsonObject a, final JsonObject b) {
        for (final JsonObject r : List.of(a, b)) {
            if (!(r.getValue("runs") instanceof JsonArray)) {
                throw new IllegalArgumentException("not a results.json of scythe bench: no \"runs\" array");
            }
        }
        return new Comparison(a, b);
    }

    private static Map<String, JsonObject> runs(final JsonObject results) {
        final Map<String, JsonObject> runs = new LinkedHashMap<>();
        for (final Object o : results.getJsonArray("runs")) {
            if (o instanceof JsonObject run) {
                runs.put(key(run), run);
            }
        }
        return runs;
    }

    private static TreeSet<String> protocols(final Map<String, JsonObject> runs) {
        final TreeSet<String> protocols = new TreeSet<>();
        for (final JsonObject run : runs.values()) {
            protocols.add(run.getString("protocol"));
        }
        return protocols;
    }

    private static String key(final JsonObject run) {
        return run.getString("protocol") + ", clients=" + run.getValue("clients");
    }

    private static List<Row> rows(final JsonObject a, final JsonObject b) {
        final List<Figure> figures = new ArrayList<>(FIXED);
        for (final String field : new TreeSet<>(a.fieldNames())) {
            if ((field.endsWith("_per_txn") || field.endsWith("_per_commit")) && a.getValue(field) instanceof Number) {
                figures.add(new Figure(field.replace('_', ' '), new String[] {field}));
            }
        }
        final List<Row> rows = new ArrayList<>();
        for (final Figure f : figures) {
            final Double va = f.of(a);
            final Double vb = f.of(b);
            if (va != null && vb != null) {
                rows.add(new Row(f.label(), va, vb));
            }
        }
        return rows;
    }

    /** The pairs, in A's run order. */
    public List<Pair> pairs() {
        return pairs;
    }

    /** Runs one side has and the other does not. */
    public List<String> unpaired() {
        return unpaired;
    }

    /** The comparison as Markdown: a table per pair, then what could not be paired. */
    public String markdown(final String nameA, final String nameB) {
        final StringBuilder out = new StringBuilder();
        out.append("# ").append(nameB).append(" against ").append(nameA).append("\n\n");
        if (!workloadA.equals(workloadB)) {
            out.append("Different workloads: A ran ").append(workloadA).append(", B ran ").append(workloadB)
                .append(".\n\n");
        }
        for (final Pair p : pairs) {
            out.append("## ").append(p.key()).append("\n\n| figure | A | B | B/A |\n|---|---:|---:|---:|\n");
            for (final Row r : p.rows()) {
                out.append("| ").append(r.figure()).append(" | ").append(number(r.a())).append(" | ")
                    .append(number(r.b())).append(" | ")
                    .append(Double.isNaN(r.ratio()) ? "–" : String.format(Locale.ROOT, "%.2f×", r.ratio()))
                    .append(" |\n");
            }
            out.append('\n');
        }
        if (pairs.isEmpty()) {
            out.append("No run of A has a counterpart in B (runs pair by protocol and client count).\n\n");
        }
        for (final String u : unpaired) {
            out.append("- ").append(u).append('\n');
        }
        return out.toString();
    }

    private static String number(final double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.4g", v);
    }
}
