package io.scythe.cli;

import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code scythe reproduce FIGURE...}: runs the simulator commands behind the paper figures the project reproduces and
 * writes one report with the paper's numbers beside ours. Each figure is a {@code scythe sim} command line (printed in
 * the report, so any row can be re-run by hand) at the paper's topology, and a reading of its results.json into the
 * figures the paper states.
 */
@Command(name = "reproduce", mixinStandardHelpOptions = true,
    description = {"Runs the simulator behind paper figures and writes DIR/reproduce.md: for each figure the paper's "
        + "numbers beside ours, the shape check, and the exact scythe sim command (re-runnable by hand).",
        "Figures: table1 (Scythe Table 1: CAS uniform vs Zipf), fig22 (SmallBank), fig23 (TPC-C), fig24 (YCSB 3:7), "
            + "fig25 (YCSB write-only), fig27 (Takeout Lock vs CAS lock). Default: all. Not yet: Table 2 (queue "
            + "lengths), Fig. 26 (latency decomposition), Fig. 28 (TSO latency)."})
public final class ReproduceCommand implements Callable<Integer> {
    @Parameters(paramLabel = "FIGURE", arity = "0..*", description = "Figures to reproduce (default: all).")
    List<String> figures = new ArrayList<>();

    @Accepts(value = "a directory to write")
    @Option(names = "--out", paramLabel = "DIR", defaultValue = "results/reproduce",
        description = "Where the report and each figure's results go (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--quick", description = "Shorter runs and fewer points (a smoke run; the shapes are noisier).")
    boolean quick;

    /** Scythe's evaluation topology (§5.1): one CN with 8 loops, 3 MNs, a TSO with 2 proxies. */
    private static final List<String> PAPER_TOPOLOGY = List.of("--loops", "8", "--mns", "3", "--tso-proxies", "2");

    /** A figure: its sim command, the paper's statement of it, and how our results are read against it. */
    private record Figure(String id, String title, String paper, List<String> args, List<String> quickArgs,
                          Reading reading) {
    }

    @FunctionalInterface
    private interface Reading {
        /** Rows of (point, figure, ours) and whether the paper's shape holds. */
        Result read(JsonObject results);
    }

    private record Result(List<String[]> rows, boolean shapeHolds, String shape) {
    }

    private static final Map<String, Figure> FIGURES = new LinkedHashMap<>();

    static {
        add(new Figure("table1", "Scythe Table 1: RDMA CAS under uniform and Zipfian access (8 threads)",
            "uniform 1.76 Mops, P50 8.4 µs, P90 16.3 µs; Zipfian 0.42 Mops, P50 11.7 µs, P90 72.9 µs "
                + "(Zipf/uniform throughput 0.24)",
            // 8 threads: 8 clients over 8 loops of one CN, against one MN's NIC (Table 1's setting).
            List.of("--workload", "cas", "--locks", "1000", "--thetas", "0,0.99", "--loops", "8", "--clients", "8",
                "--mns", "1", "--warmup", "200us", "--duration", "4ms"),
            List.of("--workload", "cas", "--locks", "1000", "--thetas", "0,0.99", "--loops", "8", "--clients", "8",
                "--mns", "1", "--warmup", "100us", "--duration", "1ms"),
            ReproduceCommand::table1));
        add(vs("fig22", "Scythe Fig. 22: SmallBank, throughput and latency against clients",
            "P99 up to 58 % lower than FaRMv2 and 30 % lower than FORD; throughput +15–30 % over FaRMv2, +10–20 % "
                + "over FORD", List.of("--workload", "smallbank")));
        add(vs("fig23", "Scythe Fig. 23: TPC-C, throughput and latency against clients",
            "P99 up to 63 % lower than FaRMv2 and 45 % lower than FORD; throughput +15–30 % over FaRMv2, +10–20 % "
                + "over FORD", List.of("--workload", "tpcc")));
        add(vs("fig24", "Scythe Fig. 24: YCSB read:write 3:7",
            "tail latency increase cut by about 50 % against FaRMv2 and 30 % against FORD at 128 clients",
            List.of("--workload", "ycsb", "--write-ratio", "0.7")));
        add(vs("fig25", "Scythe Fig. 25: YCSB write-only", "up to 62 % (FaRMv2) and 46 % (FORD) lower P50/P99",
            List.of("--workload", "ycsb", "--write-ratio", "1.0")));
        add(new Figure("fig27", "Scythe Fig. 27: Takeout Lock vs CAS lock, 64 threads, lock held 25 µs",
            "Takeout lower at every θ; P50 17.1–31.7 % lower, P99 16–31.4 % lower as θ grows",
            List.of("--workload", "lock", "--protocols", "takeout,cas-lock", "--clients", "64", "--hold", "25us",
                "--thetas", "0.5,0.7,0.9,0.99,1.2"),
            List.of("--workload", "lock", "--protocols", "takeout,cas-lock", "--clients", "64", "--hold", "25us",
                "--thetas", "0.5,0.99,1.2", "--duration", "1ms"),
            ReproduceCommand::fig27));
    }

    private static void add(final Figure f) {
        FIGURES.put(f.id(), f);
    }

    private static Figure vs(final String id, final String title, final String paper, final List<String> workload) {
        final List<String> full = new ArrayList<>(workload);
        full.addAll(List.of("--protocols", "scythe,ford-occ,farm-occ", "--clients", "16,64,128", "--theta", "0.99"));
        full.addAll(PAPER_TOPOLOGY);
        final List<String> quick = new ArrayList<>(workload);
        quick.addAll(List.of("--protocols", "scythe,ford-occ,farm-occ", "--clients", "16,128", "--theta", "0.99",
            "--duration", "1ms"));
        quick.addAll(PAPER_TOPOLOGY);
        return new Figure(id, title, paper, full, quick, ReproduceCommand::scytheVsBaselines);
    }

    @Override
    public Integer call() throws Exception {
        final List<String> wanted = figures.isEmpty() ? new ArrayList<>(FIGURES.keySet()) : figures;
        for (final String id : wanted) {
            if (!FIGURES.containsKey(id)) {
                throw new IllegalArgumentException("no figure " + id + "; known: " + String.join(", ",
                    FIGURES.keySet()));
            }
        }
        Files.createDirectories(out);
        final StringBuilder md = new StringBuilder("# Paper figures reproduced in the simulator\n\n")
            .append("Virtual time on the default cost model; the paper's numbers are from its hardware (ConnectX-5, "
                + "its topology). What is compared is the shape: who is ahead, and by about how much.")
            .append(quick ? " **Quick run** (shorter, fewer points): shapes only roughly." : "").append("\n\n");
        int held = 0;
        for (final String id : wanted) {
            final Figure f = FIGURES.get(id);
            final Path dir = out.resolve(id);
            final List<String> args = new ArrayList<>(List.of("sim"));
            args.addAll(quick ? f.quickArgs() : f.args());
            args.addAll(List.of("--out", dir.toString()));
            System.out.println("== " + f.title() + "\n   scythe " + String.join(" ", args));
            final int code = ScytheCommand.commandLine().execute(args.toArray(String[]::new));
            if (code != 0) {
                throw new IllegalStateException("scythe " + String.join(" ", args) + " exited with " + code);
            }
            final Result r = f.reading().read(new JsonObject(Files.readString(dir.resolve("results.json"))));
            held += r.shapeHolds() ? 1 : 0;
            md.append("## ").append(f.title()).append("\n\n").append("Paper: ").append(f.paper()).append("\n\n")
                .append("| point | figure | ours |\n|---|---|---:|\n");
            for (final String[] row : r.rows()) {
                md.append("| ").append(row[0]).append(" | ").append(row[1]).append(" | ").append(row[2])
                    .append(" |\n");
            }
            md.append("\nShape: ").append(r.shape()).append(" — **").append(r.shapeHolds() ? "holds" : "does not hold")
                .append("**.\n\n`scythe ").append(String.join(" ", args)).append("`\n\n");
        }
        md.append("Shapes that hold: ").append(held).append(" of ").append(wanted.size()).append(".\n");
        final Path report = out.resolve("reproduce.md");
        Files.writeString(report, md.toString());
        System.out.println("wrote " + report);
        return 0;
    }

    // ------------------------------------------------------------------------------------------------ readings

    private static String pct(final double ratio) {
        return String.format(Locale.ROOT, "%+.0f %%", (ratio - 1) * 100);
    }

    private static String num(final double v) {
        return String.format(Locale.ROOT, "%.3g", v);
    }

    private static Result table1(final JsonObject results) {
        double uniform = 0;
        double zipf = 0;
        final List<String[]> rows = new ArrayList<>();
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            final double theta = run.getDouble("theta", 0.0);
            final double mops = run.getDouble("committed_per_s") / 1e6;
            final JsonObject lat = run.getJsonObject("latency_us");
            final String point = theta == 0 ? "uniform" : "Zipf " + theta;
            rows.add(new String[] {point, "Mops", num(mops)});
            rows.add(new String[] {point, "P50 µs", num(lat.getDouble("p50"))});
            if (theta == 0) {
                uniform = mops;
            } else {
                zipf = mops;
            }
        }
        final double ratio = uniform == 0 ? Double.NaN : zipf / uniform;
        rows.add(new String[] {"Zipf / uniform", "throughput ratio (paper 0.24)", num(ratio)});
        return new Result(rows, ratio <= 0.24 * 1.15 && ratio >= 0.24 * 0.85,
            "Zipf/uniform CAS throughput within 15 % of the paper's 0.24");
    }

    /** Scythe against FORD and FaRM at each client count: throughput, P50 and P99 ratios. */
    private static Result scytheVsBaselines(final JsonObject results) {
        final Map<String, JsonObject> runs = new LinkedHashMap<>();
        final List<Integer> clients = new ArrayList<>();
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            runs.put(run.getString("protocol") + "@" + run.getInteger("clients"), run);
            if (!clients.contains(run.getInteger("clients"))) {
                clients.add(run.getInteger("clients"));
            }
        }
        final List<String[]> rows = new ArrayList<>();
        boolean holds = true;
        for (final int c : clients) {
            final JsonObject s = runs.get("scythe@" + c);
            for (final String base : List.of("ford-occ", "farm-occ")) {
                final JsonObject b = runs.get(base + "@" + c);
                if (s == null || b == null) {
                    continue;
                }
                final double tput = s.getDouble("committed_per_s") / b.getDouble("committed_per_s");
                final double p50 = s.getJsonObject("latency_us").getDouble("p50")
                    / b.getJsonObject("latency_us").getDouble("p50");
                final double p99 = s.getJsonObject("latency_us").getDouble("p99")
                    / b.getJsonObject("latency_us").getDouble("p99");
                final String point = c + " clients, vs " + base;
                rows.add(new String[] {point, "throughput", pct(tput)});
                rows.add(new String[] {point, "P50", pct(p50)});
                rows.add(new String[] {point, "P99", pct(p99)});
                if (c == clients.get(clients.size() - 1)) {
                    holds &= tput >= 1.0 && p99 <= 1.0;
                }
            }
        }
        return new Result(rows, holds, "at the most clients, Scythe's throughput at least the baseline's and its P99 "
            + "at most the baseline's, against both FORD and FaRMv2");
    }

    private static Result fig27(final JsonObject results) {
        final Map<Double, JsonObject[]> byTheta = new LinkedHashMap<>();
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            final JsonObject[] pair = byTheta.computeIfAbsent(run.getDouble("theta"), t -> new JsonObject[2]);
            pair["takeout".equals(run.getString("protocol")) ? 0 : 1] = run;
        }
        final List<String[]> rows = new ArrayList<>();
        boolean holds = true;
        for (final Map.Entry<Double, JsonObject[]> e : byTheta.entrySet()) {
            final JsonObject t = e.getValue()[0];
            final JsonObject c = e.getValue()[1];
            if (t == null || c == null) {
                continue;
            }
            final double p50 = t.getJsonObject("latency_us").getDouble("p50")
                / c.getJsonObject("latency_us").getDouble("p50");
            final double p99 = t.getJsonObject("latency_us").getDouble("p99")
                / c.getJsonObject("latency_us").getDouble("p99");
            rows.add(new String[] {"θ " + e.getKey(), "Takeout P50 vs CAS lock", pct(p50)});
            rows.add(new String[] {"θ " + e.getKey(), "Takeout P99 vs CAS lock", pct(p99)});
            holds &= p99 < 1.0;
        }
        return new Result(rows, holds, "Takeout's P99 lower than the CAS lock's at every θ");
    }

    /** The figures this command knows (for tests). */
    static List<String> known() {
        return List.copyOf(FIGURES.keySet());
    }
}
