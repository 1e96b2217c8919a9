package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lease rules of {@link FabricLease}, driven by hand-made clocks (no processes, no fabric). */
class FabricLeaseTest {
    private static final long MS = 1_000_000L;
    private static final FabricLease.Options OPTIONS = new FabricLease.Options(100, 700, 150);

    @Test
    void aWordThatStopsChangingExpiresAfterLeaseAndGraceOnce() {
        final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
        w.observe(3, FabricLease.word(7, 1), 0);
        w.observe(3, FabricLease.word(7, 1), 500 * MS); // unchanged: not a renewal
        assertEquals(List.of(), w.expire(850 * MS), "expires only after lease + grace (850 ms)");
        final List<FabricLease.Expired> expired = w.expire(851 * MS);
        assertEquals(List.of(new FabricLease.Expired(3, 7, 851)), expired);
        assertEquals(List.of(), w.expire(2_000 * MS), "reported once");
        assertTrue(w.expired(3));
    }

    @Test
    void aRebaseStartsTheSilenceAfreshButLeavesAnExpiredIncarnationExpired() {
        final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
        w.observe(3, FabricLease.word(7, 1), 0);
        w.observe(4, FabricLease.word(9, 1), 0);
        assertEquals(List.of(new FabricLease.Expired(4, 9, 900)), w.expire(900 * MS).subList(1, 2));
        w.observe(3, FabricLease.word(7, 2), 1_000 * MS); // slot 3 expired already: refused
        w.observe(5, FabricLease.word(2, 1), 1_000 * MS);
        // A watcher that could not judge (paused, or in a minority) while slot 5's CN renewed elsewhere:
        w.rebase(5_000 * MS);
        assertEquals(List.of(), w.expire(5_850 * MS), "silence counted from the rebase, not from 1000 ms");
        assertEquals(List.of(new FabricLease.Expired(5, 2, 851)), w.expire(5_851 * MS));
        assertTrue(w.expired(3), "an expired incarnation stays expired through a rebase");
    }

    /** A scan's clocks: the one read before it, then the one read after it. */
    private static java.util.function.LongSupplier clocks(final long beforeMs, final long afterMs) {
        final long[] times = {beforeMs * MS, afterMs * MS};
        final int[] next = {0};
        return () -> times[next[0]++];
    }

    /**
     * Issue 23 §3: a watcher descheduled in the middle of its look at the words. A word it read changed landed no
     * earlier than the look began, maybe at its end: stamped with the clock read after the look, the memory node's
     * expiry stays a grace after the CN's own deadline (stamped with the clock read before it, 300 ms of the grace
     * were gone: it fenced at 1700 ms a CN that may serve until 1750).
     */
    @Test
    void aScanStampsAChangedWordAfterItsLookAndJudgesBeforeIt() {
        final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
        final long[] word = {FabricLease.word(7, 1)};
        assertEquals(List.of(), w.scan(s -> s == 3 ? word[0] : 0, clocks(0, 0), () -> true));
        word[0] = FabricLease.word(7, 2); // lands at 1050 ms, sent then: the CN may serve until 1750 ms
        assertEquals(List.of(), w.scan(s -> s == 3 ? word[0] : 0, clocks(800, 1_100), () -> true));
        assertEquals(List.of(), w.scan(s -> s == 3 ? word[0] : 0, clocks(1_700, 1_700), () -> true),
            "silent only since the look that saw it ended (1100 ms), not since it began (800 ms)");
        assertEquals(List.of(), w.scan(s -> s == 3 ? word[0] : 0, clocks(1_950, 2_400), () -> true),
            "judged by the clock before the look (1950 ms): 850 ms, not yet more");
        assertEquals(List.of(new FabricLease.Expired(3, 7, 851)),
            w.scan(s -> s == 3 ? word[0] : 0, clocks(1_951, 1_960), () -> true));
    }

    /** A scan that cannot judge (no majority, or a stalled watcher) starts silences afresh, and so does the next. */
    @Test
    void aScanAfterOneThatCouldNotJudgeStartsTheSilenceAfresh() {
        final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
        assertEquals(List.of(), w.scan(s -> s == 3 ? FabricLease.word(7, 1) : 0, clocks(0, 0), () -> true));
        assertEquals(List.of(), w.scan(s -> s == 3 ? FabricLease.word(7, 1) : 0, clocks(2_000, 2_000), () -> false));
        assertEquals(List.of(), w.scan(s -> s == 3 ? FabricLease.word(7, 1) : 0, clocks(3_000, 3_000), () -> true),
            "the first scan that can judge again only starts the silence afresh");
        assertEquals(List.of(), w.scan(s -> s == 3 ? FabricLease.word(7, 1) : 0, clocks(3_850, 3_850), () -> true));
        assertEquals(List.of(new FabricLease.Expired(3, 7, 851)),
            w.scan(s -> s == 3 ? FabricLease.word(7, 1) : 0, clocks(3_851, 3_851), () -> true));
    }

    @Test
    void renewalsEveryPeriodKeepTheLeaseAndEmptySlotsAreNotWatched() {
        final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
        for (long t = 0, seq = 1; t <= 10_000; t += 100, seq++) {
            w.observe(1, FabricLease.word(2, seq), t * MS);
            assertEquals(List.of(), w.expire(t * MS + 50 * MS), "renewed at " + t + " ms");
        }
        assertFalse(w.expired(1));
        assertFalse(w.expired(2), "a slot never written is never expired");
    }

    @Test
    void aRenewalAfterExpiryIsRefusedAndOnlyANewerEpochIsWatchedAfresh() {
        final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
        w.observe(5, FabricLease.word(1, 10), 0);
        assertEquals(1, w.expire(900 * MS).size());
        w.observe(5, FabricLease.word(1, 11), 1_000 * MS); // the paused renewer woke up
        assertTrue(w.expired(5), "a renewal after expiry does not revive the incarnation");
        assertEquals(List.of(), w.expire(5_000 * MS));
        w.observe(5, FabricLease.word(2, 1), 5_000 * MS); // restarted under a new epoch
        assertFalse(w.expired(5));
        w.observe(5, FabricLease.word(1, 12), 5_500 * MS); // the old one's late write: ignored
        assertEquals(List.of(), w.expire(5_800 * MS), "the new epoch's lease runs from when it was first seen");
        assertEquals(List.of(new FabricLease.Expired(5, 2, 851)), w.expire(5_851 * MS));
    }

    @Test
    void aLateAcknowledgementExtendsNothingAndALostLeaseStaysLost() {
        final FabricLease.Holder h = new FabricLease.Holder(OPTIONS);
        h.renewOn(Set.of("mn0"), 0);
        assertTrue(h.acknowledged("mn0", 100 * MS, 101 * MS));
        assertNull(h.lapsed(799 * MS), "held until 100 + 700 ms");
        // Clock read at 200 ms, then stalled: acknowledged at 900 ms, past 200 + 700.
        assertFalse(h.acknowledged("mn0", 200 * MS, 900 * MS));
        assertNotNull(h.lapsed(900 * MS));
        assertFalse(h.acknowledged("mn0", 950 * MS, 951 * MS), "renewal after the lease was lost refused");
        assertNotNull(h.lapsed(951 * MS), "lost for good: it rejoins under a new epoch");
    }

    @Test
    void aMemoryNodeDroppedFromTheConfigurationNoLongerHoldsTheLease() {
        final FabricLease.Holder h = new FabricLease.Holder(OPTIONS);
        h.renewOn(Set.of("mn0", "mn1"), 0);
        h.acknowledged("mn0", 600 * MS, 601 * MS);
        h.renewOn(Set.of("mn0"), 650 * MS); // mn1 failed over: its lease words no longer matter
        assertNull(h.lapsed(1_000 * MS));
        assertTrue(h.lapsed(1_301 * MS).contains("mn0"));
    }

    /**
     * The safety rule: whatever the delays (a renewer stalled between reading its clock and posting, a WRITE landing
     * late, a watcher polling late, an acknowledgement late), the compute node's lease has lapsed, at least the grace
     * before, whenever a memory node expires it. Random schedules of one CN renewing on one MN, then pausing.
     */
    @Test
    void theComputeNodeAlwaysStopsAGraceBeforeTheMemoryNodeFencesIt() {
        final SplittableRandom random = new SplittableRandom(23);
        for (int run = 0; run < 300; run++) {
            final FabricLease.Holder h = new FabricLease.Holder(OPTIONS);
            final FabricLease.Watcher w = new FabricLease.Watcher(OPTIONS);
            h.renewOn(Set.of("mn"), 0);
            final long pauseAt = random.nextLong(10, 3_000) * MS;
            long lapsedAt = -1;
            long expiredAt = -1;
            long sent = -100 * MS; // the first renewal at 0 (a word never written is not watched)
            long seq = 0;
            long nextPoll = 0;
            long lastLanded = 0;
            for (long t = 0; t < 6_000 * MS && expiredAt < 0; t += MS) {
                if (t >= nextPoll) {
                    // The watcher polls every 50 ms, sometimes much later (its own thread starved).
                    nextPoll = t + (random.nextInt(10) == 0 ? random.nextLong(50, 900) : 50) * MS;
                    final List<FabricLease.Expired> e = w.expire(t);
                    if (!e.isEmpty()) {
                        expiredAt = t;
                    }
                }
                if (lapsedAt < 0 && h.lapsed(t) != null) {
                    lapsedAt = t;
                }
                if (t < pauseAt && t >= sent + 100 * MS) {
                    sent = t;
                    // A queue pair executes its writes in order: none lands before the one posted earlier.
                    final long landed = lastLanded = Math.max(lastLanded,
                        t + random.nextLong(0, random.nextInt(20) == 0 ? 600 : 5) * MS);
                    final long acked = landed + random.nextLong(0, random.nextInt(20) == 0 ? 600 : 5) * MS;
                    final long word = FabricLease.word(1, ++seq);
                    // Landing is seen by the watcher's next poll at or after it; simplified: seen when it lands if
                    // the watcher polls by then, else at its next poll (never before it landed).
                    w.observe(1, word, Math.max(landed, t));
                    if (acked < pauseAt) {
                        h.acknowledged("mn", sent, acked);
                    }
                }
            }
            assertTrue(expiredAt > 0, "run " + run + ": a paused renewer is expired");
            assertTrue(lapsedAt >= 0 && lapsedAt + 150 * MS <= expiredAt, "run " + run + ": CN lapsed at "
                + lapsedAt / MS + " ms, MN expired it at " + expiredAt / MS + " ms (pause at " + pauseAt / MS + ")");
        }
    }

    @Test
    void optionsRefuseALeaseShorterThanTwoRenewalsOrNoGrace() {
        assertThrows(IllegalArgumentException.class, () -> new FabricLease.Options(100, 150, 100));
        assertThrows(IllegalArgumentException.class, () -> new FabricLease.Options(100, 700, 0));
        assertThrows(IllegalArgumentException.class, () -> new FabricLease.Options(-1, 700, 100));
        assertFalse(new FabricLease.Options(0, 0, 0).on());
        assertEquals(850, FabricLease.Options.DEFAULT.expiryMs());
        assertThrows(IllegalArgumentException.class, () -> FabricLease.offset(0));
        assertThrows(IllegalArgumentException.class, () -> FabricLease.offset(256));
    }
}
