package io.scythe.bench.micro;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bench.history.HistoryWriter;
import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.ProgressLine;
import io.scythe.bench.report.RunResult;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.node.EmbeddedScythe;
import io.scythe.routing.Router;
import io.scythe.routing.RoutingMode;
import io.scythe.routing.ShardMap;
import io.scythe.fabric.CostModel;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.Stage;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code scythe bench --workload smallbank|ycsb}: an {@link OltpSpec} workload on an embedded cluster in this JVM
 * ({@code EmbeddedScythe}: memory nodes holding the tables partitioned by key, a TSO with its counter in NIC device
 * memory, one compute node whose event loops run the clients), one protocol after another on freshly loaded,
 * identical data with the same seed. After each run the workload's conserved quantity (SmallBank's money, YCSB's
 * committed writes) is counted on the memory nodes: it must equal its initial value plus what the committed
 * transactions returned; and no lock may be left held.
 *
 * <p>With {@link #computeNodes} above 1 the embedded cluster runs that many compute nodes, and the clients are the
 * routing layer: each event loop's clients send each transaction to a node by {@link #routing} (by its routing key's
 * shard, at random, or Lotus's hybrid) through the loop's {@link Router}, to that node's coordinator on the same loop
 * (every loop hosts one coordinator per node: no thread hop). A node refuses a transaction routed to it by a shard it
 * does not own; the router learns the current map and sends it again ({@code rerouted} in the results).
 */
public final class OltpWorkload {
    /** What to run. */
    public record Options(List<String> protocols, List<Integer> clients, int memoryNodes, int maxAttempts,
                          CostModel model, long durationMs, long warmupMs, long seed, java.nio.file.Path history) {
        /** Without history recording. */
        public Options(final List<String> protocols, final List<Integer> clients, final int memoryNodes,
                       final int maxAttempts, final CostModel model, final long durationMs, final long warmupMs,
                       final long seed) {
            this(protocols, clients, memoryNodes, maxAttempts, model, durationMs, warmupMs, seed, null);
        }

        JsonObject toJson() {
            return new JsonObject().put("protocols", new JsonArray(protocols)).put("clients", new JsonArray(clients))
                .put("memory_nodes", memoryNodes).put("max_attempts", maxAttempts).put("cost_model", model.toJson())
                .put("duration_ms", durationMs).put("warmup_ms", warmupMs).put("seed", seed)
                .put("loops", BenchNodes.loops());
        }
    }

    private final Options options;
    private final OltpSpec spec;
    private PrintStream out;
    private ProgressLine progress;
    private boolean redoLog = true;
    private io.scythe.txn.OnAbort onAbort = io.scythe.txn.OnAbort.RETRY;
    private List<Integer> computeNodes = List.of(1);
    private RoutingMode routing = RoutingMode.SHARD;
    private int shards = ShardMap.DEFAULT_SHARDS;
    private long moveShardEveryMs;
    /** Salt of the shard mover's stream. */
    private static final long MOVE_SEED_SALT = 0xBB67AE8584CAA73BL;
    /** Salt of the routers' random streams: random routes never draw from a workload's stream. */
    private static final long ROUTE_SEED_SALT = 0x6A09E667F3BCC909L;
    /** Refusals one transaction may meet (each after learning the current map) before it fails. */
    static final int MAX_REROUTES = 8;

    /**
     * Compute nodes of the embedded cluster, one run each per protocol and client count, side by side (default 1);
     * above one, each transaction is routed by {@link #routing}.
     */
    public OltpWorkload computeNodes(final List<Integer> counts) {
        if (counts.isEmpty() || counts.stream().anyMatch(n -> n < 1 || n >= ShardMap.MAX_COMPUTE_NODES)) {
            throw new IllegalArgumentException("cns=" + counts + ": each must be within [1, "
                + (ShardMap.MAX_COMPUTE_NODES - 1) + "]");
        }
        this.computeNodes = List.copyOf(counts);
        return this;
    }

    /** How transactions find their compute node ({@code local} is the simulator's only: bench clients have none). */
    public OltpWorkload routing(final RoutingMode mode) {
        if (mode == RoutingMode.LOCAL) {
            throw new IllegalArgumentException("routing local: bench clients belong to no compute node; choose shard, "
                + "random or hybrid");
        }
        this.routing = mode;
        return this;
    }

    /**
     * With several compute nodes, moves one shard (drawn from its own seeded stream) to another node every
     * {@code ms} milliseconds while measuring (0, the default: never), so routers meet wrong-owner refusals and send
     * again on the newer map ({@code rerouted}).
     */
    public OltpWorkload moveShardEvery(final long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("move-shard-every=" + ms + " ms must not be negative");
        }
        this.moveShardEveryMs = ms;
        return this;
    }

    /** Shards of the shard map (routing key mod shards; default {@value ShardMap#DEFAULT_SHARDS}). */
    public OltpWorkload shards(final int count) {
        if (count < 1) {
            throw new IllegalArgumentException("shards=" + count + " must be at least 1");
        }
        this.shards = count;
        return this;
    }

    private int replicas;
    private String lookup = "rpc";

    /** Whether commits write a redo record first (the default; off measures its cost). */
    /**
     * What a client does when its transaction's attempt aborts, the same for every protocol ({@link
     * io.scythe.txn.OnAbort}): retry it up to {@code maxAttempts} (default; latency to commit) or draw a new one.
     */
    public OltpWorkload onAbort(final io.scythe.txn.OnAbort rule) {
        this.onAbort = java.util.Objects.requireNonNull(rule, "rule");
        return this;
    }

    public OltpWorkload redoLog(final boolean on) {
        this.redoLog = on;
        return this;
    }

    /**
     * Backup copies of every partition (default 0): each write-back and redo record goes to the primary and
     * {@code k} backups ({@code EmbeddedScythe}'s {@code replicas}); every backup is compared with its primary after
     * each run.
     */
    public OltpWorkload replicas(final int k) {
        this.replicas = k;
        return this;
    }

    /** How lookups that miss the address cache reach the index: {@code rpc} (default) or {@code onesided}. */
    public OltpWorkload lookup(final String mode) {
        this.lookup = mode;
        return this;
    }

    public OltpWorkload(final Options options, final OltpSpec spec, final PrintStream out) {
        this.options = options;
        this.spec = spec;
        this.out = out;
    }

    /** Shows {@code line} during measured runs of at least {@link #PROGRESS_MIN_MS} ({@code null}: none). */
    public OltpWorkload progress(final ProgressLine line) {
        this.progress = line;
        return this;
    }

    /** Shorter runs show no progress line: it would flash once and vanish. */
    public static final long PROGRESS_MIN_MS = 3_000;

    public BenchReport run() throws Exception {
        final BenchReport report = new BenchReport(spec.name(), options.toJson().put("cns", new JsonArray(computeNodes))
            .put("routing", routing.label()).put("shards", shards).put("move_shard_every_ms", moveShardEveryMs)
            .mergeIn(spec.params()));
        final int mostComputeNodes = computeNodes.stream().mapToInt(Integer::intValue).max().orElse(1);
        if (moveShardEveryMs > 0 && mostComputeNodes < 2) {
            throw new IllegalArgumentException("move-shard-every moves shards between compute nodes: give --cns 2 or "
                + "more");
        }
        if (options.history() != null) {
            historyFile(options.protocols().get(0), options.clients().get(0)); // a bad path fails now, not after warm-up
        }
        // The JVM's first runs are slower (C2 compiles for several seconds): warm every protocol's code once before
        // measuring anything, or whichever protocol runs first is handicapped (it was 2x slower here).
        if (options.warmupMs() > 0) {
            final PrintStream real = out;
            final ProgressLine realProgress = progress;
            out = new PrintStream(java.io.OutputStream.nullOutputStream());
            progress = null;
            try {
                for (final String name : options.protocols()) {
                    final boolean adaptive = name.endsWith("-adaptive");
                    // With the most compute nodes: routing's code is warmed too.
                    runOne(ProtocolRegistry.protocol(adaptive ? name.substring(0, name.length() - 9) : name), name,
                        adaptive, options.clients().get(0), false, mostComputeNodes);
                }
            } finally {
                out = real;
                progress = realProgress;
            }
        }
        for (final int clients : options.clients()) {
            for (final String name : options.protocols()) {
                // "scythe-adaptive": Scythe with per-object cold watermarks that follow aborts.
                final boolean adaptive = name.endsWith("-adaptive");
                // Each protocol at every node count in a row: the ratios compare runs seconds apart.
                RunResult first = null;
                for (final int cns : computeNodes) {
                    final RunResult run = runOne(ProtocolRegistry.protocol(adaptive
                            ? name.substring(0, name.length() - 9) : name), computeNodes.size() == 1 ? name
                        : name + "/cns" + cns, adaptive, clients, options.history() != null, cns);
                    if (first == null) {
                        first = run;
                    } else {
                        run.put("ratio_over_cns_" + computeNodes.get(0), RunResult.round(
                            run.toJson().getDouble("committed_per_s")
                                / Math.max(1e-9, first.toJson().getDouble("committed_per_s")), 3));
                    }
                    report.add(run);
                }
            }
        }
        return report;
    }

    /**
     * Where the history of one measured run goes: {@code --history FILE} itself when the run is the only one and
     * FILE is not a directory, else {@code DIR/<protocol>-<clients>.history}.
     */
    private java.nio.file.Path historyFile(final String label, final int clients) {
        return HistoryWriter.fileFor(options.history(), options.protocols().size() * options.clients().size() == 1,
            label + "-" + clients);
    }

    private RunResult runOne(final Protocol protocol, final String label, final boolean adaptive, final int clients,
                             final boolean record, final int cns) throws Exception {
        final io.vertx.core.Vertx vertx = BenchNodes.bridged(BenchNodes.loops());
        final JsonObject config = new JsonObject().put("memoryNodes", options.memoryNodes())
            .put("protocol", protocol.name()).put("maxAttempts", onAbort.attempts(options.maxAttempts()))
            .put("costModel", options.model().toJson()).put("adaptiveWatermarks", adaptive)
            .put("redoLog", redoLog).put("computeNodes", cns).put("shards", shards).put("replicas", replicas)
            .put("lookup", lookup);
        HistoryWriter recording = null;
        try (EmbeddedScythe cluster = EmbeddedScythe.deploy(vertx, config,
            spec::load, new Procedures())) {
            final List<LogDb> dbs = cluster.memoryNodes();
            final long initial = total(dbs);
            final List<io.vertx.core.Context> loops = cluster.loops();
            final List<Coordinator> coordinators = cluster.coordinators();
            final AtomicInteger loopIds = new AtomicInteger();
            final FastThreadLocal<SplittableRandom> randoms = new FastThreadLocal<>() {
                @Override
                protected SplittableRandom initialValue() {
                    return new SplittableRandom(options.seed() * 31 + loopIds.incrementAndGet());
                }
            };
            // The routing layer: a router per loop (its own cached map, the cluster's at its start) and a random stream
            // of its own.
            final ShardMap startMap = cluster.shardMap();
            final Queue<Router> routers = new ConcurrentLinkedQueue<>();
            final FastThreadLocal<Router> loopRouters = new FastThreadLocal<>() {
                @Override
                protected Router initialValue() {
                    final Router router = new Router(routing, startMap);
                    routers.add(router);
                    return router;
                }
            };
            final AtomicInteger routeLoopIds = new AtomicInteger();
            final FastThreadLocal<SplittableRandom> routeRandoms = new FastThreadLocal<>() {
                @Override
                protected SplittableRandom initialValue() {
                    return new SplittableRandom((options.seed() * 31 + routeLoopIds.incrementAndGet())
                        ^ ROUTE_SEED_SALT);
                }
            };
            // Completed transactions (commits and rolled-back outcomes, as ClosedLoop counts them) by node.
            final LongAdder[] completedByCn = new LongAdder[cns];
            for (int cn = 0; cn < cns; cn++) {
                completedByCn[cn] = new LongAdder();
            }
            final LongAdder delta = new LongAdder();
            final AtomicBoolean measuring = new AtomicBoolean();
            // Per-type counts and latencies: one TxnTypeStats per event loop, summed after the run.
            final Queue<TxnTypeStats> loopStats = new ConcurrentLinkedQueue<>();
            final FastThreadLocal<TxnTypeStats> typeStats = new FastThreadLocal<>() {
                @Override
                protected TxnTypeStats initialValue() {
                    final TxnTypeStats stats = new TxnTypeStats();
                    loopStats.add(stats);
                    return stats;
                }
            };
            // Transactions that failed with an error rather than an abort (a protocol that cannot run here, a bug):
            // the run reports them and fails, never a quiet 0 txn/s.
            final LongAdder errors = new LongAdder();
            final java.util.concurrent.atomic.AtomicReference<Throwable> firstError =
                new java.util.concurrent.atomic.AtomicReference<>();
            final Settled.Tally tally = new Settled.Tally(measuring, delta, typeStats, errors, firstError,
                this::isOutcome);
            // Aborted attempts by table (each coordinator's listener runs on its loop, as its loop's stats do).
            coordinators.forEach(c -> c.onAbort((procedure, abort) -> {
                if (measuring.get()) {
                    typeStats.get().aborted(abort.table(), abort.reason().label());
                }
            }));
            final java.util.function.Supplier<io.vertx.core.Future<?>> op = () -> {
                final SplittableRandom random = randoms.get();
                final OltpSpec.Drawn drawn = spec.draw(random);
                io.vertx.core.Future<Coordinator.Outcome<Long>> ran;
                LongAdder completed = null; // counted here when not routed (a routed one is counted by routed)
                try {
                    ran = cns == 1 ? cluster.coordinator().run(drawn.declaredBody(), attempts(drawn))
                        : routed(cluster, loopRouters.get(), routeRandoms.get(), drawn, completedByCn, measuring,
                            MAX_REROUTES);
                    completed = cns == 1 ? completedByCn[0] : null;
                } catch (final RuntimeException e) {
                    ran = io.vertx.core.Future.failedFuture(e);
                }
                return tally.settle(ran, drawn.type(), completed);
            };
            // The history covers the run's warm-up too: then every version a transaction reads was made by a recorded
            // transaction or is the loaded one, which the checker verifies.
            final HistoryWriter history = record ? new HistoryWriter(historyFile(label, clients),
                ObjectLayout.LOADED_VERSION, spec.name() + " " + label + " clients " + clients) : null;
            recording = history;
            coordinators.forEach(c -> c.runtime().recorder(history));
            if (options.warmupMs() > 0) {
                ClosedLoop.run(loops, clients, 0, options.warmupMs(), op);
            }
            final long[] abortsBefore = abortCounts(coordinators);
            final long[] stagesBefore = stageSums(coordinators);
            final LoopCounters countersBefore = LoopCounters.read(loops);
            final long cpuBefore = LoopCounters.processCpuNs();
            final long epochBefore = cluster.shardMap().epoch();
            final long mover = cns > 1 && moveShardEveryMs > 0 ? moveShards(vertx, cluster) : -1;
            measuring.set(true);
            final ClosedLoop.Result r = ClosedLoop.run(loops, clients, 0, options.durationMs(), op,
                progressOf(label + " clients " + clients, coordinators, abortsBefore));
            measuring.set(false);
            if (mover >= 0) {
                vertx.cancelTimer(mover);
            }
            final long cpuNs = LoopCounters.processCpuNs() - cpuBefore;
            final LoopCounters counters = LoopCounters.read(loops).since(countersBefore);
            if (progress != null) {
                progress.done();
            }
            final long[] abortsAfter = abortCounts(coordinators);
            final long[] stagesAfter = stageSums(coordinators);
            Thread.sleep(20); // releases posted at commit complete
            if (history != null) {
                coordinators.forEach(c -> c.runtime().recorder(null));
                history.close();
            }
            final long finalSum = total(dbs);
            final boolean conservedOk = finalSum == initial + delta.sum();
            // A protocol that promises snapshot isolation only is not judged on what write skew breaks (reported).
            final java.util.Set<String> notJudged = writeSkewNotJudged(protocol, spec);
            final long held = locksHeld(dbs);
            final List<String> replicaDifferences = io.scythe.storage.BackupTables.compare(dbs, replicas);
            if (!replicaDifferences.isEmpty()) {
                out.printf("%-10s   %d objects differ between a primary and its backups (first: %s)%n", label,
                    replicaDifferences.size(), replicaDifferences.get(0));
            }
            final Map<String, List<String>> conditions = spec.consistency(dbs);
            final JsonObject consistency = consistencyJson(conditions);
            final JsonObject skew = notJudgedJson(notJudged, spec.quantity(), conservedOk, conditions);
            final boolean consistent = conditions.entrySet().stream()
                .allMatch(c -> c.getValue().isEmpty() || notJudged.contains(c.getKey()));
            final boolean quantityOk = conservedOk || notJudged.contains(spec.quantity());
            for (final Map.Entry<String, List<String>> c : conditions.entrySet()) {
                if (!c.getValue().isEmpty()) {
                    out.printf("%-10s   consistency condition %s %s (%d): %s%n", label, c.getKey(),
                        notJudged.contains(c.getKey()) ? "broken by write skew (" + protocol.name()
                            + " promises snapshot isolation, which allows it: not judged)" : "VIOLATED",
                        c.getValue().size(), c.getValue().get(0));
                }
            }
            final JsonObject aborts = new JsonObject();
            long abortedAttempts = 0;
            for (final AbortReason reason : ProtocolRegistry.abortReasons()) {
                final long n = abortsAfter[reason.index()] - abortsBefore[reason.index()];
                abortedAttempts += isOutcome(reason) ? 0 : n;
                if (n > 0) {
                    aborts.put(reason.label(), n);
                }
            }
            final long committed = r.completed();
            final JsonArray byCn = new JsonArray();
            for (final LongAdder n : completedByCn) {
                byCn.add(n.sum());
            }
            long rerouted = 0;
            for (final Router router : routers) {
                rerouted += router.refusals();
            }
            final Map<String, TxnTypeStats.Type> types = TxnTypeStats.merge(loopStats);
            final JsonObject byType = new JsonObject();
            long attempts = 0;
            long committedByType = 0;
            long userAborts = 0;
            for (final Map.Entry<String, TxnTypeStats.Type> t : types.entrySet()) {
                byType.put(t.getKey(), t.getValue().committed);
                attempts += t.getValue().committedAttempts;
                committedByType += t.getValue().committed;
                userAborts += t.getValue().userRollbacks;
            }
            final double seconds = r.elapsedNs() / 1e9;
            final RunResult run = new RunResult(label, clients).measured(committed, abortedAttempts,
                    r.elapsedNs() / 1e9, r.latencyNs())
                // giving up after --max-attempts is an outcome, not a bug
                .invariantsOk(quantityOk && held == 0 && consistent && replicaDifferences.isEmpty()
                    && errors.sum() == 0)
                .put("aborts_by_reason", aborts).put("committed_by_type", byType)
                .put("by_type", TxnTypeStats.toJson(types, seconds))
                .put("aborts_by_table", TxnTypeStats.abortsByTable(loopStats))
                // Over the commits the attempts were counted for: the runner's completed count also holds the
                // transactions the procedure rolled back (SmallBank's user aborts), which put this below 1 under
                // --on-abort new (0.932 at 16 clients: 2,080 user rollbacks of 30,612).
                .put("attempts_per_commit", RunResult.round((double) attempts / Math.max(1, committedByType), 3))
                .put("gave_up", r.failed()).put("user_rollbacks", userAborts)
                .put("errors", errors.sum())
                .put("first_error", firstError.get() == null ? null : errorLine(firstError.get()))
                .put("conserved", new JsonObject().put("quantity", spec.quantity()).put("initial", initial)
                    .put("final", finalSum).put("committed_delta", delta.sum()).put("ok", conservedOk))
                .put("locks_left_held", held).put("redo_log", redoLog).put("on_abort", onAbort.label())
                .put("replicas", replicas).put("lookup", lookup).put("replica_differences", replicaDifferences.size())
                .put("cns", cns).put("committed_by_cn", byCn).put("rerouted", rerouted)
                .put("shard_map_epoch", cluster.shardMap().epoch())
                .put("shards_moved", cluster.shardMap().epoch() - epochBefore)
                .verbs(counters.verbs(), committed)
                .put("cpu_us_per_txn", cpuNs < 0 ? null : RunResult.round(cpuNs / 1000.0 / Math.max(1, committed), 3))
                .put("loop_cpu_us_per_txn", RunResult.round(counters.loopCpuNs() / 1000.0 / Math.max(1, committed), 3))
                .put("loop_alloc_bytes_per_txn", counters.loopAllocatedBytes() < 0 ? null
                    : Math.round(counters.loopAllocatedBytes() / (double) Math.max(1, committed)))
                .put("cpu_cores", cpuNs < 0 ? null : RunResult.round(cpuNs / (double) r.elapsedNs(), 3));
            if (history != null) {
                run.put("history", new JsonObject().put("file", history.file().toString())
                    .put("transactions", history.transactions()));
            }
            if (!conditions.isEmpty()) {
                run.put("consistency", consistency);
            }
            if (!skew.isEmpty()) {
                run.put("write_skew_not_judged", skew);
            }
            // Per-stage breakdown of the committed attempt; "retries" is the rest of the latency: earlier aborted
            // attempts and the back-off between them.
            final long staged = Math.max(1, stagesAfter[Stage.count()] - stagesBefore[Stage.count()]);
            final JsonObject stages = new JsonObject();
            double stagedMeanUs = 0;
            final StringBuilder breakdown = new StringBuilder();
            for (final Stage stage : ProtocolRegistry.stages()) {
                final double us = (stagesAfter[stage.index()] - stagesBefore[stage.index()]) / 1000.0 / staged;
                stagedMeanUs += us;
                stages.put(stage.label(), RunResult.round(us, 2));
                breakdown.append(String.format(" %s %.1f", stage.label(), us));
            }
            final double retriesUs = Math.max(0, r.latencyNs().getMean() / 1000.0 - stagedMeanUs);
            stages.put("retries", RunResult.round(retriesUs, 2));
            run.put("stages_us", stages);
            spec.params().forEach(e -> run.put(e.getKey(), e.getValue()));
            if (firstError.get() != null) {
                out.printf("%-10s clients %4d ERROR: %s failed %d transactions with an error (not an abort): %s%n",
                    label, clients, protocol.name(), errors.sum(), errorLine(firstError.get()));
                if (committed == 0) {
                    return run; // nothing ran: no throughput line to mistake for a measurement
                }
            }
            out.printf("%-10s clients %4d %10.0f txn/s  p50 %8.2f us  p99 %8.2f us  p999 %8.2f us  abort rate %5.3f"
                    + "  %s %s  locks held %d%n", label, clients, r.perSecond(),
                r.latencyNs().getValueAtPercentile(50) / 1000.0, r.latencyNs().getValueAtPercentile(99) / 1000.0,
                r.latencyNs().getValueAtPercentile(99.9) / 1000.0,
                (double) abortedAttempts / Math.max(1, abortedAttempts + committed), spec.quantity(),
                conservedOk ? "conserved"
                    : (notJudged.contains(spec.quantity()) ? "not conserved, by write skew: not judged ("
                        : "NOT CONSERVED (") + finalSum + " != " + initial + " + " + delta.sum() + ")", held);
            out.printf("%-10s   mean us per commit:%s retries %.1f%n", "", breakdown, retriesUs);
            if (cns > 1) {
                out.printf("%-10s   %d compute nodes, routing %s: committed by node %s, rerouted %d, shard map epoch "
                    + "%d%n", "", cns, routing.label(), byCn.encode(), rerouted, cluster.shardMap().epoch());
            }
            out.printf("%-10s   per commit: %.2f verbs (%s), %.0f bytes, %.2f rpc; cpu %.2f us (loops %.2f us, "
                    + "allocated %s)%n", "",
                counters.verbs().totalVerbs() / (double) Math.max(1, committed), verbMix(counters, committed),
                counters.verbs().totalBytes() / (double) Math.max(1, committed),
                counters.verbs().rpcCalls() / (double) Math.max(1, committed),
                cpuNs / 1000.0 / Math.max(1, committed), counters.loopCpuNs() / 1000.0 / Math.max(1, committed),
                counters.loopAllocatedBytes() < 0 ? "unknown"
                    : Math.round(counters.loopAllocatedBytes() / (double) Math.max(1, committed)) + " B");
            return run;
        } finally {
            if (recording != null) {
                recording.close(); // a run that failed still ends its writer thread (idempotent)
            }
            vertx.close().await(60, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** An error's class and message on one line (its cause's when it only wraps one). */
    static String errorLine(final Throwable e) {
        final Throwable root = e.getCause() != null && e.getMessage() != null
            && e.getMessage().equals(String.valueOf(e.getCause())) ? e.getCause() : e;
        return (root.getClass().getSimpleName() + ": " + root.getMessage()).replace('\n', ' ');
    }

    /**
     * Moves a shard to another node now and then every {@link #moveShardEvery} ms (so the routers' maps are stale from
     * the first measured transaction on); returns the timer's id.
     */
    private long moveShards(final io.vertx.core.Vertx vertx, final EmbeddedScythe cluster) {
        final SplittableRandom random = new SplittableRandom(options.seed() ^ MOVE_SEED_SALT);
        final int cns = cluster.computeNodes();
        final Runnable move = () -> {
            final int shard = random.nextInt(shards);
            final int owner = cluster.shardMap().ownerOf(shard);
            cluster.moveShard(shard, (owner + 1 + random.nextInt(cns - 1)) % cns);
        };
        synchronized (random) {
            move.run();
        }
        return vertx.setPeriodic(moveShardEveryMs, id -> {
            synchronized (random) {
                move.run();
            }
        });
    }

    /** {@code ran}, counted in {@code completed} while measuring when it completes (commits and rollbacks). */
    private Future<Coordinator.Outcome<Long>> counted(final Future<Coordinator.Outcome<Long>> ran,
                                                      final LongAdder completed, final AtomicBoolean measuring) {
        return ran.onComplete(ar -> {
            if (measuring.get() && (ar.succeeded() || ar.cause() instanceof AbortException a && isOutcome(a.reason()))) {
                completed.increment();
            }
        });
    }

    /**
     * Sends {@code drawn} where {@code router} routes it, on the calling loop's coordinator of that node; a node that
     * refuses it (wrong owner) makes the router learn the current map, and it is sent again, up to {@code reroutes}
     * more times.
     */
    private Future<Coordinator.Outcome<Long>> routed(final EmbeddedScythe cluster, final Router router,
                                                     final SplittableRandom random, final OltpSpec.Drawn drawn,
                                                     final LongAdder[] completedByCn, final AtomicBoolean measuring,
                                                     final int reroutes) {
        return router.send(drawn.routingKey(), drawn.readOnly(), random, cluster::shardMap, reroutes,
            (cn, byShard) -> counted(byShard ? cluster.run(cn, drawn.routingKey(), drawn.declaredBody(), attempts(drawn))
                : cluster.coordinator(cn).run(drawn.declaredBody(), attempts(drawn)), completedByCn[cn], measuring));
    }

    /** The attempts the harness's rule gives a transaction of {@code drawn}'s type ({@link io.scythe.txn.OnAbort}). */
    private int attempts(final OltpSpec.Drawn drawn) {
        return onAbort.attempts(options.maxAttempts(), drawn.type());
    }

    /** The live progress of the run named {@code label}, or null when there is no line or the run is short. */
    private ClosedLoop.Progress progressOf(final String label, final List<Coordinator> coordinators,
                                           final long[] abortsBefore) {
        final ProgressLine line = progress;
        if (line == null || options.durationMs() < PROGRESS_MIN_MS) {
            return null;
        }
        return (elapsedNs, completed, failed, latencyNs) -> {
            // The coordinators' counters are read from this thread: a recent value is enough for a progress line.
            final long[] now = abortCounts(coordinators);
            long aborted = 0;
            for (final AbortReason reason : ProtocolRegistry.abortReasons()) {
                aborted += isOutcome(reason) ? 0 : now[reason.index()] - abortsBefore[reason.index()];
            }
            line.update(label, elapsedNs / 1e9, completed * 1e9 / elapsedNs,
                (double) aborted / Math.max(1, aborted + completed), latencyNs.getValueAtPercentile(99) / 1000.0);
        };
    }

    /** "read 2.00 cas 1.00 ..." of the verbs posted, per commit, the kinds that occurred. */
    private static String verbMix(final LoopCounters counters, final long committed) {
        final StringBuilder mix = new StringBuilder();
        for (final io.scythe.fabric.Opcode op : io.scythe.fabric.Opcode.values()) {
            final long n = counters.verbs().verbs(op);
            if (n > 0) {
                mix.append(mix.length() == 0 ? "" : " ").append(RunResult.kindOf(op))
                    .append(String.format(" %.2f", n / (double) Math.max(1, committed)));
            }
        }
        return mix.toString();
    }

    /** An abort that is the transaction's outcome (a rollback it asked for), not a failed attempt. */
    private boolean isOutcome(final AbortReason reason) {
        return reason == AbortReason.USER || reason == AbortReason.DUPLICATE_KEY && spec.duplicateKeyIsAnOutcome();
    }

    /** Stage sums of every coordinator, then the count of staged commits at the end. */
    private static long[] stageSums(final List<Coordinator> coordinators) {
        final long[] sums = new long[Stage.count() + 1];
        for (final Coordinator c : coordinators) {
            final long[] s = c.stageNanos();
            for (int i = 0; i < s.length; i++) {
                sums[i] += s[i];
            }
            sums[s.length] += c.stagedCommits();
        }
        return sums;
    }

    private static long[] abortCounts(final List<Coordinator> coordinators) {
        final long[] counts = new long[ProtocolRegistry.abortReasons().size()];
        for (final Coordinator c : coordinators) {
            for (final AbortReason reason : ProtocolRegistry.abortReasons()) {
                counts[reason.index()] += c.aborts(reason);
            }
        }
        return counts;
    }

    private long total(final List<LogDb> dbs) {
        return spec.total(dbs);
    }

    /** The workload's consistency conditions as results.json has them: name -&gt; ok, violations, the first five. */
    public static JsonObject consistencyJson(final Map<String, List<String>> conditions) {
        final JsonObject consistency = new JsonObject();
        for (final Map.Entry<String, List<String>> c : conditions.entrySet()) {
            consistency.put(c.getKey(), new JsonObject().put("ok", c.getValue().isEmpty())
                .put("violations", c.getValue().size())
                .put("first", new JsonArray(c.getValue().subList(0, Math.min(5, c.getValue().size())))));
        }
        return consistency;
    }

    /**
     * The conditions {@code protocol} is not judged on: the workload's write-skew conditions
     * ({@link OltpSpec#writeSkewConditions}) when it promises snapshot isolation only
     * ({@code Protocol#snapshotIsolation}, lotus-si), which allows write skew; none otherwise. The bench, the simulator and the explorer judge alike.
     */
    public static java.util.Set<String> writeSkewNotJudged(final Protocol protocol, final OltpSpec spec) {
        return protocol.snapshotIsolation() ? spec.writeSkewConditions() : java.util.Set.of();
    }

    /**
     * What became of the conditions not judged ({@link #writeSkewNotJudged}): the conserved quantity (when it is one
     * of them) and each consistency condition -&gt; "held" or "broken". Empty when none was checked.
     */
    public static JsonObject notJudgedJson(final java.util.Set<String> notJudged, final String quantity,
                                           final boolean conservedOk, final Map<String, List<String>> conditions) {
        final JsonObject json = new JsonObject();
        if (notJudged.contains(quantity)) {
            json.put(quantity, conservedOk ? "held" : "broken");
        }
        conditions.forEach((condition, broken) -> {
            if (notJudged.contains(condition)) {
                json.put(condition, broken.isEmpty() ? "held" : "broken");
            }
        });
        return json;
    }

    /** Objects whose Takeout Lock has someone queued or whose CAS lock is taken (also the simulator's check). */
    public static long locksHeld(final List<LogDb> dbs) {
        final long[] held = {0};
        forEachLocked(dbs, (node, table, header) -> held[0]++);
        return held[0];
    }

    /** An object {@link #forEachLocked} found locked: of {@code table} of {@code dbs[node]}, at {@code header}. */
    @FunctionalInterface
    public interface LockedObject {
        void at(int node, Table table, int header);
    }

    /** Visits every object that some protocol module's lock holds or queues on (its end-of-run probe). */
    public static void forEachLocked(final List<LogDb> dbs, final LockedObject visitor) {
        for (int node = 0; node < dbs.size(); node++) {
            for (final Table t : dbs.get(node).tables()) {
                // Slots with the room a protocol asked for (LogDb#objectRoom) too.
                final int slot = t.objectSlotBytes();
                for (long at = 0; at + slot <= t.objectMemory().capacity(); at += slot) {
                    final int o = (int) at;
                    if (ProtocolRegistry.anyLockHeld(t, o)) {
                        visitor.at(node, t, o);
                    }
                }
            }
        }
    }
}
