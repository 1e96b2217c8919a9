package io.scythe.txn.spi;

/**
 * A compute node's published bound on the clock its loops issue timestamps from (issue 18, review R1): "no commit of
 * this node carries a timestamp above {@link #published()} until it publishes a larger bound". The node publishes
 * {@link #nextBound()} to the cluster (a lease on its clock, renewed ahead of use) and only once that publication is
 * durable tells it here ({@link #published(long)}); a loop commits a timestamp only while {@link #allows} it, else it
 * asks for a larger bound ({@link #want}) and the attempt aborts, to be retried once a larger bound is published. So
 * after the node dies, the last bound it published is at or above every timestamp it committed with: what a memory
 * node settling a promoted copy floors above for a compute node that is down, instead of waiting for it to come back.
 * Shared by the node's loops (thread-safe). In the clock's own units (RCC's: ticks, {@code rcc.RccClock#ticks}).
 */
public final class ClockBound {
    private final java.util.function.LongSupplier now;
    private final long lead;
    /** The largest bound published (durable in the cluster); 0 before the first: nothing allowed. */
    private volatile long published;
    /** The largest timestamp a loop was refused ({@link #want}). */
    private final java.util.concurrent.atomic.AtomicLong wanted = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param now  the clock's reading now (in its units)
     * @param lead how far ahead of the clock (or of a timestamp a loop wanted) each bound is published
     */
    public ClockBound(final java.util.function.LongSupplier now, final long lead) {
        if (lead <= 0) {
            throw new IllegalArgumentException("lead=" + lead + " must be positive");
        }
        this.now = now;
        this.lead = lead;
    }

    /** Whether a commit may carry timestamp {@code ticks}: it is at or below the published bound. */
    public boolean allows(final long ticks) {
        return ticks <= published;
    }

    /** Told when a loop wants a larger bound ({@link #onWant}); nothing by default. */
    private volatile Runnable onWant = () -> { };

    /**
     * A loop needs timestamp {@code ticks}, above the bound: the next publication covers it; a larger timestamp than
     * any wanted before tells {@link #onWant}'s listener (on the loop's thread: it must not block).
     */
    public void want(final long ticks) {
        if (wanted.getAndAccumulate(ticks, Math::max) < ticks) {
            onWant.run();
        }
    }

    /** {@code listener} runs when a loop wants a larger bound than before ({@link #want}): e.g. publish one now. */
    public void onWant(final Runnable listener) {
        onWant = java.util.Objects.requireNonNull(listener);
    }

    /** The bound to publish next: {@code lead} above the clock now or above the largest timestamp wanted. */
    public long nextBound() {
        return Math.max(Math.max(now.getAsLong(), wanted.get()) + lead, published);
    }

    /** {@code bound} is durable in the cluster: timestamps up to it may be committed. Never lowers the bound. */
    public synchronized void published(final long bound) {
        if (bound > published) {
            published = bound;
        }
    }

    /** The largest bound published so far (0: none yet). */
    public long published() {
        return published;
    }
}
