package io.scythe.txn.rcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Protocol;
import io.scythe.txn.rcc.nowait.NoWaitTxn;
import io.scythe.txn.rcc.occ.OccTxn;
import io.scythe.txn.rcc.waitdie.WaitDieTxn;
import io.scythe.txn.spi.HeaderWord;
import io.scythe.txn.spi.MemoryNodeContext;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.txn.spi.ProtocolModule;

import io.scythe.txn.rcc.RccForm.Step;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * RCC's six protocols as one module ({@code io.scythe.txn.rcc}, a sub-package per protocol): {@code rcc-nowait},
 * {@code rcc-waitdie}, {@code rcc-occ}, {@code rcc-mvcc}, {@code rcc-sundial}, each one-sided by
 * default and in any form by option ({@link RccForm}). Not in the default lists (asked for by name). On memory nodes
 * it runs {@link RccLockService}, {@link io.scythe.txn.rcc.mvcc.MvccService} and
 * {@link io.scythe.txn.rcc.sundial.SundialService}. CALVIN, shared-nothing, is its own module
 * ({@link io.scythe.txn.rcc.calvin.CalvinModule}, {@code rcc-calvin}).
 */
public final class RccModule implements ProtocolModule {
    /** The stages of the 2PL protocols with a primitive to choose (they read by locking, validate nothing read). */
    private static final Set<Step> LOCKING = EnumSet.of(Step.LOCK, Step.COMMIT, Step.RELEASE);

    public static final RccProtocol NOWAIT = new RccProtocol("rcc-nowait", TupleFormat.NOWAIT, LOCKING,
        (runtime, form, mode) -> new NoWaitTxn(runtime, form, mode));
    public static final RccProtocol WAITDIE = new RccProtocol("rcc-waitdie", TupleFormat.WAITDIE, LOCKING,
        (runtime, form, mode) -> new WaitDieTxn(runtime, form, mode));
    public static final RccProtocol OCC = new RccProtocol("rcc-occ", TupleFormat.OCC,
        EnumSet.of(Step.READ, Step.LOCK, Step.VALIDATE, Step.COMMIT, Step.RELEASE),
        (runtime, form, mode) -> new OccTxn(runtime, form, mode));
    /** MVCC validates nothing it read (its reads raise rts): Read, Lock, Commit and Release have a primitive. */
    public static final RccProtocol MVCC = new RccProtocol("rcc-mvcc", TupleFormat.MVCC,
        EnumSet.of(Step.READ, Step.LOCK, Step.COMMIT, Step.RELEASE),
        (runtime, form, mode) -> new io.scythe.txn.rcc.mvcc.MvccTxn(runtime, form, mode));
    /** SUNDIAL's Validate digit is its Renew stage. */
    public static final RccProtocol SUNDIAL = new RccProtocol("rcc-sundial", TupleFormat.SUNDIAL,
        EnumSet.of(Step.READ, Step.LOCK, Step.VALIDATE, Step.COMMIT, Step.RELEASE),
        (runtime, form, mode) -> new io.scythe.txn.rcc.sundial.SundialTxn(runtime, form, mode));

    @Override
    public String name() {
        return "rcc";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(NOWAIT, WAITDIE, OCC, MVCC, SUNDIAL);
    }

    /** Asked for by name only: the default lists (and the runs they drive) stay as they were. */
    @Override
    public boolean listed() {
        return false;
    }

    /**
     * Its five protocols write every backup copy (MVCC's older slots and rts, SUNDIAL's rts, by their own write-back:
     * the README's RCC section), which the simulator checks after every {@code --replicas} run. Before issue 18's
     * cluster failover this said false, so cluster nodes ran RCC with no backups (a dead memory node lost its
     * partition, and no failover could be made of it whatever the refusal said).
     */
    @Override
    public boolean replicates() {
        return true;
    }

    // No clusterRefusal: every protocol here runs on cluster nodes. WAIT-DIE's and MVCC's tts words carry the node's
    // incarnation (RccClock: the low bits of the epoch), so the dead-node step (DeadWords) frees only the dead
    // incarnation's words and waiters, never those of the same node restarted under its slot; NOWAIT, OCC and SUNDIAL
    // name the holder by transaction id, whose prefix has the epoch.

    /** What the dead-node step reports as freed ({@link #startMemoryNode}). */
    public static final String COUNTED = "rccWords";

    @Override
    public void startMemoryNode(final MemoryNodeContext node) {
        final RccLockService locks = new RccLockService(node.db()).register(node.server());
        node.publish(RccLockService.class, locks);
        node.onDeadNode(MemoryNodeContext.Phase.AFTER_INSERTS, COUNTED, (dead, idPrefixes) ->
            idPrefixes.length == 0 ? 0 : locks.dropWaiters(idPrefixes) + DeadWords.free(node.db(), idPrefixes));
        node.publish(io.scythe.txn.rcc.mvcc.MvccService.class,
            new io.scythe.txn.rcc.mvcc.MvccService(node.db()).register(node.server()));
        node.publish(io.scythe.txn.rcc.sundial.SundialService.class,
            new io.scythe.txn.rcc.sundial.SundialService(node.db()).register(node.server()));
    }

    /**
     * The words each table's objects carry, under the protocol's own name (e.g. {@code rcc-mvcc}): the memory node's
     * dead-node step reads it to know what the protocol word holds ({@link DeadWords}).
     */
    @Override
    public io.scythe.storage.ObjectFormat objectFormat(final io.scythe.txn.Protocol protocol,
                                                      final io.scythe.storage.TableSchema schema) {
        return new io.scythe.storage.ObjectFormat(protocol instanceof RccProtocol p ? p.base() : protocol.name(),
            headerWords().stream().map(HeaderWord::word).toList());
    }

    /** NOWAIT's and OCC's lock: the shared CAS word (declared as FORD's module does); WAITDIE's tts: word 48. */
    @Override
    public List<HeaderWord> headerWords() {
        return List.of(HeaderWord.of("cas_lock", ObjectLayout.CAS_LOCK_OFFSET),
            HeaderWord.PROTOCOL_WORD); // WAIT-DIE's tts (TupleFormat.TTS_OFFSET)
    }

    /** An object is held while its {@code tts} word is not 0 (the CAS word is FORD's module's probe's to report). */
    @Override
    public ObjectProbe probe() {
        return (table, header) -> table.objectMemory().getLongVolatile(header + TupleFormat.TTS_OFFSET) != 0;
    }

    /**
     * {@link RccClock#BEYOND_BOUND}: listed, so a node's metrics count it ({@code scythe_aborts_total}, one counter per
     * reason listed when they are made) before any RCC clock's class is loaded.
     */
    @Override
    public List<io.scythe.txn.AbortReason> abortReasons() {
        return List.of(RccClock.BEYOND_BOUND);
    }

    /** The lock kinds RCC's coordinator-log records name (RccLog), one per protocol; their recovery is issue 18's. */
    @Override
    public List<io.scythe.txn.spi.LockKind> lockKinds() {
        return List.copyOf(RccLockKind.ALL);
    }

    @Override
    public List<String> configKeys() {
        return List.of("primitive=onesided|rpc, or hybrid=<6 digits> (Read Lock Validate Log Commit Release; "
            + "1 one-sided, 0 RPC), after the protocol's name and ':'");
    }

    /**
     * Handled for all five (issue 18): the stale writer fenced by {@link #simulatorSettlesPromotedCopies}, a decided
     * commit that failed on the removed node finished on the serving copies (RccLockingTxn#decidedFailure,
     * RccTsTxn#decidedFailure), and for MVCC and SUNDIAL the promoted copy's rts floored at its settling
     * ({@link #promotedSettling}).
     */
    @Override
    public String memoryNodeCrashRefusal(final io.scythe.txn.Protocol protocol) {
        return null;
    }

    /**
     * The fence of a stale writer (issue 18, the package TODO's first step): an attempt that locked an object on the
     * dead primary and passed its point of no return writes the promoted copy as a backup, which has no lock word;
     * a later writer locking the promoted copy could commit under it. The promoted partitions refuse reads, locks
     * and inserts until every such commit finished (RccLockingTxn#decidedFailure finishes it on the serving copies);
     * one that had not passed it is refused at its point of no return (OneSidedTxn#pointOfNoReturn) and retried.
     */
    @Override
    public boolean simulatorSettlesPromotedCopies(final io.scythe.txn.Protocol protocol) {
        return true;
    }

    /** A bug the promoted MVCC and SUNDIAL copies can be made to run, on purpose, by a test ({@link #plant}). */
    public enum PlantedBug {
        NONE,
        /**
         * The settling leaves the promoted copies' rts and absent bounds as the backups held them, below the reads
         * their dead primary served (issue 18: what {@code RtsFloorTest} and {@code RccMnCrashSimTest} show the floor
         * is for).
         */
        NO_RTS_FLOOR
    }

    private static volatile PlantedBug planted = PlantedBug.NONE;

    /** Plants {@code bug} (tests only; {@link PlantedBug#NONE} restores the protocol), for every runtime of this JVM. */
    public static void plant(final PlantedBug bug) {
        planted = java.util.Objects.requireNonNull(bug);
    }

    /**
     * The rts floor of a promoted copy (issue 18, the package TODO's first step), as the simulator settles it: readers
     * raise {@code rts} (and the absent bounds) on the primary only, so the promoted MVCC and SUNDIAL tuples of
     * {@code tables} get {@code rts = max(rts, floor)} and each such table's absent bound the same,
     * {@link #rtsFloor}. Done at the settling, not at the promotion: until then a commit of the old configuration may
     * still write a backup's rts as its primary's commit left it (below the floor). Tables of the other protocols are
     * left alone.
     */
    @Override
    public void promotedSettling(final io.scythe.storage.LogDb node, final Set<Integer> tables,
                                 final List<io.scythe.txn.TxnRuntime> coordinators) {
        long ticks = 0;
        for (final io.scythe.txn.TxnRuntime rt : coordinators) {
            ticks = Math.max(ticks, settlingClock(rt));
        }
        promotedSettling(node, tables, ticks);
    }

    /**
     * Cluster mode's settling (issue 18): as the simulator's, {@code clock} the largest {@link RccClock#ticks()} of
     * the live compute nodes' loops, which cluster mode gathers from each when it drains the configuration
     * ({@code cluster.MemoryNodeFailover}); the floor is {@link #floorOf} it.
     */
    @Override
    public void promotedSettling(final io.scythe.storage.LogDb node, final Set<Integer> tables, final long clock) {
        final java.util.function.BooleanSupplier steps = promotedSettlingSteps(node, tables, clock);
        while (steps.getAsBoolean()) {
            // the next chunk
        }
    }

    /** How many object slots one step of {@link #promotedSettlingSteps} floors (a CAS each: well under 1 ms). */
    public static final int FLOOR_STEP_SLOTS = 16_384;

    /** The floor of {@link #promotedSettling(io.scythe.storage.LogDb, Set, long)}, {@link #FLOOR_STEP_SLOTS} a step. */
    @Override
    public java.util.function.BooleanSupplier promotedSettlingSteps(final io.scythe.storage.LogDb node,
                                                                    final Set<Integer> tables, final long clock) {
        if (planted == PlantedBug.NO_RTS_FLOOR) {
            return () -> false;
        }
        return floorSteps(node, tables, floorOf(clock), FLOOR_STEP_SLOTS);
    }

    /**
     * The floor {@code floor} of {@code tables} on {@code node} ({@link #floorRts}) in steps of {@code slots} object
     * slots: each table's absent bound raised with its first step, then its slots in order. What the steps leave is
     * what {@link #floorRts} of each table leaves.
     */
    static java.util.function.BooleanSupplier floorSteps(final io.scythe.storage.LogDb node, final Set<Integer> tables,
                                                         final long floor, final int slots) {
        final java.util.ArrayDeque<io.scythe.storage.Table> left = new java.util.ArrayDeque<>();
        for (final int id : new java.util.TreeSet<>(tables)) {
            final io.scythe.storage.Table table = node.table(id);
            if (table != null && rtsOffset(table) >= 0) {
                left.add(table);
            }
        }
        final int[] next = {0}; // the next slot of left.peek()
        return () -> {
            final io.scythe.storage.Table table = left.peek();
            if (table == null) {
                return false;
            }
            if (next[0] == 0) {
                table.raiseAbsentBound(floor);
            }
            next[0] = floorSlots(table, floor, next[0], slots);
            if (next[0] < 0) {
                left.poll();
                next[0] = 0;
            }
            return !left.isEmpty();
        };
    }

    /** The loop's {@link RccClock#ticks()}: what the floor of a promoted copy's settling is above. */
    @Override
    public long settlingClock(final io.scythe.txn.TxnRuntime runtime) {
        return RccClock.of(runtime).ticks();
    }

    /**
     * MVCC's (in any form): its commits carry {@link RccClock#next()}'s timestamps, each at or below the published
     * bound ({@code RccTsTxn#commitInStages}), published {@link RccClock#BOUND_LEAD_NS} ahead of the host's clock.
     * SUNDIAL's timestamps are logical: {@link RccClock#logicalBound}, raised only as its commits ask.
     */
    @Override
    public io.scythe.txn.spi.ClockBound clockBound(final io.scythe.txn.Protocol protocol,
                                                   final java.util.function.LongSupplier nowNs) {
        final String base = protocol instanceof RccProtocol p ? p.base() : protocol.name();
        if (base.equals(MVCC.name())) {
            return RccClock.hostBound(nowNs);
        }
        return base.equals(SUNDIAL.name()) ? RccClock.logicalBound() : null;
    }

    @Override
    public void useClockBound(final io.scythe.txn.TxnRuntime runtime, final io.scythe.txn.spi.ClockBound bound) {
        RccClock.of(runtime).bound(bound);
    }

    /** MVCC and SUNDIAL (in any form): their promoted copies' rts is floored on cluster nodes too. */
    @Override
    public boolean clusterSettlesPromotedCopies(final io.scythe.txn.Protocol protocol) {
        return timestamped(protocol);
    }

    /**
     * A timestamp above every {@code rts} (and absent bound) a reader can have set so far: every {@code rts} is a
     * coordinator's {@code RccClock#next()} (MVCC's ctts) or a commit timestamp at most a timestamp that clock
     * observed plus 1 (SUNDIAL's {@code max(wts, rts + 1)}), so at most one tick above the largest
     * {@link RccClock#ticks()} of the live coordinators; the floor is two ticks above it. Every coordinator is live
     * (the simulator refuses a compute-node crash beside a memory node's for RCC), and one that never ran holds 0.
     */
    public static long rtsFloor(final List<io.scythe.txn.TxnRuntime> coordinators) {
        long ticks = 0;
        for (final io.scythe.txn.TxnRuntime rt : coordinators) {
            ticks = Math.max(ticks, RccClock.of(rt).ticks());
        }
        return floorOf(ticks);
    }

    /** The rts floor above clock reading {@code ticks} ({@link #rtsFloor}): two ticks above it, ids 0. */
    public static long floorOf(final long ticks) {
        return (ticks + 2) << RccClock.ID_BITS;
    }

    /**
     * Raises {@code rts} of every object slot of {@code table} to {@code floor} (by CAS: a higher one stays), and its
     * absent bound, when the table is MVCC's or SUNDIAL's (their rts after the value, at the same offset); returns
     * whether it did.
     */
    public static boolean floorRts(final io.scythe.storage.Table table, final long floor) {
        if (rtsOffset(table) < 0) {
            return false;
        }
        floorSlots(table, floor, 0, Integer.MAX_VALUE);
        table.raiseAbsentBound(floor);
        return true;
    }

    /**
     * Where rts lies in {@code table}'s object slots when it is MVCC's or SUNDIAL's (after the value), else -1.
     *
     * @throws IllegalStateException when its slots have no room for it
     */
    private static int rtsOffset(final io.scythe.storage.Table table) {
        final String protocol = table.format().name();
        if (!protocol.equals(MVCC.base()) && !protocol.equals(SUNDIAL.base())) {
            return -1;
        }
        final int rts = ObjectLayout.slotBytes(table.schema().maxValueBytes()); // MvccTuple's and SundialTuple's
        final int slot = table.objectSlotBytes();
        if (rts + 8 > slot) {
            throw new IllegalStateException("table " + table.schema().name() + " of " + protocol + " has no room for "
                + "rts in its object slots (" + slot + " bytes; Protocol#objectRoom not set up on its memory node)");
        }
        return rts;
    }

    /**
     * Raises rts of {@code count} object slots of {@code table} (MVCC's or SUNDIAL's) from slot {@code from} on to
     * {@code floor} by CAS (a higher one stays); returns the next slot, or -1 when none is left.
     */
    private static int floorSlots(final io.scythe.storage.Table table, final long floor, final int from,
                                  final int count) {
        final int rts = rtsOffset(table);
        final org.agrona.concurrent.AtomicBuffer m = table.objectMemory();
        final int slot = table.objectSlotBytes();
        final int slots = m.capacity() / slot;
        final int end = (int) Math.min(slots, (long) from + count);
        for (int i = from; i < end; i++) {
            final int at = i * slot + rts;
            long seen = m.getLongVolatile(at);
            while (seen < floor && !m.compareAndSetLong(at, seen, floor)) {
                seen = m.getLongVolatile(at);
            }
        }
        return end < slots ? end : -1;
    }

    /** Whether {@code protocol} is MVCC or SUNDIAL (in any form): its tuples keep an rts the backups do not track. */
    private static boolean timestamped(final io.scythe.txn.Protocol protocol) {
        final String base = protocol instanceof RccProtocol p ? p.base() : protocol.name();
        return base.equals(MVCC.name()) || base.equals(SUNDIAL.name());
    }

    // No clusterMemoryNodeFailoverRefusal (issue 18): MVCC's and SUNDIAL's promoted copies get the floor on cluster
    // nodes too (clusterSettlesPromotedCopies: cluster.MemoryNodeFailover gathers every live compute node's clock with
    // its drain, and the memory node floors the copies before any compute node serves them). NOWAIT, WAIT-DIE and OCC
    // lock their objects and take the shared failover like FORD's protocols.

    /** Why no RCC protocol (CALVIN too) runs a memory-node crash in the simulator yet, for {@code %s}: its name. */
    public static final String MEMORY_NODE_CRASH_REFUSAL = "a memory-node crash is not handled by %s yet: its backups "
        + "hold what a promoted copy must serve, but an attempt holding a lock on the dead primary would still write "
        + "the promoted copy unfenced, readers' rts is not floored there, and a commit whose primary died after its "
        + "backups were written gives the run up (issue 18, txn.rcc's package TODO)";
}
