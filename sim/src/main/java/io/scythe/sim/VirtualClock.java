package io.scythe.sim;

import org.agrona.concurrent.NanoClock;

/** Virtual time: what every clock of a simulated cluster reads. Only the scheduler moves it, and only forward. */
public final class VirtualClock implements NanoClock {
    /** Where virtual time starts: far from 0, so that no code mistakes an early time for "unset". */
    public static final long EPOCH_NS = 1_000_000_000L;

    private long nowNs = EPOCH_NS;

    @Override
    public long nanoTime() {
        return nowNs;
    }

    void advanceTo(final long timeNs) {
        if (timeNs > nowNs) {
            nowNs = timeNs;
        }
    }
}
