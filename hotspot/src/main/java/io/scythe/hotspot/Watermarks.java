package io.scythe.hotspot;

/**
 * The two thresholds on a Takeout Lock's queue (Scythe §4.3 (3)): a COLD (OCC) transaction that finds more than
 * {@code cold} transactions queued is refused, aborts early and retries HOT (TOCC); nobody may queue behind more than
 * {@code hot}. Defaults 3 and 10, as in the paper.
 */
public record Watermarks(int cold, int hot) {
    public static final int DEFAULT_COLD = 3;
    public static final int DEFAULT_HOT = 10;
    public static final Watermarks DEFAULT = new Watermarks(DEFAULT_COLD, DEFAULT_HOT);

    public Watermarks {
        if (cold < 0 || hot < cold || hot > 0xffff) {
            throw new IllegalArgumentException("watermarks cold=" + cold + ", hot=" + hot
                + " must satisfy 0 <= cold <= hot <= 65535");
        }
    }

    /** Whether a queue of {@code queued} makes an object hot. */
    public boolean hot(final long queued) {
        return queued > cold;
    }
}
