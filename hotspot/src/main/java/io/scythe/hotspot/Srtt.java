package io.scythe.hotspot;

/**
 * Smoothed round-trip time to one memory node, as TCP's SRTT (Scythe Eq. 2): {@code T = a*T + (1-a)*sample}, with
 * {@code a = 0.9} by default. The first sample is taken as is. Loop-confined.
 */
public final class Srtt {
    public static final double DEFAULT_ALPHA = 0.9;

    private final double alpha;
    private double srttNs;
    private long samples;

    public Srtt() {
        this(DEFAULT_ALPHA);
    }

    public Srtt(final double alpha) {
        if (!(alpha >= 0 && alpha < 1)) {
            throw new IllegalArgumentException("alpha=" + alpha + " must be within [0, 1)");
        }
        this.alpha = alpha;
    }

    /** Adds the round trip just measured. */
    public void sample(final long rttNs) {
        if (rttNs < 0) {
            throw new IllegalArgumentException("rttNs=" + rttNs + " must not be negative");
        }
        srttNs = samples == 0 ? rttNs : alpha * srttNs + (1 - alpha) * rttNs;
        samples++;
    }

    /** The smoothed round trip, or {@code fallbackNs} before the first sample. */
    public long srttNs(final long fallbackNs) {
        return samples == 0 ? fallbackNs : Math.round(srttNs);
    }

    /**
     * The hangout of Scythe Eq. 3: how long a transaction queued behind {@code queuedAhead} holders waits before it
     * first polls the lock.
     */
    public long hangoutNs(final long queuedAhead, final long fallbackNs) {
        return Math.max(0, queuedAhead) * srttNs(fallbackNs);
    }

    public long samples() {
        return samples;
    }
}
