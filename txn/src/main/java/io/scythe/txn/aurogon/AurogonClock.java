package io.scythe.txn.aurogon;

import io.scythe.bridge.NodeClocks;
import io.scythe.txn.TxnRuntime;

/**
 * One loop's Aurogon timestamps ({@link AurogonTimestamp}): a clock reading packed with the server and loop ids of
 * the runtime's id base, strictly increasing per loop. The reading is the node's host clock
 * ({@link NodeClocks#hostNs()}, with the offset and drift the simulator's {@code --clock} gives the node; the loop's
 * timers when the runtime has no clocks), in one of two modes:
 * <ul>
 *   <li>{@link Mode#HOST}: the host clock as the node has it. 2LClock's mapping onto a reference NIC is not built
 *       yet (issue 20).</li>
 *   <li>{@link Mode#DST}: DST-TO's clock as the Aurogon paper describes DST (§6.1-6.2; DST's own paper is not in
 *       our library): a chasing clock that every participant's answer pulls forward to the largest timestamp that
 *       participant has seen, without allowing for the one-way delay of that timestamp and without correcting
 *       frequency drift (only forward jumps).</li>
 * </ul>
 * A runtime extension, one per mode.
 */
final class AurogonClock {
    /** Where the clock reading comes from. */
    enum Mode { HOST, DST }

    private static final TxnRuntime.Key<AurogonClock> HOST_KEY = new TxnRuntime.Key<>("aurogon-clock");
    private static final TxnRuntime.Key<AurogonClock> DST_KEY = new TxnRuntime.Key<>("aurogon-dst-clock");

    private final TxnRuntime runtime;
    private final Mode mode;
    private final int server;
    private final int loop;
    private long last;
    /** DST: how far ahead of the host clock the chase has pulled this clock (never negative). */
    private long aheadNs;

    private AurogonClock(final TxnRuntime runtime, final Mode mode) {
        this.runtime = runtime;
        this.mode = mode;
        this.server = (int) (runtime.idBase() >>> 32) & 0xff; // RecoveryRpc.NODE_ID_MASK: node slot in bits 32-39
        this.loop = (int) (runtime.idBase() >>> 40) & 0xff; // loop number in bits 40-47
    }

    static AurogonClock of(final TxnRuntime runtime, final Mode mode) {
        return runtime.extension(mode == Mode.DST ? DST_KEY : HOST_KEY, rt -> new AurogonClock(rt, mode));
    }

    private long hostNs() {
        final NodeClocks clocks = runtime.clocks();
        return clocks != null ? clocks.hostNs() : runtime.timers().nowNs();
    }

    long next() {
        last = AurogonTimestamp.next(last, hostNs() + aheadNs, server, loop);
        return last;
    }

    /** A participant answered having seen {@code seenTs}: DST chases it; the host clock ignores it. */
    void observe(final long seenTs) {
        if (mode == Mode.DST && seenTs > 0) {
            aheadNs = Math.max(aheadNs, AurogonTimestamp.clockNs(seenTs) - hostNs());
        }
    }

    /** How far ahead of its host clock the chase has pulled this clock (0 for {@link Mode#HOST}). */
    long aheadNs() {
        return aheadNs;
    }
}
