package io.scythe.txn.scythe;

import io.scythe.hotspot.Watermarks;
import io.scythe.storage.ObjectLayout;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The memory-node rule of the Takeout Lock (Fig. 14), on one object header. */
class TakeoutLockTest {
    private final UnsafeBuffer objects = new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64));
    private final TakeoutLock.Outcome out = new TakeoutLock.Outcome();

    private TakeoutLock.Outcome lock(final long ts, final boolean hot) {
        return TakeoutLock.lock(objects, 0, ts, hot, Watermarks.DEFAULT, out);
    }

    private void unlock() {
        objects.getAndAddLong(ObjectLayout.UPPER_OFFSET, 1);
    }

    @Test
    void shouldHandOutTicketsInArrivalOrderAndRecordTheLargestTimestamp() {
        for (int i = 0; i < 3; i++) {
            assertThat(lock(10 * (i + 1), false).status).isEqualTo(TakeoutLock.GRANTED);
            assertThat(out.ticket).isEqualTo(i);
            assertThat(out.queued).isEqualTo(i);
        }
        assertThat(objects.getLong(ObjectLayout.LOWER_OFFSET)).isEqualTo(3);
        assertThat(objects.getLong(ObjectLayout.QUEUED_TS_OFFSET)).isEqualTo(30);
    }

    @Test
    void shouldRefuseAnOlderTimestampWhileSomeoneIsQueuedAndAdmitItOnceTheQueueHasDrained() {
        lock(30, false);
        assertThat(lock(25, false).status).isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(lock(25, true).status).as("1 queued: not above the cold watermark, no heuristic wait")
            .isEqualTo(TakeoutLock.REFUSED_ORDER);
        for (int i = 0; i < 3; i++) {
            lock(40 + i, true);
        }
        assertThat(lock(25, true).status).as("4 queued: the rule refuses; holding back is the service's")
            .isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(objects.getLong(ObjectLayout.LOWER_OFFSET)).as("refusals change nothing").isEqualTo(4);
        for (int i = 0; i < 4; i++) {
            unlock();
        }
        assertThat(lock(25, false).status).as("the queue has drained").isEqualTo(TakeoutLock.GRANTED);
        assertThat(objects.getLong(ObjectLayout.QUEUED_TS_OFFSET)).as("never lowered").isEqualTo(42);
    }

    @Test
    void shouldRefuseColdAboveTheColdWatermarkAndEveryoneAboveTheHotWatermark() {
        for (int i = 0; i < 4; i++) {
            assertThat(lock(i, false).status).isEqualTo(TakeoutLock.GRANTED);
        }
        assertThat(lock(10, false).status).isEqualTo(TakeoutLock.REFUSED_COLD);
        assertThat(out.queued).isEqualTo(4);
        for (int i = 0; i < 7; i++) {
            assertThat(lock(20 + i, true).status).isEqualTo(TakeoutLock.GRANTED);
        }
        assertThat(lock(30, true).status).isEqualTo(TakeoutLock.REFUSED_HOT);
        assertThat(out.queued).isEqualTo(11);
    }

    @Test
    void shouldNeverGrantOneTicketTwiceUnderConcurrency() throws Exception {
        final Watermarks unlimited = new Watermarks(65535, 65535);
        final int threads = 4;
        final int each = 10_000;
        final List<List<Long>> tickets = new ArrayList<>();
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final List<Long> mine = new ArrayList<>();
            tickets.add(mine);
            workers.add(new Thread(() -> {
                final TakeoutLock.Outcome o = new TakeoutLock.Outcome();
                for (int i = 0; i < each; i++) {
                    TakeoutLock.lock(objects, 0, 0, true, unlimited, o);
                    assertThat(o.status).isEqualTo(TakeoutLock.GRANTED);
                    mine.add(o.ticket);
                    if (i % 2 == 1) {
                        objects.getAndAddLong(ObjectLayout.UPPER_OFFSET, 2); // keep the queue under 65535
                    }
                }
            }));
        }
        workers.forEach(Thread::start);
        for (final Thread w : workers) {
            w.join();
        }
        final List<Long> all = new ArrayList<>();
        tickets.forEach(all::addAll);
        Collections.sort(all);
        for (int i = 0; i < all.size(); i++) {
            assertThat(all.get(i)).isEqualTo(i);
        }
        assertThat(objects.getLong(ObjectLayout.LOWER_OFFSET)).isEqualTo((long) threads * each);
    }

    private final TakeoutLock.Runs runs = new TicketLedger();

    private TakeoutLock.Outcome lockShared(final long ts) {
        return TakeoutLock.lockShared(objects, 0, 7, ts, Watermarks.DEFAULT, runs, out);
    }

    private long upper() {
        return objects.getLong(ObjectLayout.UPPER_OFFSET);
    }

    private boolean readersOnly() {
        return (objects.getLong(ObjectLayout.QUEUED_TS_OFFSET) & TakeoutLock.READERS_ONLY) != 0;
    }

    private TakeoutLock.Outcome lockWriter(final long ts) {
        return TakeoutLock.lock(objects, 0, 7, ts, true, Watermarks.DEFAULT, runs, out);
    }

    private void releaseShared() {
        TakeoutLock.releaseShared(objects, 0, 7, runs);
    }

    /**
     * READERS_ONLY recomputed at a shared release (issue 22, helper shared22; the stop-54 review's S3): once the writer
     * ahead of a reader run released, the first reader of the run to release sets the bit again, so later validations
     * pass the rest of the run; a release while a writer is still outstanding leaves it clear. Failed before the
     * change: a release only added to upper, and the bit stayed clear until the next reader's grant.
     */
    @Test
    void shouldSetReadersOnlyAgainWhenASharedReleaseLeavesOnlyReadersOutstanding() {
        lockShared(10);
        lockShared(11); // run [0, 2)
        assertThat(lockWriter(20).ticket).isEqualTo(2);
        lockShared(30);
        lockShared(31);
        lockShared(32); // run [3, 6) behind the writer
        assertThat(out.turn).isEqualTo(3);
        assertThat(readersOnly()).isFalse();
        releaseShared();
        releaseShared(); // the readers of turn 0: the writer holds now
        assertThat(upper()).isEqualTo(2);
        assertThat(readersOnly()).as("the writer still outstanding").isFalse();
        unlock(); // the writer's one-sided FAA: the memory node's CPU does not see it
        assertThat(readersOnly()).as("nothing recomputes at an exclusive release").isFalse();
        releaseShared(); // one reader of turn 3: only the other two readers outstanding
        assertThat(upper()).isEqualTo(4);
        assertThat(readersOnly()).as("set again by the shared release").isTrue();
        assertThat(objects.getLong(ObjectLayout.QUEUED_TS_OFFSET) & ~TakeoutLock.READERS_ONLY)
            .as("queued_ts itself untouched").isEqualTo(32);
        assertThat(lockWriter(40).ticket).isEqualTo(6);
        assertThat(readersOnly()).as("a writer's grant clears it").isFalse();
        releaseShared();
        releaseShared(); // the run's last readers: the writer of ticket 6 holds
        assertThat(readersOnly()).as("not while the writer is outstanding").isFalse();
    }

    /**
     * queued_ts's READERS_ONLY bit (issue 22, helper sharedval): set only while every outstanding ticket is a reader's,
     * so a one-sided validation may pass the readers; never while a writer holds or waits; the timestamp rule reads
     * queued_ts without it. Failed before the bit: it was never set.
     */
    @Test
    void shouldSayReadersOnlyOnlyWhileNoWriterIsOutstanding() {
        assertThat(lockShared(10).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(readersOnly()).as("a reader on an empty queue").isTrue();
        assertThat(lockShared(11).turn).isZero();
        assertThat(readersOnly()).as("a reader joining it").isTrue();
        assertThat(lockWriter(20).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.ticket).isEqualTo(2);
        assertThat(readersOnly()).as("a writer queued behind them").isFalse();
        assertThat(out.queuedTs).isEqualTo(20);
        assertThat(lockShared(30).turn).as("a run behind the writer").isEqualTo(3);
        assertThat(readersOnly()).as("the writer still outstanding ahead of it").isFalse();
        unlock();
        unlock(); // the two readers of turn 0 (raw +1s, not TakeoutLock#releaseShared: recompute nothing)
        assertThat(readersOnly()).as("the writer still outstanding").isFalse();
        unlock(); // the writer
        assertThat(lockShared(31).turn).as("joins the run at the tail, which covers what is outstanding").isEqualTo(3);
        assertThat(readersOnly()).isTrue();
        assertThat(objects.getLong(ObjectLayout.QUEUED_TS_OFFSET) & ~TakeoutLock.READERS_ONLY).isEqualTo(31);
        assertThat(lockWriter(25).status).as("timestamp order against 31, not the word with its bit")
            .isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(readersOnly()).as("a refusal takes no ticket").isTrue();
        assertThat(lockWriter(40).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(objects.getLong(ObjectLayout.QUEUED_TS_OFFSET)).as("bit cleared by the writer's grant").isEqualTo(40);
        unlock();
        unlock();
        unlock(); // both readers of turn 3 and the writer: the queue empty
        assertThat(lockShared(50).turn).isEqualTo(6);
        assertThat(readersOnly()).as("a reader on an empty queue again").isTrue();
    }

    /**
     * A slot reused by another object (header zeroed, incarnation raised) whose inserter holds ticket 0: the old
     * object's reader run [0, 1) must not match again once the new {@code lower} climbs back to its {@code next}, or
     * the reader would be served at turn 0 beside the inserter (a review of stop 51 found it; failed before: turn 0).
     */
    @Test
    void shouldNotLetAReaderJoinARunOfTheSlotsEarlierObject() {
        assertThat(lockShared(10).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.turn).isZero();
        unlock();
        objects.putLong(ObjectLayout.LOWER_OFFSET, 0);
        objects.putLong(ObjectLayout.UPPER_OFFSET, 0);
        objects.putLong(ObjectLayout.QUEUED_TS_OFFSET, 0);
        final short incarnation = objects.getShort(ObjectLayout.INCARNATION_OFFSET);
        objects.putShort(ObjectLayout.INCARNATION_OFFSET, (short) (incarnation + 1));
        objects.getAndAddLong(ObjectLayout.LOWER_OFFSET, 1); // the inserter's ticket 0, held
        assertThat(lockShared(11).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.turn).as("a run of its own behind the inserter").isEqualTo(1);
        assertThat(upper()).as("not served while the inserter holds").isLessThan(out.turn);
    }

    @Test
    void shouldGrantConsecutiveReadersTogetherAndMakeTheWriterBehindThemWaitForEveryOne() {
        for (int i = 0; i < 3; i++) {
            assertThat(lockShared(10 + i).status).isEqualTo(TakeoutLock.GRANTED);
            assertThat(out.ticket).isEqualTo(i);
            assertThat(out.turn).as("one run: the first reader's turn").isZero();
            assertThat(out.queued).as("nobody ahead of the run").isZero();
        }
        assertThat(lock(20, true).status).isEqualTo(TakeoutLock.GRANTED);
        final long writer = out.ticket;
        assertThat(writer).isEqualTo(3);
        unlock(); // the readers release in any order: upper counts them
        unlock();
        assertThat(upper()).as("one reader still holds: the writer waits").isNotEqualTo(writer);
        unlock();
        assertThat(upper()).isEqualTo(writer);
    }

    @Test
    void shouldMakeReadersBehindAWriterWaitForItSoNoWriterIsStarvedByAStreamOfReaders() {
        lockShared(10);
        lockShared(11);
        assertThat(lock(20, true).ticket).isEqualTo(2);
        for (int i = 0; i < 50; i++) {
            assertThat(lockShared(30 + i).status).as("reader %d", i).isEqualTo(TakeoutLock.GRANTED);
            assertThat(out.turn).as("a run of its own after the writer, never the first run").isEqualTo(3);
        }
        unlock();
        unlock();
        assertThat(upper()).as("the two readers ahead gone: the writer holds").isEqualTo(2);
        assertThat(upper()).as("and none of the 50 readers behind it").isLessThan(3);
        unlock();
        assertThat(upper()).as("the writer gone: all 50 hold together").isGreaterThanOrEqualTo(3);
    }

    @Test
    void shouldOrderOnlyAgainstWhatAReaderWaitsFor() {
        lockShared(50);
        assertThat(lockShared(40).status).as("joins a run already served: waits for nobody, no order")
            .isEqualTo(TakeoutLock.GRANTED);
        assertThat(lock(45, true).status).as("a writer behind readers is ordered after the youngest")
            .isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(lock(60, true).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(lockShared(55).status).as("behind the writer of 60: would wait for it")
            .isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(lockShared(70).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.turn).isEqualTo(3);
        assertThat(lockShared(65).status).as("joins a waiting run: ordered against what is ahead of the run (60)")
            .isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.turn).isEqualTo(3);
        assertThat(lockShared(58).status).isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(objects.getLong(ObjectLayout.LOWER_OFFSET)).as("refusals change nothing").isEqualTo(5);
    }

    @Test
    void shouldBeginANewRunAfterAnyOtherTicketAnInsertsIncluded() {
        lockShared(1);
        objects.getAndAddLong(ObjectLayout.LOWER_OFFSET, 1); // a ticket taken elsewhere (Table's locked insert)
        assertThat(lockShared(2).turn).as("the run is no longer the trailing one").isEqualTo(2);
        assertThat(out.queued).isEqualTo(2);
    }

    @Test
    void shouldRefuseAReaderAboveTheHotWatermarkOfTicketsAheadOfItsTurn() {
        for (int i = 0; i < 11; i++) {
            assertThat(lock(i, true).status).isEqualTo(TakeoutLock.GRANTED);
        }
        assertThat(lockShared(20).status).isEqualTo(TakeoutLock.REFUSED_HOT);
        assertThat(out.queued).isEqualTo(11);
    }

    private TakeoutLock.Outcome write(final long ts) {
        return TakeoutLock.lock(objects, 0, 7, ts, true, Watermarks.DEFAULT, runs, out);
    }

    private TakeoutLock.Outcome writeCold(final long ts) {
        return TakeoutLock.lock(objects, 0, 7, ts, false, Watermarks.DEFAULT, runs, out);
    }

    /**
     * A writer refused for the hot watermark by the exclusive tickets ahead of a reader run, readers coming and going
     * meanwhile, each ask with a fresh timestamp (the TSO's, younger than every reader so far): the readers joining the
     * run never push it over (the run at the tail is one turn), so it gets its ticket once the tickets ahead of the
     * run drain, and the readers after it wait for it. (Issue 22's second review, finding 3: before, the first ask was
     * granted and the stream never ran.)
     */
    @Test
    void shouldLetAWriterBehindAStreamOfReadersGetItsTicket() {
        final long hot = Watermarks.DEFAULT.hot();
        long clock = 0;
        for (int i = 0; i < hot; i++) {
            assertThat(write(++clock).status).isEqualTo(TakeoutLock.GRANTED);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(lockShared(++clock).turn).as("a run behind the writers").isEqualTo(hot);
        }
        int refusals = 0;
        long writer = -1;
        for (int i = 0; i < 50; i++) {
            if (write(++clock).status == TakeoutLock.GRANTED) {
                writer = out.ticket;
                break;
            }
            assertThat(out.status).isEqualTo(TakeoutLock.REFUSED_HOT);
            refusals++;
            unlock(); // a writer ahead leaves, a reader comes and joins the run
            assertThat(lockShared(++clock).status).isEqualTo(TakeoutLock.GRANTED);
            assertThat(out.turn).as("joins the run: a refusal does not close it").isEqualTo(hot);
        }
        assertThat(refusals).as("the stream ran: 10 tickets and the run were 11 turns").isEqualTo(1);
        assertThat(writer).as("behind the run: 10 writers and 6 readers").isEqualTo(hot + 6);
        while (upper() < writer) {
            unlock();
        }
        assertThat(lockShared(++clock).turn).as("the reader after it waits for it").isEqualTo(writer + 1);
    }

    /**
     * A writer older than the readers queued, asking again with its old timestamp (it holds other locks: ScytheTxn's
     * askAgain), is refused for timestamp order while younger readers keep the queue non-empty: the paper's rule
     * (Fig. 14), not a starvation the run could fix; it gets in with a fresh (younger) timestamp. The refusals do not
     * close the run: readers keep joining it, served at once.
     */
    @Test
    void shouldRefuseAnOlderWriterForTimestampOrderButNotCloseTheRunForIt() {
        assertThat(lockShared(2_000).turn).isZero();
        for (int i = 0; i < 5; i++) {
            assertThat(write(1_000).status).isEqualTo(TakeoutLock.REFUSED_ORDER);
            assertThat(lockShared(2_001 + i).turn).as("a refused writer makes no run of one (before: %d)", i + 1)
                .isZero();
            assertThat(out.queued).as("nothing ahead").isZero();
        }
        assertThat(write(3_000).status).as("a fresh timestamp").isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.ticket).isEqualTo(6);
    }

    /**
     * Issue 22's second review, finding 1: a COLD writer refused for the cold watermark behind 11 served readers
     * closed their run, and the next readers were refused for the hot watermark (11 tickets ahead) though no
     * exclusive ticket was queued (failed before: refused-hot-watermark).
     */
    @Test
    void shouldNotCloseTheRunOnAColdRefusal() {
        final long hot = Watermarks.DEFAULT.hot();
        for (int i = 0; i <= hot; i++) {
            assertThat(lockShared(10 + i).turn).isZero();
        }
        assertThat(writeCold(100).status).isEqualTo(TakeoutLock.REFUSED_COLD);
        for (int i = 0; i < 2; i++) {
            assertThat(lockShared(200 + i).status).isEqualTo(TakeoutLock.GRANTED);
            assertThat(out.turn).as("still joins the served run").isZero();
        }
    }

    /**
     * A reader behind a closed run counts it as one turn (the readers of it hold together), as a writer does: 11
     * served readers, the run closed (a writer held back), the next reader is granted a run of its own behind it
     * (failed before: refused-hot-watermark, 11 tickets ahead).
     */
    @Test
    void shouldCountAClosedRunDirectlyAheadAsOneTurnForAReader() {
        final long hot = Watermarks.DEFAULT.hot();
        for (int i = 0; i <= hot; i++) {
            assertThat(lockShared(10 + i).turn).isZero();
        }
        TakeoutLock.closeRun(objects, 0, 7, runs);
        assertThat(TakeoutLock.sharedAhead(objects, 0, 7, runs)).as("one turn, for the heuristic wait too")
            .isEqualTo(1);
        assertThat(lockShared(100).status).isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.turn).as("a run of its own behind the closed one").isEqualTo(hot + 1);
        assertThat(out.queued).as("heat still counts the tickets ahead").isEqualTo(hot + 1);
        assertThat(lockShared(101).turn).as("which the next reader joins").isEqualTo(hot + 1);
        assertThat(write(102).status).as("the closed run and the run: 2 turns").isEqualTo(TakeoutLock.GRANTED);
    }

    @Test
    void shouldCountTheRunAsOneTurnAndTheTicketsAheadOfItForAWritersHotWatermark() {
        for (int i = 0; i < 9; i++) {
            assertThat(write(i).status).isEqualTo(TakeoutLock.GRANTED);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(lockShared(20 + i).turn).isEqualTo(9);
        }
        assertThat(write(30).status).as("9 tickets and a run: 10 turns").isEqualTo(TakeoutLock.GRANTED);
        assertThat(out.queued).as("heat still counts tickets").isEqualTo(14);
        assertThat(write(31).status).as("the run no longer at the tail: 15 tickets, one each")
            .isEqualTo(TakeoutLock.REFUSED_HOT);
        assertThat(out.queued).isEqualTo(15);
    }

    /**
     * Only the run at the tail counts as one turn: once a writer took a ticket behind 15 served readers, the next
     * writer counts their tickets one each (16 > 10: refused), not "the run and one writer" (2 turns). The rule
     * implemented, and the README says so (issue 22's second review, finding 2).
     */
    @Test
    void shouldCountTheTicketsOfARunNoLongerAtTheTail() {
        for (int i = 0; i < 15; i++) {
            assertThat(lockShared(10 + i).turn).isZero();
        }
        assertThat(write(100).status).as("the run at the tail: one turn").isEqualTo(TakeoutLock.GRANTED);
        assertThat(write(101).status).isEqualTo(TakeoutLock.REFUSED_HOT);
        assertThat(out.queued).isEqualTo(16);
    }

    @Test
    void shouldCloseTheRunToReadersOnlyOnceAWriterIsHeldBack() {
        lockShared(50);
        assertThat(write(45).status).isEqualTo(TakeoutLock.REFUSED_ORDER);
        assertThat(lockShared(60).turn).as("a refusal does not close the run").isZero();
        TakeoutLock.closeRun(objects, 0, 7, runs); // a writer held back (TakeoutLockService)
        assertThat(lockShared(62).turn).as("a run of its own behind the closed one").isEqualTo(2);
        assertThat(lockShared(63).turn).as("which readers join").isEqualTo(2);
    }
}
