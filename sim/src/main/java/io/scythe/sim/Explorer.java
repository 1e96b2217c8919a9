package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.vertx.core.Vertx;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * The seed explorer: runs many seeds of a small contended SmallBank (few accounts, Zipf 0.99, several loops and
 * clients, completion jitter that reorders verbs across queue pairs) under each protocol with every invariant and the
 * history check on, and reports each failing seed with the exact command that replays it.
 */
public final class Explorer {
    /** The small contended workload: 50 accounts, Zipf 0.99, the Scythe mix. */
    public static final long ACCOUNTS = 50;
    public static final double THETA = 0.99;
    public static final String MIX = "scythe";

    /** A seed that broke an invariant, and how to replay it. */
    public record Failure(String protocol, long seed, String reason, String replay) {
    }

    private Explorer() {
    }

    /** The options of one explored seed: 1 CN, 2 loops, 6 clients, 2 MNs, 150 us virtual, 2 us jitter. */
    public static SimOptions options(final String protocol, final long seed) {
        return new SimOptions().protocol(protocol).computeNodes(1).loopsPerComputeNode(2).clientsPerComputeNode(6)
            .memoryNodes(2).durationNs(150_000).seed(seed).faults(new Faults().jitterNs(2_000));
    }

    /** The command that replays {@code options} (the explorer's workload). */
    public static String replayCommand(final SimOptions o) {
        return "scythe sim --workload smallbank --accounts " + ACCOUNTS + " --theta " + THETA + " --mix " + MIX
            + " --protocols " + o.protocol() + " --cns " + o.computeNodes() + " --loops " + o.loopsPerComputeNode()
            + " --clients " + o.clientsPerComputeNode() + " --mns " + o.memoryNodes() + " --duration "
            + o.durationNs() / 1000 + "us --jitter " + o.faults().jitterNs() / 1000 + "us --check-history --seed "
            + o.seed();
    }

    /**
     * Runs seeds {@code firstSeed .. firstSeed + seeds - 1} of each protocol.
     *
     * @param optionsOf the options of a seed, for one protocol (normally {@link #options})
     */
    public static List<Failure> explore(final Vertx vertx, final List<String> protocols, final long firstSeed,
                                        final int seeds, final java.util.function.BiFunction<String, Long,
                                            SimOptions> optionsOf, final PrintStream out) throws Exception {
        final List<Failure> failures = new ArrayList<>();
        for (final String protocol : protocols) {
            int failed = 0;
            long committed = 0;
            for (long seed = firstSeed; seed < firstSeed + seeds; seed++) {
                final SimOptions o = optionsOf.apply(protocol, seed);
                final Failure f = check(vertx, o);
                committed += f == null ? lastCommitted : 0;
                if (f != null) {
                    failures.add(f);
                    failed++;
                    out.println("FAILED " + protocol + " seed " + seed + ": " + f.reason());
                    out.println("  replay: " + f.replay());
                }
            }
            out.printf("%-10s %d seeds, %d failed, %d transactions committed%n", protocol, seeds, failed, committed);
        }
        return failures;
    }

    private static long lastCommitted;

    /** One seed: {@code null} when every invariant held, else what broke. */
    public static Failure check(final Vertx vertx, final SimOptions o) throws Exception {
        final VersionChecker versions = new VersionChecker();
        final SimResult r;
        try {
            r = new Simulation(o, new SmallBankSpec(ACCOUNTS, THETA, MIX)).recordCommits(versions).run(vertx);
        } catch (final Exception e) {
            return new Failure(o.protocol(), o.seed(), "the run failed: " + e, replayCommand(o));
        }
        lastCommitted = r.run().toJson().getLong("committed");
        final List<String> reasons = new ArrayList<>();
        final var json = r.run().toJson();
        if (!json.getJsonObject("conserved").getBoolean("ok")) {
            reasons.add("money not conserved " + json.getJsonObject("conserved").encode());
        }
        if (json.getLong("locks_left_held") != 0) {
            reasons.add(json.getLong("locks_left_held") + " locks left held");
        }
        final var sim = json.getJsonObject("sim");
        if (!sim.getBoolean("quiescent")) {
            reasons.add(sim.getLong("unfinished_clients") + " transactions never finished " + sim.getValue("unfinished"));
        }
        if (sim.getLong("errors") != 0) {
            reasons.add(sim.getLong("errors") + " transactions failed with errors: " + sim.getString("first_error"));
        }
        if (sim.containsKey("failure")) {
            reasons.add("a task failed: " + sim.getString("failure"));
        }
        if (!versions.violations().isEmpty()) {
            reasons.add("history: " + versions.violations().get(0));
        }
        return reasons.isEmpty() ? null : new Failure(o.protocol(), o.seed(), String.join("; ", reasons),
            replayCommand(o));
    }
}
