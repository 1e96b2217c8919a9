package io.scythe.txn.rcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.rcc.mvcc.MvccTuple;
import io.scythe.txn.rcc.sundial.SundialTuple;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** RCC's MVCC rules (R1, R2, W1, the slot a commit overwrites, the atomic read) and SUNDIAL's renewal condition. */
class MvccRulesTest {
    private static final int MAX = 8;

    /** A tuple with the newest version at {@code newest} and older versions {@code old} (0: absent slot). */
    private static UnsafeBuffer tuple(final long newest, final long rts, final long tts, final long... old) {
        final UnsafeBuffer t = new UnsafeBuffer(new byte[MvccTuple.tupleBytes(MAX)]);
        t.putLong(ObjectLayout.VERSION_OFFSET, newest);
        t.putLong(MvccTuple.TTS_OFFSET, tts);
        t.putLong(MvccTuple.rtsOffset(MAX), rts);
        t.putInt(ObjectLayout.VALUE_LENGTH_OFFSET, 8);
        t.putLong(ObjectLayout.VALUE_OFFSET, newest * 10);
        for (int i = 0; i < old.length; i++) {
            if (old[i] != 0) {
                final int at = MvccTuple.oldSlotOffset(MAX, i);
                t.putLong(at, old[i]);
                t.putInt(at + 8, 8);
                t.putInt(at + 12, MvccTuple.PRESENT);
                t.putLong(at + 16, old[i] * 10);
            }
        }
        return t;
    }

    @Test
    void shouldPlaceTheRoomAfterTheValue() {
        assertThat(MvccTuple.rtsOffset(8)).isEqualTo(72);
        assertThat(MvccTuple.oldSlotOffset(8, 0)).isEqualTo(80);
        assertThat(MvccTuple.oldSlotOffset(8, 2)).isEqualTo(80 + 2 * 24);
        assertThat(MvccTuple.room(13)).isEqualTo(8 + 3 * (16 + 16));
        assertThat(MvccTuple.tupleBytes(8)).isEqualTo(72 + 80);
    }

    @Test
    void shouldReadTheLargestVersionBelowTheReaderR1() {
        final UnsafeBuffer t = tuple(50, 0, 0, 20, 40, 30);
        assertThat(MvccTuple.pick(t, 0, MAX, 60)).isEqualTo(MvccTuple.NEWEST);
        assertThat(MvccTuple.pick(t, 0, MAX, 50)).isEqualTo(1); // wts < ctts, strictly: 40
        assertThat(MvccTuple.pick(t, 0, MAX, 35)).isEqualTo(2);
        assertThat(MvccTuple.pick(t, 0, MAX, 21)).isEqualTo(0);
        // All four versions newer than the reader: no version, the read aborts (as RCC's).
        assertThat(MvccTuple.pick(t, 0, MAX, 20)).isEqualTo(MvccTuple.NONE);
        // Absent slots are no versions; a loaded tuple (wts 0) is read by everyone.
        assertThat(MvccTuple.pick(tuple(0, 0, 0), 0, MAX, 1)).isEqualTo(MvccTuple.NEWEST);
        assertThat(MvccTuple.pick(tuple(9, 0, 0), 0, MAX, 5)).isEqualTo(MvccTuple.NONE);
    }

    @Test
    void shouldSkipTheNewestVersionWhileACommitRewritesIt() {
        final UnsafeBuffer t = tuple(50 | ObjectLayout.VERSION_BUSY, 0, 70, 20, 50, 0);
        assertThat(MvccTuple.busy(t, 0)).isTrue();
        assertThat(MvccTuple.newestWts(t, 0)).isEqualTo(50);
        // The commit copied the newest (50) to an older slot first: a reader still finds it there.
        assertThat(MvccTuple.pick(t, 0, MAX, 60)).isEqualTo(1);
    }

    @Test
    void shouldLetAReadPassOnlyWithoutAnEarlierPendingWriterR2() {
        assertThat(MvccTuple.r2(tuple(5, 0, 0), 0, 10)).isTrue();
        assertThat(MvccTuple.r2(tuple(5, 0, 20), 0, 10)).isTrue(); // the pending write is after the read
        assertThat(MvccTuple.r2(tuple(5, 0, 7), 0, 10)).isFalse();
    }

    @Test
    void shouldLetAWriteInOnlyAboveEveryVersionAndReadW1() {
        final UnsafeBuffer t = tuple(50, 60, 0, 20, 40, 30);
        assertThat(MvccTuple.maxWts(t, 0, MAX)).isEqualTo(50);
        assertThat(MvccTuple.w1(t, 0, MAX, 61)).isTrue();
        assertThat(MvccTuple.w1(t, 0, MAX, 60)).isTrue(); // its own read raised rts to its ctts
        assertThat(MvccTuple.w1(t, 0, MAX, 59)).isFalse(); // a later read saw the version it would overwrite
        assertThat(MvccTuple.w1(tuple(50, 0, 0, 20, 90), 0, MAX, 60)).isFalse(); // below a committed version
    }

    @Test
    void shouldOverwriteAnAbsentSlotElseTheOldest() {
        assertThat(MvccTuple.victim(tuple(50, 0, 0, 20, 0, 30), 0, MAX)).isEqualTo(1);
        assertThat(MvccTuple.victim(tuple(50, 0, 0, 20, 40, 30), 0, MAX)).isEqualTo(0);
        assertThat(MvccTuple.victim(tuple(50, 0, 0, 35, 40, 30), 0, MAX)).isEqualTo(2);
        final UnsafeBuffer t = tuple(50, 0, 0, 20, 40, 30);
        final UnsafeBuffer old = new UnsafeBuffer(new byte[MvccTuple.oldSlotBytes(MAX)]);
        MvccTuple.newestAsOld(t, 0, MAX, old, 0);
        assertThat(old.getLong(0)).isEqualTo(50);
        assertThat(old.getInt(8)).isEqualTo(8);
        assertThat(old.getInt(12)).isEqualTo(MvccTuple.PRESENT);
        assertThat(old.getLong(16)).isEqualTo(500);
    }

    @Test
    void shouldCompareOnlyVersionsInTheDoubleRead() {
        final UnsafeBuffer a = tuple(50, 60, 0, 20, 40, 30);
        final UnsafeBuffer b = tuple(50, 70, 99, 20, 40, 30); // rts and tts may differ
        assertThat(MvccTuple.sameVersions(a, b, MAX)).isTrue();
        assertThat(MvccTuple.sameVersions(a, tuple(55, 60, 0, 20, 40, 50), MAX)).isFalse();
        assertThat(MvccTuple.sameVersions(a, tuple(50 | ObjectLayout.VERSION_BUSY, 60, 0, 20, 40, 30), MAX))
            .isFalse();
    }

    @Test
    void shouldRenewASundialLeaseOnlyOnTheSameUnlockedVersion() {
        final UnsafeBuffer t = new UnsafeBuffer(new byte[SundialTuple.tupleBytes(MAX)]);
        t.putLong(ObjectLayout.VERSION_OFFSET, 40);
        assertThat(SundialTuple.renewable(t, 0, 40)).isTrue();
        assertThat(SundialTuple.renewable(t, 0, 39)).isFalse();
        t.putLong(SundialTuple.LOCK_OFFSET, 7);
        assertThat(SundialTuple.renewable(t, 0, 40)).isFalse();
        t.putLong(SundialTuple.LOCK_OFFSET, 0);
        t.putLong(ObjectLayout.CAS_LOCK_OFFSET, 9); // an insert in progress
        assertThat(SundialTuple.renewable(t, 0, 40)).isFalse();
        t.putLong(ObjectLayout.CAS_LOCK_OFFSET, 0);
        t.putLong(ObjectLayout.VERSION_OFFSET, 40 | ObjectLayout.VERSION_BUSY);
        assertThat(SundialTuple.renewable(t, 0, 40)).isFalse();
    }

    /** A locked tuple's lease ends at wts, whatever its rts says (a failed one-sided renewal may have raised it). */
    @Test
    void shouldTakeALockedSundialTuplesLeaseAsEndingAtItsWts() {
        final UnsafeBuffer t = new UnsafeBuffer(new byte[SundialTuple.tupleBytes(MAX)]);
        t.putLong(ObjectLayout.VERSION_OFFSET, 3);
        t.putLong(SundialTuple.rtsOffset(MAX), 5);
        assertThat(SundialTuple.readLease(t, 0, MAX)).as("unlocked: the lease is [wts, rts]").isEqualTo(5);
        t.putLong(SundialTuple.LOCK_OFFSET, 748);
        assertThat(SundialTuple.readLease(t, 0, MAX)).as("locked: no lease beyond wts").isEqualTo(3);
        t.putLong(SundialTuple.LOCK_OFFSET, 0);
        t.putLong(SundialTuple.rtsOffset(MAX), 1);
        assertThat(SundialTuple.readLease(t, 0, MAX)).as("an rts below wts counts as wts").isEqualTo(3);
    }
}
