package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.KeyChurnSpec;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.bench.workload.Tpcc;
import io.scythe.bench.workload.TpccSpec;
import io.scythe.storage.ObjectLayout;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * The seed explorer: runs many seeds of a small contended workload (several loops and clients, completion jitter
 * that reorders verbs across queue pairs) under each protocol with every invariant on and each run's committed history
 * checked for serializability ({@link SerializabilityChecker}, in memory), and reports each failing seed with the
 * exact command that replays it. The workloads ({@link Workload}) cover updates (SmallBank), keys that appear and
 * disappear (phantom, churn) and a schema with inserts, deletes and read-only tables (TPC-C).
 */
public final class Explorer {
    /** The small contended SmallBank: 50 accounts, Zipf 0.99, the Scythe mix. */
    public static final long ACCOUNTS = 50;
    public static final double THETA = 0.99;
    public static final String MIX = "scythe";
    /**
     * SmallBank's mix for a protocol judged by snapshot isolation ({@code Protocol#snapshotIsolation}: lotus-si,
     * motor-si): the standard one. The Scythe mix has no WriteCheck, so none of its read-write transactions reads a
     * key it does not write, and SI's reads below T_start without validation were never explored on SmallBank
     * (issue 19: lotus and lotus-si committed the same 40,044 transactions over 1,000 seeds at 3 CNs). Only the SI
     * protocols' seeds change: every serializable protocol's sweep runs the seeds it ran before.
     */
    public static final String SI_MIX = "standard";

    /** What the explorer runs: a small contended instance of a workload, and how the CLI names it. */
    public enum Workload {
        /** 50 accounts, Zipf 0.99, the Scythe mix ({@link #SI_MIX} for a protocol judged by snapshot isolation). */
        SMALLBANK("--workload smallbank --accounts " + ACCOUNTS + " --theta " + THETA + " --mix " + MIX),
        /** 2 groups of a flag and a mark that Claim inserts, Raise must not race, Reset deletes (KeyChurnSpec). */
        PHANTOM("--workload phantom --keys 2"),
        /** 2 counters updated, deleted and inserted blind. */
        CHURN("--workload churn --keys 1"),
        /** 1 warehouse, 30 customers per district, 100 items: NewOrder inserts, Delivery deletes, on few rows. */
        TPCC("--workload tpcc --warehouses 1 --customers 30 --items 100 --theta " + THETA),
        /**
         * Transactions through SELCC's B-link tree ({@link TreeSim#EXPLORED}), checked by the ledger's serial replay
         * ({@link TreeSim#check}) instead of the history checker; not in {@link #swept} (the sweeps' seeds stay).
         */
        BLINK(TreeSim.EXPLORED);

        private final String cliArgs;

        Workload(final String cliArgs) {
            this.cliArgs = cliArgs;
        }

        /** The workloads {@code --workload all} and the seed sweeps run: all but {@link #BLINK}. */
        public static List<Workload> swept() {
            return List.of(SMALLBANK, PHANTOM, CHURN, TPCC);
        }

        /** A fresh spec of this workload (specs keep per-run state, e.g. TPC-C's history keys). */
        public OltpSpec spec(final long seed) {
            return spec(seed, false);
        }

        /**
         * A fresh spec of this workload for a protocol judged by snapshot isolation ({@code si}) or serializability:
         * SmallBank runs {@link #SI_MIX} under the first, so that its read-write transactions read keys they do not
         * write (WriteCheck); the other workloads are the same for both.
         */
        public OltpSpec spec(final long seed, final boolean si) {
            switch (this) {
                case BLINK:
                    throw new IllegalStateException("the blink workload's spec is sized by its run's memory nodes: "
                        + "TreeSim#check builds it");
                case SMALLBANK:
                    return new SmallBankSpec(ACCOUNTS, THETA, si ? SI_MIX : MIX);
                case PHANTOM:
                    return new KeyChurnSpec(KeyChurnSpec.Shape.PHANTOM, 2);
                case CHURN:
                    return new KeyChurnSpec(KeyChurnSpec.Shape.CHURN, 1);
                default:
                    return new TpccSpec(new Tpcc.Scale(1, 30, 100, TpccSpec.headroomFor(0)), THETA, seed);
            }
        }

        /** The {@code scythe sim} options that select this workload. */
        public String cliArgs() {
            return cliArgs;
        }

        /** The {@code scythe sim} options that select this workload as {@link #spec(long, boolean)} builds it. */
        public String cliArgs(final boolean si) {
            return si && this == SMALLBANK ? cliArgs.replace(" --mix " + MIX, " --mix " + SI_MIX) : cliArgs;
        }

        /** The workload called {@code name} on the command line, or null. */
        public static Workload named(final String name) {
            for (final Workload w : values()) {
                if (w.name().equalsIgnoreCase(name)) {
                    return w;
                }
            }
            return null;
        }
    }
    /** Cycles and impossibilities the checker details per run; all are counted. */
    private static final int DETAILED = 3;

    /**
     * A seed that broke an invariant, and how to replay it.
     *
     * @param history the serializability checker's verdict on the run's committed history ({@code null} when the run
     *                itself failed)
     */
    public record Failure(String protocol, long seed, String reason, String replay,
                          SerializabilityChecker.Result history) {
        /** The checker found a dependency cycle (G0, G1c or G2) in the run's history. */
        public boolean cyclic() {
            return history != null && history.components() > 0;
        }
    }

    /**
     * One seed's outcome: what broke ({@code null}: nothing), the commits, the checker's verdict, the run's
     * results ({@code null} when the run itself failed), and how many committed transactions that wrote read a key
     * they did not write ({@code History#writersReadingUnwritten}: under snapshot isolation, reads no lock or
     * validation covers).
     */
    public record Outcome(Failure failure, long committed, SerializabilityChecker.Result history, JsonObject run,
                          long snapshotReaders) {
        /** Whether a loop gave up (a verb fault it could not settle safely): its node stopped serving. */
        public boolean gaveUp() {
            return run != null && run.getJsonObject("sim").containsKey("gave_up");
        }
    }

    private Explorer() {
    }

    /** How often the explored memory nodes reclaim abandoned inserts: often, so that slots are reused in a run. */
    public static final long RECLAIM_EVERY_NS = 10_000;

    /**
     * The options of one explored seed: 1 CN, 2 loops, 6 clients, 2 MNs, 150 us virtual, 2 us jitter, reclamation
     * every 10 us.
     */
    public static SimOptions options(final String protocol, final long seed) {
        return new SimOptions().protocol(protocol).computeNodes(1).loopsPerComputeNode(2).clientsPerComputeNode(6)
            .memoryNodes(2).durationNs(150_000).seed(seed).faults(new Faults().jitterNs(2_000))
            .reclaimEveryNs(RECLAIM_EVERY_NS);
    }

    /**
     * {@code o} (the options of a seed of {@code workload}, before its crash is drawn) lengthened for its protocol:
     * TPC-C runs {@link io.scythe.txn.spi.ProtocolModule#explorerTpccRunScale} times {@link #options}' duration (CALVIN
     * 4x: it committed 15 transactions over 100 crash seeds in 150 us); every other protocol and workload as it was.
     */
    public static SimOptions lengthened(final Workload workload, final SimOptions o) {
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(o.protocol());
        if (workload == Workload.BLINK) { // 2 CNs of 3 clients, 300 us: the tree's seeds as they were (TreeSim)
            return o.computeNodes(2).clientsPerComputeNode(3).durationNs(300_000);
        }
        final int scale = workload != Workload.TPCC || module == null ? 1
            : module.explorerTpccRunScale(io.scythe.txn.spi.ProtocolRegistry.protocol(o.protocol()));
        return scale == 1 ? o : o.durationNs(o.durationNs() * scale);
    }

    /** Salt of a seed's crash draws: the run's own streams stay as they were. */
    private static final long CRASH_SEED_SALT = 0x3C6EF372FE94F82BL;

    /**
     * The options of one explored seed with a crash: those of {@link #options}, the 6 clients split over 2 CNs (3
     * each), commits logged (redo log), and, after {@link #crash}, one CN crashed and recovered.
     */
    public static SimOptions crashOptions(final String protocol, final long seed) {
        return options(protocol, seed).computeNodes(2).clientsPerComputeNode(3).redoLog(true);
    }

    /**
     * Crashes one of {@code o}'s compute nodes, drawn from its seed, at a virtual time drawn uniformly over its run
     * (so across seeds the crash hits every stage of the transactions in flight), and recovers it.
     */
    public static SimOptions crash(final SimOptions o) {
        return crash(o, -1, Faults.DEFAULT_DETECT_NS);
    }

    /**
     * As {@link #crash(SimOptions)}, but crashing compute node {@code cn} (-1: drawn from the seed as there); the
     * time is drawn the same way either way.
     */
    public static SimOptions crash(final SimOptions o, final int cn) {
        return crash(o, cn, Faults.DEFAULT_DETECT_NS);
    }

    /**
     * {@link #crash(SimOptions, int)}, the crash detected {@code detectNs} later. A protocol that resolves a dead
     * compute node's transactions itself, refusing the shared recovery ({@link io.scythe.txn.spi.ProtocolModule#ownCrashRecovery}: Aurogon,
     * through its backups) runs with that many backups on at least 3 memory nodes, no redo log and no shared recovery:
     * the shared one (with 2 memory nodes and no backups) failed 42 of 50 Aurogon seeds, as it does not know Aurogon's
     * pending versions.
     */
    public static SimOptions crash(final SimOptions o, final int cn, final long detectNs) {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(o.seed() ^ CRASH_SEED_SALT);
        final int drawn = random.nextInt(o.computeNodes());
        final long atNs = 1 + random.nextLong(o.durationNs() - 1);
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(o.protocol());
        final io.scythe.txn.spi.ProtocolModule.OwnCrashRecovery own = module == null ? null
            : module.ownCrashRecovery(io.scythe.txn.spi.ProtocolRegistry.protocol(o.protocol()));
        final boolean alone = own != null && !own.besideShared();
        if (alone) {
            o.memoryNodes(Math.max(o.memoryNodes(), own.replicas() + 2)).replicas(Math.max(o.replicas(),
                own.replicas())).redoLog(false);
        }
        o.faults().crash(cn < 0 ? drawn : cn, atNs).recover(!alone, detectNs);
        return o;
    }

    /** Salt of a memory-node crash's time, drawn apart from a compute-node crash's ({@link #CRASH_SEED_SALT}). */
    private static final long MN_CRASH_SEED_SALT = 0x5851F42D4C957F2DL;

    /**
     * Crashes memory node {@code mn} of {@code o} (a backup of its partition promoted {@code detectNs} later): at the
     * compute-node crash's time when {@code o} has one (the command line's {@code --crash-at} is one time for both,
     * so the replay command says the same), else at a virtual time drawn uniformly over the run from its seed.
     * {@code o} must keep a backup a partition ({@code --replicas}); {@link SimOptions#validate} says so otherwise.
     */
    public static SimOptions crashMemoryNode(final SimOptions o, final int mn, final long detectNs) {
        final long atNs = o.faults().crashCn() != Faults.NO_CRASH ? o.faults().crashAtNs()
            : 1 + new java.util.SplittableRandom(o.seed() ^ MN_CRASH_SEED_SALT).nextLong(o.durationNs() - 1);
        if (o.faults().crashCn() != Faults.NO_CRASH && o.faults().recover()) {
            // The host's redo-log recovery is not modelled with a memory-node crash (Faults#validate): a protocol
            // that recovers a dead compute node by itself (Lotus's leases) runs its CN crash without it.
            final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(o.protocol());
            if (module != null && module.ownCrashRecovery(
                io.scythe.txn.spi.ProtocolRegistry.protocol(o.protocol())) != null) {
                o.faults().recover(false, detectNs);
            }
        }
        o.faults().crashMemoryNode(mn, atNs, detectNs);
        return o;
    }

    /** Salt of a partition's start, drawn apart from the crashes' times. */
    private static final long PARTITION_SEED_SALT = 0x632BE59BD9B4E019L;

    /**
     * Cuts {@code nodes} of {@code o} off from the others for {@code forNs} from {@code atNs}, or (negative) from a
     * virtual time drawn uniformly over the run from its seed, so that across seeds the cut hits every stage (after
     * a memory-node crash's promotion when {@code o} has one: set it first).
     */
    public static SimOptions partition(final SimOptions o, final java.util.Collection<String> nodes, final long atNs,
                                       final long forNs) {
        // With a memory-node crash, drawn after its promotion (crash plus detection) when that is within the run: the
        // partition then cuts the promoted replacement (or a CN) off from the configuration it serves in.
        final long from = o.faults().crashMn() == Faults.NO_CRASH ? 0
            : Math.min(o.durationNs() - 1, o.faults().crashMnAtNs() + o.faults().detectNs());
        final long at = atNs >= 0 ? atNs
            : from + new java.util.SplittableRandom(o.seed() ^ PARTITION_SEED_SALT).nextLong(o.durationNs() - from);
        o.faults().partition(nodes, at, forNs);
        return o;
    }

    /** A seed's options before the explorer sets any: the defaults a replay line leaves to the command line's. */
    private static final SimOptions DEFAULTS = new SimOptions();

    /** {@code ns} as the command line's microseconds, to the nanosecond ({@code 12.345us}). */
    private static String exactMicros(final long ns) {
        return ns / 1000 + "." + String.format(java.util.Locale.ROOT, "%03d", ns % 1000) + "us";
    }

    /**
     * {@code ns} as the command line reads it back to the nanosecond: whole microseconds ({@code 150us}), else
     * {@link #exactMicros}. Before, the replay line truncated to whole microseconds ({@code --duration 120.5us}
     * replayed as 120us, {@code --jitter 1.5us} as 1us) or wrote a double the command line does not read
     * ({@code --mn-slow-to 10s} as {@code 1.0E7us}).
     */
    private static String micros(final long ns) {
        return ns % 1000 == 0 ? ns / 1000 + "us" : exactMicros(ns);
    }

    /** The command that replays {@code options} of {@code workload}. */
    public static String replayCommand(final Workload workload, final SimOptions o) {
        return replayCommand(workload.cliArgs(snapshotIsolation(o.protocol())), o);
    }

    /** Whether the registry's protocol {@code name} (options after its name allowed) is judged by snapshot isolation. */
    public static boolean snapshotIsolation(final String name) {
        return io.scythe.txn.spi.ProtocolRegistry.protocol(name).snapshotIsolation();
    }

    /** The command that replays {@code options} of the workload {@code cliArgs} selects. */
    public static String replayCommand(final String cliArgs, final SimOptions o) {
        return "scythe sim " + cliArgs + " --protocols " + o.protocol() + " --cns " + o.computeNodes() + " --loops " + o.loopsPerComputeNode()
            + " --clients " + o.clientsPerComputeNode() + " --mns " + o.memoryNodes()
            // Always spelt out: the explorer's SimOptions default (a TSO group per loop) is not the CLI's (per CN), and
            // a replay left to the CLI's default ran another seed's schedule (selcc-to phantom seed 1: 10 commits, not 15).
            + " --tso-group " + (o.tsoGroupPerComputeNode() ? "cn" : "loop")
            + (o.tsoProxies() > 0 ? " --tso-proxies " + o.tsoProxies() : "") + " --duration "
            + micros(o.durationNs()) + " --jitter " + micros(o.faults().jitterNs())
            + (o.faults().verbFailRate() > 0 ? " --verb-fail-rate " + o.faults().verbFailRate() + " --verb-fail-kinds "
            + String.join(",", Faults.kindNames(o.faults().verbFailKinds())) : "")
            + (o.reclaimEveryNs() > 0 ? " --reclaim-every " + micros(o.reclaimEveryNs()) : "")
            // What the command line may carry into the seeds besides the topology (each only when not the default,
            // which the CLI's default is too): SimCommand#exploreOptions.
            + (o.maxAttempts() != DEFAULTS.maxAttempts() ? " --max-attempts " + o.maxAttempts() : "")
            + (o.onAbort() != DEFAULTS.onAbort() ? " --on-abort " + o.onAbort().label() : "")
            + (o.drainNs() != DEFAULTS.drainNs() ? " --drain " + micros(o.drainNs()) : "")
            + (o.drainMaxNs() != Math.max(SimOptions.DEFAULT_DRAIN_MAX_NS, o.drainNs()) ? " --drain-max "
            + micros(o.drainMaxNs()) : "")
            + (o.watermarks().equals(io.scythe.hotspot.Watermarks.DEFAULT) ? "" : " --watermarks "
            + o.watermarks().cold() + "," + o.watermarks().hot())
            + (o.replicas() > 0 ? " --replicas " + o.replicas() : "")
            + (o.lookup() == io.scythe.storage.remote.RemoteTable.LookupMode.ONE_SIDED ? " --lookup onesided" : "")
            + (o.redoLog() ? " --redo-log" : "") + (o.colocate() ? " --colocate" : "")
            + (o.faults().crashCn() == Faults.NO_CRASH ? "" : " --crash-cn " + java.util.Arrays.stream(
            o.faults().crashCns()).mapToObj(String::valueOf).collect(java.util.stream.Collectors.joining(","))
            + " --crash-at " + crashTimes(o.faults()) + (o.faults().recover() ? " --crash-recover" : "")
            + (o.faults().recover() && o.faults().detectNs() != Faults.DEFAULT_DETECT_NS ? " --crash-detect "
            + micros(o.faults().detectNs()) : "")
            + (o.faults().detectStaggerNs() > 0 ? " --crash-stagger " + micros(o.faults().detectStaggerNs()) : "")
            + (o.faults().restartAfterNs() >= 0 ? " --crash-restart-after " + micros(o.faults().restartAfterNs())
            : ""))
            + (o.faults().crashMn() == Faults.NO_CRASH ? "" : " --crash-mn " + o.faults().crashMn()
            // One --crash-at for both crashes: crashMemoryNode takes the compute node's time when there is one.
            + (o.faults().crashCn() != Faults.NO_CRASH ? "" : " --crash-at " + exactMicros(o.faults().crashMnAtNs()))
            + (o.faults().detectNs() != Faults.DEFAULT_DETECT_NS && !o.faults().recover() ? " --crash-detect "
            + micros(o.faults().detectNs()) : ""))
            + (o.faults().partitioned().isEmpty() ? "" : " --partition " + String.join(",", o.faults().partitioned())
            + " --partition-at " + exactMicros(o.faults().partitionAtNs()) + " --partition-for "
            + micros(o.faults().partitionForNs()))
            + (o.faults().mnSlowFactor() == 1 ? "" : " --mn-slow " + o.faults().mnSlowFactor() + " --mn-slow-from "
            + micros(o.faults().mnSlowFromNs()) + (o.faults().mnSlowToNs() == Long.MAX_VALUE ? ""
            : " --mn-slow-to " + micros(o.faults().mnSlowToNs())))
            + (o.routing() == io.scythe.routing.RoutingMode.LOCAL ? "" : " --routing " + o.routing().label()
            + " --shards " + o.shards() + (o.moveShardEveryNs() > 0 ? " --move-shard-every "
            + micros(o.moveShardEveryNs()) : ""))
            + " --check-history --seed " + o.seed();
    }

    /** {@code --crash-at}'s value for {@code faults}: one time, or one per crashed CN when they differ. */
    private static String crashTimes(final Faults faults) {
        final int times = faults.staggered() ? faults.crashCns().length : 1;
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < times; i++) {
            out.append(i == 0 ? "" : ",").append(exactMicros(faults.crashAtNs(i)));
        }
        return out.toString();
    }

    /**
     * Runs seeds {@code firstSeed .. firstSeed + seeds - 1} of each protocol. Prints each failing seed (the first
     * one per protocol with the checker's verdict in full) and a summary line per protocol.
     *
     * @param optionsOf the options of a seed, for one protocol (normally {@link #options})
     */
    public static List<Failure> explore(final Vertx vertx, final List<String> protocols, final long firstSeed,
                                        final int seeds, final BiFunction<String, Long, SimOptions> optionsOf,
                                        final PrintStream out) throws Exception {
        return explore(vertx, Workload.SMALLBANK, protocols, firstSeed, seeds, optionsOf, out);
    }

    /** As {@link #explore(Vertx, List, long, int, BiFunction, PrintStream)}, on {@code workload}. */
    public static List<Failure> explore(final Vertx vertx, final Workload workload, final List<String> protocols,
                                        final long firstSeed, final int seeds,
                                        final BiFunction<String, Long, SimOptions> optionsOf, final PrintStream out)
        throws Exception {
        return explore(vertx, workload, protocols, firstSeed, seeds, optionsOf, o -> check(vertx, workload, o), out);
    }

    /** How one seed's run is checked (normally {@link #check(Vertx, Workload, SimOptions)}). */
    @FunctionalInterface
    public interface SeedCheck {
        Outcome check(SimOptions o) throws Exception;
    }

    /** As above, each seed checked by {@code checkSeed} (the blink workload's with its {@code --blink-txn}). */
    public static List<Failure> explore(final Vertx vertx, final Workload workload, final List<String> protocols,
                                        final long firstSeed, final int seeds,
                                        final BiFunction<String, Long, SimOptions> optionsOf,
                                        final SeedCheck checkSeed, final PrintStream out) throws Exception {
        final List<Failure> failures = new ArrayList<>();
        for (final String protocol : protocols) {
            int failed = 0;
            int gaveUp = 0;
            final List<Long> gaveUpSeeds = new ArrayList<>(); // named in the summary, to replay one
            long committed = 0;
            long checked = 0;
            long snapshotReaders = 0;
            final Map<String, Integer> seedsByAnomaly = new TreeMap<>();
            final Map<String, Integer> crashesByStage = new TreeMap<>();
            long committedByRecovery = 0;
            final Map<String, Integer> brokenNotJudged = new TreeMap<>();
            for (long seed = firstSeed; seed < firstSeed + seeds; seed++) {
                final Outcome o = checkSeed.check(optionsOf.apply(protocol, seed));
                committed += o.committed();
                snapshotReaders += o.snapshotReaders();
                gaveUp += o.gaveUp() ? 1 : 0;
                if (o.gaveUp() && gaveUpSeeds.size() < 20) {
                    gaveUpSeeds.add(seed);
                }
                final JsonObject crash = o.run() == null ? null : o.run().getJsonObject("sim").getJsonObject("crash");
                if (crash != null && crash.getValue("recovery") instanceof JsonObject r) {
                    if (r.getValue("nodes") instanceof io.vertx.core.json.JsonArray several) { // --crash-cn a,b
                        for (int i = 0; i < several.size(); i++) {
                            crashesByStage.merge(several.getJsonObject(i).getJsonObject("at_crash").getString("stage"),
                                1, Integer::sum);
                        }
                    } else {
                        crashesByStage.merge(r.getJsonObject("at_crash").getString("stage"), 1, Integer::sum);
                    }
                    committedByRecovery += r.getLong("committed_by_recovery", 0L);
                }
                if (o.run() != null && o.run().getJsonObject("sim").getValue("write_skew_not_judged")
                    instanceof JsonObject skew) {
                    skew.forEach(e -> brokenNotJudged.merge(e.getKey(), "broken".equals(e.getValue()) ? 1 : 0,
                        Integer::sum));
                }
                if (o.history() != null) {
                    checked += o.history().transactions();
                    o.history().cycles().stream().map(SerializabilityChecker.Cycle::anomaly).distinct()
                        .forEach(a -> seedsByAnomaly.merge(a, 1, Integer::sum));
                    if (o.history().impossibleCount() > 0) {
                        seedsByAnomaly.merge("impossible", 1, Integer::sum);
                    }
                }
                final Failure f = o.failure();
                if (f != null) {
                    out.println("FAILED " + protocol + " seed " + seed + ": " + f.reason());
                    if (failed == 0 && f.history() != null && !f.history().serializable()) {
                        f.history().lines().forEach(line -> out.println("    " + line));
                    }
                    out.println("  replay: " + f.replay());
                    failures.add(f);
                    failed++;
                }
            }
            out.printf("%-10s %-9s %d seeds, %d failed, %d transactions committed, %s%s%s%n",
                protocol, workload.name().toLowerCase(java.util.Locale.ROOT), seeds, failed, committed,
                workload == Workload.BLINK ? "checked by a serial replay in " + (TreeSim.ordered(protocol)
                    ? "timestamp" : "commit") + " order" + (crashesByStage.isEmpty()
                    ? "" : " (a crash's commits in doubt each judged all or nothing)")
                    : checked + " checked for serializability",
                seedsByAnomaly.isEmpty() ? "" : "; seeds with " + seedsByAnomaly.toString().replace("=", ": "),
                gaveUp == 0 ? "" : "; " + gaveUp + " seeds gave a loop up (its node stopped serving; seeds "
                    + gaveUpSeeds.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "))
                    + (gaveUp > gaveUpSeeds.size() ? ", ..." : "") + ")");
            if (snapshotIsolation(protocol)) {
                // Whether SI's own path ran: reads below T_start that no validation checks and no lock covers.
                out.printf("%-10s %-9s judged by snapshot isolation; %d committed read-write transactions read a key "
                        + "they did not write (SI's unvalidated snapshot reads)%n", protocol,
                    workload.name().toLowerCase(java.util.Locale.ROOT), snapshotReaders);
            }
            if (!brokenNotJudged.isEmpty()) {
                out.printf("%-10s %-9s not judged (write skew, which snapshot isolation allows), seeds broken in: %s%n",
                    protocol, workload.name().toLowerCase(java.util.Locale.ROOT),
                    brokenNotJudged.toString().replace("=", ": "));
            }
            if (!crashesByStage.isEmpty()) {
                out.printf("%-10s %-9s crashes recovered, by what the crashed CN was doing: %s; %d of its commits "
                        + "decided by recovery (rolled forward or found finished)%n", protocol,
                    workload.name().toLowerCase(java.util.Locale.ROOT), crashesByStage.toString().replace("=", ": "),
                    committedByRecovery);
            }
        }
        return failures;
    }

    /** One seed of SmallBank, with every invariant and the serializability checker on. */
    public static Outcome check(final Vertx vertx, final SimOptions o) throws Exception {
        return check(vertx, Workload.SMALLBANK, o);
    }

    /** One seed of {@code workload}, with every invariant and the serializability checker on. */
    public static Outcome check(final Vertx vertx, final Workload workload, final SimOptions o) throws Exception {
        if (workload == Workload.BLINK) {
            return TreeSim.check(vertx, o, TreeSim.EXPLORED_OPS);
        }
        return check(vertx, workload, o, null);
    }

    /** As {@link #check(Vertx, Workload, SimOptions)}, running {@code protocol} instead of the one {@code o} names. */
    public static Outcome check(final Vertx vertx, final Workload workload, final SimOptions o,
                                final io.scythe.txn.Protocol protocol) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION,
            workload.name().toLowerCase(java.util.Locale.ROOT) + " " + o.protocol() + " seed " + o.seed());
        final boolean si = (protocol != null ? protocol
            : io.scythe.txn.spi.ProtocolRegistry.protocol(o.protocol())).snapshotIsolation();
        final OltpSpec spec = workload.spec(o.seed(), si);
        final String replay = replayCommand(workload.cliArgs(si), o);
        final SimResult r;
        try {
            final Simulation simulation = new Simulation(o, spec).recorder(recorded);
            if (protocol != null) {
                simulation.protocol(protocol);
            }
            r = simulation.run(vertx);
        } catch (final Exception e) {
            return new Outcome(new Failure(o.protocol(), o.seed(), "the run failed: " + e, replay, null), 0,
                null, null, 0);
        }
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), DETAILED);
        final var json = r.run().toJson();
        final List<String> reasons = new ArrayList<>();
        if (historyFails(history, si)) {
            reasons.add(verdict(history));
        }
        json.getJsonObject("sim").getJsonArray("violations").forEach(v -> reasons.add((String) v));
        final Failure failure = reasons.isEmpty() ? null
            : new Failure(o.protocol(), o.seed(), String.join("; ", reasons), replay, history);
        return new Outcome(failure, json.getLong("committed"), history, json,
            recorded.history().writersReadingUnwritten());
    }

    /**
     * Whether the checker's verdict on a run's history fails the run ({@code run}: its results): any cycle or
     * impossibility. A commit given up past its point of no return is recorded in doubt
     * ({@code HistoryRecorder#inDoubt}), so reads of the versions it installed are not "impossible". A protocol that
     * promises snapshot isolation only ({@code Protocol#snapshotIsolation}, lotus-si; {@code run}'s protocol) fails on
     * a cycle without two consecutive rw edges instead ({@code Result#snapshotIsolationAllowed}): write skew passes, and
     * the workload's write-skew conditions ({@code OltpSpec#writeSkewConditions}) are not judged by the simulation.
     * Before, only {@link #check} judged by snapshot isolation, and {@code scythe sim --check-history} (the explorer's
     * replay) failed an SI protocol's run on SmallBank's standard mix for the read-only anomaly SI allows.
     */
    public static boolean historyFails(final SerializabilityChecker.Result history, final JsonObject run) {
        return historyFails(history, snapshotIsolation(run.getString("protocol")));
    }

    /**
     * Whether the checker's verdict fails a run of a protocol judged by snapshot isolation ({@code si}: a cycle
     * without two consecutive rw edges, or an impossibility) or by serializability (any cycle or impossibility).
     */
    public static boolean historyFails(final SerializabilityChecker.Result history, final boolean si) {
        return si ? !history.snapshotIsolationAllowed() : !history.serializable();
    }

    /** The checker's verdict in one line: the cycles by class, the impossibilities, the first of each. */
    public static String verdict(final SerializabilityChecker.Result r) {
        final List<String> parts = new ArrayList<>();
        if (r.components() > 0) {
            final Map<String, Integer> byClass = new TreeMap<>();
            r.cycles().forEach(c -> byClass.merge(c.anomaly(), 1, Integer::sum));
            final SerializabilityChecker.Cycle first = r.cycles().get(0);
            parts.add("NOT SERIALIZABLE: " + r.components() + " cycle(s), of the first " + r.cycles().size() + ": "
                + byClass.toString().replace("=", " x") + "; first: " + first.anomaly() + " "
                + first.transactions().stream().map(t -> "T" + t).toList());
        }
        if (r.impossibleCount() > 0) {
            parts.add("IMPOSSIBLE HISTORY: " + r.impossibleCount() + " problem(s); first: " + r.impossible().get(0));
        }
        if (r.components() > 0 && r.snapshotIsolationCycles() > 0) {
            parts.add(r.snapshotIsolationVerdict());
        }
        return "history " + String.join("; ", parts);
    }
}
