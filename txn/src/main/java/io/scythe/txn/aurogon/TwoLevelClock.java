package io.scythe.txn.aurogon;

import io.scythe.bridge.NicClockReading;
import io.scythe.bridge.NodeClocks;

/**
 * 2LClock (§2.3, §5), the parts built so far: time is {@code F2(F1(host))}, where F1 maps the host (CPU) clock to the
 * local NIC's and F2 the local NIC's to the reference NIC's, each a {@link PiecewiseMapping}.
 * <ul>
 *   <li>F1 pairs (§5.2.1): host clock before ({@code T_c1}) and after ({@code T_c2}) a read of the local NIC clock
 *       ({@code T_n}) give {@code <alpha*T_c1 + (1-alpha)*T_c2, T_n>}, with the read's duration as its quality (pairs
 *       far above the slice's best are dropped).</li>
 *   <li>F2 pairs (§5.2.2): a one-sided READ of the reference NIC's clock word ({@link NodeClocks#readRemoteNic}),
 *       stamped by the local NIC when posted and at its completion, gives {@code offset = T_remote - (T_sent +
 *       rtt/2)} and the pair {@code <T_sent + rtt/2, T_remote>}, its round trip as its quality. This is the paper's
 *       offset formula with the remote's receive and send stamps equal (one READ executes at one instant there),
 *       under the same symmetric-link assumption; the UD+RC pair of probes and the SVM filter are not built.</li>
 *   <li>Probes ride on timestamp requests, never on a timer: when {@code probeIntervalNs} has passed and none is in
 *       flight, {@link #now()} starts one (so a quiet loop probes nothing and the simulator's runs end).</li>
 * </ul>
 * Every loop probes the reference directly: a one-level tree, which is what clusters of up to 10 nodes (K = 10) get,
 * and a READ needs no parent CPU. The K=10 tree with UD+RC probes, batched asynchronous parent replies and root
 * failover (virtual, correction and smoothing phases) is built as an event model, {@link ClockTree} (failover takes
 * seconds in the paper, where the simulator's runs last milliseconds); the runtime's clock does not fail over (its
 * reference is a memory node, and memory-node failures are not modelled). Loop-confined.
 */
final class TwoLevelClock {
    private final NodeClocks clocks;
    private final String reference;
    private final double alpha;
    private final long probeIntervalNs;
    private final PiecewiseMapping f1;
    private final PiecewiseMapping f2;
    private long lastProbeHostNs;
    private boolean probing;
    private long probes;
    private long failedProbes;

    /**
     * @param reference       the node whose NIC clock is the reference (the root of the tree)
     * @param alpha           F1's weight of the start of a NIC read (uplink / (uplink + downlink), set offline)
     * @param probeIntervalNs least host time between probes
     * @param sliceNs         2LClock's slice length {@code T_d}
     */
    TwoLevelClock(final NodeClocks clocks, final String reference, final double alpha, final long probeIntervalNs,
                  final long sliceNs) {
        if (alpha < 0 || alpha > 1) {
            throw new IllegalArgumentException("2LClock alpha " + alpha + " must be within [0, 1]");
        }
        this.clocks = clocks;
        this.reference = reference;
        this.alpha = alpha;
        this.probeIntervalNs = probeIntervalNs;
        this.f1 = new PiecewiseMapping(sliceNs, 200);
        this.f2 = new PiecewiseMapping(sliceNs, 500);
    }

    /** The reference clock as this loop estimates it now; may start a probe. */
    long now() {
        final long host = clocks.hostNs();
        if (!probing && (probes == 0 || host - lastProbeHostNs >= probeIntervalNs)) {
            probe(host);
        }
        return f2.map(f1.map(host));
    }

    /** The reference clock as this loop estimates it now, without probing. */
    long estimate() {
        return f2.map(f1.map(clocks.hostNs()));
    }

    private void probe(final long host) {
        lastProbeHostNs = host;
        probing = true;
        probes++;
        final long c1 = clocks.hostNs();
        final long nic = clocks.nicNs();
        final long c2 = clocks.hostNs();
        f1.add(Math.round(alpha * c1 + (1 - alpha) * c2), nic, c2 - c1);
        clocks.readRemoteNic(reference).onComplete(ar -> {
            probing = false;
            if (ar.succeeded()) {
                final NicClockReading r = ar.result();
                f2.add(r.sentNs() + r.roundTripNs() / 2, r.remoteNs(), r.roundTripNs());
            } else {
                failedProbes++;
            }
        });
    }

    long probes() {
        return probes;
    }

    long failedProbes() {
        return failedProbes;
    }

    PiecewiseMapping f1() {
        return f1;
    }

    PiecewiseMapping f2() {
        return f2;
    }
}
