package io.scythe.txn.runtime;

import io.vertx.core.Future;

/**
 * Time as protocol code sees it (the sans-IO rule of DESIGN.md): a clock and delays, injected by the runtime, so the
 * same code runs on event loops ({@link LoopTimers}) and in a simulator with virtual time. Loop-confined.
 */
public interface Timers {
    long nowNs();

    /** Completes on the caller's loop no earlier than {@code delayNs} from now (at once for 0 or less). */
    Future<Void> after(long delayNs);

    /**
     * Like {@link #after}, for a long wait (a periodic task's next round, far beyond the loop's polling): the loop need
     * not poll for it meanwhile and sleeps until it is due when nothing else keeps it polling ({@link LoopTimers}).
     * {@link #after} by default.
     */
    default Future<Void> afterIdle(final long delayNs) {
        return after(delayNs);
    }
}
