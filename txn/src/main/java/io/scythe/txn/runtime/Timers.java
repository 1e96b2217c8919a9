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
}
