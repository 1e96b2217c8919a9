package io.scythe.fabric;

import org.agrona.concurrent.NanoClock;

/**
 * A node's clock: true time (the fabric's clock, virtual in the simulator) plus a {@link ClockDeviation} that starts
 * at {@link #startNs()}, the true time the node attached. It never runs backwards (drift is far above -1e6 ppm).
 * {@link #at(long)} reads it at any true time, which the emulated NICs use to stamp a verb with the clock at its
 * modelled time rather than at the time it is polled.
 */
public final class DriftingClock implements NanoClock {
    private final NanoClock trueClock;
    private final ClockDeviation deviation;
    private final long startNs;

    /** A clock of {@code deviation} from true time, starting now. */
    public DriftingClock(final NanoClock trueClock, final ClockDeviation deviation) {
        this(trueClock, deviation, trueClock.nanoTime());
    }

    /** A clock of {@code deviation} from true time that started at true time {@code startNs}. */
    public DriftingClock(final NanoClock trueClock, final ClockDeviation deviation, final long startNs) {
        this.trueClock = trueClock;
        this.deviation = deviation;
        this.startNs = startNs;
    }

    @Override
    public long nanoTime() {
        return at(trueClock.nanoTime());
    }

    /** What this clock reads at true time {@code trueNs}. */
    public long at(final long trueNs) {
        final long offset = trueNs + deviation.offsetNs();
        if (deviation.driftPpm() == 0) {
            return offset;
        }
        // The product is exact as a double for 104 days of elapsed time; floor keeps the clock monotonic.
        return offset + (long) Math.floor((trueNs - startNs) * deviation.driftPpm() / 1_000_000.0);
    }

    public ClockDeviation deviation() {
        return deviation;
    }

    /** The true time this clock started at: its drift accumulates from here. */
    public long startNs() {
        return startNs;
    }

    @Override
    public String toString() {
        return "DriftingClock{offsetNs=" + deviation.offsetNs() + ", driftPpm=" + deviation.driftPpm() + ", startNs="
            + startNs + '}';
    }
}
