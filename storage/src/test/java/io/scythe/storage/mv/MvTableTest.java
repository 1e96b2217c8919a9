package io.scythe.storage.mv;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.TableSchema;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static io.scythe.storage.mv.VersionHistory.valueOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rules of timestamp ordering on a memory node's multi-version table, one call at a time. */
class MvTableTest {
    private static final int VALUE_BYTES = VersionHistory.VALUE_BYTES;
    private static final long OWNER = 7;
    private LocalFabric fabric;
    private MvStore store;
    private final UnsafeBuffer out = new UnsafeBuffer(new byte[VALUE_BYTES]);
    private final MvRead read = new MvRead();

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        store = new MvStore(fabric.attachNow("mn"));
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    private MvTable table(final int slots, final long versionCapacity) {
        return store.create(new MvSchema(TableSchema.fixed(1, "accounts", VALUE_BYTES, 64)
            .withVersionCapacity(versionCapacity), slots));
    }

    /** Reads at {@code ts}: the version's wts (after checking its value is that version's), or the status code. */
    private long readAt(final MvTable t, final long pointer, final long ts, final boolean raise) {
        t.read(pointer, ts, raise, out, 0, read);
        if (!read.found()) {
            return read.status();
        }
        assertThat(out.getLong(0)).isEqualTo(read.wts());
        assertThat(out.getLong(8)).isEqualTo(~read.wts());
        assertThat(out.getLong(24)).isEqualTo(read.wts() * 31 + out.getLong(16));
        return read.wts();
    }

    private long peek(final MvTable t, final long pointer, final long ts) {
        return readAt(t, pointer, ts, false);
    }

    private int install(final MvTable t, final long pointer, final long ts) {
        return t.install(pointer, ts, OWNER, valueOf(1, ts), 0, VALUE_BYTES, false);
    }

    private void commitAt(final MvTable t, final long pointer, final long ts) {
        final int slot = install(t, pointer, ts);
        assertThat(slot).as("install at %d", ts).isGreaterThanOrEqualTo(0);
        assertThat(t.commit(pointer, slot, ts, null, 0, -1)).isEqualTo(MvStatus.OK);
    }

    @Test
    void shouldSeeTheNewestCommittedVersionAtOrBelowEachTimestamp() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        assertThat(p).isPositive();
        assertThat(t.lookup(1)).isEqualTo(p);
        commitAt(t, p, 10);
        commitAt(t, p, 20);
        final int rolledBack = install(t, p, 25);
        assertThat(t.rollback(p, rolledBack, 25)).isEqualTo(MvStatus.OK);
        final int pending = install(t, p, 30);
        assertThat(pending).isGreaterThanOrEqualTo(0);

        for (long ts = 0; ts < 40; ts++) {
            final long expected = ts < 10 ? 0 : ts < 20 ? 10 : ts < 30 ? 20 : MvStatus.PENDING;
            assertThat(peek(t, p, ts)).as("visible at %d", ts).isEqualTo(expected);
        }
        assertThat(read.wts()).as("the pending version in the way").isEqualTo(30);
        assertThat(read.slot()).isEqualTo(pending);
        assertThat(t.commit(p, pending, 30, null, 0, -1)).isEqualTo(MvStatus.OK);
        assertThat(peek(t, p, 35)).isEqualTo(30);
        assertThat(t.pendingVersions()).isZero();
        assertThat(t.latchesHeld()).isZero();
    }

    @Test
    void shouldOrderPendingVersionsByTheirTimestampsNotByWhenTheyCame() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        final int late = install(t, p, 30);
        final int straggler = install(t, p, 20); // below a pending version: allowed (Aurogon Fig. 4)
        assertThat(late).isNotEqualTo(straggler).isGreaterThanOrEqualTo(0);
        assertThat(straggler).isGreaterThanOrEqualTo(0);
        assertThat(t.commit(p, late, 30, null, 0, -1)).isEqualTo(MvStatus.OK);

        assertThat(peek(t, p, 25)).isEqualTo(MvStatus.PENDING);
        assertThat(read.wts()).isEqualTo(20);
        assertThat(peek(t, p, 35)).isEqualTo(30);
        assertThat(peek(t, p, 15)).isEqualTo(0);

        assertThat(t.commit(p, straggler, 20, null, 0, -1)).isEqualTo(MvStatus.OK);
        assertThat(peek(t, p, 25)).isEqualTo(20);
        assertThat(peek(t, p, 35)).isEqualTo(30);
        assertThat(install(t, p, 25)).as("below the committed 30 now").isEqualTo(MvStatus.SUPERSEDED);
    }

    @Test
    void shouldRefuseAnInstallAtOrBelowTheLargestTimestampReadAt() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        assertThat(peek(t, p, 100)).as("a peek claims nothing").isEqualTo(0);
        assertThat(t.objectMemory().getLong(t.offsetOf(p) + MvObjectDescriptor.RTS_OFFSET)).isZero();

        assertThat(readAt(t, p, 15, true)).isEqualTo(0);
        assertThat(install(t, p, 15)).as("a read at 15 saw version 0").isEqualTo(MvStatus.TOO_LATE);
        assertThat(install(t, p, 12)).isEqualTo(MvStatus.TOO_LATE);
        assertThat(readAt(t, p, 9, true)).as("an older read lowers nothing").isEqualTo(0);
        assertThat(install(t, p, 14)).isEqualTo(MvStatus.TOO_LATE);
        assertThat(install(t, p, 16)).isGreaterThanOrEqualTo(0);
        assertThat(t.raiseRts(p, 40)).isEqualTo(40);
        assertThat(t.raiseRts(p, 30)).as("rts only grows").isEqualTo(40);
        assertThat(t.pendingVersions()).isEqualTo(1);
    }

    @Test
    void shouldRefuseAnInstallBelowOrBesideAnotherVersion() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        commitAt(t, p, 20);
        assertThat(install(t, p, 15)).isEqualTo(MvStatus.SUPERSEDED);
        assertThat(install(t, p, 20)).isEqualTo(MvStatus.DUPLICATE);
        assertThat(install(t, p, 25)).isGreaterThanOrEqualTo(0);
        assertThat(install(t, p, 25)).isEqualTo(MvStatus.DUPLICATE);
        assertThat(t.install(p, 27, OWNER, valueOf(1, 27), 0, VALUE_BYTES, true))
            .as("RCC MVCC's W2: one pending writer").isEqualTo(MvStatus.PENDING_EXISTS);
        assertThat(t.install(p, 28, OWNER, valueOf(1, 28), 0, VALUE_BYTES, false)).isGreaterThanOrEqualTo(0);
    }

    @Test
    void shouldCommitAPreAttachedVersionWithTheValueItBringsAtCommit() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        final int slot = t.install(p, 10, OWNER, null, 0, -1, false);
        assertThat(slot).isGreaterThanOrEqualTo(0);
        assertThat(peek(t, p, 12)).isEqualTo(MvStatus.PENDING);
        assertThat(t.commit(p, slot, 10, null, 0, -1)).as("no value yet").isEqualTo(MvStatus.BAD_LENGTH);
        assertThat(t.commit(p, slot, 11, valueOf(1, 10), 0, VALUE_BYTES)).isEqualTo(MvStatus.NOT_PENDING);
        assertThat(t.commit(p, slot, 10, valueOf(1, 10), 0, 8)).isEqualTo(MvStatus.BAD_LENGTH);
        assertThat(t.commit(p, slot, 10, valueOf(1, 10), 0, VALUE_BYTES)).isEqualTo(MvStatus.OK);
        assertThat(peek(t, p, 12)).isEqualTo(10);
        assertThat(t.commit(p, slot, 10, valueOf(1, 10), 0, VALUE_BYTES)).isEqualTo(MvStatus.NOT_PENDING);
        assertThat(t.rollback(p, slot, 10)).isEqualTo(MvStatus.NOT_PENDING);
        assertThat(t.rollback(p, 9, 10)).as("no such slot").isEqualTo(MvStatus.NOT_PENDING);
    }

    @Test
    void shouldMoveTheOldestCommittedVersionToTheOverflowChainWhenSlotsRunOut() {
        final MvTable t = table(3, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        for (long ts = 10; ts <= 60; ts += 10) {
            commitAt(t, p, ts);
        }
        assertThat(t.evictions()).isEqualTo(4); // 0, 10, 20, 30 moved out; 40, 50, 60 inline
        assertThat(t.versionsInUse()).isEqualTo(4);
        for (long ts = 0; ts < 70; ts++) {
            assertThat(peek(t, p, ts)).as("visible at %d", ts).isEqualTo(ts / 10 * 10);
            assertThat(read.slot() == MvRead.OVERFLOW).as("from the chain at %d", ts).isEqualTo(ts < 40);
        }
        final MvObject view = new MvObject(3, VALUE_BYTES).wrap(t.objectMemory(), t.offsetOf(p));
        assertThat(view.overflowWts()).isEqualTo(30);
    }

    @Test
    void shouldNeverMoveAPendingVersionOrTheNewestCommittedOne() {
        final MvTable t = table(2, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        final int pending = install(t, p, 10);
        assertThat(install(t, p, 20)).as("0 is the only committed version").isEqualTo(MvStatus.FULL);
        assertThat(t.makeRoom(p)).isEqualTo(MvStatus.FULL);
        assertThat(t.commit(p, pending, 10, null, 0, -1)).isEqualTo(MvStatus.OK);
        assertThat(t.makeRoom(p)).isEqualTo(MvStatus.OK);
        assertThat(t.evictions()).isEqualTo(1);
        final int next = install(t, p, 20);
        assertThat(next).isGreaterThanOrEqualTo(0);
        assertThat(install(t, p, 30)).as("10, the only committed version, stays").isEqualTo(MvStatus.FULL);
        assertThat(peek(t, p, 5)).isEqualTo(0);
    }

    @Test
    void shouldRunOutOfVersionSpaceWithoutLosingAVersion() {
        final MvTable t = table(2, 1);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        commitAt(t, p, 10);
        commitAt(t, p, 20); // moves 0 to the log's one record
        assertThat(install(t, p, 30)).isEqualTo(MvStatus.VERSION_SPACE_FULL);
        assertThat(t.pendingVersions()).isZero();
        for (long ts = 0; ts < 30; ts++) {
            assertThat(peek(t, p, ts)).isEqualTo(ts / 10 * 10);
        }
        assertThat(t.reclaim(25)).isEqualTo(2); // record 0 and slot 10 go
        commitAt(t, p, 30);
        assertThat(peek(t, p, 25)).isEqualTo(20);
    }

    @Test
    void shouldReclaimOnlyWhatNoReadAtOrAboveTheHorizonCanSee() {
        final MvTable t = table(3, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        final long q = t.load(2, valueOf(2, 0), 0, VALUE_BYTES, 0);
        for (long ts = 10; ts <= 80; ts += 10) {
            commitAt(t, p, ts);
        }
        commitAt(t, q, 10);
        final int pending = install(t, q, 90);
        final long[] before = readsFrom(t, p, 0, 100);
        final long inUse = t.versionsInUse();

        final long horizon = 35;
        assertThat(inUse).as("0 to 50 moved out").isEqualTo(6);
        assertThat(t.reclaim(horizon)).as("0, 10, 20 from p's chain, 0 from q's slots").isEqualTo(4);
        assertThat(t.versionsInUse()).as("and 60 moved out to leave p a free slot").isEqualTo(inUse - 3 + 1);
        final long[] after = readsFrom(t, p, 0, 100);
        assertThat(Arrays.copyOfRange(after, (int) horizon, 100))
            .isEqualTo(Arrays.copyOfRange(before, (int) horizon, 100));
        assertThat(peek(t, p, (int) horizon)).isEqualTo(30);

        assertThat(t.reclaim(75)).as("p's whole chain: 60 down to 30").isEqualTo(4);
        assertThat(t.versionsInUse()).isZero();
        assertThat(Arrays.copyOfRange(readsFrom(t, p, 0, 100), 75, 100))
            .isEqualTo(Arrays.copyOfRange(before, 75, 100));
        assertThat(peek(t, q, 95)).as("a pending version is never reclaimed").isEqualTo(MvStatus.PENDING);
        assertThat(t.commit(q, pending, 90, null, 0, -1)).isEqualTo(MvStatus.OK);
        assertThat(peek(t, q, 95)).isEqualTo(90);
        assertThat(peek(t, q, 85)).isEqualTo(10);
    }

    private long[] readsFrom(final MvTable t, final long pointer, final int from, final int to) {
        final long[] seen = new long[to];
        for (int ts = from; ts < to; ts++) {
            seen[ts] = peek(t, pointer, ts);
        }
        return seen;
    }

    @Test
    void shouldRollBackADeadOwnersPendingVersionsAndFreeItsLatches() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        final long dead = 99;
        final int mine = install(t, p, 10);
        final int theirs = t.install(p, 20, dead, valueOf(1, 20), 0, VALUE_BYTES, false);
        assertThat(theirs).isGreaterThanOrEqualTo(0);
        t.objectMemory().putLongVolatile(t.offsetOf(p) + MvObjectDescriptor.LATCH_OFFSET, dead); // died mid-install
        assertThat(install(t, p, 30)).isEqualTo(MvStatus.LATCHED);
        assertThat(t.latchesHeld()).isEqualTo(1);

        assertThat(t.abandon(owner -> owner == dead)).isEqualTo(2);
        assertThat(t.latchesHeld()).isZero();
        assertThat(t.pendingVersions()).isEqualTo(1);
        assertThat(t.commit(p, theirs, 20, null, 0, -1)).isEqualTo(MvStatus.NOT_PENDING);
        assertThat(t.commit(p, mine, 10, null, 0, -1)).isEqualTo(MvStatus.OK);
        assertThat(peek(t, p, 25)).isEqualTo(10);
    }

    @Test
    void shouldRefuseBadCallsWithoutChangingAnything() {
        final MvTable t = table(4, 64);
        final long p = t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0);
        assertThat(t.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0)).isEqualTo(MvStatus.DUPLICATE);
        assertThat(t.load(2, valueOf(2, 0), 0, 8, 0)).isEqualTo(MvStatus.BAD_LENGTH);
        assertThat(t.install(p, 10, OWNER, valueOf(1, 10), 0, 16, false)).isEqualTo(MvStatus.BAD_LENGTH);
        assertThat(t.install(p + 8, 10, OWNER, valueOf(1, 10), 0, VALUE_BYTES, false)).isEqualTo(MvStatus.STALE);
        assertThat(t.read(p + t.schema().objectBytes(), 10, true, out, 0, read).status()).isEqualTo(MvStatus.STALE);
        assertThatThrownBy(() -> t.install(p, 10, 0, valueOf(1, 10), 0, VALUE_BYTES, false))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("owner=0");
        assertThatThrownBy(() -> t.install(p, 1L << 62, OWNER, valueOf(1, 10), 0, VALUE_BYTES, false))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wts=");
        assertThatThrownBy(() -> new MvSchema(TableSchema.fixed(2, "x", 8, 8), 1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inline slots=1");
        assertThatThrownBy(() -> table(4, 64)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("already exists");
        assertThat(t.pendingVersions()).isZero();
        assertThat(peek(t, p, 100)).isEqualTo(0);
        final MvTable full = store.create(new MvSchema(TableSchema.fixed(3, "tiny", VALUE_BYTES, 1), 2));
        assertThat(full.load(1, valueOf(1, 0), 0, VALUE_BYTES, 0)).isPositive();
        assertThat(full.load(2, valueOf(2, 0), 0, VALUE_BYTES, 0)).isEqualTo(MvStatus.FULL);
    }
}
