package io.scythe.txn.lotus;

/**
 * Lotus's load-balancing knobs (lotus.md §2.2, level 2): every {@code reshardEveryNs} each compute node publishes its
 * mean transaction latency; one whose latency stays more than {@code overload} times the mean of the others'
 * published ones for {@code overloadedIntervals} intervals hands its hottest shard to the fastest node; a handoff
 * waits for the shard's lock holders and aborts them after {@code forceAbortAfterNs}. The paper's values are the
 * defaults; {@code reshardEveryNs} 0 turns resharding off. {@code leaseNs} is each node's membership lease (the
 * paper's lease-based failure detection, its length unspecified: 1 ms here), renewed every quarter of it; a node whose
 * lease ran out is dead to the others (0: no leases).
 */
public record LotusOptions(long reshardEveryNs, double overload, int overloadedIntervals, long forceAbortAfterNs,
                           long drainPollNs, long leaseNs) {
    /** The paper's: 100 ms, 50 % above the mean, 3 intervals, 10 ms; the holders are looked at every 10 us. */
    public static final LotusOptions PAPER = new LotusOptions(100_000_000, 1.5, 3, 10_000_000, 10_000, 1_000_000);
    /** The lease where timers run on wall-clock time ({@link LotusCluster#WALL_CLOCK}): 1 s, beyond a loop's stalls. */
    public static final long WALL_CLOCK_LEASE_NS = 1_000_000_000L;

    public LotusOptions {
        if (reshardEveryNs < 0 || overload <= 1 || overloadedIntervals < 1 || forceAbortAfterNs < 0
            || drainPollNs <= 0 || leaseNs < 0) {
            throw new IllegalArgumentException("lotus options: reshard every >= 0 ns, overload > 1, intervals >= 1, "
                + "force abort after >= 0 ns, drain poll > 0 ns; not " + reshardEveryNs + ", " + overload + ", "
                + overloadedIntervals + ", " + forceAbortAfterNs + ", " + drainPollNs);
        }
    }

    /** These options resharding every {@code ns} (0: never). */
    public LotusOptions reshardEvery(final long ns) {
        return new LotusOptions(ns, overload, overloadedIntervals, forceAbortAfterNs, drainPollNs, leaseNs);
    }

    /** These options aborting a handoff's lock holders after {@code ns}. */
    public LotusOptions forceAbortAfter(final long ns) {
        return new LotusOptions(reshardEveryNs, overload, overloadedIntervals, ns, drainPollNs, leaseNs);
    }

    /** These options with membership leases of {@code ns} (0: none). */
    public LotusOptions lease(final long ns) {
        return new LotusOptions(reshardEveryNs, overload, overloadedIntervals, forceAbortAfterNs, drainPollNs, ns);
    }
}
