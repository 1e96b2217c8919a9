package io.scythe.txn.rcc;

import io.scythe.txn.TxnRuntime;

/**
 * RCC's timestamps (§4.3, §4.4): the local clock with the machine, thread and co-routine ids appended in the low
 * bits, no TSO, no clock synchronisation. One per event loop (a runtime extension), on the loop's own clock
 * ({@code runtime.timers()}, the node's clock in the simulator's {@code --clock} modes).
 *
 * <pre>
 *  63 | 62 ........................ 24 | 23 ..... 16 | 15 ..... 8 | 7 ...... 0
 *   0 | clock ticks (39 bits, 64 ns)   | node slot   | loop       | incarnation
 * </pre>
 * Bit 63 stays 0 (timestamps are below 2^63, as {@code ObjectLayout.VERSION_BUSY} requires). A tick is 64 ns, so the
 * clock field wraps after about 9.8 hours of a node's clock; a long-running cluster would need a wider field. The node
 * slot, loop and incarnation come from the loop's transaction-id base (bits 32-39, 40-47 and the low 8 bits of the
 * epoch, 48-55). RCC puts a co-routine id in the low bits; ours carries the node's epoch there instead (issue 18): the
 * protocol SPI does not tell an attempt which client of its loop runs it, and the loop's clock is strictly increasing
 * ({@link #next}: never the same tick twice), which gives the uniqueness among a thread's co-routines that RCC's
 * co-routine id gives. The incarnation is what lets a memory node's dead-node step ({@link DeadWords}) free the
 * {@code tts} words of a dead incarnation only, never those of the node's restarted one, which keeps the node slot.
 * It sits below the clock and below the node slot, so it never changes the age order WAIT-DIE and MVCC compare: two
 * timestamps with different ticks compare by ticks, and with equal ticks by node slot, then loop, exactly as without
 * it; it only tells apart two incarnations of one loop at one tick, which were equal before. Epochs are 16 bits
 * ({@code RecoveryRpc#NODE_ID_MASK}); 8 are kept, so a dead incarnation and a live one would match if their epochs
 * were 256 apart with the dead one's recovery still owed: a restarted cluster node never takes such an epoch
 * ({@code cluster.RecoveryDuty#nextEpoch} skips the low 8 bits of every incarnation of it still owed recovery).
 *
 * <p>Clock-skew control (RCC §4.4): {@link #observe} moves this loop's clock up to a larger timestamp seen in a
 * remote tuple, so that later timestamps of this loop are above it. Correctness never depends on it.
 */
public final class RccClock {
    public static final int INCARNATION_BITS = 8;
    public static final int LOOP_BITS = 8;
    public static final int NODE_BITS = 8;
    public static final int ID_BITS = INCARNATION_BITS + LOOP_BITS + NODE_BITS;
    public static final int TICK_SHIFT = 6;
    public static final long MAX_TICKS = (1L << (63 - ID_BITS)) - 1;

    private static final TxnRuntime.Key<RccClock> KEY = new TxnRuntime.Key<>("rcc-clock");

    private final io.scythe.txn.runtime.Timers timers;
    private final long ids;
    private long lastTicks;
    /** The node's published bound on the timestamps its commits carry ({@link #bound}), or null: unbounded. */
    private io.scythe.txn.spi.ClockBound bound;

    /** How far ahead of the host's clock a compute node publishes its bound ({@link #hostBound}). */
    public static final long BOUND_LEAD_NS = 5_000_000_000L;

    /**
     * A commit refused because its timestamp is above the bound its node published ({@link #withinBound}): retried,
     * once the node published a larger one.
     */
    // After every reason reports listed before RccModule declared this one (ProtocolRegistryTest): at 860 it came
    // before "user" once the registry loaded it up front.
    public static final io.scythe.txn.AbortReason BEYOND_BOUND = io.scythe.txn.AbortReason.define(
        "clock-beyond-bound", 996);

    /**
     * A clock reading {@code timers}, stamping {@code node}, {@code loop} and {@code incarnation} (the low bits of the
     * node's epoch) into its timestamps.
     */
    public RccClock(final io.scythe.txn.runtime.Timers timers, final int node, final int loop, final int incarnation) {
        this.timers = timers;
        this.ids = ids(node, loop, incarnation);
    }

    /** {@code runtime}'s loop's clock, made on first use. */
    public static RccClock of(final TxnRuntime runtime) {
        return runtime.extension(KEY, rt -> new RccClock(rt.timers(), (int) ((rt.idBase() >>> 32) & 0xff),
            (int) ((rt.idBase() >>> 40) & 0xff), incarnationOf(rt.idBase())));
    }

    /** The incarnation a transaction id (or id prefix, or id base) gives a timestamp: its epoch's low 8 bits. */
    public static int incarnationOf(final long id) {
        return (int) ((id >>> 48) & ((1 << INCARNATION_BITS) - 1));
    }

    /** The id bits of a timestamp of {@code node}, {@code loop} and {@code incarnation} (each 0..255). */
    public static long ids(final int node, final int loop, final int incarnation) {
        check("node", node, NODE_BITS);
        check("loop", loop, LOOP_BITS);
        check("incarnation", incarnation, INCARNATION_BITS);
        return ((long) node << (LOOP_BITS + INCARNATION_BITS)) | ((long) loop << INCARNATION_BITS) | incarnation;
    }

    private static void check(final String what, final int value, final int bits) {
        if (value < 0 || value >= 1 << bits) {
            throw new IllegalArgumentException(what + " id " + value + " does not fit the " + bits + " bits RCC's "
                + "timestamps give it");
        }
    }

    /** The clock ticks of timestamp {@code ts}. */
    public static long ticksOf(final long ts) {
        return ts >>> ID_BITS;
    }

    /** The node slot of timestamp {@code ts}. */
    public static int nodeOf(final long ts) {
        return (int) ((ts >>> (LOOP_BITS + INCARNATION_BITS)) & 0xff);
    }

    /** The incarnation (low bits of the node's epoch) of timestamp {@code ts}. */
    public static int incarnationOfTimestamp(final long ts) {
        return (int) (ts & ((1 << INCARNATION_BITS) - 1));
    }

    /** A new timestamp, above every one this clock gave or {@linkplain #observe observed}. */
    public long next() {
        final long now = (timers.nowNs() >>> TICK_SHIFT) & MAX_TICKS;
        lastTicks = Math.max(now, lastTicks + 1);
        if (lastTicks > MAX_TICKS) {
            throw new IllegalStateException("RCC clock field overflowed (" + MAX_TICKS + " ticks of "
                + (1 << TICK_SHIFT) + " ns)");
        }
        return (lastTicks << ID_BITS) | ids;
    }

    /** The ticks of the largest timestamp this clock gave or {@linkplain #observe observed} (0: none yet). */
    public long ticks() {
        return lastTicks;
    }

    /**
     * Bounds this clock's commits by {@code bound}, its node's published bound (shared by its loops; cluster mode,
     * issue 18 R1): a commit whose timestamp is above it is refused ({@link #withinBound}).
     */
    public void bound(final io.scythe.txn.spi.ClockBound bound) {
        this.bound = bound;
    }

    /**
     * Whether a commit may carry {@code ts}, this clock's timestamp: its node published a bound at or above it (or
     * none is kept). Else the node is asked for a bound above it, and the commit must abort ({@link #BEYOND_BOUND})
     * and be retried: no commit of the node carries a timestamp its last published bound does not cover.
     */
    public boolean withinBound(final long ts) {
        final io.scythe.txn.spi.ClockBound b = bound;
        if (b == null || b.allows(ticksOf(ts))) {
            return true;
        }
        b.want(ticksOf(ts));
        return false;
    }

    /**
     * A bound on a compute node's RCC clocks: {@link #BOUND_LEAD_NS} ahead of {@code nowNs}, the clock its loops' timers
     * read, in ticks.
     */
    public static io.scythe.txn.spi.ClockBound hostBound(final java.util.function.LongSupplier nowNs) {
        return new io.scythe.txn.spi.ClockBound(() -> (nowNs.getAsLong() >>> TICK_SHIFT) & MAX_TICKS,
            BOUND_LEAD_NS >>> TICK_SHIFT);
    }

    /**
     * How far above the largest commit timestamp a SUNDIAL compute node was refused its published bound is
     * ({@link #logicalBound}), in ticks: 2^34 logical steps, which SUNDIAL's {@code +1} increments never climb in a run;
     * only a memory node's settling (its floor two ticks above a clock or bound) moves a timestamp past it.
     */
    public static final long LOGICAL_BOUND_LEAD_TICKS = 1L << 10;

    /**
     * A bound on a SUNDIAL compute node's commit timestamps (issue 18). SUNDIAL has no clock: {@code commit.tts} is
     * logical, the largest {@code wts} (or {@code rts + 1} of a record written) its accesses saw, so every timestamp it
     * commits was first seen in memory, and a bound that followed the host's clock would only throw floors hours
     * ahead. So the bound follows nothing but the commits refused: {@link #LOGICAL_BOUND_LEAD_TICKS} at first, then
     * that lead above the largest timestamp a loop was refused ({@link io.scythe.txn.spi.ClockBound#want}). A commit
     * above it aborts ({@link #BEYOND_BOUND}) before it writes any timestamp (its absent bounds' raise, its leases'
     * renewal, its log record, {@code RccTsTxn#commitInStages}), so a memory node's settling floors above every
     * timestamp a SUNDIAL node that is down wrote, reads' renewals on the dead primary included. What it costs: when a
     * settling's floor (from a down node's bound) moves timestamps past a live node's bound, its commits on the floored
     * tables abort until the larger bound is published, which a refused commit asks for at once
     * ({@code ClockBound#onWant}; one Hazelcast round trip; {@code RccTimestampFailoverProcessTest} counted 1 and 7
     * such attempts on the surviving node).
     */
    public static io.scythe.txn.spi.ClockBound logicalBound() {
        return new io.scythe.txn.spi.ClockBound(() -> 0, LOGICAL_BOUND_LEAD_TICKS);
    }

    /**
     * Clock-skew control: a timestamp {@code remote} read from a tuple (a {@code wts} or {@code rts}) moves this
     * clock up to it, so the next timestamps are larger. A smaller one changes nothing.
     */
    public void observe(final long remote) {
        lastTicks = Math.max(lastTicks, ticksOf(remote));
    }
}
