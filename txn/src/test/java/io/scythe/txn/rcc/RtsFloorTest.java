package io.scythe.txn.rcc;

import io.scythe.txn.FixedTimers;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.rcc.mvcc.MvccTuple;
import io.scythe.txn.rcc.sundial.SundialTuple;
import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rts floor of a promoted MVCC or SUNDIAL copy ({@link RccModule#floorRts}, issue 18): every object slot's rts
 * and the table's absent bound rise to the floor, a higher rts stays, and a table of a locking protocol is left alone;
 * and why the floor is needed: a read served by the primary alone, then a writer with an older timestamp on the
 * promoted copy ({@link #shouldKeepAnOlderWriterAboveAReadTheDeadPrimaryServed}).
 */
class RtsFloorTest {
    private LocalFabric fabric;

    @AfterEach
    void tearDown() {
        if (fabric != null) {
            fabric.close();
        }
    }

    @AfterEach
    void unplant() {
        RccModule.plant(RccModule.PlantedBug.NONE);
    }

    /** A memory node {@code name} whose tables named mvcc, sundial or nowait are that protocol's. */
    private LogDb memoryNode(final String name) {
        if (fabric == null) {
            fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        }
        final LogDb db = new LogDb(fabric.attachNow(name));
        final RccModule module = new RccModule();
        final java.util.function.Function<String, RccProtocol> of = n -> switch (n) {
            case "mvcc" -> RccModule.MVCC;
            case "sundial" -> RccModule.SUNDIAL;
            default -> RccModule.NOWAIT;
        };
        db.objectFormat(schema -> module.objectFormat(of.apply(schema.name()), schema));
        db.objectRoom(schema -> of.apply(schema.name()).objectRoom(schema));
        return db;
    }

    @Test
    void shouldRaiseEveryRtsAndTheAbsentBoundToTheFloorAndKeepAHigherOne() {
        final LogDb db = memoryNode("mn0");
        final Table mvcc = db.create(TableSchema.fixed(1, "mvcc", 8, 4));
        final Table sundial = db.create(TableSchema.fixed(2, "sundial", 8, 4));
        final Table nowait = db.create(TableSchema.fixed(3, "nowait", 8, 4));
        final long floor = 1000L << RccClock.ID_BITS;
        final int rts = ObjectLayout.slotBytes(8);
        mvcc.objectMemory().putLong(rts, floor + 5); // slot 0: above the floor already
        sundial.objectMemory().putLong(rts, 17); // slot 0: below it
        final long nowaitBefore = nowait.objectMemory().getLong(0);

        assertThat(RccModule.floorRts(mvcc, floor)).isTrue();
        assertThat(RccModule.floorRts(sundial, floor)).isTrue();
        assertThat(RccModule.floorRts(nowait, floor)).isFalse();

        assertThat(mvcc.objectMemory().getLong(rts)).isEqualTo(floor + 5);
        for (final Table t : java.util.List.of(mvcc, sundial)) {
            final int slots = t.objectMemory().capacity() / t.objectSlotBytes();
            assertThat(slots).isGreaterThanOrEqualTo(4);
            for (int i = t == mvcc ? 1 : 0; i < slots; i++) {
                assertThat(t.objectMemory().getLong(i * t.objectSlotBytes() + rts)).as(t.schema().name() + " slot " + i)
                    .isEqualTo(floor);
            }
            assertThat(t.absentBound()).isEqualTo(floor);
        }
        assertThat(nowait.absentBound()).isZero();
        assertThat(nowait.objectMemory().getLong(0)).isEqualTo(nowaitBefore);
    }

    /**
     * Review R3: the cluster floor in steps ({@link RccModule#promotedSettlingSteps}), so a memory node's RPC loop
     * serves other requests between them: 3 slots a step, over two tables of 8 slots (and a NOWAIT table, skipped),
     * each step floors exactly the next 3 slots; the steps end with what {@link RccModule#floorRts} leaves.
     */
    @Test
    void shouldFloorInStepsOfAFewSlotsAndEndAsTheWholeWalkDoes() {
        final LogDb db = memoryNode("mn0");
        final Table mvcc = db.create(TableSchema.fixed(1, "mvcc", 8, 8));
        final Table sundial = db.create(TableSchema.fixed(2, "sundial", 8, 8));
        db.create(TableSchema.fixed(3, "nowait", 8, 8));
        final long floor = 1000L << RccClock.ID_BITS;
        final int rts = ObjectLayout.slotBytes(8);
        final java.util.function.BooleanSupplier steps = RccModule.floorSteps(db, java.util.Set.of(3, 2, 1), floor,
            3);
        final int slots = mvcc.objectMemory().capacity() / mvcc.objectSlotBytes();
        assertThat(slots).isEqualTo(sundial.objectMemory().capacity() / sundial.objectSlotBytes())
            .isGreaterThan(3);
        int taken = 0;
        boolean more = true;
        while (more) {
            more = steps.getAsBoolean();
            taken++;
            final int mvccDone = Math.min(3 * taken, slots);
            final int perTable = (slots + 2) / 3; // steps a table takes (its last may floor fewer than 3)
            final int sundialDone = taken <= perTable ? 0 : Math.min(3 * (taken - perTable), slots);
            for (int i = 0; i < slots; i++) {
                assertThat(mvcc.objectMemory().getLong(i * mvcc.objectSlotBytes() + rts)).as("mvcc slot %d after %d "
                    + "steps", i, taken).isEqualTo(i < mvccDone ? floor : 0);
                assertThat(sundial.objectMemory().getLong(i * sundial.objectSlotBytes() + rts)).as("sundial slot %d "
                    + "after %d steps", i, taken).isEqualTo(i < sundialDone ? floor : 0);
            }
        }
        assertThat(taken).as("steps: each table's slots in threes").isEqualTo(2 * ((slots + 2) / 3));
        assertThat(mvcc.absentBound()).isEqualTo(floor);
        assertThat(sundial.absentBound()).isEqualTo(floor);
        assertThat(steps.getAsBoolean()).as("nothing left").isFalse();
    }

    @Test
    void shouldFloorTwoTicksAboveTheLargestTimestampAnyCoordinatorGaveOrSaw() {
        // No coordinator ran: two ticks above 0.
        assertThat(RccModule.rtsFloor(java.util.List.of())).isEqualTo(2L << RccClock.ID_BITS);
    }

    /** A coordinator's loop on compute node {@code node} (its {@link RccClock} only: the floor reads nothing else). */
    /** Each copy holds version {@code committed} (its wts, and its rts: read by nobody yet) of {@code max} bytes. */
    private static void holdCommitted(final long committed, final int max, final int rtsAt, final Table... copies) {
        for (final Table t : copies) {
            t.objectMemory().putLong(ObjectLayout.VERSION_OFFSET, committed);
            t.objectMemory().putInt(ObjectLayout.VALUE_LENGTH_OFFSET, max);
            t.objectMemory().putLong(rtsAt, committed);
        }
    }

    private static TxnRuntime coordinator(final FixedTimers timers, final int node) {
        return new TxnRuntime(null, null, timers, null, null, (long) node << 32);
    }

    /**
     * Issue 18, why the floor: object 0 is the same version on the primary (mn0) and its backup (mn1), as a commit's
     * backups-first write-back leaves them. A writer on cn2 took its timestamp W first (its loop's clock behind, or it
     * began earlier); a reader on cn1 then read the object at R &gt; W on the primary, which alone raised its rts to R
     * (a read never touches a backup). mn0 dies and mn1's copy is promoted and settled. The writer, locking the
     * promoted copy, must not install below R (the reader saw the version before it, so it must come after R):
     * with the floor MVCC's W1 refuses it (abort) and SUNDIAL's commit.tts rises above R; without it
     * ({@link RccModule.PlantedBug#NO_RTS_FLOOR}) W1 lets it in at W &lt; R, and SUNDIAL commits at or below R.
     */
    @ParameterizedTest(name = "{0}, floor {1}")
    @CsvSource({"mvcc,true", "mvcc,false", "sundial,true", "sundial,false"})
    void shouldKeepAnOlderWriterAboveAReadTheDeadPrimaryServed(final String protocol, final boolean floored) {
        olderWriterAboveARead(protocol, floored, false);
    }

    /**
     * The same through cluster mode's settling ({@code cluster.MemoryNodeFailover}): the memory node gets no
     * coordinator, only the largest {@link RccModule#settlingClock} the compute nodes drained with, and floors the
     * promoted copy at exactly {@link RccModule#floorOf} it, two ticks above the reader's R.
     */
    @ParameterizedTest(name = "{0}, floor {1}, cluster")
    @CsvSource({"mvcc,true", "mvcc,false", "sundial,true", "sundial,false"})
    void shouldKeepAnOlderWriterAboveAReadTheDeadPrimaryServedThroughTheClusterClocks(final String protocol,
                                                                                     final boolean floored) {
        olderWriterAboveARead(protocol, floored, true);
    }

    /**
     * Issue 18, review R1, with the clock bound: the reader's compute node dies with the primary, so it drains no
     * clock; its last published bound ({@link io.scythe.txn.spi.ClockBound}) stands in. Its clock commits a timestamp
     * at the bound (the edge) and refuses one a tick above; the settling floors above the bound, and the writer, older
     * than the read, is kept above it on the promoted copy. Without the bound (the live writer's clock alone) W1 lets
     * the writer in below the read: the cycle R1 names.
     */
    @ParameterizedTest(name = "bound published {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void shouldOrderAWriterAboveACommitAtTheBoundADownComputeNodePublished(final boolean bounded) {
        final LogDb primary = memoryNode("mn0");
        final LogDb backup = memoryNode("mn1");
        final Table p = primary.create(TableSchema.fixed(1, "mvcc", 8, 4));
        final Table b = backup.create(TableSchema.fixed(1, "mvcc", 8, 4));
        final int max = 8;
        final int rtsAt = MvccTuple.rtsOffset(max);
        final long committed = 7L << RccClock.ID_BITS;
        holdCommitted(committed, max, rtsAt, p, b);
        final FixedTimers writerLoop = new FixedTimers();
        final FixedTimers readerLoop = new FixedTimers();
        final TxnRuntime writer = coordinator(writerLoop, 2);
        final TxnRuntime reader = coordinator(readerLoop, 1);
        final RccModule module = new RccModule();
        assertThat(module.clockBound(RccModule.MVCC, System::nanoTime)).isNotNull();
        assertThat(module.clockBound(RccModule.NOWAIT, System::nanoTime)).as("no timestamps to bound").isNull();
        final io.scythe.txn.spi.ClockBound bound = new io.scythe.txn.spi.ClockBound(
            () -> readerLoop.now >>> RccClock.TICK_SHIFT, 4_000);
        module.useClockBound(reader, bound);
        readerLoop.now = 64L * 1_000;
        assertThat(RccClock.of(reader).withinBound(RccClock.of(reader).next())).as("nothing published yet")
            .isFalse();
        bound.published(bound.nextBound());
        assertThat(bound.published()).as("4000 ticks ahead of the clock").isEqualTo(5_000);

        writerLoop.now = 64L * 1_000;
        RccClock.of(writer).next(); // the live writer's clock as its node drains the configuration: 1000 ticks
        readerLoop.now = 64L * 5_000;
        final long r = RccClock.of(reader).next();
        assertThat(RccClock.ticksOf(r)).isEqualTo(5_000);
        assertThat(RccClock.of(reader).withinBound(r)).as("a commit at the bound's edge").isTrue();
        readerLoop.now = 64L * 5_001;
        final long beyond = RccClock.of(reader).next();
        assertThat(RccClock.of(reader).withinBound(beyond)).as("a tick above: refused (MvccTxn#commit aborts)")
            .isFalse();
        assertThat(bound.nextBound()).as("the next publication covers it").isEqualTo(5_001 + 4_000);
        assertThat(bound.published()).as("not before it is published").isEqualTo(5_000);

        // The reader commits at R (read-only: nothing logged) after its read on the primary only raised rts to R.
        final AtomicBuffer pm = p.objectMemory();
        assertThat(MvccTuple.pick(pm, 0, max, r)).isEqualTo(MvccTuple.NEWEST);
        assertThat(pm.compareAndSetLong(rtsAt, committed, r)).isTrue();

        // mn0 and the reader's compute node die: the settling floors above the live writer's drained clock and the
        // bound the reader's node published (MemoryNodeFailover#downClocks).
        final long clock = Math.max(module.settlingClock(writer), bounded ? bound.published() : 0);
        module.promotedSettling(backup, java.util.Set.of(1), clock);
        // The writer then draws W, above its drained clock and below the dead reader's R.
        writerLoop.now = 64L * 3_000;
        final long w = RccClock.of(writer).next();
        assertThat(w).isLessThan(r);
        assertThat(MvccTuple.w1(pm, 0, max, w)).as("the dead primary would have refused it").isFalse();
        final AtomicBuffer bm = b.objectMemory();
        assertThat(bm.getLong(rtsAt)).isEqualTo(bounded ? RccModule.floorOf(5_000) : RccModule.floorOf(1_000));
        assertThat(MvccTuple.w1(bm, 0, max, w)).as("W1 lets the writer in at W < R on the promoted copy")
            .isEqualTo(!bounded);
        if (bounded) {
            assertThat(bm.getLong(rtsAt)).isGreaterThan(r);
        }
    }

    /**
     * Issue 18, SUNDIAL's bound ({@link RccClock#logicalBound}): the reader's compute node dies with the primary. Its
     * commit.tts R is logical (the wts of another record it read, at the edge of the bound it published), and its
     * renewal raised the lease of object 0 to R on the primary alone. The live writer's clock never saw R. The settling
     * floors above the reader's published bound, and the writer's commit.tts on the promoted copy is above R; with the
     * live clock alone (no bound, as before: the settling had to wait for the reader's node to come back) it commits
     * inside the reader's lease, at or below R.
     */
    @ParameterizedTest(name = "bound published {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void shouldOrderASundialWriterAboveACommitAtTheBoundADownComputeNodePublished(final boolean bounded) {
        final LogDb primary = memoryNode("mn0");
        final LogDb backup = memoryNode("mn1");
        final Table p = primary.create(TableSchema.fixed(1, "sundial", 8, 4));
        final Table b = backup.create(TableSchema.fixed(1, "sundial", 8, 4));
        final int max = 8;
        final int rtsAt = SundialTuple.rtsOffset(max);
        final long committed = 7L << RccClock.ID_BITS;
        holdCommitted(committed, max, rtsAt, p, b);
        final TxnRuntime writer = coordinator(new FixedTimers(), 2);
        final TxnRuntime reader = coordinator(new FixedTimers(), 1);
        RccClock.of(writer).observe(committed); // all the live writer's node saw before it drained
        final RccModule module = new RccModule();
        final io.scythe.txn.spi.ClockBound bound = module.clockBound(RccModule.SUNDIAL, System::nanoTime);
        assertThat(bound).as("SUNDIAL publishes a bound on its logical timestamps").isNotNull();
        module.useClockBound(reader, bound);
        final long lead = RccClock.LOGICAL_BOUND_LEAD_TICKS;
        final long r = (lead << RccClock.ID_BITS) | 5; // commit.tts: another record's wts, at the bound's edge
        assertThat(bound.allows(RccClock.ticksOf(r))).as("nothing published yet").isFalse();
        bound.published(bound.nextBound());
        assertThat(bound.published()).isEqualTo(lead);
        assertThat(RccClock.of(reader).withinBound(r)).as("a commit at the bound's edge").isTrue();
        assertThat(RccClock.of(reader).withinBound((lead + 1) << RccClock.ID_BITS)).as("a tick above: refused")
            .isFalse();

        // The reader renews its lease on object 0 to R, on the primary only; the primary would put a writer above R.
        final AtomicBuffer pm = p.objectMemory();
        assertThat(pm.compareAndSetLong(rtsAt, committed, r)).isTrue();
        assertThat(SundialTuple.writerFloor(pm, 0, max)).isGreaterThan(r);

        // mn0 and the reader's node die: the floor is above the writer's drained clock and the reader's bound.
        final long clock = Math.max(module.settlingClock(writer), bounded ? bound.published() : 0);
        module.promotedSettling(backup, java.util.Set.of(1), clock);
        final long commitTs = SundialTuple.writerFloor(b.objectMemory(), 0, max);
        if (bounded) {
            assertThat(commitTs).as("the writer's commit.tts on the promoted copy").isGreaterThan(r);
        } else {
            assertThat(commitTs).as("the writer's commit.tts, inside the dead reader's lease").isLessThanOrEqualTo(r);
        }
    }

    private void olderWriterAboveARead(final String protocol, final boolean floored, final boolean cluster) {
        final LogDb primary = memoryNode("mn0");
        final LogDb backup = memoryNode("mn1");
        final Table p = primary.create(TableSchema.fixed(1, protocol, 8, 4));
        final Table b = backup.create(TableSchema.fixed(1, protocol, 8, 4));
        final int max = 8;
        final boolean mvcc = protocol.equals("mvcc");
        final int rtsAt = mvcc ? MvccTuple.rtsOffset(max) : SundialTuple.rtsOffset(max);
        final long committed = 7L << RccClock.ID_BITS; // the version both copies hold (wts), read by nobody yet
        holdCommitted(committed, max, rtsAt, p, b);

        final FixedTimers writerLoop = new FixedTimers();
        final FixedTimers readerLoop = new FixedTimers();
        final TxnRuntime writer = coordinator(writerLoop, 2);
        final TxnRuntime reader = coordinator(readerLoop, 1);
        writerLoop.now = 64L * 1_000;
        final long w = RccClock.of(writer).next();
        readerLoop.now = 64L * 5_000;
        final long r = RccClock.of(reader).next();
        assertThat(w).isGreaterThan(committed).isLessThan(r);

        // The read at R, on the primary only: MVCC picks the newest version below R and raises rts to R; SUNDIAL's
        // reader commits at R, renewing its lease (rts) to it.
        final AtomicBuffer pm = p.objectMemory();
        if (mvcc) {
            assertThat(MvccTuple.pick(pm, 0, max, r)).isEqualTo(MvccTuple.NEWEST);
        }
        assertThat(pm.compareAndSetLong(rtsAt, committed, r)).isTrue();
        // What the dead primary would have told the writer: W1 refuses it / commit above R.
        if (mvcc) {
            assertThat(MvccTuple.w1(pm, 0, max, w)).isFalse();
        } else {
            assertThat(Math.max(w, SundialTuple.writerFloor(pm, 0, max))).isGreaterThan(r);
        }

        // mn0 dies: mn1's copy is promoted, then settled with every coordinator live.
        if (!floored) {
            RccModule.plant(RccModule.PlantedBug.NO_RTS_FLOOR);
        }
        final RccModule module = new RccModule();
        if (cluster) {
            // Each compute node's clock as its drain carries it (read on its loop), the largest given to the node.
            final long clock = Math.max(module.settlingClock(reader), module.settlingClock(writer));
            assertThat(clock).isEqualTo(RccClock.ticksOf(r));
            module.promotedSettling(backup, java.util.Set.of(1), clock);
            assertThat(b.objectMemory().getLong(rtsAt)).as("the promoted copy's rts")
                .isEqualTo(floored ? RccModule.floorOf(RccClock.ticksOf(r)) : committed);
        } else {
            module.promotedSettling(backup, java.util.Set.of(1), java.util.List.of(reader, writer));
        }

        final AtomicBuffer bm = b.objectMemory();
        if (mvcc) {
            final boolean installs = MvccTuple.w1(bm, 0, max, w);
            assertThat(installs).as("W1 lets the writer in at W < R on the promoted copy").isEqualTo(!floored);
        } else {
            final long commitTs = Math.max(w, SundialTuple.writerFloor(bm, 0, max));
            if (floored) {
                assertThat(commitTs).as("the writer's commit.tts").isGreaterThan(r);
            } else {
                assertThat(commitTs).as("the writer's commit.tts, inside the reader's lease").isLessThanOrEqualTo(r);
            }
        }
    }
}
