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
 *       flight, {@link #now()} starts one (so a quiet loop probes nothing and the simulator's runs end). The price:
 *       the first reading after an idle gap longer than the extrapolation bound is refused (its attempt aborts,
 *       {@code clock-unsynchronised}) unless the probe it started answers at once; the retry after the coordinator's
 *       back-off finds the mapping fresh again (the newest pair's offset). A timer probing through idle gaps, as the
 *       paper's daemon does, would keep a simulated run from ever ending; making the first attempt wait for its
 *       probe would need an asynchronous timestamp in the coordinator's begin (not built). A probe unanswered for
 *       {@link #PROBE_DEADLINE_NS} is taken as lost.</li>
 * </ul>
 * Every loop probes the reference directly: a one-level tree, which is what clusters of up to 10 nodes (K = 10) get,
 * and a READ needs no parent CPU. The K=10 tree with UD+RC probes and batched asynchronous parent replies is built as
 * an event model, {@link ClockTree}.
 *
 * <p><b>Root failover</b> (§5.3, Fig. 7), here for the runtime's clock: the reference (a memory node) is taken as
 * dead when {@value #MISSED_PROBES} probes in a row fail or the configuration removes it (the heartbeat). The loop then
 * turns to the next reference ({@code successor}: the first live memory node by name) and serves, through the
 * <i>virtual phase</i>, {@code V}: the old F2 extrapolated (the last segment of its polyline), while a new F2 to the new
 * reference warms up (its probes go there); once the new mapping has fitted two slices and at least
 * {@code virtualNs} passed, it switches with a <i>correction</i> {@code c = V(x) - F2new(x)} (time does not jump) and,
 * through the <i>smoothing phase</i>, decays c linearly to 0 over {@code max(smoothNs, 4|c|)} (a slope change of at
 * most 1/4: served time never runs backwards), then serves the new mapping (normal again). Each loop switches on its
 * own, as the paper's C1 and C2 do. A successor dying in the virtual phase is left for the next at once (the old
 * mapping still served, the warm-up started afresh); one dying while the loop smooths is noticed once the smoothing's
 * bounded end is reached (so the correction is never dropped). The paper's phases last seconds (2.1 s virtual, 6.4 s
 * in all); ours are scaled to the simulator's millisecond runs (a 400 us virtual phase, 200 us least smoothing).
 * A mapping extrapolated past its bound (no answered probe for {@link PiecewiseMapping#MAX_EXTRAPOLATION_NS}, a virtual
 * phase's old mapping included) makes {@link #now} refuse ({@link Unsynchronised}). Loop-confined.
 */
final class TwoLevelClock {
    /** Probes failing in a row that take the reference as dead (the heartbeat of §5.3). */
    static final int MISSED_PROBES = 3;
    /**
     * A probe unanswered this long is taken as lost (its reply dropped, a silent reference): its answer, should it
     * come, is dropped, and the next reading probes again (not counted towards {@link #MISSED_PROBES}). Before, one lost reply left the loop
     * probing nothing and, past the extrapolation bound, refusing for good (issue 20 review). A quarter of that bound,
     * so a lost probe costs no refusal while the mapping is fresh.
     */
    static final long PROBE_DEADLINE_NS = PiecewiseMapping.MAX_EXTRAPOLATION_NS / 4;

    /** Phases of the clock around a root failover (§5.3). */
    enum Phase { NORMAL, VIRTUAL, SMOOTHING }

    /** What a failover needs to know of the configuration. */
    interface Successor {
        /** Whether the configuration removed {@code node} (it died). */
        boolean removed(String node);

        /** The reference to turn to once {@code dead} died, or null when there is none. */
        String after(String dead);
    }

    private final NodeClocks clocks;
    private String reference;
    private final double alpha;
    private final long probeIntervalNs;
    private final long sliceNs;
    private final PiecewiseMapping f1;
    private PiecewiseMapping f2;
    private long lastProbeHostNs;
    private boolean probing;
    private long probes;
    private long failedProbes;
    private int missedInRow;
    /** Probes started under an earlier reference are dropped when they complete. */
    private long epoch;
    private Successor successor;
    private long virtualNs;
    private long smoothNs;
    private Phase phase = Phase.NORMAL;
    /** The new reference's F2 warming up through the virtual phase. */
    private PiecewiseMapping warming;
    private long virtualFromNic;
    private double correction;
    private long switchNic;
    private long smoothingNs;
    private long failovers;

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
        this.sliceNs = sliceNs;
        this.f1 = new PiecewiseMapping(sliceNs, 200);
        this.f2 = new PiecewiseMapping(sliceNs, 500);
    }

    /**
     * Turns root failover on (§5.3): {@code successor} names the next reference; the virtual phase lasts at least
     * {@code virtualNs} (and until the new mapping fitted two slices), the smoothing at least {@code smoothNs}.
     */
    TwoLevelClock failover(final Successor successor, final long virtualNs, final long smoothNs) {
        if (virtualNs < 0 || smoothNs <= 0) {
            throw new IllegalArgumentException("2LClock failover: virtual phase " + virtualNs + " ns, smoothing "
                + smoothNs + " ns");
        }
        this.successor = successor;
        this.virtualNs = virtualNs;
        this.smoothNs = smoothNs;
        return this;
    }

    /**
     * The clock refuses a reading past its error bound: a mapping extrapolated over more than
     * {@link PiecewiseMapping#MAX_EXTRAPOLATION_NS} (no probe answered for that long: the reference and its successor
     * unreachable, or a virtual phase whose new mapping never fits). The attempt aborts
     * ({@link AurogonAborts#UNSYNCHRONISED}); the probe {@link #now} started may bring the clock back.
     */
    static final class Unsynchronised extends IllegalStateException {
        Unsynchronised(final String message) {
            super(message);
        }
    }

    /**
     * The reference clock as this loop estimates it now; may start a probe.
     *
     * @throws Unsynchronised when F1 or the served F2 is extrapolated past its bound (the probe is started first)
     */
    long now() {
        final long host = clocks.hostNs();
        if (successor != null && phase != Phase.SMOOTHING && successor.removed(reference)) {
            turnAway();
        }
        if (probing && host - lastProbeHostNs >= PROBE_DEADLINE_NS) {
            // Given up and sent again; not a missed probe of the heartbeat (a slow reference, a GC pause, is alive:
            // counting it would fail the reference over for nothing; review). A dead one fails its probes or is
            // removed by the configuration.
            epoch++; // dropped when (if ever) it completes
            probing = false;
            failedProbes++;
        }
        if (!probing && (probes == 0 || host - lastProbeHostNs >= probeIntervalNs)) {
            probe(host);
        }
        final long x = f1.map(host);
        final double served = served(x);
        if (!f1.synchronised(host) || !f2.synchronised(x)) {
            throw new Unsynchronised("Aurogon's 2LClock is not synchronised: its " + (f1.synchronised(host)
                ? "mapping to reference " + reference + "'s NIC clock" + (phase == Phase.VIRTUAL ? " (the dead "
                + "reference's, extrapolated through a virtual phase)" : "") + " was last fitted or probed "
                + f2.staleNs(x) / 1_000 : "host-to-NIC mapping was last fitted or read " + f1.staleNs(host) / 1_000)
                + " us ago, past the " + PiecewiseMapping.MAX_EXTRAPOLATION_NS / 1_000 + " us that keep its "
                + "extrapolation within its error bound");
        }
        return Math.round(served);
    }

    /** The reference clock as this loop estimates it now, without probing. */
    long estimate() {
        return Math.round(served(f1.map(clocks.hostNs())));
    }

    /** What the clock serves at local NIC time {@code x}, as its phase says (§5.3, Fig. 7). */
    private double served(final long x) {
        if (phase == Phase.VIRTUAL) {
            if (x - virtualFromNic < virtualNs || warming.slicesFitted() < 2) {
                return f2.map(x); // V: the old mapping extrapolated
            }
            // Continuity with what the old mapping serves (§5.3: time never goes backwards), also past its bound:
            // its extrapolation runs at a clamped rate, so its error is at most 2 MAX_RATE_ERROR per ns of staleness,
            // carried by the correction and decayed to 0 through the smoothing. Dropping the correction instead
            // (tried: review) would put the whole offset between the two references' clocks into served time.
            correction = f2.map(x) - (double) warming.map(x);
            f2 = warming;
            warming = null;
            switchNic = x;
            smoothingNs = Math.max(smoothNs, (long) Math.ceil(4 * Math.abs(correction)));
            phase = Phase.SMOOTHING;
        }
        if (phase == Phase.SMOOTHING) {
            final double left = 1 - (double) (x - switchNic) / smoothingNs;
            if (left > 0) {
                return f2.map(x) + correction * left;
            }
            phase = Phase.NORMAL;
        }
        return f2.map(x);
    }

    /** The reference died: turn to its successor and start the virtual phase. */
    private void turnAway() {
        final String next = successor.after(reference);
        if (next == null) {
            throw new IllegalStateException("2LClock's reference " + reference + " died and no memory node is left "
                + "to take its place");
        }
        failovers++;
        reference = next;
        epoch++;
        probing = false; // the probe in flight to the dead reference is dropped when it completes
        missedInRow = 0;
        phase = Phase.VIRTUAL;
        warming = new PiecewiseMapping(sliceNs, 500);
        virtualFromNic = f1.map(clocks.hostNs());
    }

    private void probe(final long host) {
        lastProbeHostNs = host;
        probing = true;
        probes++;
        final long c1 = clocks.hostNs();
        final long nic = clocks.nicNs();
        final long c2 = clocks.hostNs();
        f1.add(Math.round(alpha * c1 + (1 - alpha) * c2), nic, c2 - c1);
        final long sentEpoch = epoch;
        clocks.readRemoteNic(reference).onComplete(ar -> {
            if (sentEpoch != epoch) {
                return; // sent to a reference that died since
            }
            probing = false;
            if (ar.succeeded()) {
                missedInRow = 0;
                final NicClockReading r = ar.result();
                (phase == Phase.VIRTUAL ? warming : f2).add(r.sentNs() + r.roundTripNs() / 2, r.remoteNs(),
                    r.roundTripNs());
            } else {
                missed();
            }
        });
    }

    /** A probe failed or was lost ({@link #PROBE_DEADLINE_NS}). */
    private void missed() {
        failedProbes++;
        // Also in the virtual phase: a successor that dies while it warms up is left for the next (else the phase,
        // which ends only once the new mapping fitted two slices, would extrapolate the old one for good). While
        // smoothing, it waits for the phase's bounded end, so the correction is not dropped.
        if (successor != null && phase != Phase.SMOOTHING
            && (++missedInRow >= MISSED_PROBES || successor.removed(reference))) {
            turnAway();
        }
    }


    String reference() {
        return reference;
    }

    Phase phase() {
        return phase;
    }

    long failovers() {
        return failovers;
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
