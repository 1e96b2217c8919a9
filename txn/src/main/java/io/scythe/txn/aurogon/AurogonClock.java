package io.scythe.txn.aurogon;

import io.scythe.bridge.NodeClocks;
import io.scythe.txn.TxnRuntime;

/**
 * One loop's Aurogon timestamps ({@link AurogonTimestamp}): the node's host clock ({@link NodeClocks#hostNs()}, with
 * the offset and drift the simulator's {@code --clock} gives the node) packed with the server and loop ids of the
 * runtime's id base, strictly increasing per loop. Without {@link TxnRuntime#clocks()} (a runtime built without them)
 * it reads the loop's timers. 2LClock's mapping onto a reference NIC is not built yet (issue 20): the clock is the
 * host clock as the node has it. A runtime extension.
 */
final class AurogonClock {
    private static final TxnRuntime.Key<AurogonClock> KEY = new TxnRuntime.Key<>("aurogon-clock");

    private final TxnRuntime runtime;
    private final int server;
    private final int loop;
    private long last;

    private AurogonClock(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.server = (int) (runtime.idBase() >>> 32) & 0xff; // RecoveryRpc.NODE_ID_MASK: node slot in bits 32-39
        this.loop = (int) (runtime.idBase() >>> 40) & 0xff; // loop number in bits 40-47
    }

    static AurogonClock of(final TxnRuntime runtime) {
        return runtime.extension(KEY, AurogonClock::new);
    }

    long next() {
        final NodeClocks clocks = runtime.clocks();
        final long now = clocks != null ? clocks.hostNs() : runtime.timers().nowNs();
        last = AurogonTimestamp.next(last, now, server, loop);
        return last;
    }
}
