package io.scythe.storage;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TableTest {
    private LocalFabric fabric;
    private Nic nic;
    private LogDb db;
    private final UnsafeBuffer value = new UnsafeBuffer(new byte[256]);
    private final UnsafeBuffer out = new UnsafeBuffer(new byte[256]);

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        nic = fabric.attachNow("mn");
        db = new LogDb(nic);
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    private UnsafeBuffer valueOf(final long v) {
        value.putLong(0, v);
        value.putLong(8, ~v);
        return value;
    }

    private long read(final Table t, final long pointer, final long ts) {
        final int length = t.readAt(pointer, ts, out, 0);
        if (length < 0) {
            return length;
        }
        assertThat(out.getLong(8)).isEqualTo(~out.getLong(0));
        return out.getLong(0);
    }

    @Test
    void shouldInsertAndReadBackThroughTheHeaderLayout() {
        final Table t = db.create(TableSchema.fixed(1, "accounts", 16, 100));
        final long p = t.insert(42, valueOf(1000), 0, 16, 5);
        assertThat(p).isPositive();
        assertThat(t.lookup(42)).isEqualTo(p);
        assertThat(t.insert(42, valueOf(1), 0, 16, 6)).isEqualTo(Table.DUPLICATE);
        final int at = t.offsetOf(p);
        assertThat(t.objectMemory().getLong(at + ObjectLayout.VERSION_OFFSET)).isEqualTo(5);
        assertThat(t.objectMemory().getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET)).isEqualTo(16);
        assertThat(t.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET)).isEqualTo(1000);
        assertThat(t.objectMemory().getLong(at + ObjectLayout.LOWER_OFFSET)).isZero();
        assertThat(read(t, p, 5)).isEqualTo(1000);
        assertThat(read(t, p, 4)).isEqualTo(Table.NOT_VISIBLE);
        assertThat(t.insert(7, valueOf(1), 0, 15, 1)).as("fixed size").isEqualTo(Table.BAD_LENGTH);
    }

    @Test
    void shouldKeepOlderVersionsVisibleToOlderReaders() {
        final Table t = db.create(TableSchema.fixed(1, "t", 16, 100));
        final long p = t.insert(1, valueOf(10), 0, 16, 10);
        assertThat(t.update(p, valueOf(20), 0, 16, 20)).isZero();
        assertThat(t.update(p, valueOf(30), 0, 16, 30)).isZero();
        assertThat(read(t, p, 9)).isEqualTo(Table.NOT_VISIBLE);
        assertThat(read(t, p, 10)).isEqualTo(10);
        assertThat(read(t, p, 25)).isEqualTo(20);
        assertThat(read(t, p, 99)).isEqualTo(30);
        assertThat(t.versionsInUse()).isEqualTo(2);
        // A reader at 25 or later never needs the value of 10.
        assertThat(t.reclaim(25)).isEqualTo(1);
        assertThat(read(t, p, 25)).isEqualTo(20);
        assertThat(t.versionsInUse()).isEqualTo(1);
        assertThat(t.reclaim(30)).isEqualTo(1);
        assertThat(t.versionsInUse()).isZero();
        assertThat(read(t, p, 30)).isEqualTo(30);
    }

    @Test
    void shouldDeleteAsATombstoneAndFreeTheObjectOnceTheHorizonPassesIt() {
        final Table t = db.create(TableSchema.fixed(1, "t", 16, 2));
        final long p = t.insert(1, valueOf(10), 0, 16, 10);
        assertThat(t.delete(1, 20)).isZero();
        assertThat(t.delete(1, 21)).isEqualTo(Table.NOT_FOUND);
        assertThat(read(t, p, 15)).isEqualTo(10);
        assertThat(read(t, p, 20)).isEqualTo(Table.NOT_VISIBLE);
        assertThat(t.lookup(1)).isEqualTo(p);
        t.reclaim(19);
        assertThat(t.lookup(1)).as("readers at 19 still see the value").isEqualTo(p);
        t.reclaim(20);
        assertThat(t.lookup(1)).isZero();
        assertThat(t.size()).isZero();
        // The slot is reused for another key; the old pointer is detected as stale.
        final long q = t.insert(2, valueOf(77), 0, 16, 30);
        assertThat(ObjectLayout.addressOf(q)).isEqualTo(ObjectLayout.addressOf(p));
        assertThat(q).isNotEqualTo(p);
        assertThat(t.readAt(p, 99, out, 0)).isEqualTo(Table.STALE);
        assertThat(t.update(p, valueOf(1), 0, 16, 40)).isEqualTo(Table.STALE);
        assertThat(read(t, q, 30)).isEqualTo(77);
    }

    @Test
    void shouldReviveADeletedKeyAndReportFullTables() {
        final Table t = db.create(TableSchema.fixed(1, "t", 16, 1).withVersionCapacity(1));
        final long p = t.insert(1, valueOf(10), 0, 16, 10);
        assertThat(t.insert(2, valueOf(1), 0, 16, 10)).isEqualTo(Table.FULL);
        assertThat(t.delete(1, 20)).isZero();
        assertThat(t.insert(1, valueOf(30), 0, 16, 30)).as("no room to keep the delete").isEqualTo(
            Table.VERSION_SPACE_FULL);
        t.reclaim(25);
        assertThat(t.lookup(1)).isZero();
        final long again = t.insert(1, valueOf(30), 0, 16, 30);
        assertThat(again).isPositive();
        assertThat(read(t, again, 30)).isEqualTo(30);
        assertThat(ObjectLayout.incarnationOf(again)).as("a later incarnation: the old pointer is stale")
            .isGreaterThan(ObjectLayout.incarnationOf(p));
    }

    @Test
    void shouldCallAKeyHeldByAnotherInserterLockedNotPresent() {
        final Table t = db.create(TableSchema.fixed(1, "t", 16, 4));
        final long p = t.insertLocked(5, valueOf(1), 0, 16, Table.InsertLock.CAS_WORD, 77);
        assertThat(p).isPositive();
        // Not committed yet: the key may vanish again (its inserter may abandon it), so no verdict of "present".
        assertThat(t.insertLocked(5, valueOf(2), 0, 16, Table.InsertLock.CAS_WORD, 88)).isEqualTo(Table.LOCKED);
        assertThat(t.abandonInsert(5, p, Table.InsertLock.CAS_WORD)).isEqualTo(Table.OK);
        final long revived = t.insertLocked(5, valueOf(2), 0, 16, Table.InsertLock.CAS_WORD, 88);
        assertThat(revived).isEqualTo(p);
        t.objectMemory().putLongVolatile(t.offsetOf(revived) + ObjectLayout.CAS_LOCK_OFFSET, 0); // committed
        assertThat(t.insertLocked(5, valueOf(3), 0, 16, Table.InsertLock.CAS_WORD, 99)).isEqualTo(Table.DUPLICATE);
    }

    @Test
    void shouldKeepATombstoneWhoseKeyItDoesNotKnowRatherThanLeaveTheIndexPointingAtAFreedSlot() {
        final Table t = db.create(TableSchema.fixed(1, "t", 16, 4));
        final long p = t.insertLocked(5, valueOf(1), 0, 16, Table.InsertLock.CAS_WORD, 77);
        // A reader holds the abandoned object's lock word (RCC NOWAIT locks what it reads), so reclaim keeps it.
        assertThat(t.abandonInsert(5, p, Table.InsertLock.CAS_WORD)).isEqualTo(Table.OK);
        final int at = t.offsetOf(p);
        t.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, 99);
        t.reclaim(Long.MAX_VALUE);
        t.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, 0);
        assertThat(t.insertLocked(5, valueOf(2), 0, 16, Table.InsertLock.CAS_WORD, 88)).isEqualTo(p); // revived
        t.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, 0); // its insert committed
        // A one-sided write-back deletes it: the table is not told.
        t.objectMemory().putShortVolatile(at + ObjectLayout.FLAGS_OFFSET, (short) ObjectLayout.FLAG_DELETED);
        t.reclaim(Long.MAX_VALUE);
        assertThat(t.lookup(5)).isEqualTo(p);
        assertThat(t.offsetOf(t.lookup(5))).as("the index still points at a live slot: a tombstone, revivable")
            .isEqualTo(at);
        assertThat(t.insertLocked(5, valueOf(3), 0, 16, Table.InsertLock.CAS_WORD, 66)).isEqualTo(p);
        // A tombstone whose protocol word (RCC WAITDIE's tts) is held is not freed either.
        t.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, 0);
        assertThat(t.delete(5, 1000)).isZero();
        t.objectMemory().putLongVolatile(at + ObjectLayout.PROTOCOL_WORD_OFFSET, 1234);
        t.reclaim(Long.MAX_VALUE);
        assertThat(t.offsetOf(p)).isEqualTo(at);
        t.objectMemory().putLongVolatile(at + ObjectLayout.PROTOCOL_WORD_OFFSET, 0);
        t.reclaim(Long.MAX_VALUE);
        assertThat(t.lookup(5)).isZero();
        assertThat(t.offsetOf(p)).isEqualTo(-1);
    }

    @Test
    void shouldCreateAKeyAgainAboveEveryVersionItsReclaimedIncarnationHad() {
        final Table t = db.create(TableSchema.fixed(1, "t", 16, 2));
        assertThat(t.absentBound()).isZero();
        final long p = t.insert(1, valueOf(10), 0, 16, 10);
        assertThat(t.delete(1, 500)).isZero();
        t.reclaim(500);
        assertThat(t.lookup(1)).isZero();
        assertThat(t.absentBound()).as("the missing key was last at 500 or below").isEqualTo(500);
        final long again = t.insertLocked(1, valueOf(3), 0, 16, Table.InsertLock.CAS_WORD, 7);
        assertThat(ObjectLayout.addressOf(again)).isEqualTo(ObjectLayout.addressOf(p));
        assertThat(t.objectMemory().getLongVolatile(t.offsetOf(again) + ObjectLayout.VERSION_OFFSET))
            .as("created above the bound: the inserter installs above it").isEqualTo(501);
    }

    @Test
    void shouldStoreVariableSizeValuesUpToTheMaximum() {
        final Table t = db.create(TableSchema.fixed(1, "kv", 200, 10).variable());
        final long p = t.insert(1, valueOf(5), 0, 16, 1);
        assertThat(t.update(p, valueOf(6), 0, 200, 2)).isZero();
        assertThat(t.readAt(p, 2, out, 0)).isEqualTo(200);
        assertThat(t.readAt(p, 1, out, 0)).isEqualTo(16);
        assertThat(t.update(p, valueOf(6), 0, 201, 3)).isEqualTo(Table.BAD_LENGTH);
    }

    @Test
    void shouldRefuseDuplicateAndOversizedTables() {
        db.create(TableSchema.fixed(1, "t", 16, 10));
        assertThatThrownBy(() -> db.create(TableSchema.fixed(1, "u", 16, 10))).hasMessageContaining("exists");
        assertThatThrownBy(() -> db.create(TableSchema.fixed(2, "huge", 1 << 20, 1 << 20)))
            .hasMessageContaining("does not fit");
        assertThat(nic.region("huge.objects")).isNull();
        assertThatThrownBy(() -> TableSchema.fixed(0, "t", 16, 10)).hasMessageContaining("id");
        assertThatThrownBy(() -> TableSchema.fixed(3, "t", 0, 10)).hasMessageContaining("maxValueBytes");
    }

    @Test
    void shouldKeepSnapshotsConsistentWhileAWriterUpdatesAndTheEvictorReclaims() throws Exception {
        final int keys = 64;
        final Table t = db.create(TableSchema.fixed(1, "t", 16, keys).withVersionCapacity(4096));
        final long[] pointers = new long[keys];
        for (int k = 0; k < keys; k++) {
            pointers[k] = t.insert(k, valueOf(0), 0, 16, 1);
        }
        // Writer: version v of key k holds value v. Readers read at ts >= horizon and must see the newest <= ts.
        final AtomicLong clock = new AtomicLong(1);
        final AtomicLong horizon = new AtomicLong(1);
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Throwable> failures = new ArrayList<>();
        final Thread writer = new Thread(() -> {
            final UnsafeBuffer v = new UnsafeBuffer(new byte[16]);
            final SplittableRandom random = new SplittableRandom(1);
            for (int i = 0; i < 200_000 && !stop.get(); i++) {
                final int k = random.nextInt(keys);
                final long ts = clock.incrementAndGet();
                v.putLong(0, ts);
                v.putLong(8, ~ts);
                int status;
                while ((status = t.update(pointers[k], v, 0, 16, ts)) == Table.VERSION_SPACE_FULL && !stop.get()) {
                    Thread.onSpinWait();
                }
                if (status != Table.OK) {
                    failures.add(new AssertionError("update " + status));
                }
            }
            stop.set(true);
        });
        // Readers announce their snapshot before reading; the horizon never passes an announced snapshot.
        final AtomicLong announced = new AtomicLong(Long.MAX_VALUE);
        final Thread evictor = new Thread(() -> {
            while (!stop.get()) {
                final long h = Math.min(clock.get() - 50, announced.get());
                if (h > horizon.get()) {
                    horizon.set(h);
                }
                t.reclaim(horizon.get());
            }
        });
        final AtomicLong checks = new AtomicLong();
        final Thread reader = new Thread(() -> {
            final UnsafeBuffer dst = new UnsafeBuffer(new byte[16]);
            final SplittableRandom random = new SplittableRandom(2);
            while (!stop.get()) {
                final long ts = Math.max(1, clock.get() - 20);
                announced.set(ts);
                if (horizon.get() > ts) {
                    announced.set(Long.MAX_VALUE);
                    continue; // the evictor got there first: take a newer snapshot
                }
                for (int i = 0; i < 16; i++) {
                    final int k = random.nextInt(keys);
                    final int length = t.readAt(pointers[k], ts, dst, 0);
                    if (length < 0) {
                        failures.add(new AssertionError("no visible version of key " + k + " at " + ts + ": "
                            + length + " (horizon " + horizon.get() + ")"));
                        stop.set(true);
                        return;
                    }
                    final long seen = dst.getLong(0);
                    if (dst.getLong(8) != ~seen || seen > ts) {
                        failures.add(new AssertionError("torn or future value " + seen + " at " + ts));
                        stop.set(true);
                        return;
                    }
                    checks.incrementAndGet();
                }
                announced.set(Long.MAX_VALUE);
            }
        });
        writer.start();
        evictor.start();
        reader.start();
        writer.join();
        evictor.join();
        reader.join();
        assertThat(failures).isEmpty();
        assertThat(checks.get()).isPositive();
        t.reclaim(clock.get());
        assertThat(t.versionsInUse()).isZero();
    }

    @Test
    void shouldStoreAMillionYcsbRecordsInUnder128BytesEach() {
        final int records = 1_000_000;
        final Table t = db.create(new TableSchema(1, "usertable", 40, true, records, IndexKind.HASH, 0));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[40]);
        for (long k = 0; k < records; k++) {
            v.putLong(0, k);
            assertThat(t.insert(k, v, 0, 40, 1)).isPositive();
        }
        assertThat(t.size()).isEqualTo(records);
        final double bytesPerRecord = (double) t.registeredBytes() / records;
        assertThat(bytesPerRecord).as("registered bytes per record").isLessThan(128);
    }

    /**
     * TODO lotusins-return, the dead-node half: slots granted to a holder (a compute node incarnation) go back to the
     * slab on {@link Table#reclaimGranted}, those an index entry names (its committed inserts) stay; another holder's
     * are untouched. In a full table the slots reclaimed are granted again, as new incarnations. Fails without
     * reclaimGranted (nothing to call; before, a dead node's slots were lost to the table for good).
     */
    @Test
    void shouldReclaimADeadHoldersSlotsOutsideTheIndexOnly() {
        final Table t = db.create(TableSchema.fixed(1, "g", 16, 6));
        final long[] dead = t.grantSlots(4, 7);
        final long[] live = t.grantSlots(4, 8);
        assertThat(dead).hasSize(4);
        assertThat(live).hasSize(2);
        assertThat(t.grantSlots(1, 8)).isEmpty();
        // The dead holder's first slot was inserted one-sided: its index slot names it (key, then pointer).
        final long key = 42;
        final int at = HashIndexLayout.homeBucket(key, t.describe().hashBuckets()) * HashIndexLayout.BUCKET_BYTES;
        t.indexMemory().putLong(at + HashIndexLayout.KEY_OFFSET, key);
        t.indexMemory().putLongVolatile(at + HashIndexLayout.ADDRESS_OFFSET, dead[0]);
        assertThat(t.lookup(key)).isEqualTo(dead[0]);
        assertThat(t.grantedTo(7)).isEqualTo(4);

        assertThat(t.reclaimGranted(7)).isEqualTo(3);
        assertThat(t.grantedTo(7)).isZero();
        assertThat(t.grantedTo(8)).isEqualTo(2);
        assertThat(t.slotsReclaimed()).isEqualTo(3);
        assertThat(t.lookup(key)).isEqualTo(dead[0]);
        assertThat(t.offsetOf(dead[0])).isNotNegative();
        for (int i = 1; i < 4; i++) {
            assertThat(t.offsetOf(dead[i])).as("a reclaimed slot's old pointer is stale").isNegative();
        }
        final long[] again = t.grantSlots(4, 9);
        assertThat(again).hasSize(3);
        assertThat(t.reclaimGranted(7)).as("a holder reclaimed once has nothing left").isZero();
    }
}
