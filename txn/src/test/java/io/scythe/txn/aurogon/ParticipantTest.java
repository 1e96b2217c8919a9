package io.scythe.txn.aurogon;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.scythe.txn.aurogon.Participant.FLAG_NO_DEFER;
import static io.scythe.txn.aurogon.Participant.FLAG_PREATTACH;
import static io.scythe.txn.aurogon.Participant.FLAG_SPS;
import static io.scythe.txn.aurogon.Participant.NOT_FOUND;
import static io.scythe.txn.aurogon.Participant.NOT_PENDING;
import static io.scythe.txn.aurogon.Participant.OK;
import static io.scythe.txn.aurogon.Participant.REFUSED;
import static io.scythe.txn.aurogon.Participant.SPS_IMMORTAL;
import static io.scythe.txn.aurogon.Participant.SPS_STALE;
import static io.scythe.txn.aurogon.Participant.STALE;
import static org.assertj.core.api.Assertions.assertThat;

class ParticipantTest {
    private static final int T = 7;

    /** Keys 0..9 of table T loaded with value {key} at version 0, others absent; newest commits recorded. */
    private static final class Store implements Participant.Backing {
        final Map<Long, byte[]> newest = new HashMap<>();
        final Map<Long, Long> newestWts = new HashMap<>();

        @Override
        public byte[] load(final int table, final long key, final long[] version) {
            if (table != T || key < 0 || key >= 10) {
                version[0] = 0;
                return null;
            }
            version[0] = 0;
            return new byte[] {(byte) key};
        }

        @Override
        public boolean hasTable(final int table) {
            return table == T;
        }

        @Override
        public void committed(final int table, final long key, final long wts, final byte[] value) {
            assertThat(wts).isGreaterThan(newestWts.getOrDefault(key, 0L)); // write-through only ever moves forward
            newest.put(key, value);
            newestWts.put(key, wts);
        }
    }

    /** Deferred tasks, run by hand. */
    private static final class Later implements Participant.Deferrer {
        final List<Runnable> tasks = new ArrayList<>();
        final List<Long> delays = new ArrayList<>();

        @Override
        public void after(final long delayNs, final Runnable task) {
            delays.add(delayNs);
            tasks.add(task);
        }

        void runAll() {
            final List<Runnable> now = new ArrayList<>(tasks);
            tasks.clear();
            now.forEach(Runnable::run);
        }
    }

    /** One read's answer, once it comes. */
    private static final class Answer implements Participant.ReadReply {
        int status = Integer.MIN_VALUE;
        long wts;
        byte[] value;
        int answers;

        @Override
        public void answer(final int status, final long wts, final byte[] value) {
            this.status = status;
            this.wts = wts;
            this.value = value;
            answers++;
        }

        boolean answered() {
            return answers > 0;
        }
    }

    private final Store store = new Store();
    private final Later later = new Later();
    private final Participant p = new Participant(store, later, Participant.Deferral.OFF);

    private static List<Long> wtsOf(final long[][] rows) {
        final List<Long> wts = new ArrayList<>();
        for (final long[] row : rows) {
            wts.add(row[0]);
        }
        return wts;
    }

    private Answer read(final long key, final long ts) {
        return read(key, ts, 0);
    }

    private Answer read(final long key, final long ts, final int flags) {
        final Answer a = new Answer();
        p.read(T, key, ts, flags, a);
        return a;
    }

    private void write(final long key, final long ts, final int value) {
        assertThat(p.install(T, 1, ts)).isEqualTo(OK);
        assertThat(p.commit(T, 1, ts, new byte[] {(byte) value})).isEqualTo(OK);
    }

    @Test
    void readReturnsTheLargestWtsStrictlyBelowItsTimestampAndRaisesThatVersionsRts() {
        write(1, 100, 11);
        write(1, 200, 12);
        final Answer at150 = read(1, 150);
        assertThat(at150.status).isEqualTo(OK);
        assertThat(at150.wts).isEqualTo(100);
        assertThat(at150.value).containsExactly(11);
        final Answer at200 = read(1, 200); // strictly below: not the version at 200
        assertThat(at200.wts).isEqualTo(100);
        final Answer at120 = read(1, 120); // rts is raised by max: stays 200
        assertThat(at120.wts).isEqualTo(100);
        assertThat(p.versions(T, 1)).isDeepEqualTo(new long[][] {{200, 200, 0}, {100, 200, 0}, {0, 0, 0}});
        assertThat(read(1, 50).wts).isEqualTo(0); // the loaded version
        assertThat(p.violation()).isNull();
    }

    /**
     * The simulator's report of a run left not quiescent names the records still pending (issue 20: which record the
     * dst-to-eager TPC-C run leaked was not known): table, key, the version's timestamp with its server and loop, the
     * rts and the reads parked on it; committed versions are not listed, and at most {@code max}.
     */
    @Test
    void pendingDescribedNamesEachPendingVersionsRecordAndCoordinator() {
        final long t1 = AurogonTimestamp.pack(1_000_000L, 3, 2);
        final long t2 = AurogonTimestamp.pack(2_000_000L, 1, 0);
        assertThat(p.install(T, 1, t1)).isEqualTo(OK);
        assertThat(p.install(T, 2, t2)).isEqualTo(OK);
        assertThat(p.commit(T, 2, t2, new byte[] {5})).isEqualTo(OK);
        final java.util.function.IntFunction<String> names = id -> id == T ? "accounts" : "?";
        assertThat(p.pendingDescribed(8, names)).containsExactly("accounts key 1 wts " + t1 + " (server 3 loop 2) rts "
            + t1 + ", 0 waiting");
        assertThat(p.pendingDescribed(0, names)).isEmpty();
    }

    /**
     * A ROLLBACK that finds no version (its INSTALL delayed behind it, as a ring opened anew can deliver it on
     * cluster nodes) leaves a tombstone: the late INSTALL, a pre-attaching READ or an INSERT of that attempt is
     * refused instead of leaving a pending version nobody decides; another attempt installs. Tombstones four leases
     * behind the newest timestamp are dropped, and the watermark refuses what they refused.
     */
    @Test
    void aRollbackAheadOfItsInstallLeavesATombstoneThatRefusesTheLateInstall() {
        final long t1 = AurogonTimestamp.pack(10_000_000L, 1, 0);
        assertThat(p.rollback(T, 1, t1)).isEqualTo(OK);
        assertThat(p.rollback(T, 2, t1)).isEqualTo(OK);
        assertThat(p.rollback(T, 12, t1)).isEqualTo(OK); // an absent key: an insert's rollback
        assertThat(p.install(T, 1, t1)).as("the late INSTALL").isEqualTo(REFUSED);
        assertThat(read(2, t1, FLAG_PREATTACH).status).as("the late pre-attaching READ").isEqualTo(REFUSED);
        assertThat(p.insert(T, 12, t1, new long[1])).as("the late INSERT").isEqualTo(REFUSED);
        assertThat(p.pending(T, 1)).isFalse();
        assertThat(p.pending(T, 2)).isFalse();
        assertThat(p.pending(T, 12)).isFalse();
        assertThat(p.pendingTimestamps()).isEmpty();
        assertThat(p.install(T, 1, t1 + 1)).as("another attempt").isEqualTo(OK);
        assertThat(p.rollback(T, 1, t1 + 1)).isEqualTo(OK);
        assertThat(p.tombstones()).isEqualTo(3);
        // Five milliseconds on: the old tombstones are dropped, the watermark still refuses their installs.
        final long t2 = AurogonTimestamp.pack(15_000_000L, 1, 0);
        assertThat(p.rollback(T, 3, t2)).isEqualTo(OK);
        assertThat(p.tombstones()).isEqualTo(1);
        assertThat(p.tombstoneWatermark()).isEqualTo(t1);
        assertThat(p.install(T, 1, t1)).as("its tombstone dropped: the watermark's STALE").isEqualTo(STALE);
        assertThat(p.install(T, 4, t1 - 5)).as("below the watermark").isEqualTo(STALE);
        assertThat(p.install(T, 3, t2)).isEqualTo(REFUSED);
        assertThat(p.install(T, 3, t2 + 1)).isEqualTo(OK);
        assertThat(p.violation()).isNull();
    }

    /**
     * Tombstones are kept once, by timestamp then (table, key) (issue 20, aurotomb): a ROLLBACK sent again counts
     * once, the same key at another timestamp or the same key and timestamp of another table is another tombstone
     * (and refuses only its own attempt), and a sweep drops every tombstone of a timestamp it passes, counted.
     */
    @Test
    void tombstonesAreKeptOncePerTableKeyAndTimestamp() {
        final long t1 = AurogonTimestamp.pack(10_000_000L, 1, 0);
        assertThat(p.rollback(T, 1, t1)).isEqualTo(OK);
        assertThat(p.rollback(T, 1, t1)).as("the ROLLBACK again").isEqualTo(OK);
        assertThat(p.tombstones()).isEqualTo(1);
        assertThat(p.rollback(T, 1, t1 + 1)).isEqualTo(OK);
        assertThat(p.rollback(T + 1, 1, t1)).isEqualTo(OK); // another table, no record there: kept all the same
        assertThat(p.tombstones()).isEqualTo(3);
        assertThat(p.install(T, 1, t1)).isEqualTo(REFUSED);
        assertThat(p.install(T, 1, t1 + 1)).isEqualTo(REFUSED);
        assertThat(p.install(T, 2, t1)).as("another key of the attempt: not tombstoned").isEqualTo(OK);
        assertThat(p.install(T, 1, t1 + 2)).as("another attempt").isEqualTo(OK);
        // Past the pruning lag: both timestamps' tombstones dropped at once, the watermark at the newer one. t2 is
        // derived from the constants the sweep obeys (review of stop 53): past t1 by PRUNE_LAG_NS (so t1's clock is
        // below the horizon) and by ORPHAN_LEASE_NS (the sweep runs at most once a lease), with 1 ms to spare.
        final long t2 = AurogonTimestamp.pack(AurogonTimestamp.clockNs(t1) + Math.max(ParticipantService.PRUNE_LAG_NS,
            ParticipantService.ORPHAN_LEASE_NS) + 1_000_000L, 1, 0);
        assertThat(p.rollback(T, 3, t2)).isEqualTo(OK);
        assertThat(p.tombstones()).isEqualTo(1);
        assertThat(p.tombstoneWatermark()).isEqualTo(t1 + 1);
        assertThat(p.rollback(T, 4, t1)).as("below the watermark: no tombstone needed").isEqualTo(OK);
        assertThat(p.tombstones()).isEqualTo(1);
        assertThat(p.install(T, 4, t1)).isEqualTo(STALE);
        assertThat(p.violation()).isNull();
    }

    /**
     * Below the tombstones' watermark, with no tombstone for the attempt, an INSTALL, INSERT or pre-attaching READ
     * is answered STALE with a floor above the watermark, not REFUSED (review of aurofix, finding 1: a coordinator
     * whose clock lagged the node's newest timestamps by more than the pruning lag was refused on every key for
     * good); the floored attempt installs. A version pending at its timestamp already is the same write again: OK.
     */
    @Test
    void belowTheTombstonesWatermarkAnInstallIsStaleWithAFloorAboveIt() {
        final long early = AurogonTimestamp.pack(5_000_000L, 1, 0);
        assertThat(p.install(T, 5, early)).isEqualTo(OK); // pending before the watermark passes it
        final long t1 = AurogonTimestamp.pack(10_000_000L, 1, 0);
        assertThat(p.rollback(T, 1, t1)).isEqualTo(OK);
        final long t2 = AurogonTimestamp.pack(20_000_000L, 1, 0);
        assertThat(p.rollback(T, 2, t2)).isEqualTo(OK); // t1's tombstone dropped: the watermark is t1
        assertThat(p.tombstoneWatermark()).isEqualTo(t1);
        final long lagging = AurogonTimestamp.pack(9_000_000L, 2, 0); // another coordinator, its clock behind
        assertThat(p.install(T, 3, lagging)).isEqualTo(STALE);
        assertThat(p.insert(T, 12, lagging, new long[1])).isEqualTo(STALE);
        final Answer read = read(4, lagging, FLAG_PREATTACH);
        assertThat(read.status).isEqualTo(STALE);
        assertThat(read.wts).as("the floor").isEqualTo(p.staleFloor()).isGreaterThanOrEqualTo(t1);
        assertThat(p.staleFloor()).isGreaterThanOrEqualTo(p.maxTs());
        assertThat(p.pending(T, 3) || p.pending(T, 4) || p.pending(T, 12)).isFalse();
        assertThat(p.install(T, 5, early)).as("the same write again").isEqualTo(OK);
        final long floored = p.staleFloor() + 1;
        assertThat(p.install(T, 3, floored)).as("above the floor").isEqualTo(OK);
        assertThat(p.insert(T, 12, floored, new long[1])).isEqualTo(OK);
        assertThat(p.rollback(T, 2, t2 + 1)).isEqualTo(OK);
        assertThat(p.install(T, 2, t2)).as("a tombstone still kept: REFUSED").isEqualTo(REFUSED);
        assertThat(p.violation()).isNull();
    }

    /**
     * A value in parts: staged parts (in any order, again harmlessly) complete a prefix, which {@code staged} hands to
     * the commit; an incomplete prefix, a part outside the value or a different total is refused; a rollback drops
     * the parts; the committed version's value stays readable by its wts until it is reclaimed.
     */
    @Test
    void stagedPartsCompleteAValueOnlyWhenTheyCoverItsPrefixAndGoWithARollback() {
        assertThat(p.install(T, 2, 100)).isEqualTo(OK);
        assertThat(p.stage(T, 2, 100, 6, 3, new byte[] {4, 5})).isEqualTo(OK);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> p.staged(T, 2, 100, 6, 5))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not all staged");
        assertThat(p.stage(T, 2, 100, 6, 0, new byte[] {1, 2, 3})).isEqualTo(OK);
        assertThat(p.stage(T, 2, 100, 6, 0, new byte[] {1, 2, 3})).isEqualTo(OK); // the same part again
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> p.stage(T, 2, 100, 6, 5, new byte[] {6, 7}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> p.stage(T, 2, 100, 7, 0, new byte[] {1}))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("earlier parts said 6");
        final byte[] value = p.staged(T, 2, 100, 6, 5);
        value[5] = 6; // the COMMIT's tail
        assertThat(p.commit(T, 2, 100, value)).isEqualTo(OK);
        assertThat(read(2, 150).value).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(p.committedValue(T, 2, 100)).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(p.committedValue(T, 2, 99)).isNull(); // no version there
        // Committed at its timestamp (by a recovery while its coordinator paused, or its own earlier COMMIT): done.
        assertThat(p.stage(T, 2, 100, 6, 0, new byte[] {9})).isEqualTo(Participant.COMMITTED_ALREADY);
        assertThat(p.commit(T, 2, 100, new byte[] {9})).isEqualTo(Participant.COMMITTED_ALREADY);
        assertThat(p.committedValue(T, 2, 100)).as("unchanged").containsExactly(1, 2, 3, 4, 5, 6);

        assertThat(p.install(T, 2, 200)).isEqualTo(OK);
        assertThat(p.committedValue(T, 2, 200)).isNull(); // pending
        assertThat(p.stage(T, 2, 200, 4, 0, new byte[] {9, 9})).isEqualTo(OK);
        assertThat(p.rollback(T, 2, 200)).isEqualTo(OK);
        assertThat(p.stage(T, 2, 200, 4, 2, new byte[] {9, 9})).isEqualTo(NOT_PENDING);
        assertThat(p.commit(T, 2, 200, new byte[4])).as("rolled back: not done").isEqualTo(NOT_PENDING);
        assertThat(p.staged(T, 2, 200, 4, 2)).isNull();
        assertThat(p.violation()).isNull();
    }

    /**
     * How late each refused write came, by clock reading: the rts that refused it minus its timestamp (what a
     * deferral must cover, Fig. 11's statistics); writes let in count nothing.
     */
    @Test
    void shouldMeasureHowLateTheRefusedWritesCame() {
        final long v100 = AurogonTimestamp.pack(100_000, 1, 0);
        write(1, v100, 11);
        read(1, AurogonTimestamp.pack(130_000, 2, 3)); // rts 130 us
        assertThat(p.install(T, 1, AurogonTimestamp.pack(125_000, 3, 1))).isEqualTo(REFUSED); // 5 us late
        assertThat(p.install(T, 1, AurogonTimestamp.pack(110_000, 4, 0))).isEqualTo(REFUSED); // 20 us late
        assertThat(p.install(T, 1, AurogonTimestamp.pack(140_000, 4, 0))).isEqualTo(OK);
        assertThat(p.refusedByRts()).isEqualTo(2);
        assertThat(p.refusedLateNs()).isEqualTo(25_000);
        assertThat(p.maxRefusedLateNs()).isEqualTo(20_000);
    }

    @Test
    void installFailsExactlyWhenAReadAboveItReturnedTheVersionBelow() {
        write(1, 100, 11);
        read(1, 300); // v100.rts = 300
        assertThat(p.install(T, 1, 200)).isEqualTo(REFUSED); // 100 <= 200 < 300
        assertThat(p.install(T, 1, 299)).isEqualTo(REFUSED);
        assertThat(p.install(T, 1, 300)).isEqualTo(OK); // W.ts == rts: the read at 300 need not see it
        assertThat(p.install(T, 1, 50)).isEqualTo(OK); // below v100, whose predecessor was read by nobody
        assertThat(wtsOf(p.versions(T, 1))).containsExactly(300L, 100L, 50L, 0L);
        assertThat(p.refusedInstalls()).isEqualTo(2);
        assertThat(p.violation()).isNull();
    }

    @Test
    void unknownTablesAreNotFoundAndAbsentKeysReadAsAbsences() {
        assertThat(p.install(T + 1, 1, 100)).isEqualTo(NOT_FOUND);
        assertThat(p.commit(T, 1, 100, new byte[1])).isEqualTo(Participant.NOT_PENDING);
        final Answer absent = read(42, 100);
        assertThat(absent.status).isEqualTo(Participant.ABSENT);
        assertThat(absent.wts).isZero();
        // The absence read at 100 is protected like any version: no insert may slip in below the read.
        assertThat(p.insert(T, 42, 50, new long[1])).isEqualTo(REFUSED);
    }

    @Test
    void insertsGoOverAnAbsenceAndDeletesCommitOne() {
        final long[] below = new long[1];
        assertThat(p.insert(T, 42, 100, below)).isEqualTo(OK);
        assertThat(below[0]).isZero();
        // The insert read the absence at 100: a write between the absence and the insert would be lost to it.
        assertThat(p.install(T, 42, 60)).isEqualTo(REFUSED);
        final Answer waiting = read(42, 150);
        assertThat(waiting.answered()).isFalse(); // the pending insert blocks it
        assertThat(p.commit(T, 42, 100, new byte[] {7})).isEqualTo(OK);
        assertThat(waiting.value).containsExactly(7);
        assertThat(store.newest.get(42L)).containsExactly(7);
        assertThat(p.insert(T, 42, 200, below)).isEqualTo(Participant.DUPLICATE);
        assertThat(read(42, 60).status).as("before the insert it is absent").isEqualTo(Participant.ABSENT);
        // A delete: a pending version committed as an absence.
        assertThat(p.install(T, 42, 300)).isEqualTo(OK);
        final Answer blocked = read(42, 350);
        assertThat(p.commit(T, 42, 300, null)).isEqualTo(OK);
        assertThat(blocked.status).isEqualTo(Participant.ABSENT);
        assertThat(blocked.wts).isEqualTo(300);
        assertThat(store.newestWts.get(42L)).isEqualTo(300);
        assertThat(store.newest.get(42L)).isNull();
        assertThat(p.insert(T, 42, 400, below)).isEqualTo(OK); // revived over the delete
        assertThat(below[0]).isEqualTo(300);
        // An insert over another's pending write is refused (tried again later with a new timestamp).
        assertThat(p.insert(T, 42, 450, below)).isEqualTo(REFUSED);
        assertThat(p.violation()).isNull();
    }

    @Test
    void aReadMeetingAPendingVersionIsAnsweredWhenItCommits() {
        assertThat(p.install(T, 1, 100)).isEqualTo(OK);
        final Answer blocked = read(1, 150);
        assertThat(blocked.answered()).isFalse();
        assertThat(p.blockedReads()).isEqualTo(1);
        // Its rts was raised before it blocked: a write at 120 can no longer slip under the read.
        assertThat(p.install(T, 1, 120)).isEqualTo(REFUSED);
        assertThat(p.commit(T, 1, 100, new byte[] {9})).isEqualTo(OK);
        assertThat(blocked.answers).isEqualTo(1);
        assertThat(blocked.status).isEqualTo(OK);
        assertThat(blocked.wts).isEqualTo(100);
        assertThat(blocked.value).containsExactly(9);
        assertThat(store.newest.get(1L)).containsExactly(9);
    }

    @Test
    void aReadBlockedOnARolledBackVersionReadsAgainBelowIt() {
        write(1, 50, 5);
        assertThat(p.install(T, 1, 100)).isEqualTo(OK);
        final Answer blocked = read(1, 150);
        assertThat(blocked.answered()).isFalse();
        // A straggler below the pending version still gets in (Fig. 4): v50's rts is untouched.
        assertThat(p.install(T, 1, 80)).isEqualTo(OK);
        assertThat(p.rollback(T, 1, 100)).isEqualTo(OK);
        // Re-run on the list without v100: it now meets the pending v80 and waits for it.
        assertThat(blocked.answered()).isFalse();
        assertThat(p.commit(T, 1, 80, new byte[] {8})).isEqualTo(OK);
        assertThat(blocked.wts).isEqualTo(80);
        assertThat(blocked.value).containsExactly(8);
        // And one rolled back onto a committed version is answered at once.
        assertThat(p.install(T, 1, 200)).isEqualTo(OK);
        final Answer second = read(1, 250);
        assertThat(p.rollback(T, 1, 200)).isEqualTo(OK);
        assertThat(second.status).isEqualTo(OK);
        assertThat(second.wts).isEqualTo(80);
        assertThat(wtsOf(p.versions(T, 1))).containsExactly(80L, 50L, 0L);
        assertThat(p.versions(T, 1)[0][1]).isEqualTo(250); // the re-run raised v80's rts
        assertThat(p.rollback(T, 1, 999)).isEqualTo(OK); // nothing installed there: nothing to do
        assertThat(p.violation()).isNull();
    }

    @Test
    void aPreattachedReadInstallsBeforeReadingAndSkipsItsOwnVersion() {
        write(1, 100, 11);
        final Answer rmw = read(1, 200, FLAG_PREATTACH);
        assertThat(rmw.status).isEqualTo(OK);
        assertThat(rmw.wts).isEqualTo(100); // not its own pending version at 200
        assertThat(p.versions(T, 1)).isDeepEqualTo(new long[][] {{200, 200, 1}, {100, 200, 0}, {0, 0, 0}});
        // The vulnerable interval is closed: a write at 150 cannot get between the read and its write.
        assertThat(p.install(T, 1, 150)).isEqualTo(REFUSED);
        // The value comes at commit.
        assertThat(p.commit(T, 1, 200, new byte[] {12})).isEqualTo(OK);
        assertThat(read(1, 201).value).containsExactly(12);
    }

    @Test
    void aRefusedPreattachedWriteAbortsBeforeTheReadRuns() {
        write(1, 100, 11);
        read(1, 300);
        final long[][] before = p.versions(T, 1);
        final Answer early = read(1, 200, FLAG_PREATTACH);
        assertThat(early.status).isEqualTo(REFUSED);
        assertThat(p.versions(T, 1)).isDeepEqualTo(before); // no version, no rts raised: the read never ran
    }

    /**
     * SPS (§4.4, {@code FLAG_SPS}). Rule 1: a read may not return a version below a COMMITTED newer one: at 150 under a
     * committed v200 it is answered SPS_STALE (with 200) and raises no rts, where a plain read returns v100, a stale read
     * when its clock lags the writer's. A read parked on a pending version is answered SPS_STALE when that version
     * commits under a newer committed one; a plain one parked beside it reads it. Rule 2: a write (install or insert)
     * below a committed version is refused, an immortal write no later reader would see, where without the flag the
     * install rule admits it (nothing read the version below it above its timestamp). Pending versions above are no
     * bar to either rule. Fails with the flag ignored.
     */
    @Test
    void spsRefusesStaleReadsAndImmortalWritesBelowACommittedVersionOnly() {
        write(1, 100, 11);
        write(1, 200, 12); // installed without a read below it: v100's rts stays 100
        final long[][] before = p.versions(T, 1);
        assertThat(p.install(T, 1, 150, FLAG_SPS)).isEqualTo(SPS_IMMORTAL);
        assertThat(p.immortalFloor()).as("where the writer's retry is floored").isEqualTo(200);
        final Answer preattaching = read(1, 160, FLAG_SPS | FLAG_PREATTACH);
        assertThat(preattaching.status).isEqualTo(SPS_IMMORTAL); // an early abort: the read does not run
        assertThat(preattaching.wts).isEqualTo(200);
        final Answer spsRead = read(1, 150, FLAG_SPS);
        assertThat(spsRead.status).isEqualTo(SPS_STALE);
        assertThat(spsRead.wts).isEqualTo(200);
        assertThat(p.versions(T, 1)).isDeepEqualTo(before); // nothing installed, no rts raised
        assertThat(p.install(T, 1, 150)).as("without SPS: an immortal write").isEqualTo(OK);
        assertThat(p.rollback(T, 1, 150)).isEqualTo(OK);
        assertThat(read(1, 150).wts).as("without SPS: a stale read").isEqualTo(100);
        assertThat(read(1, 250, FLAG_SPS).wts).isEqualTo(200); // the newest committed: fine
        // Pending versions above are no bar.
        assertThat(p.install(T, 1, 300)).isEqualTo(OK);
        assertThat(read(1, 260, FLAG_SPS).wts).isEqualTo(200);
        assertThat(p.install(T, 1, 280, FLAG_SPS)).isEqualTo(OK);
        assertThat(p.rollback(T, 1, 280)).isEqualTo(OK);
        // Parked on v300, then v400 commits above it before v300 does.
        assertThat(p.install(T, 1, 400)).isEqualTo(OK);
        final Answer parkedSps = read(1, 350, FLAG_SPS);
        final Answer parkedPlain = read(1, 360);
        assertThat(parkedSps.answered()).isFalse();
        assertThat(p.commit(T, 1, 400, new byte[] {40})).isEqualTo(OK);
        assertThat(p.commit(T, 1, 300, new byte[] {30})).isEqualTo(OK);
        assertThat(parkedSps.status).isEqualTo(SPS_STALE);
        assertThat(parkedSps.wts).isEqualTo(400);
        assertThat(parkedPlain.status).isEqualTo(OK);
        assertThat(parkedPlain.value).containsExactly(30);
        assertThat(p.install(T, 1, 150, FLAG_SPS)).isEqualTo(SPS_IMMORTAL);
        assertThat(p.immortalFloor()).as("the newest committed version, not the first above").isEqualTo(400);
        // Inserts: key 20 is absent; a blind write at 100 commits a value (an insert would raise the absence's rts),
        // an insert at 50 would be immortal.
        final long[] below = new long[1];
        assertThat(p.install(T, 20, 100)).isEqualTo(OK);
        assertThat(p.commit(T, 20, 100, new byte[] {1})).isEqualTo(OK);
        assertThat(p.insert(T, 20, 50, below, FLAG_SPS)).isEqualTo(SPS_IMMORTAL);
        assertThat(p.immortalFloor()).isEqualTo(100);
        assertThat(p.insert(T, 20, 50, below)).as("without SPS").isEqualTo(OK);
        assertThat(p.rollback(T, 20, 50)).isEqualTo(OK);
        assertThat(p.spsRefusals()).containsExactly(2, 4);
        assertThat(p.violation()).isNull();
    }

    /**
     * §4.2's deferral rule, step by step: hot at 4 requests in the last 10 ms window; the deferral starts at the low
     * initial value (2 us), rises by a step (2 us) at each refusal while the write failure rate is above 10 %, up to
     * the cap (10 us), holds between 2 % and 10 %, falls by a quarter step at each installed write below 2 %, down to
     * the initial value; cold, nothing is deferred and nothing moves.
     */
    @Test
    void theDeferralStartsLowRisesByStepsWithFailuresAndFallsConservatively() {
        final Participant.Deferral settings = new Participant.Deferral(true, 10_000_000L, 4, 2_000L, 2_000L,
            10_000L, 64);
        final Participant hot = new Participant(store, later, settings);
        final long base = AurogonTimestamp.pack(1_000_000, 0, 1);
        final Answer first = new Answer();
        hot.read(T, 1, base, 0, first);
        assertThat(first.answered()).isTrue(); // cold: not deferred
        for (int i = 1; i < 4; i++) {
            hot.read(T, 1, base + i, FLAG_NO_DEFER, new Answer());
        }
        assertThat(hot.hot(T, 1)).isTrue();
        assertThat(hot.deferNs(T, 1)).isEqualTo(2_000L); // the low initial value, not an overlong one
        final Answer deferred = new Answer();
        hot.read(T, 1, base + 10, 0, deferred);
        assertThat(deferred.answered()).isFalse();
        assertThat(later.delays).containsExactly(2_000L);
        final Answer bypass = new Answer();
        hot.read(T, 1, base + 11, FLAG_NO_DEFER, bypass); // a key-dependent read is never deferred
        assertThat(bypass.answered()).isTrue();
        later.runAll();
        assertThat(deferred.status).isEqualTo(OK);
        // Refusals (a read at base+11 returned the initial version): +2 us each, capped at 10 us.
        final long[] raised = new long[5];
        for (int i = 0; i < 5; i++) {
            assertThat(hot.install(T, 1, base + 5)).isEqualTo(REFUSED);
            raised[i] = hot.deferNs(T, 1);
        }
        assertThat(raised).containsExactly(4_000L, 6_000L, 8_000L, 10_000L, 10_000L);
        // Installed writes while the rate is 5/6 .. 5/15 (above 10 %): held.
        long ts = base + 1000;
        for (int i = 0; i < 10; i++, ts++) {
            assertThat(hot.install(T, 1, ts)).isEqualTo(OK);
            assertThat(hot.commit(T, 1, ts, new byte[] {1})).isEqualTo(OK);
        }
        assertThat(hot.deferNs(T, 1)).isEqualTo(10_000L);
        // Two windows on, the counts start from zero: three installs while cold move nothing, then each installed
        // write on the hot record (no refusal: 0 %) cuts 500 ns.
        long later2 = AurogonTimestamp.pack(25_000_000, 0, 1);
        final long[] cut = new long[7];
        for (int i = 0; i < 7; i++, later2++) {
            assertThat(hot.install(T, 1, later2)).isEqualTo(OK);
            assertThat(hot.commit(T, 1, later2, new byte[] {2})).isEqualTo(OK);
            cut[i] = hot.deferNs(T, 1);
        }
        assertThat(cut).containsExactly(10_000L, 10_000L, 10_000L, 9_500L, 9_000L, 8_500L, 8_000L);
        // One refusal in 8 installs (12.5 %, above 10 %): +2 us; then no refusal to raise it and 1 in 9 .. 1 in 12
        // (11-8 %) is not below 2 %: held.
        hot.read(T, 1, later2 + 100, FLAG_NO_DEFER, new Answer());
        assertThat(hot.install(T, 1, later2 + 50)).isEqualTo(REFUSED);
        assertThat(hot.deferNs(T, 1)).isEqualTo(10_000L);
        long after = later2 + 200;
        for (int i = 0; i < 4; i++, after++) {
            assertThat(hot.install(T, 1, after)).isEqualTo(OK);
            assertThat(hot.commit(T, 1, after, new byte[] {3})).isEqualTo(OK);
        }
        assertThat(hot.deferNs(T, 1)).isEqualTo(10_000L);
        // Below 2 % (1 in 50 and more): cut a quarter step each, down to the initial value and no further.
        for (int i = 0; i < 80; i++, after++) {
            assertThat(hot.install(T, 1, after)).isEqualTo(OK);
            assertThat(hot.commit(T, 1, after, new byte[] {4})).isEqualTo(OK);
        }
        assertThat(hot.deferNs(T, 1)).isEqualTo(2_000L);
        // A new 10 ms window with few requests: cold again.
        hot.read(T, 1, AurogonTimestamp.pack(50_000_000, 0, 1), 0, new Answer());
        assertThat(hot.hot(T, 1)).isFalse();
    }

    /**
     * Hot is "more than the threshold in the last 10 ms", not "in this or the previous window": early in a window the
     * previous window's requests count nearly in full, late in it they have almost aged out.
     */
    @Test
    void theHotCountSlidesOverTheLast10Ms() {
        final Participant.Deferral settings = new Participant.Deferral(true, 10_000_000L, 10, 2_000L, 2_000L,
            10_000L, 16);
        final Participant q = new Participant(store, later, settings);
        for (int i = 0; i < 12; i++) { // 12 requests late in window 0
            q.read(T, 1, AurogonTimestamp.pack(9_000_000, 0, 1) + i, FLAG_NO_DEFER, new Answer());
        }
        assertThat(q.hot(T, 1)).isTrue();
        q.read(T, 1, AurogonTimestamp.pack(10_500_000, 0, 1), FLAG_NO_DEFER, new Answer()); // 1 + 12 x 0.95
        assertThat(q.hot(T, 1)).isTrue();
        q.read(T, 1, AurogonTimestamp.pack(19_000_000, 0, 1), FLAG_NO_DEFER, new Answer()); // 2 + 12 x 0.1
        assertThat(q.hot(T, 1)).isFalse();
    }

    /**
     * Fig. 2(b) and Fig. 4: a write with a smaller timestamp arrives after a read with a larger one. Without deferral
     * the read runs first, raises the rts, and the straggler fails; with deferral on a hot record the straggler
     * installs while the read waits, and the read then returns the straggler's value.
     */
    @Test
    void aDeferredReadLetsAStragglingWriteInAndThenReturnsItsValue() {
        for (final boolean deferral : new boolean[] {false, true}) {
            final Later timers = new Later();
            final Participant q = new Participant(new Store(), timers, new Participant.Deferral(deferral,
                10_000_000L, 2, 20_000L, 1_000L, 200_000L, 16));
            final long base = AurogonTimestamp.pack(1_000_000, 0, 1);
            q.read(T, 1, base, FLAG_NO_DEFER, new Answer()); // warm-up: two requests make it hot
            q.read(T, 1, base + 1, FLAG_NO_DEFER, new Answer());
            final Answer r = new Answer();
            q.read(T, 1, base + 300, 0, r); // R at ts+300 reaches the record first
            final int w = q.install(T, 1, base + 200); // the straggler W at ts+200 arrives next
            if (!deferral) {
                assertThat(r.wts).isEqualTo(0);
                assertThat(w).as("without deferral the straggler is refused").isEqualTo(REFUSED);
                continue;
            }
            assertThat(r.answered()).isFalse();
            assertThat(w).as("with deferral the straggler gets in").isEqualTo(OK);
            timers.runAll(); // R runs now and meets W's pending version
            assertThat(r.answered()).isFalse();
            assertThat(q.commit(T, 1, base + 200, new byte[] {42})).isEqualTo(OK);
            assertThat(r.status).isEqualTo(OK);
            assertThat(r.wts).isEqualTo(base + 200);
            assertThat(r.value).containsExactly(42);
        }
    }

    @Test
    void versionGcKeepsTheNewestAndRefusesWhatNeedsAReclaimedVersion() {
        final Participant small = new Participant(store, later, new Participant.Deferral(false, 10_000_000L, 32,
            20_000L, 1_000L, 200_000L, 3));
        for (long ts = 10; ts <= 60; ts += 10) {
            assertThat(small.install(T, 2, ts)).isEqualTo(OK);
            assertThat(small.commit(T, 2, ts, new byte[] {(byte) ts})).isEqualTo(OK);
        }
        assertThat(wtsOf(small.versions(T, 2))).containsExactly(60L, 50L, 40L);
        final Answer old = new Answer();
        small.read(T, 2, 15, 0, old);
        assertThat(old.status).isEqualTo(Participant.TOO_OLD);
        assertThat(small.install(T, 2, 15)).isEqualTo(REFUSED);
        assertThat(small.reclaimed()).isEqualTo(4);
    }

    /**
     * Random reads, installs, commits and rollbacks at random timestamps (unique, as Aurogon's are): the list stays
     * strictly ordered with rts >= wts, rts never falls, every install the rule admits is outside every read
     * interval, and every read is answered with the committed version with the largest wts below its timestamp in
     * the final history (versions never committed are gone; committed versions only ever enter below reads' rts).
     */
    @Test
    void randomOperationsKeepTheInvariants() {
        for (int seed = 0; seed < 200; seed++) {
            final SplittableRandom random = new SplittableRandom(seed);
            final Participant q = new Participant(new Store(), later, Participant.Deferral.OFF);
            final List<long[]> reads = new ArrayList<>(); // ts, wts answered
            final List<Long> pending = new ArrayList<>();
            final Map<Long, Long> committed = new HashMap<>(); // wts -> 1
            final Map<Long, Long> rtsSeen = new HashMap<>();
            final List<Long> used = new ArrayList<>();
            for (int step = 0; step < 200; step++) {
                long ts;
                do {
                    ts = 1 + random.nextInt(10_000);
                } while (used.contains(ts));
                used.add(ts);
                final int op = random.nextInt(4);
                if (op == 0) {
                    final long at = ts;
                    q.read(T, 3, at, 0, (status, wts, value) -> {
                        assertThat(status).isEqualTo(OK);
                        reads.add(new long[] {at, wts});
                    });
                } else if (op == 1) {
                    if (q.install(T, 3, ts) == OK) {
                        pending.add(ts);
                    }
                } else if (!pending.isEmpty()) {
                    final long decided = pending.remove(random.nextInt(pending.size()));
                    if (op == 2) {
                        assertThat(q.commit(T, 3, decided, new byte[] {1})).isEqualTo(OK);
                        committed.put(decided, 1L);
                    } else {
                        assertThat(q.rollback(T, 3, decided)).isEqualTo(OK);
                    }
                }
                assertThat(q.violation()).isNull();
                for (final long[] row : q.versions(T, 3) == null ? new long[0][] : q.versions(T, 3)) {
                    final Long seen = rtsSeen.put(row[0], row[1]);
                    assertThat(seen == null || seen <= row[1]).as("rts never falls").isTrue();
                }
            }
            for (final long decided : pending) {
                q.commit(T, 3, decided, new byte[] {1});
                committed.put(decided, 1L);
            }
            committed.put(0L, 1L);
            for (final long[] r : reads) {
                long expected = -1;
                for (final long wts : committed.keySet()) {
                    if (wts < r[0] && wts > expected) {
                        expected = wts;
                    }
                }
                assertThat(r[1]).as("seed %d: read at %d", seed, r[0]).isEqualTo(expected);
            }
        }
    }

    /**
     * A version adopted by a promoted copy (its primary died) whose coordinator is dead too becomes a suspect after
     * the lease like any pending version: its parked reader is answered ORPHAN (before, adopted versions got no
     * suspect timer and their readers stayed parked for ever when the coordinator had died with the primary).
     */
    @Test
    void shouldSuspectAnAdoptedVersionWhoseCoordinatorIsSilent() {
        final Later timers = new Later();
        final Participant q = new Participant(new Store(), timers, Participant.Deferral.OFF);
        q.orphans(1_000, ts -> true);
        q.promote(T, 50);
        q.adopt(T, 3, 100);
        final Answer parked = new Answer();
        q.read(T, 3, 200, FLAG_NO_DEFER, parked);
        assertThat(parked.answered()).as("parked on the adopted pending version").isFalse();
        timers.runAll(); // the lease passed, its coordinator silent
        assertThat(parked.status).isEqualTo(Participant.ORPHAN);
        assertThat(q.suspect()).isEqualTo(100);
        assertThat(q.suspectsAt(100)).singleElement().satisfies(r -> assertThat(r).containsExactly(T, 3));
    }

    /**
     * A pending version whose coordinator still talked at the lease's end is looked at again a quarter lease later,
     * not a whole lease: a coordinator dying just after the first look no longer parks the version's readers for
     * two leases (past the simulator's 1 ms call bound). And COMMITTED_AT's index finds the committed versions at a
     * timestamp, not the pending ones nor the reclaimed ones.
     */
    @Test
    void shouldLookAgainAQuarterLeaseLaterAndFindCommittedVersionsByTimestamp() {
        final Later timers = new Later();
        final boolean[] silent = {false};
        final Participant q = new Participant(new Store(), timers, Participant.Deferral.OFF);
        q.orphans(1_000, ts -> silent[0]);
        assertThat(q.install(T, 3, 100)).isEqualTo(OK);
        assertThat(q.install(T, 4, 100)).isEqualTo(OK);
        assertThat(q.commit(T, 4, 100, new byte[] {9})).isEqualTo(OK);
        timers.delays.clear();
        timers.runAll(); // the coordinator still talks: look again
        assertThat(timers.delays).containsExactly(1_000L / Participant.RECHECKS);
        silent[0] = true;
        timers.runAll();
        assertThat(q.suspect()).isEqualTo(100);
        assertThat(q.committedAt(100)).singleElement().satisfies(r -> assertThat(r).containsExactly(T, 4));
        assertThat(q.committedAt(101)).isEmpty();
        // Its index follows version GC: a reclaimed version at 100 is no longer named.
        for (long ts = 200; ts < 200 + 100L * Participant.Deferral.OFF.maxVersions(); ts += 100) {
            assertThat(q.install(T, 4, ts)).isEqualTo(OK);
            assertThat(q.commit(T, 4, ts, new byte[] {9})).isEqualTo(OK);
        }
        assertThat(q.committedAt(100)).isEmpty();
        assertThat(q.committedAt(200 + 100L * (Participant.Deferral.OFF.maxVersions() - 1)))
            .singleElement().satisfies(r -> assertThat(r).containsExactly(T, 4));
    }
}
