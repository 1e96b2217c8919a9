package io.scythe.tso;

import io.scythe.txn.runtime.TimestampOracle;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;

/**
 * FaRMv2-style timestamps from synchronised physical clocks (Scythe §3.3 (1)): the timestamp is the clock reading,
 * and the request waits out the clock uncertainty before it may use it, so that a later request anywhere reads a
 * larger clock. The paper reports 22-24 us of uncertainty wait. Readings are made unique per event loop by the loop's
 * id in the low bits. Loop-confined; the wait is an injected timer, never a blocking sleep.
 */
public final class PhysicalClockOracle implements TimestampOracle {
    /** Uncertainty wait of FaRMv2 reported by Scythe §3.3 (1): 22-24 us. */
    public static final long DEFAULT_UNCERTAINTY_NS = 22_000;
    private static final int LOOP_BITS = 8;

    private final Timers timers;
    private final long uncertaintyNs;
    private final int loopId;
    private long last;

    public PhysicalClockOracle(final Timers timers, final long uncertaintyNs, final int loopId) {
        if (loopId < 0 || loopId >= 1 << LOOP_BITS) {
            throw new IllegalArgumentException("loopId=" + loopId + " must be within [0, 256)");
        }
        this.timers = timers;
        this.uncertaintyNs = uncertaintyNs;
        this.loopId = loopId;
    }

    @Override
    public Future<Long> next() {
        final long ts = Math.max(last + (1 << LOOP_BITS), (timers.nowNs() << LOOP_BITS) | loopId);
        last = ts;
        return timers.after(uncertaintyNs).map(ts);
    }

    @Override
    public String name() {
        return "physical-clock";
    }
}
