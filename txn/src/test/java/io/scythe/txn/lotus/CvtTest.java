package io.scythe.txn.lotus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rules of Lotus's CVT and full-record versions ({@link Cvt}) on images. */
class CvtTest {
    private static final int MAX = 100; // two cache lines of 63 value bytes

    private static UnsafeBuffer cvt(final long... versions) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[Cvt.cvtBytes(versions.length)]);
        Cvt.header(b, 0, 42, 3, versions.length);
        for (int i = 0; i < versions.length; i++) {
            if (versions[i] != 0) {
                Cvt.putCell(b, Cvt.cell(i), (byte) 5, true, false, 8, Cvt.recordOffset(MAX, versions.length, i),
                    versions[i]);
            }
        }
        return b;
    }

    @Test
    void shouldPickTheLargestVisibleVersionBelowTheStart() {
        final UnsafeBuffer b = cvt(10, 20);
        assertThat(Cvt.pick(b, 0, 25)).isEqualTo(new Cvt.Pick(1, false, false));
        assertThat(Cvt.pick(b, 0, 15)).isEqualTo(new Cvt.Pick(0, true, false)); // 20 is newer: a locked read aborts
        assertThat(Cvt.pick(b, 0, 10).cell()).isEqualTo(Cvt.NONE); // below T_start strictly
        assertThat(Cvt.written(b, 0)).isTrue();
        assertThat(Cvt.key(b, 0)).isEqualTo(42);
        assertThat(Cvt.written(new UnsafeBuffer(new byte[Cvt.cvtBytes(2)]), 0)).isFalse();
    }

    /**
     * Recovery of a record logged before T_commit decides it by the cells ({@code LotusTxn#committedIn}): an update
     * (entry token 21: it read 20) is committed by a visible cell at or above 21 only; an insert (entry token 101: its
     * INSERT's version 100, above every earlier incarnation's) by one at or above 100 only. A reused slot whose old
     * CVT still shows the earlier incarnation's versions (10, 20: the insert's whole-CVT INVISIBLE write never landed)
     * is not the insert's commit: failed before (any visible cell of an inserted object was taken, 10).
     */
    @Test
    void shouldDecideARecordLoggedBeforeTCommitOnlyByACellOfItsOwnCommit() {
        assertThat(LotusTxn.committedIn(cvt(20, Cvt.INVISIBLE), false, 21)).isZero(); // not visible yet: undone
        assertThat(LotusTxn.committedIn(cvt(20, 35), false, 21)).isEqualTo(35);
        assertThat(LotusTxn.committedIn(cvt(40, 35), false, 21)).as("the earliest of its versions").isEqualTo(35);
        assertThat(LotusTxn.committedIn(cvt(10, 20), true, 101)).as("an earlier incarnation's cells").isZero();
        assertThat(LotusTxn.committedIn(cvt(Cvt.INVISIBLE, 20), true, 101)).isZero();
        assertThat(LotusTxn.committedIn(cvt(120, 0), true, 101)).isEqualTo(120);
        assertThat(LotusTxn.committedIn(cvt(100, 0), true, 101)).as("T_commit at the INSERT's version").isEqualTo(100);
    }

    @Test
    void shouldReportAnInvisibleCellAndSkipIt() {
        final UnsafeBuffer b = cvt(10, Cvt.INVISIBLE);
        final Cvt.Pick p = Cvt.pick(b, 0, 1_000);
        assertThat(p.cell()).isZero();
        assertThat(p.invisible()).isTrue(); // a lock-free reader aborts on it: the digest's window
        assertThat(p.newer()).isFalse();
    }

    @Test
    void shouldSeeATornCell() {
        final UnsafeBuffer b = cvt(10, 20);
        b.putByte(Cvt.cell(1) + Cvt.CELL_TAIL_CV, (byte) 6); // head written, tail not yet
        assertThat(Cvt.pick(b, 0, 25).cell()).isEqualTo(Cvt.TORN);
    }

    @Test
    void shouldOverwriteAFreeThenAnInvisibleThenTheOldestCellNeverTheNewest() {
        assertThat(Cvt.victim(cvt(10, 0), 0)).isEqualTo(1);
        assertThat(Cvt.victim(cvt(Cvt.INVISIBLE, 10), 0)).isZero();
        assertThat(Cvt.victim(cvt(30, 10), 0)).isEqualTo(1);
        assertThat(Cvt.victim(cvt(10, 30), 0)).isZero();
        assertThat(Cvt.victim(cvt(10, 30, 20), 0)).isZero();
        assertThat(Cvt.newest(cvt(10, 30, 20), 0)).isEqualTo(1);
    }

    @Test
    void shouldClearVersionsOlderThanHalfASecondButNotTheNewest() {
        final long now = 2_000_000_000L;
        final UnsafeBuffer b = cvt(now - 600_000_000L, now - 550_000_000L, now - 100_000_000L);
        assertThat(Cvt.expired(b, 0, 0, now)).isTrue();
        assertThat(Cvt.expired(b, 0, 1, now)).isTrue();
        assertThat(Cvt.expired(b, 0, 2, now)).isFalse(); // young
        final UnsafeBuffer old = cvt(now - 900_000_000L, now - 800_000_000L);
        assertThat(Cvt.expired(old, 0, 1, now)).as("the newest version is kept however old").isFalse();
        assertThat(Cvt.expired(old, 0, 0, now)).isTrue();
    }

    @Test
    void shouldReadARecordBackOnlyWhenEveryLineHasTheCellsCv() {
        final int bytes = Cvt.recordBytes(MAX);
        assertThat(bytes).isEqualTo(128);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[MAX]);
        for (int i = 0; i < MAX; i++) {
            value.putByte(i, (byte) i);
        }
        final UnsafeBuffer record = new UnsafeBuffer(new byte[bytes]);
        Cvt.putRecord(record, 0, bytes, (byte) 7, value, 0, MAX);
        final UnsafeBuffer back = new UnsafeBuffer(new byte[MAX]);
        assertThat(Cvt.getRecord(record, 0, bytes, (byte) 7, MAX, back, 0)).isTrue();
        assertThat(back.byteArray()).isEqualTo(value.byteArray());
        assertThat(Cvt.getRecord(record, 0, bytes, (byte) 8, MAX, back, 0)).as("another version's CV").isFalse();
        // A reader overlapping a rewrite: the first line of the new version (CV 8), the second of the old (CV 7).
        record.putByte(0, (byte) 8);
        assertThat(Cvt.getRecord(record, 0, bytes, (byte) 8, MAX, back, 0)).isFalse();
        assertThat(Cvt.getRecord(record, 0, bytes, (byte) 7, MAX, back, 0)).isFalse();
    }

    @Test
    void shouldSizeTheRoomAndRefuseFewerThanTwoVersions() {
        assertThat(Cvt.room(16, 2)).isEqualTo(16 + 2 * 32 + 2 * 64);
        assertThat(Cvt.recordOffset(16, 2, 1)).isEqualTo(Cvt.offset(16) + 16 + 64 + 64);
        assertThatThrownBy(() -> Cvt.room(16, 1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("2 to 64");
    }
}
