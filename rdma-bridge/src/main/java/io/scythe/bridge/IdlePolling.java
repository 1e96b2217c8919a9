package io.scythe.bridge;

import io.scythe.fabric.CompletionQueue;

/**
 * When a poller that must spin (nothing wakes its loop on a peer's WRITE: shared memory across processes) may slow
 * down: once {@code idlePollNs} passed without work it is polled only every {@code idlePollNs}, so an idle node does
 * not burn a core per poller. {@code idlePollNs} 0: it spins always. One rule for every spinning {@link
 * Bridge.Poller}: the RPC server's inbox and CALVIN's one-sided inbox.
 */
public final class IdlePolling {
    private final long idlePollNs;
    private long lastPollNs;
    private long lastWorkNs;

    public IdlePolling(final long idlePollNs) {
        if (idlePollNs < 0) {
            throw new IllegalArgumentException("idlePollNs=" + idlePollNs + " must not be negative");
        }
        this.idlePollNs = idlePollNs;
    }

    /** A poll at {@code nowNs} found {@code work} (0: nothing). */
    public void polled(final long nowNs, final int work) {
        lastPollNs = nowNs;
        if (work > 0) {
            lastWorkNs = nowNs;
        }
    }

    /** Work is expected soon (a new peer, a request sent): spin again from {@code nowNs}. */
    public void expectWork(final long nowNs) {
        lastWorkNs = nowNs;
    }

    /** Whether {@code idlePollNs} passed, as of the last poll, since the last work. */
    public boolean idle() {
        return idlePollNs > 0 && lastPollNs - lastWorkNs >= idlePollNs;
    }

    /** Whether a poller that {@code spins} wants polling to go on at once ({@link Bridge.Poller#busy}). */
    public boolean busy(final boolean spins) {
        return spins && !idle();
    }

    /** When a poller that {@code spins} and is idle wants its next poll ({@link Bridge.Poller#wakeAtNs}). */
    public long wakeAtNs(final boolean spins) {
        return spins && idle() ? lastPollNs + idlePollNs : CompletionQueue.NO_EVENT;
    }
}
