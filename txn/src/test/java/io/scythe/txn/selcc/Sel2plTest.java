package io.scythe.txn.selcc;

import io.scythe.hotspot.Watermarks;
import io.scythe.storage.ObjectLayout;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.LoopTimers;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * SEL latches under 2PL (no wait), two participants on one memory node: the latch word after every step. And OCC and
 * TO on the same latches ({@code sel-occ}, {@code sel-to}; SELCC Fig. 19a's SEL rows), timestamps chosen by the order
 * of each attempt's first access (one TSO counter): each rule's refusal, the latch word and TO's {@code rts}/{@code wts}
 * (in the room after each object) after every step.
 */
class Sel2plTest {
    private static final String T = "rows";
    private final OneMemoryNode node = new OneMemoryNode(T, 64, false, 8, n -> n, SelccTxn.TO_ROOM);
    private final TxnRuntime p1 = runtime(1);
    private final TxnRuntime p2 = runtime(2);

    Sel2plTest() throws Exception {
    }

    @AfterEach
    void close() throws Exception {
        node.close();
    }

    private TxnRuntime runtime(final int participant) throws Exception {
        return on(() -> Future.succeededFuture(new TxnRuntime(node.catalog, node.rrpc, LoopTimers.current(),
            new TsoGroup(64, new DirectTsoSource(node.counter, () -> node.rrpc.oneSided("tso"))), Watermarks.DEFAULT,
            (long) participant << 40)));
    }

    private <R> R on(final Supplier<Future<R>> body) throws Exception {
        return node.onLoop(body);
    }

    private Txn begin(final TxnRuntime runtime) throws Exception {
        return begin(SelccModule.SEL_2PL, runtime);
    }

    private Txn begin(final io.scythe.txn.Protocol protocol, final TxnRuntime runtime) throws Exception {
        return on(() -> Future.succeededFuture(protocol.begin(runtime, false)));
    }

    private int offset(final long key) {
        return node.table.offsetOf(node.table.lookup(key));
    }

    private long latch(final long key) {
        return node.table.objectMemory().getLongVolatile(offset(key) + ObjectLayout.PROTOCOL_WORD_OFFSET);
    }

    private static long value(final UnsafeBuffer b) {
        return b.getLong(0);
    }

    private void assertAborts(final Supplier<Future<?>> op, final AbortReason reason) {
        assertThatThrownBy(() -> on(op::get)).isInstanceOf(AbortException.class).extracting(e -> ((AbortException) e).reason()).isEqualTo(reason);
    }

    @Test
    void shouldShareReadersAndRefuseWritersWithoutWaiting() throws Exception {
        final Txn t1 = begin(p1);
        assertThat(value(on(() -> t1.read(T, 0)))).isEqualTo(100);
        assertThat(latch(0)).isEqualTo(LatchWord.bit(1));
        final Txn t2 = begin(p2);
        assertAborts(() -> t2.readForUpdate(T, 0), AbortReason.LOCKED);
        assertThat(latch(0)).as("a failed X CAS leaves the word").isEqualTo(LatchWord.bit(1));
        on(t2::abort);
        final Txn t3 = begin(p2);
        on(() -> t3.read(T, 0));
        assertThat(latch(0)).isEqualTo(LatchWord.bit(1) | LatchWord.bit(2));
        // t1's upgrade fails (2 reads), so does its fallback: it then holds nothing and aborts.
        final UnsafeBuffer seven = new UnsafeBuffer(new byte[8]);
        seven.putLong(0, 7);
        t1.write(T, 0, seven, 0, 8);
        assertAborts(t1::commit, AbortReason.LOCKED);
        assertThat(latch(0)).isEqualTo(LatchWord.bit(2));
        assertThat(on(t3::commit)).isZero();
        assertThat(latch(0)).isEqualTo(LatchWord.FREE);
        assertThat(node.valueOf(0)).isEqualTo(100);
    }

    @Test
    void shouldUpgradeAndWriteBackWithTheWriteCounter() throws Exception {
        final long before = node.versionOf(1);
        final Txn t = begin(p1);
        on(() -> t.read(T, 1));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, 42);
        t.write(T, 1, v, 0, 8);
        on(t::commit);
        assertThat(node.valueOf(1)).isEqualTo(42);
        assertThat(node.versionOf(1)).isEqualTo(before + 1);
        assertThat(latch(1)).isEqualTo(LatchWord.FREE);
        final Txn u = begin(p2);
        on(() -> u.readForUpdate(T, 1));
        assertThat(latch(1)).isEqualTo(LatchWord.exclusive(2));
        u.write(T, 1, v, 0, 8);
        on(u::commit);
        assertThat(node.versionOf(1)).isEqualTo(before + 2);
        assertThat(latch(1)).isEqualTo(LatchWord.FREE);
        assertThat(on(() -> Future.succeededFuture(LocalLatches.of(p1).size() + LocalLatches.of(p2).size())))
            .isZero();
    }

    @Test
    void shouldShareOneReaderBitAmongTheFlowsOfOneLoop() throws Exception {
        final Txn a = begin(p1);
        final Txn b = begin(p1);
        on(() -> a.read(T, 2));
        on(() -> b.read(T, 2));
        assertThat(latch(2)).as("one bit, not two (a second FAA would carry)").isEqualTo(LatchWord.bit(1));
        final Txn c = begin(p1);
        assertAborts(() -> c.readForUpdate(T, 2), AbortReason.LOCKED);
        on(a::commit);
        assertThat(latch(2)).isEqualTo(LatchWord.bit(1));
        on(b::abort);
        assertThat(latch(2)).isEqualTo(LatchWord.FREE);
    }

    @Test
    void shouldUndoTheReaderBitWhenAnExclusiveHolderShows() throws Exception {
        node.setHeaderWord(3, ObjectLayout.PROTOCOL_WORD_OFFSET, LatchWord.exclusive(5));
        final Txn t = begin(p1);
        assertAborts(() -> t.read(T, 3), AbortReason.LOCKED);
        assertThat(latch(3)).isEqualTo(LatchWord.exclusive(5));
        on(t::abort);
        assertThat(on(() -> Future.succeededFuture(LocalLatches.of(p1).size()))).isZero();
    }

    @Test
    void shouldRefuseAParticipantPast58() throws Exception {
        final TxnRuntime p59 = runtime(59);
        assertThatThrownBy(() -> begin(p59)).hasMessageContaining("at most 58");
    }

    private long rts(final long key) {
        return node.table.objectMemory().getLongVolatile(offset(key) + node.table.objectSlotBytes() - SelccTxn.TO_ROOM);
    }

    private long wts(final long key) {
        return node.table.objectMemory().getLongVolatile(offset(key) + node.table.objectSlotBytes() - SelccTxn.TO_ROOM + 8);
    }

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    private void assertAborts(final Supplier<Future<?>> op, final AbortReason reason, final String why) {
        assertThatThrownBy(() -> on(op::get)).isInstanceOf(AbortException.class).hasMessageContaining(why)
            .extracting(e -> ((AbortException) e).reason()).isEqualTo(reason);
    }

    /** Timestamp 0 taken: every attempt's is positive (a raise to 0 would not show). */
    private void timestampZeroTaken() throws Exception {
        on(() -> p1.tso().next());
    }

    /** No latch word of keys {@code from..to} set, and no local latch left. */
    private void noLatches(final long from, final long to) throws Exception {
        for (long k = from; k <= to; k++) {
            assertThat(latch(k)).as("latch word of key " + k).isEqualTo(LatchWord.FREE);
        }
        noLocalLatches();
    }

    private void noLocalLatches() throws Exception {
        assertThat(on(() -> Future.succeededFuture(LocalLatches.of(p1).size() + LocalLatches.of(p2).size())))
            .isZero();
    }

    @Test
    void occShouldLatchEachReadOnlyForItsMomentAndInstallTheWrites() throws Exception {
        final Txn t = begin(SelccModule.SEL_OCC, p1);
        assertThat(on(() -> t.read(T, 0)).getLong(0)).isEqualTo(100);
        assertThat(latch(0)).as("Shared for the moment of the READ only").isEqualTo(LatchWord.FREE);
        on(() -> t.readForUpdate(T, 1));
        assertThat(latch(1)).as("a read for update holds nothing either").isEqualTo(LatchWord.FREE);
        final long before = node.versionOf(1);
        t.write(T, 1, value(7), 0, 8);
        on(t::commit);
        assertThat(node.valueOf(1)).isEqualTo(7);
        assertThat(node.versionOf(1)).isEqualTo(before + 1);
        assertThat(latch(0)).isEqualTo(LatchWord.FREE);
        assertThat(latch(1)).isEqualTo(LatchWord.FREE);
        noLocalLatches();
    }

    @Test
    void occShouldRefuseAReadUnderAnExclusiveHolderAndACommitWhoseWriteIsLatched() throws Exception {
        node.setHeaderWord(2, ObjectLayout.PROTOCOL_WORD_OFFSET, LatchWord.exclusive(5));
        final Txn t = begin(SelccModule.SEL_OCC, p1);
        assertAborts(() -> t.read(T, 2), AbortReason.LOCKED, "held Exclusive by participant 5 for 64 rounds");
        assertThat(latch(2)).as("its bit undone in the same doorbell").isEqualTo(LatchWord.exclusive(5));
        on(t::abort);
        node.setHeaderWord(2, ObjectLayout.PROTOCOL_WORD_OFFSET, LatchWord.FREE);
        final Txn u = begin(SelccModule.SEL_OCC, p1);
        on(() -> u.read(T, 2));
        u.write(T, 2, value(9), 0, 8);
        node.setHeaderWord(2, ObjectLayout.PROTOCOL_WORD_OFFSET, LatchWord.bit(5)); // a reader, for its moment
        assertAborts(u::commit, AbortReason.LOCKED, "latch word");
        on(u::abort);
        assertThat(latch(2)).as("no wait: the word left as it was").isEqualTo(LatchWord.bit(5));
        assertThat(node.valueOf(2)).isEqualTo(100);
        noLocalLatches();
    }

    @Test
    void occShouldValidateEveryReadAndTheWritesVersions() throws Exception {
        final Txn t1 = begin(SelccModule.SEL_OCC, p1);
        on(() -> t1.read(T, 3));
        on(() -> t1.read(T, 4));
        t1.write(T, 4, value(1), 0, 8);
        final Txn t2 = begin(SelccModule.SEL_OCC, p2);
        on(() -> t2.read(T, 3));
        t2.write(T, 3, value(2), 0, 8);
        on(t2::commit);
        assertAborts(t1::commit, AbortReason.VALIDATION, "key 3 of rows was written since this transaction read it");
        on(t1::abort);
        assertThat(node.valueOf(4)).as("its write not installed").isEqualTo(100);
        // A write whose key was written since it was read: refused when the commit latches it.
        final Txn t3 = begin(SelccModule.SEL_OCC, p1);
        on(() -> t3.read(T, 5));
        final Txn t4 = begin(SelccModule.SEL_OCC, p2);
        on(() -> t4.read(T, 5));
        t4.write(T, 5, value(4), 0, 8);
        on(t4::commit);
        t3.write(T, 5, value(3), 0, 8);
        assertAborts(t3::commit, AbortReason.VALIDATION, "key 5 of rows was written since this transaction read it");
        on(t3::abort);
        assertThat(node.valueOf(5)).isEqualTo(4);
        noLatches(3, 5);
    }

    @Test
    void toShouldRaiseRtsAtTheReadAndStampWtsAtTheCommit() throws Exception {
        timestampZeroTaken();
        final Txn t = begin(SelccModule.SEL_TO, p1);
        on(() -> t.read(T, 0));
        final long ts = rts(0);
        assertThat(ts).as("raised to its timestamp").isPositive();
        assertThat(latch(0)).as("Exclusive for the moment of the check").isEqualTo(LatchWord.FREE);
        on(() -> t.readForUpdate(T, 1));
        assertThat(rts(1)).isEqualTo(ts);
        t.write(T, 1, value(8), 0, 8);
        on(t::commit);
        assertThat(wts(1)).isEqualTo(ts);
        assertThat(wts(0)).as("only read").isZero();
        assertThat(node.valueOf(1)).isEqualTo(8);
        assertThat(latch(1)).isEqualTo(LatchWord.FREE);
        noLocalLatches();
    }

    @Test
    void toShouldRefuseAReadOfALaterWriteAndAWriteBelowALaterRead() throws Exception {
        timestampZeroTaken();
        final Txn older = begin(SelccModule.SEL_TO, p1);
        on(() -> older.read(T, 6)); // its timestamp first
        final Txn newer = begin(SelccModule.SEL_TO, p2);
        on(() -> newer.read(T, 7));
        newer.write(T, 7, value(5), 0, 8);
        on(() -> newer.read(T, 8)); // rts(8) = newer's
        on(newer::commit);
        final long tsNewer = wts(7);
        assertThat(rts(6)).as("older's timestamp first").isLessThan(tsNewer);
        assertAborts(() -> older.read(T, 7), AbortReason.VALIDATION, "was written at " + tsNewer);
        assertThat(rts(7)).as("a refused read raises nothing").isEqualTo(tsNewer);
        on(older::abort);
        // The commit's rule: ts >= rts.
        final Txn old2 = begin(SelccModule.SEL_TO, p1);
        on(() -> old2.read(T, 9)); // its timestamp, then a later reader of key 10
        final long ts2 = rts(9);
        final Txn reader = begin(SelccModule.SEL_TO, p2);
        on(() -> reader.read(T, 10));
        final long tsReader = rts(10);
        assertThat(tsReader).isGreaterThan(ts2);
        on(() -> old2.read(T, 10)); // wts 0: allowed, rts stays the later one
        assertThat(rts(10)).isEqualTo(tsReader);
        old2.write(T, 10, value(6), 0, 8);
        assertAborts(old2::commit, AbortReason.VALIDATION, "was read at " + tsReader);
        on(old2::abort);
        on(reader::commit);
        assertThat(node.valueOf(10)).isEqualTo(100);
        noLatches(6, 10);
    }

    @Test
    void toShouldMarkAMissingKeyReadSoThatAnOlderInsertFails() throws Exception {
        timestampZeroTaken();
        final Txn older = begin(SelccModule.SEL_TO, p1);
        on(() -> older.read(T, 11)); // its timestamp first
        final Txn newer = begin(SelccModule.SEL_TO, p2);
        assertThatThrownBy(() -> on(() -> newer.read(T, 40))).isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        on(() -> newer.read(T, 12));
        final long tsNewer = rts(12);
        on(newer::commit);
        assertThat(node.table.lookup(40)).as("the mark: a tombstone in the index").isGreaterThanOrEqualTo(0);
        assertThat(rts(40)).isEqualTo(tsNewer);
        assertThat(latch(40)).isEqualTo(LatchWord.FREE);
        older.insert(T, 40, value(1), 0, 8);
        assertAborts(older::commit, AbortReason.VALIDATION, "was read at " + tsNewer);
        on(older::abort);
        final Txn later = begin(SelccModule.SEL_TO, p1);
        assertThatThrownBy(() -> on(() -> later.read(T, 40))).as("still absent")
            .isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        on(later::commit);
        assertThat(latch(40)).isEqualTo(LatchWord.FREE);
        noLocalLatches();
    }

    /**
     * The memory node's INSERT revives a tombstone in place, its rts kept: an older transaction's insert of a key a
     * newer one read absent (and marked) must fail as a write below that rts (sel-to phantom seed 95: G2).
     */
    @Test
    void toShouldCheckAnInsertThatRevivedAMarkInPlace() throws Exception {
        timestampZeroTaken();
        final Txn older = begin(SelccModule.SEL_TO, p1);
        assertThatThrownBy(() -> on(() -> older.read(T, 41))).isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        on(() -> older.read(T, 13));
        final Txn newer = begin(SelccModule.SEL_TO, p2);
        assertThatThrownBy(() -> on(() -> newer.read(T, 41))).isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        on(() -> newer.read(T, 14));
        final long tsNewer = rts(14);
        on(newer::commit);
        assertThat(rts(41)).as("marked").isEqualTo(tsNewer);
        older.insert(T, 41, value(1), 0, 8);
        assertAborts(older::commit, AbortReason.VALIDATION, "was read at " + tsNewer);
        on(older::abort);
        assertThat(rts(41)).isEqualTo(tsNewer);
        assertThat(latch(41)).isEqualTo(LatchWord.FREE);
        noLocalLatches();
    }
    /**
     * A mark's own INSERT revives a tombstone in place: a key read absent, then inserted and deleted by newer
     * transactions before this one commits, was written after its timestamp: the mark aborts (review of sel-to: the
     * cycle T_a -> T1 -> T_a through the absent key).
     */
    @Test
    void toShouldRefuseAMarkWhoseKeyWasInsertedAndDeletedSinceItWasReadAbsent() throws Exception {
        timestampZeroTaken();
        final Txn reader = begin(SelccModule.SEL_TO, p1);
        assertThatThrownBy(() -> on(() -> reader.read(T, 41))).isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        on(() -> reader.read(T, 13));
        final Txn inserter = begin(SelccModule.SEL_TO, p2);
        on(() -> inserter.read(T, 14));
        inserter.insert(T, 41, value(1), 0, 8);
        on(inserter::commit);
        final Txn deleter = begin(SelccModule.SEL_TO, p2);
        on(() -> deleter.read(T, 41));
        deleter.delete(T, 41);
        on(deleter::commit);
        assertAborts(reader::commit, AbortReason.VALIDATION, "was written at");
        on(reader::abort);
        assertThat(latch(41)).isEqualTo(LatchWord.FREE);
        noLocalLatches();
    }

    /** The commit's failure reason and message (a throw that is no abort fails the test with it). */
    private AbortException commitFails(final Txn t) {
        final Throwable e = org.assertj.core.api.Assertions.catchThrowable(() -> on(t::commit));
        assertThat(e).as("commit's failure").isInstanceOf(AbortException.class);
        return (AbortException) e;
    }

    /**
     * OCC, a key inserted blind (never read) that another transaction inserted meanwhile: a duplicate only if what
     * the attempt read is current; here its read of key 3 is stale (the other wrote it too, as two TPC-C NewOrders
     * reading one district's next order id), so VALIDATION, retried, not a user-visible DUPLICATE_KEY (issue 21,
     * stop 50's review: the commit-time duplicate was reported without validating).
     */
    @Test
    void occShouldReportACommitTimeDuplicateOnlyWhenItsReadsAreCurrent() throws Exception {
        final Txn t1 = begin(SelccModule.SEL_OCC, p1);
        on(() -> t1.read(T, 3));
        t1.insert(T, 42, value(1), 0, 8);
        final Txn t2 = begin(SelccModule.SEL_OCC, p2);
        on(() -> t2.read(T, 3));
        t2.write(T, 3, value(2), 0, 8);
        t2.insert(T, 42, value(2), 0, 8);
        on(t2::commit);
        final AbortException stale = commitFails(t1);
        assertThat(stale.reason()).as(stale.getMessage()).isEqualTo(AbortReason.VALIDATION);
        assertThat(stale).hasMessageContaining("key 3 of rows was written since this transaction read it");
        on(t1::abort);
        // Its reads current: the duplicate is the outcome.
        final Txn t3 = begin(SelccModule.SEL_OCC, p1);
        on(() -> t3.read(T, 3));
        t3.insert(T, 42, value(3), 0, 8);
        final AbortException duplicate = commitFails(t3);
        assertThat(duplicate.reason()).as(duplicate.getMessage()).isEqualTo(AbortReason.DUPLICATE_KEY);
        on(t3::abort);
        assertThat(node.valueOf(42)).isEqualTo(2);
        noLatches(42, 42);
        noLatches(3, 3);
    }

    /** OCC, the key read absent, then inserted by another: the read is stale, the insert's duplicate VALIDATION. */
    @Test
    void occShouldAbortAnInsertOfAKeyReadAbsentThatAnotherInsertedSince() throws Exception {
        final Txn t1 = begin(SelccModule.SEL_OCC, p1);
        assertThatThrownBy(() -> on(() -> t1.read(T, 43))).isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        t1.insert(T, 43, value(1), 0, 8);
        final Txn t2 = begin(SelccModule.SEL_OCC, p2);
        t2.insert(T, 43, value(2), 0, 8);
        on(t2::commit);
        final AbortException e = commitFails(t1);
        assertThat(e.reason()).as(e.getMessage()).isEqualTo(AbortReason.VALIDATION);
        on(t1::abort);
        assertThat(node.valueOf(43)).isEqualTo(2);
        noLatches(43, 43);
    }

    /**
     * TO, a key inserted blind that another transaction inserted: a duplicate in timestamp order only if that insert's
     * {@code wts} is at or below this attempt's timestamp; one inserted by a newer transaction is a write this attempt
     * is too late for (VALIDATION), not a duplicate it could have seen at its timestamp.
     */
    @Test
    void toShouldReportACommitTimeDuplicateOnlyWhenThePresentKeyIsOlderThanItsTimestamp() throws Exception {
        timestampZeroTaken();
        final Txn older = begin(SelccModule.SEL_TO, p1);
        on(() -> older.read(T, 6)); // its timestamp first
        final long tsOlder = rts(6);
        older.insert(T, 44, value(1), 0, 8);
        final Txn newer = begin(SelccModule.SEL_TO, p2);
        on(() -> newer.read(T, 7));
        newer.insert(T, 44, value(2), 0, 8);
        on(newer::commit);
        assertThat(wts(44)).isGreaterThan(tsOlder);
        final AbortException late = commitFails(older);
        assertThat(late.reason()).as(late.getMessage()).isEqualTo(AbortReason.VALIDATION);
        assertThat(late).hasMessageContaining("was written at " + wts(44));
        on(older::abort);
        // A transaction newer than that insert: the key was there at its timestamp, a duplicate.
        final Txn later = begin(SelccModule.SEL_TO, p1);
        on(() -> later.read(T, 8));
        later.insert(T, 44, value(3), 0, 8);
        final AbortException duplicate = commitFails(later);
        assertThat(duplicate.reason()).as(duplicate.getMessage()).isEqualTo(AbortReason.DUPLICATE_KEY);
        on(later::abort);
        assertThat(node.valueOf(44)).isEqualTo(2);
        noLatches(44, 44);
    }

    /**
     * Every mode, a commit-time duplicate met through a stale absent read (review of selfix, finding 1): t1 reads key
     * 3, reads {@code base} absent and inserts {@code base + 1} blind; t2 inserts both and commits. t1's duplicate has
     * no serial order (after t2 it would have seen {@code base}), so VALIDATION, retried. Under TO t2 is older, so
     * that {@code base + 1} passes the timestamp check and only the absent key decides. Was DUPLICATE_KEY in all
     * three: the duplicate's check looked at no key read absent (2PL: none at all; OCC/TO: the lines read only).
     */
    @Test
    void aCommitTimeDuplicateMetThroughAStaleAbsentReadShouldBeValidation() throws Exception {
        timestampZeroTaken();
        long base = 50;
        for (final io.scythe.txn.Protocol protocol
            : java.util.List.of(SelccModule.SEL_2PL, SelccModule.SEL_OCC, SelccModule.SEL_TO)) {
            final long absent = base;
            final Txn t2 = begin(protocol, p2);
            if (protocol == SelccModule.SEL_TO) {
                on(() -> t2.read(T, 4)); // its timestamp first: older than t1
            }
            final Txn t1 = begin(protocol, p1);
            on(() -> t1.read(T, 3));
            assertThatThrownBy(() -> on(() -> t1.read(T, absent)))
                .isInstanceOf(io.scythe.txn.UnknownKeyException.class);
            t1.insert(T, absent + 1, value(1), 0, 8);
            t2.insert(T, absent, value(2), 0, 8);
            t2.insert(T, absent + 1, value(2), 0, 8);
            on(t2::commit);
            final AbortException e = commitFails(t1);
            assertThat(e.reason()).as(protocol + ": " + e.getMessage()).isEqualTo(AbortReason.VALIDATION);
            assertThat(e).as(protocol.toString()).hasMessageContaining("key " + absent + " of rows read as absent");
            on(t1::abort);
            assertThat(node.valueOf(absent + 1)).isEqualTo(2);
            noLatches(absent, absent + 1);
            base += 2;
        }
        noLatches(3, 4);
    }

    /**
     * TO, a commit-time duplicate of a key present at the attempt's timestamp, while a line it read was written since
     * by a newer transaction (review of selfix, finding 2): legal in timestamp order (the newer write comes after), so
     * DUPLICATE_KEY. Was VALIDATION: TO reused OCC's check of the lines read.
     */
    @Test
    void toShouldReportADuplicateAtItsTimestampEvenWhenALineItReadWasWrittenLater() throws Exception {
        timestampZeroTaken();
        final Txn t = begin(SelccModule.SEL_TO, p1);
        on(() -> t.read(T, 3));
        final long ts = rts(3);
        final Txn newer = begin(SelccModule.SEL_TO, p2);
        on(() -> newer.read(T, 3));
        newer.write(T, 3, value(7), 0, 8);
        on(newer::commit);
        assertThat(wts(3)).isGreaterThan(ts);
        assertThat(wts(10)).isLessThanOrEqualTo(ts);
        t.insert(T, 10, value(1), 0, 8); // key 10 loaded: present at ts
        final AbortException e = commitFails(t);
        assertThat(e.reason()).as(e.getMessage()).isEqualTo(AbortReason.DUPLICATE_KEY);
        on(t::abort);
        assertThat(node.valueOf(3)).isEqualTo(7);
        assertThat(node.valueOf(10)).isEqualTo(100);
        noLatches(3, 10);
    }

    /**
     * OCC and TO, a duplicate seen while executing (an insert of a key read present): the commit is finished once
     * (it was finished inside the optimistic commit and again by the caller, whose second finish now fails with
     * "finished twice"); with its reads current, DUPLICATE_KEY. What this checks is the new guard only: before it, the
     * double finish was harmless (the second release returned the first's future), so the test failed before the
     * change only because the guard made the second finish an error (review of selfix, finding 3).
     */
    @Test
    void optimisticDuplicateSeenWhileExecutingShouldFinishTheCommitOnce() throws Exception {
        for (final io.scythe.txn.Protocol protocol : java.util.List.of(SelccModule.SEL_OCC, SelccModule.SEL_TO)) {
            final Txn t = begin(protocol, p1);
            on(() -> t.read(T, 9));
            t.insert(T, 9, value(1), 0, 8);
            final AbortException e = commitFails(t);
            assertThat(e.reason()).as(protocol + ": " + e.getMessage()).isEqualTo(AbortReason.DUPLICATE_KEY);
            on(t::abort);
        }
        noLatches(9, 9);
    }

    /**
     * TO's marks: each key read absent becomes a tombstone with {@code rts} = the reader's timestamp at its commit,
     * once however often it was read, except a key the attempt inserts (its INSERT checks it; it is written with
     * {@code wts} = ts instead); a key read absent and left untouched by anyone else stays absent to readers.
     */
    @Test
    void toShouldMarkEachKeyReadAbsentOnceButNotOneItInserts() throws Exception {
        timestampZeroTaken();
        final Txn t = begin(SelccModule.SEL_TO, p1);
        on(() -> t.read(T, 0));
        final long ts = rts(0);
        for (final long k : new long[] {45, 46, 47, 47}) {
            assertThatThrownBy(() -> on(() -> t.read(T, k))).isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        }
        t.insert(T, 46, value(6), 0, 8);
        on(t::commit);
        for (final long k : new long[] {45, 47}) {
            assertThat(node.table.lookup(k)).as("key " + k + " marked: a tombstone in the index")
                .isGreaterThanOrEqualTo(0);
            assertThat(rts(k)).as("rts of mark " + k).isEqualTo(ts);
            assertThat(wts(k)).as("a mark writes nothing").isZero();
        }
        assertThat(node.valueOf(46)).isEqualTo(6);
        assertThat(wts(46)).as("inserted: written at ts").isEqualTo(ts);
        assertThat(rts(46)).as("not marked").isZero();
        final Txn later = begin(SelccModule.SEL_TO, p2);
        assertThatThrownBy(() -> on(() -> later.read(T, 47))).as("a mark reads as absent")
            .isInstanceOf(io.scythe.txn.UnknownKeyException.class);
        on(later::commit);
        assertThat(rts(47)).as("raised by the later reader's mark").isGreaterThan(ts);
        noLatches(45, 47);
    }
}
