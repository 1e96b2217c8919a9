package io.scythe.bench.micro;

import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.bench.workload.GclSpec;
import io.scythe.fabric.CostModel;
import io.scythe.node.EmbeddedScythe;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * {@code scythe bench --workload gcl}: GAM's micro-benchmark (SELCC §7.1; {@link GclSpec}, the simulator's
 * {@code sim --workload gcl} draws the same accesses) on the embedded cluster's compute nodes in real time: each
 * protocol ({@code selcc-2pl}: SELCC's coherent cache; {@code sel-2pl}: SEL) on freshly loaded lines, clients spread
 * over the event loops and, on each loop, round-robin over the compute nodes (every loop hosts one coordinator of each
 * node, each a latch-word participant with a cache of its own). Runs keep no redo log: the lines are released lazily,
 * as the paper's micro-benchmark does (a redo log would write every write through). After each run the caches let
 * their lines go by their idle lease; once no latch word is held (or {@link #SETTLE_MAX_MS} passed) the memory nodes'
 * counters must add up to the writes completed, and no latch may be left held.
 */
public final class GclWorkload {
    /** What to run: {@code readRatio} etc. as {@link GclSpec#accesses}; {@code frames} 0 keeps the module's default. */
    public record Options(List<String> protocols, List<Integer> clients, int memoryNodes, int cns, CostModel model,
                          long durationMs, long warmupMs, long seed, long lines, int lineBytes, int frames,
                          double readRatio, double theta, double sharing, double locality, long holdNs) {
        JsonObject toJson() {
            return new JsonObject().put("protocols", new JsonArray(protocols)).put("clients", new JsonArray(clients))
                .put("memory_nodes", memoryNodes).put("cns", cns).put("cost_model", model.toJson())
                .put("duration_ms", durationMs).put("warmup_ms", warmupMs).put("seed", seed)
                .put("loops", BenchNodes.loops()).put("lines", lines).put("line_bytes", lineBytes)
                .put("frames", frames == 0 ? null : frames).put("read_ratio", readRatio).put("theta", theta)
                .put("sharing_ratio", sharing).put("locality", locality).put("access_hold_ns", holdNs);
        }
    }

    /** The longest wait after a run for the caches to let every line go (their lease is 1 ms by default). */
    static final long SETTLE_MAX_MS = 5_000;

    private final Options options;
    private final PrintStream out;
    /** Told the run's spec once the caches settled, before the counters are checked (tests tamper with them). */
    private Consumer<GclSpec> beforeCheck = spec -> { };

    public GclWorkload(final Options options, final PrintStream out) {
        GclSpec.check(options.protocols(), (long) options.cns() * BenchNodes.loops());
        if (options.frames() < 0) {
            throw new IllegalArgumentException("frames=" + options.frames() + ": a cache needs at least one frame (0: "
                + "the module's default)");
        }
        this.options = options;
        this.out = out;
    }

    /** Runs {@code hook} on each run's spec after its caches settled and before its counters are checked. */
    GclWorkload beforeCheck(final Consumer<GclSpec> hook) {
        this.beforeCheck = hook;
        return this;
    }

    public BenchReport run() throws Exception {
        final BenchReport report = new BenchReport("gcl", options.toJson());
        final String framesBefore = System.getProperty(FRAMES);
        if (options.frames() > 0) { // read when a loop's cache is made (SelccModule#cacheFrames)
            System.setProperty(FRAMES, Integer.toString(options.frames()));
        }
        try {
            for (final int clients : options.clients()) {
                for (final String protocol : options.protocols()) {
                    report.add(runOne(protocol, clients));
                }
            }
        } finally {
            if (framesBefore == null) {
                System.clearProperty(FRAMES);
            } else {
                System.setProperty(FRAMES, framesBefore);
            }
        }
        return report;
    }

    /** The system property of a SELCC cache's frames. */
    private static final String FRAMES = "scythe.selcc.cacheFrames";

    private RunResult runOne(final String protocol, final int clients) throws Exception {
        final io.vertx.core.Vertx vertx = BenchNodes.bridged(BenchNodes.loops());
        final JsonObject config = new JsonObject().put("memoryNodes", options.memoryNodes())
            .put("protocol", protocol).put("costModel", options.model().toJson()).put("redoLog", false)
            .put("computeNodes", options.cns());
        final GclSpec spec = new GclSpec(options.lines(), options.lineBytes(), options.memoryNodes());
        try (EmbeddedScythe cluster = EmbeddedScythe.deploy(vertx, config, spec::load, new Procedures())) {
            final int loops = cluster.loops().size();
            final GclSpec.Accesses accesses = spec.accesses(GclSpec.kind(protocol), options.cns(), loops,
                options.memoryNodes(), options.readRatio(), options.theta(), options.sharing(), options.locality(),
                options.holdNs());
            // Clients by creation order: client i on its loop's coordinator of node i mod cns, its own random stream.
            final AtomicInteger made = new AtomicInteger();
            final Supplier<Supplier<Future<?>>> client = () -> {
                final int id = made.getAndIncrement();
                final TxnRuntime runtime = cluster.coordinator(id % options.cns()).runtime();
                final SplittableRandom random = new SplittableRandom(options.seed() * 31 + id);
                final GclSpec.Client state = new GclSpec.Client();
                return () -> accesses.next(state, runtime, random);
            };
            if (options.warmupMs() > 0) {
                ClosedLoop.runClients(cluster.loops(), clients, 0, options.warmupMs(), client, null);
            }
            final LoopCounters before = LoopCounters.read(cluster.loops());
            final ClosedLoop.Result r = ClosedLoop.runClients(cluster.loops(), clients, 0, options.durationMs(), client,
                null);
            final LoopCounters counters = LoopCounters.read(cluster.loops()).since(before);
            final double cpuUs = counters.loopCpuNs() / 1000.0 / Math.max(1, r.completed());
            final long settled = settle(protocol, spec);
            beforeCheck.accept(spec);
            final JsonObject lines = spec.checked();
            final long held = OltpWorkload.locksHeld(spec.memoryNodes());
            lines.put("latches_left_held", held).put("settle_ms", settled);
            final boolean ok = !lines.containsKey("violations") && held == 0 && r.failed() == 0;
            final RunResult run = new RunResult(protocol, clients).measured(r.completed(), 0, r.elapsedNs() / 1e9,
                r.latencyNs()).invariantsOk(ok).put("failed", r.failed()).put("cns", options.cns()).put("gcl", lines)
                .put("loop_cpu_us_per_access", RunResult.round(cpuUs, 3))
                .verbs(counters.verbs(), r.completed());
            out.printf("%-10s clients %4d %10.0f accesses/s  p50 %8.2f us  p99 %8.2f us  hit ratio %.3f  "
                    + "invalidations/access %.3f  Jain %s  loop cpu %.1f us/access  writes %d, counters %d%s%n",
                protocol, clients, r.perSecond(), r.latencyNs().getValueAtPercentile(50) / 1000.0,
                r.latencyNs().getValueAtPercentile(99) / 1000.0, lines.getDouble("hit_ratio"),
                lines.getDouble("invalidations_per_access"), lines.getValue("jain"), cpuUs, lines.getLong("writes"),
                lines.getLong("counters_sum"), ok ? "" : "  VIOLATED: " + (lines.containsKey("violations")
                    ? lines.getJsonArray("violations").getString(0) + "; " : "") + held + " latches held, "
                    + r.failed() + " accesses failed");
            return run;
        } finally {
            vertx.close().await(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Waits, after the module's settle time, until no latch word of {@code spec}'s lines is held (every cached copy
     * released by its lease, flushed if dirty), at most {@link #SETTLE_MAX_MS}; returns the milliseconds waited.
     */
    private static long settle(final String protocol, final GclSpec spec) throws InterruptedException {
        final long start = System.nanoTime();
        final long settleMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(ProtocolRegistry.moduleOf(protocol)
            .settleNs()));
        Thread.sleep(settleMs);
        while (OltpWorkload.locksHeld(spec.memoryNodes()) > 0
            && System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(SETTLE_MAX_MS)) {
            Thread.sleep(settleMs);
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
