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
        "Figures: table1 (Scythe Table 1: CAS uniform vs Zipf), table2 (Takeout Lock queue lengths against θ), fig22 "
            + "(SmallBank), fig23 (TPC-C), fig24 (YCSB 3:7), fig25 (YCSB write-only), fig26 (latency decomposition, "
            + "YCSB write-only), fig27 (Takeout Lock vs CAS lock), fig28 (TSO vs physical-clock timestamps). "
            + "Default: all."})
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
    /**
     * The paper's Scythe: exclusive tickets only ({@code scythe}, the default since issue 22, takes shared reader
     * tickets, a deviation the paper does not have), shown as "scythe" beside the paper's figures ({@link #label}).
     */
    static final String PAPER_SCYTHE = "scythe:exclusive";

    /** A run's protocol as the figures name it: {@link #PAPER_SCYTHE} is "scythe". */
    private static String label(final JsonObject run) {
        final String protocol = run.getString("protocol");
        return PAPER_SCYTHE.equals(protocol) ? "scythe" : protocol;
    }

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
        final List<String> table2 = List.of("--workload", "ycsb", "--records", "100000", "--write-ratio", "1.0",
            "--protocols", PAPER_SCYTHE, "--clients", "128", "--queue-sample", "10us", "--watermarks", "3,128");
        add(new Figure("table2", "Scythe Table 2: Takeout Lock queues against the Zipf factor (128 clients, 100,000 "
            + "objects)",
            "longest queue 6 / 10 / 13 / 31 at θ 0.9 / 0.95 / 0.99 / 1.2, second longest 5 / 6 / 4 / 9, others ≤ 2 / 4 "
                + "/ 3 / 5; highest access rate 4 / 9 / 10 / 25 %, second 4 / 4 / 3 / 7 %. Measured before the "
                + "watermarks (§4.3 sets HotWatermark 10 after it, and 31 > 10): ours lifts HOT to 128 (the clients), "
                + "since at the default 10 a queue cannot pass 11",
            concat(table2, List.of("--thetas", "0.9,0.95,0.99,1.2", "--warmup", "200us", "--duration", "2ms"),
                PAPER_TOPOLOGY),
            concat(table2, List.of("--thetas", "0.9,1.2", "--duration", "500us"), PAPER_TOPOLOGY),
            ReproduceCommand::table2));
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
        final List<String> fig26 = List.of("--workload", "ycsb", "--write-ratio", "1.0", "--protocols",
            PAPER_SCYTHE + ",ford-occ,farm-occ", "--clients", "128", "--theta", "0.99");
        add(new Figure("fig26", "Scythe Fig. 26: latency decomposition (execution excluded), YCSB write-only, 128 "
            + "clients",
            "Scythe vs FORD: about 146 µs less at P50 and over 230 µs less at P99, mostly lock; vs FaRMv2: lock and "
                + "validation, validation about 90 % lower. Ours: mean µs per committed attempt by stage (FORD's "
                + "execution-phase CAS locks counted as lock), and retries (time in aborted attempts)",
            concat(fig26, List.of("--duration", "2ms"), PAPER_TOPOLOGY),
            concat(fig26, List.of("--duration", "1ms"), PAPER_TOPOLOGY),
            ReproduceCommand::fig26));
        add(new Figure("fig27", "Scythe Fig. 27: Takeout Lock vs CAS lock, 64 threads, lock held 25 µs",
            "Takeout lower at every θ; P50 17.1–31.7 % lower, P99 16–31.4 % lower as θ grows",
            List.of("--workload", "lock", "--protocols", "takeout,cas-lock", "--clients", "64", "--hold", "25us",
                "--thetas", "0.5,0.7,0.9,0.99,1.2"),
            List.of("--workload", "lock", "--protocols", "takeout,cas-lock", "--clients", "64", "--hold", "25us",
                "--thetas", "0.5,0.99,1.2", "--duration", "1ms"),
            ReproduceCommand::fig27));
        add(new Figure("fig28", "Scythe Fig. 28: timestamp latency, RDMA-friendly TSO vs physical clock (FaRMv2)",
            "TSO about 50 % lower latency than the physical clock, both stable, TSO slightly rising with clients "
                + "(up to 80 clients); TSO near 70 Mops at 64 clients",
            concat(List.of("--workload", "tso", "--protocols", "tso,physical-clock", "--clients", "1,8,16,32,64,80",
                "--warmup", "100us", "--duration", "1ms"), PAPER_TOPOLOGY),
            concat(List.of("--workload", "tso", "--protocols", "tso,physical-clock", "--clients", "1,16",
                "--duration", "200us"), PAPER_TOPOLOGY),
            ReproduceCommand::fig28));
    }

    @SafeVarargs
    private static List<String> concat(final List<String>... parts) {
        final List<String> all = new ArrayList<>();
        for (final List<String> p : parts) {
            all.addAll(p);
        }
        return all;
    }

    private static void add(final Figure f) {
        FIGURES.put(f.id(), f);
    }

    private static Figure vs(final String id, final String title, final String paper, final List<String> workload) {
        final List<String> full = new ArrayList<>(workload);
        full.addAll(List.of("--protocols", PAPER_SCYTHE + ",ford-occ,farm-occ", "--clients", "16,64,128", "--theta",
            "0.99"));
        full.addAll(PAPER_TOPOLOGY);
        final List<String> quick = new ArrayList<>(workload);
        quick.addAll(List.of("--protocols", PAPER_SCYTHE + ",ford-occ,farm-occ", "--clients", "16,128", "--theta",
            "0.99", "--duration", "1ms"));
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

    /** Table 2: the longest queues and the most-locked objects' shares at each θ. */
    private static Result table2(final JsonObject results) {
        final List<String[]> rows = new ArrayList<>();
        final List<double[]> byTheta = new ArrayList<>(); // theta, longest, highest share
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            final JsonObject q = run.getJsonObject("queues");
            if (q == null) {
                throw new IllegalStateException("table2: a run without queue samples (--queue-sample)");
            }
            final String point = "θ " + run.getDouble("theta");
            rows.add(new String[] {point, "longest queue", String.valueOf(q.getLong("longest"))});
            rows.add(new String[] {point, "second longest", String.valueOf(q.getLong("second_longest"))});
            rows.add(new String[] {point, "others at most", String.valueOf(q.getLong("others_at_most"))});
            rows.add(new String[] {point, "longest mean queue (an object's queue averaged over the samples)",
                num(q.getDouble("longest_mean_queue"))});
            rows.add(new String[] {point, "highest access rate (share of lock grants)",
                String.format(Locale.ROOT, "%.1f %%", 100 * q.getDouble("highest_grant_share"))});
            rows.add(new String[] {point, "second highest access rate",
                String.format(Locale.ROOT, "%.1f %%", 100 * q.getDouble("second_highest_grant_share"))});
            byTheta.add(new double[] {run.getDouble("theta"), q.getLong("longest"),
                q.getDouble("highest_grant_share")});
        }
        byTheta.sort((a, b) -> Double.compare(a[0], b[0]));
        boolean holds = byTheta.size() >= 2;
        for (int i = 1; i < byTheta.size(); i++) {
            holds &= byTheta.get(i)[2] >= byTheta.get(i - 1)[2];
        }
        holds = holds && byTheta.get(byTheta.size() - 1)[1] >= 2 * byTheta.get(0)[1];
        return new Result(rows, holds, "the hottest object's share grows with θ, and the longest queue at the highest "
            + "θ is at least twice that at the lowest (paper: 31 vs 6)");
    }

    /** Fig. 26: each protocol's stages (execution excluded), and Scythe's lock and validation against the others. */
    private static Result fig26(final JsonObject results) {
        final Map<String, JsonObject> stages = new LinkedHashMap<>();
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            stages.put(label(run), run.getJsonObject("stages_us"));
        }
        final List<String[]> rows = new ArrayList<>();
        for (final Map.Entry<String, JsonObject> e : stages.entrySet()) {
            double total = 0;
            for (final String stage : e.getValue().fieldNames()) {
                if (!"execute".equals(stage)) {
                    final double us = e.getValue().getDouble(stage);
                    total += us;
                    rows.add(new String[] {e.getKey(), stage + " µs", num(us)});
                }
            }
            rows.add(new String[] {e.getKey(), "total without execute µs", num(total)});
            rows.add(new String[] {e.getKey(), "validate + retries µs", num(validation(e.getValue()))});
        }
        final JsonObject s = stages.get("scythe");
        final JsonObject ford = stages.get("ford-occ");
        final JsonObject farm = stages.get("farm-occ");
        if (s == null || ford == null || farm == null) {
            throw new IllegalStateException("fig26 needs scythe, ford-occ and farm-occ runs, got " + stages.keySet());
        }
        final double lock = s.getDouble("lock");
        rows.add(new String[] {"scythe vs ford-occ", "lock", pct(lock / ford.getDouble("lock"))});
        rows.add(new String[] {"scythe vs farm-occ", "lock", pct(lock / farm.getDouble("lock"))});
        rows.add(new String[] {"scythe vs farm-occ", "validate + retries (paper about -90 %)",
            pct(validation(s) / validation(farm))});
        final boolean holds = lock < ford.getDouble("lock") && lock < farm.getDouble("lock")
            && validation(s) < validation(farm);
        return new Result(rows, holds, "Scythe's lock stage below FORD's and FaRMv2's, and its validation with the "
            + "retries (where the paper puts FaRMv2's: \"multiple retries of OCC transactions\") below FaRMv2's");
    }

    /**
     * The validation the paper charges FaRMv2 with: re-reads, and the retries of attempts that failed (ours counts
     * those apart, as time not in the committed attempt).
     */
    private static double validation(final JsonObject stages) {
        return stages.getDouble("validate") + stages.getDouble("retries");
    }

    /** Fig. 28: the TSO (TSO groups through the proxies) against physical-clock timestamps at each client count. */
    private static Result fig28(final JsonObject results) {
        final Map<Integer, JsonObject[]> byClients = new LinkedHashMap<>();
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            final String variant = run.getString("protocol");
            final int slot = "tso".equals(variant) ? 0 : "physical-clock".equals(variant) ? 1 : -1;
            if (slot >= 0) {
                byClients.computeIfAbsent(run.getInteger("clients"), c -> new JsonObject[2])[slot] = run;
            }
        }
        final List<String[]> rows = new ArrayList<>();
        boolean holds = !byClients.isEmpty();
        for (final Map.Entry<Integer, JsonObject[]> e : byClients.entrySet()) {
            final JsonObject tso = e.getValue()[0];
            final JsonObject clock = e.getValue()[1];
            if (tso == null || clock == null) {
                throw new IllegalStateException("fig28: no tso or physical-clock run at " + e.getKey()
                    + " clients");
            }
            final double tsoP50 = tso.getJsonObject("latency_us").getDouble("p50");
            final double clockP50 = clock.getJsonObject("latency_us").getDouble("p50");
            final String point = e.getKey() + " clients";
            rows.add(new String[] {point, "TSO P50 µs", num(tsoP50)});
            rows.add(new String[] {point, "physical clock P50 µs", num(clockP50)});
            rows.add(new String[] {point, "TSO vs physical clock P50 (paper about -50 %)", pct(tsoP50 / clockP50)});
            rows.add(new String[] {point, "TSO Mops", num(tso.getDouble("committed_per_s") / 1e6)});
            holds &= tsoP50 < clockP50;
        }
        return new Result(rows, holds, "the TSO's P50 below the physical clock's at every client count");
    }

    /** Scythe against FORD and FaRM at each client count: throughput, P50 and P99 ratios. */
    private static Result scytheVsBaselines(final JsonObject results) {
        final Map<String, JsonObject> runs = new LinkedHashMap<>();
        final List<Integer> clients = new ArrayList<>();
        for (final Object o : results.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            runs.put(label(run) + "@" + run.getInteger("clients"), run);
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
