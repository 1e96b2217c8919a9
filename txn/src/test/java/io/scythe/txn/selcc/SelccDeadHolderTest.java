package io.scythe.txn.selcc;

import io.vertx.core.Future;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster nodes (package doc "Cluster nodes"), which never see what the memory nodes' dead-node steps cleared, only the
 * host's word that a dead incarnation was recovered ({@link SelccModule#recoveries}). A requester whose PeerRd/PeerWr
 * to an X holder failed lets the latch word decide, and waits while it still names the holder
 * ({@link LineCache#untilDecided}): a selcc-occ chaos run (seed 3) READ the word once, before the dead holder's
 * handover FAA landed, and the FAA then named the requester holder while its memo was I. A holder whose handover to a
 * requester recovered since its message came takes it back ({@link LineCache#takeBack}).
 */
class SelccDeadHolderTest {
    private static final int ME = 4;
    private static final int HOLDER = 9;
    private static final int OTHER = 2;
    private static final Throwable LEFT = new IllegalStateException("peer left");

    /** Words a READ returns in turn (the last one again once they run out), and the sleeps between. */
    private static final class Script {
        final Deque<Long> words = new ArrayDeque<>();
        final AtomicLong recoveries = new AtomicLong();
        int reads;
        int sleeps;
        /** Counted as a recovery told while the READ of this index was in flight (-1: none). */
        int recoveryDuringRead = -1;
        /** A recovery told during the sleep of this index (-1: none). */
        int recoveryDuringSleep = -1;

        Script(final long... words) {
            for (final long w : words) {
                this.words.add(w);
            }
        }

        Future<Integer> decide(final int kind, final long polls) {
            return LineCache.untilDecided(() -> {
                final long w = words.size() > 1 ? words.poll() : words.peek();
                if (reads++ == recoveryDuringRead) {
                    recoveries.incrementAndGet();
                }
                return Future.succeededFuture(w);
            }, () -> recoveries.get() > 0, ME, HOLDER, kind, ns -> {
                assertThat(ns).isEqualTo(LineCache.DEAD_HOLDER_POLL_NS);
                if (sleeps++ == recoveryDuringSleep) {
                    recoveries.incrementAndGet();
                }
                return Future.succeededFuture();
            }, polls, LEFT);
        }
    }

    @Test
    void shouldWaitForAHandoverFaaThatLandsAfterTheFirstRead() {
        // The holder died after posting its handover FAA: the first READs still show it holder, then the FAA lands.
        final Script s = new Script(LatchWord.exclusive(HOLDER), LatchWord.exclusive(HOLDER), LatchWord.exclusive(ME));

        final Future<Integer> status = s.decide(Invalidation.PEER_WR, 100);

        assertThat(status.result()).isEqualTo(Invalidation.GRANTED);
        assertThat(s.reads).isEqualTo(3);
        assertThat(s.sleeps).isEqualTo(2);
    }

    @Test
    void shouldTakeACaseTwoDowngradeThatLanded() {
        final Script s = new Script(LatchWord.exclusive(HOLDER), LatchWord.bit(HOLDER) | LatchWord.bit(ME));

        assertThat(s.decide(Invalidation.PEER_RD, 100).result()).isEqualTo(Invalidation.GRANTED);
        assertThat(s.reads).isEqualTo(2);
    }

    @Test
    void shouldReadAgainAtOnceWhenTheHolderLetTheLineGo() {
        final Script free = new Script(LatchWord.FREE);
        assertThat(free.decide(Invalidation.PEER_WR, 100).result()).isEqualTo(Invalidation.NOT_HELD);
        assertThat(free.sleeps).isZero();
        final Script other = new Script(LatchWord.exclusive(OTHER));
        assertThat(other.decide(Invalidation.PEER_RD, 100).result()).isEqualTo(Invalidation.NOT_HELD);
        assertThat(other.sleeps).isZero();
    }

    @Test
    void shouldLetTheWordDecideOnceTheHolderWasRecovered() {
        // After the step, a word naming the holder's number is its new incarnation's: asked again by the next round.
        final Script s = new Script(LatchWord.exclusive(HOLDER));
        s.recoveryDuringSleep = 1;

        assertThat(s.decide(Invalidation.PEER_WR, 100).result()).isEqualTo(Invalidation.NOT_HELD);
        assertThat(s.reads).isEqualTo(3); // the READ after the recovery was told decides
    }

    @Test
    void shouldNotTrustARecoveryToldWhileItsReadWasInFlight() {
        // The READ saw the holder before the FAA landed, the step and its news came meanwhile: READ again.
        final Script s = new Script(LatchWord.exclusive(HOLDER), LatchWord.exclusive(ME));
        s.recoveryDuringRead = 0;

        assertThat(s.decide(Invalidation.PEER_WR, 100).result()).isEqualTo(Invalidation.GRANTED);
        assertThat(s.reads).isEqualTo(2);
    }

    @Test
    void shouldGiveUpWithTheCallsErrorPastItsWait() {
        final Script s = new Script(LatchWord.exclusive(HOLDER));

        final Future<Integer> status = s.decide(Invalidation.PEER_WR, 3);

        assertThat(status.failed()).isTrue();
        assertThat(status.cause()).isSameAs(LEFT);
        assertThat(s.reads).isEqualTo(3);
    }

    @Test
    void shouldTakeBackAHandoverToARecoveredRequester() {
        final AtomicLong word = new AtomicLong(LatchWord.exclusive(HOLDER) + LatchWord.bit(OTHER)); // a reader's FAA
        final List<Long> expected = new ArrayList<>();

        LineCache.takeBack(HOLDER, LatchWord.exclusive(HOLDER), (e, n) -> {
            expected.add(e);
            return Future.succeededFuture(word.compareAndExchange(e, n));
        });

        assertThat(word.get()).isEqualTo(LatchWord.bit(OTHER));
        assertThat(expected).containsExactly(LatchWord.exclusive(HOLDER), LatchWord.exclusive(HOLDER)
            + LatchWord.bit(OTHER));
    }

    @Test
    void shouldLeaveAWordThatNoLongerNamesTheRequester() {
        final AtomicLong word = new AtomicLong(LatchWord.exclusive(OTHER));

        LineCache.takeBack(HOLDER, LatchWord.bit(HOLDER), (e, n) -> Future.succeededFuture(word.compareAndExchange(e,
            n)));

        assertThat(word.get()).isEqualTo(LatchWord.exclusive(OTHER));
    }

    @Test
    void shouldCountOtherNodesRecoveriesOnClusterNodesOnly() {
        final List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> told = new ArrayList<>();
        final Object cluster = new Object();
        final Object embedded = new Object();
        SelccModule.countRecoveries(io.scythe.txn.ComputeNodePeers.context(1, List.of("cn0", "cn1"), null,
            java.util.Map.of(), told::add, false), cluster);
        SelccModule.countRecoveries(io.scythe.txn.ComputeNodePeers.context(0, List.of("cn0", "cn1"), null,
            java.util.Map.of()), embedded);

        assertThat(SelccModule.separateProcesses(cluster)).isTrue();
        assertThat(SelccModule.separateProcesses(embedded)).isFalse();
        assertThat(told).hasSize(1);
        assertThat(told.get(0).recovered("cn1", 0, -1L)).as("its own recovery").isNull();
        assertThat(told.get(0).recovered("cn0", 1L << 48, -1L)).isNotNull();
        assertThat(told.get(0).recovered("cn0", 2L << 48, -1L)).isNotNull();
        assertThat(SelccModule.recoveries(cluster)).containsExactly(java.util.Map.entry("cn0", 2L));
    }

    /**
     * Issue 21 (stop 42: {@code recoveredSince} decided per node): the host's news of cn0.e1's recovery, told after a
     * PeerWr of the restarted cn0.e2 came, says nothing of cn0.e2, so the handover served to it is not taken back;
     * cn0.e1's messages are from a recovered sender. Before, any recovery of cn0 told since the message came counted
     * ({@code senderRecovered(told, recoveriesNow, heard)} was true for cn0.e2 with the count moved on).
     */
    @Test
    void shouldDecideARecoveryToldLatePerIncarnationNotPerNode() {
        final Object cluster = new Object();
        final List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> recovered = new ArrayList<>();
        final ReleasesHeard heard = clusterNode(cluster, recovered);
        final LineCache.Told fromNew = new LineCache.Told("cn0.e2"); // came before the old one's news
        final LineCache.Told fromDead = new LineCache.Told("cn0.e1");

        assertThat(recovered.get(0).recovered("cn0.e1", "cn0", E1, -1L)).isNotNull(); // as ScytheNode tells it

        assertThat(SelccModule.recoveries(cluster)).containsEntry("cn0", 1L);
        assertThat(LineCache.senderRecovered(fromNew, heard)).as("the live restarted incarnation").isFalse();
        assertThat(LineCache.senderRecovered(fromDead, heard)).isTrue();
        assertThat(heard.buriedOn("mn0", E1 | 5)).as("a finished recovery buried it everywhere").isTrue();
        assertThat(heard.buriedOn("mn0", E2 | 5)).isFalse();
    }

    /**
     * Issue 21 review, finding 3: a PeerWr that reached the live restarted cn0.e2 timed out; the host's late news of
     * cn0.e1's recovery comes while the requester waits for the word. It says nothing of cn0.e2, whose handover FAA
     * can still land: the requester waits on (GRANTED when it lands). Decided by a count of cn0's recoveries, the news
     * moved the count and the wait ended NOT_HELD before the FAA landed (this test failed so, with the supplier
     * counting {@code SelccModule#recoveries}). cn0.e2's own recovery ends it at once. The same through the real
     * {@code LineCache#invalidate} and a directory naming the restarted incarnation: {@link SelccLeftHolderTest}.
     */
    @Test
    void shouldWaitForTheIncarnationTheFailedCallReachedNotAnotherOfItsNode() {
        final Object cluster = new Object();
        final List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> recovered = new ArrayList<>();
        final ReleasesHeard heard = clusterNode(cluster, recovered);
        final Deque<Long> words = new ArrayDeque<>(List.of(LatchWord.exclusive(HOLDER), LatchWord.exclusive(HOLDER),
            LatchWord.exclusive(ME)));
        final int[] sleeps = new int[1];

        final Future<Integer> status = LineCache.untilDecided(() -> Future.succeededFuture(words.size() > 1
                ? words.poll() : words.peek()), LineCache.calledRecovered(heard, "cn0.e2"), ME, HOLDER,
            Invalidation.PEER_WR, ns -> {
                if (sleeps[0]++ == 0) {
                    assertThat(recovered.get(0).recovered("cn0.e1", "cn0", E1, -1L)).isNotNull();
                }
                return Future.succeededFuture();
            }, 100, LEFT);

        assertThat(status.result()).as("cn0.e2's FAA landed").isEqualTo(Invalidation.GRANTED);
        assertThat(SelccModule.recoveries(cluster)).containsEntry("cn0", 1L);
        heard.recordedRecovered("cn0.e2", E2);
        final Future<Integer> after = LineCache.untilDecided(() -> Future.succeededFuture(LatchWord.exclusive(HOLDER)),
            LineCache.calledRecovered(heard, "cn0.e2"), ME, HOLDER, Invalidation.PEER_WR,
            ns -> Future.succeededFuture(), 100, LEFT);
        assertThat(after.result()).as("the incarnation called was recovered").isEqualTo(Invalidation.NOT_HELD);
    }

    /**
     * Cluster node cn1 (known by {@code cluster}) hearing releases and the host's recoveries as {@code ScytheNode}
     * tells them ({@code recovered}: its listener); what it heard.
     */
    private static ReleasesHeard clusterNode(final Object cluster,
                                             final List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> recovered) {
        final io.scythe.txn.spi.ComputeNodeContext node = io.scythe.txn.ComputeNodePeers.context(1,
            List.of("cn0", "cn1"), null, java.util.Map.of(), recovered::add, l -> { }, false);
        SelccModule.hearReleases(node, cluster);
        SelccModule.countRecoveries(node, cluster);
        return SelccModule.releases(cluster);
    }

    /** Transaction-id prefixes of two incarnations of cn0 (epoch 1 and 2, slot 0). */
    private static final long E1 = 1L << 48;
    private static final long E2 = 2L << 48;

    /** A cluster node's view of the memory nodes' releases, told through the host as {@code ScytheNode} does. */
    private static ReleasesHeard heardOn(final Object cluster,
                                         final List<io.scythe.txn.spi.ComputeNodeContext.PeerReleased> told) {
        SelccModule.hearReleases(io.scythe.txn.ComputeNodePeers.context(1, List.of("cn0", "cn1"), null,
            java.util.Map.of(), l -> { }, told::add, false), cluster);
        assertThat(told).hasSize(1);
        return SelccModule.releases(cluster);
    }

    /**
     * Issue 21 (cluster nodes learn which memory nodes' steps ran): each memory node's release of a dead incarnation,
     * told per memory node, says that incarnation is dead (its messages dropped, handovers to it taken back) and,
     * for the lines of that memory node only, that its inserts were buried there; nothing of it is said of another
     * incarnation of the same node (its new one reuses the participant numbers).
     */
    @Test
    void shouldKnowPerMemoryNodeWhichIncarnationsWereReleased() {
        final List<io.scythe.txn.spi.ComputeNodeContext.PeerReleased> told = new ArrayList<>();
        final ReleasesHeard heard = heardOn(new Object(), told);
        assertThat(heard.released("cn0.e1")).isFalse();

        assertThat(told.get(0).released("cn0.e1", new long[] {E1 | 0x1234L}, "mn0")).as("first news").isNotNull();
        assertThat(told.get(0).released("cn0.e1", new long[] {E1}, "mn0")).as("a recovery run again").isNull();

        assertThat(heard.released("cn0.e1")).isTrue();
        assertThat(heard.released("cn0.e2")).as("the restarted incarnation").isFalse();
        assertThat(heard.released(null)).isFalse();
        assertThat(heard.buriedOn("mn0", E1 | 77)).as("an insert of the dead incarnation, buried on mn0").isTrue();
        assertThat(heard.buriedOn("mn1", E1 | 77)).as("mn1's step has not run (or not been heard of)").isFalse();
        assertThat(heard.buriedOn("mn0", E2 | 77)).as("an insert of the new incarnation").isFalse();

        told.get(0).released("cn0.e1", new long[] {E1}, "mn1");
        assertThat(heard.buriedOn("mn1", E1 | 77)).isTrue();
    }

    @Test
    void shouldHearReleasesOnClusterNodesOnlyAndBoundThem() {
        final Object embedded = new Object();
        SelccModule.hearReleases(io.scythe.txn.ComputeNodePeers.context(0, List.of("cn0", "cn1"), null,
            java.util.Map.of()), embedded);
        assertThat(SelccModule.releases(embedded)).isNull();

        final List<io.scythe.txn.spi.ComputeNodeContext.PeerReleased> told = new ArrayList<>();
        final ReleasesHeard heard = heardOn(new Object(), told);
        for (int e = 1; e <= ReleasesHeard.KEPT + 10; e++) {
            told.get(0).released("cn0.e" + e, new long[] {(long) e << 48}, "mn0");
        }
        assertThat(heard.size()).isEqualTo(ReleasesHeard.KEPT);
        assertThat(heard.released("cn0.e1")).as("the oldest forgotten").isFalse();
        assertThat(heard.released("cn0.e" + (ReleasesHeard.KEPT + 10))).isTrue();
    }

    /**
     * (a) of the issue: a holder that served a PeerWr from cn0.e1 (participant {@code HOLDER} here) and sees, once its
     * handover FAA landed, that a memory node released cn0.e1 takes the handover back, although the whole recovery's
     * news (the recovery count) has not come yet; before, it waited for that news and missed a FAA landing in between.
     * A message of the restarted incarnation (cn0.e2, the same participant number) is not taken back.
     */
    @Test
    void shouldTakeBackAHandoverOnceTheRequestersReleaseWasHeard() {
        final List<io.scythe.txn.spi.ComputeNodeContext.PeerReleased> told = new ArrayList<>();
        final ReleasesHeard heard = heardOn(new Object(), told);
        final LineCache.Told fromDead = new LineCache.Told("cn0.e1");
        final LineCache.Told fromNew = new LineCache.Told("cn0.e2");
        assertThat(LineCache.senderRecovered(fromDead, heard)).isFalse();

        told.get(0).released("cn0.e1", new long[] {E1}, "mn1"); // another memory node than the line's: fenced anyway

        assertThat(LineCache.senderRecovered(fromDead, heard)).as("no recovery told yet").isTrue();
        assertThat(LineCache.senderRecovered(fromNew, heard)).isFalse();
        assertThat(LineCache.senderRecovered(LineCache.Told.NONE, null)).as("other hosts").isFalse();

        final AtomicLong word = new AtomicLong(LatchWord.exclusive(HOLDER)); // the handover FAA landed after the step
        if (LineCache.senderRecovered(fromDead, heard)) {
            LineCache.takeBack(HOLDER, LatchWord.exclusive(HOLDER), (e, n) -> Future.succeededFuture(
                word.compareAndExchange(e, n)));
        }
        assertThat(word.get()).isEqualTo(LatchWord.FREE);
    }

    /** A host's durable record, answering by hand (what the tests say), counting the questions. */
    private static final class Record implements io.scythe.txn.spi.ComputeNodeContext.RecoveryRecord {
        final java.util.Map<String, Long> recovered = new java.util.HashMap<>();
        final List<io.vertx.core.Promise<Boolean>> byIncarnation = new ArrayList<>();
        final List<io.vertx.core.Promise<String>> byPrefix = new ArrayList<>();
        final List<Object> asked = new ArrayList<>();

        @Override
        public Future<Boolean> recovered(final String incarnation) {
            asked.add(incarnation);
            final io.vertx.core.Promise<Boolean> p = io.vertx.core.Promise.promise();
            byIncarnation.add(p);
            return p.future().onComplete(v -> { }).map(v -> recovered.containsKey(incarnation));
        }

        @Override
        public Future<String> recoveredWithPrefix(final long idPrefix) {
            asked.add(idPrefix);
            final io.vertx.core.Promise<String> p = io.vertx.core.Promise.promise();
            byPrefix.add(p);
            return p.future().map(v -> recovered.entrySet().stream().filter(e -> e.getValue() == idPrefix)
                .map(java.util.Map.Entry::getKey).findFirst().orElse(null));
        }

        /** Answers every question asked so far (the lookups on the host's workers complete). */
        void answer() {
            byIncarnation.forEach(p -> p.tryComplete(true));
            byPrefix.forEach(p -> p.tryComplete(""));
        }
    }

    /**
     * Issue 21 (the release news is at-most-once and bounded): a cluster node that missed a memory node's release of
     * cn0.e1 (the event-bus message dropped) kept a cached copy showing that incarnation's buried insert for good
     * ({@code buriedOn} never says yes: every read of the line aborts). Now the CAS word's prefix, not heard of, is
     * asked of the host's durable record (at most once a second per prefix); once it says cn0.e1's recovery finished
     * (every memory node released it), the copy is older than the burial on every memory node. An insert of the
     * restarted incarnation is not taken for buried.
     */
    @Test
    void shouldAskTheHostsRecordWhenTheReleaseNewsWasMissed() {
        final Record record = new Record();
        final AtomicLong now = new AtomicLong();
        final ReleasesHeard heard = new ReleasesHeard(record, now::get);
        final ReleasesHeard without = new ReleasesHeard();

        assertThat(without.buriedOrAsk("mn0", E1 | 77)).as("no record: the news missed, nothing to fall back on")
            .isFalse();
        assertThat(heard.buriedOrAsk("mn0", E1 | 77)).as("asked; the answer comes later").isFalse();
        assertThat(heard.buriedOrAsk("mn0", E1 | 78)).as("the same prefix, within the interval").isFalse();
        assertThat(record.asked).containsExactly(E1);
        record.recovered.put("cn0.e1", E1);
        record.answer();

        assertThat(heard.buriedOn("mn0", E1 | 77)).isTrue();
        assertThat(heard.buriedOn("mn1", E1 | 77)).as("recovered: released on every memory node").isTrue();
        assertThat(heard.released("cn0.e1")).isTrue();
        assertThat(heard.buriedOrAsk("mn0", E2 | 77)).as("the restarted incarnation's insert").isFalse();
        record.answer();
        assertThat(heard.buriedOn("mn0", E2 | 77)).isFalse();
        assertThat(heard.buriedOrAsk("mn0", E2 | 77)).isFalse();
        assertThat(record.asked).as("not again within the interval").containsExactly(E1, E2);
        now.addAndGet(ReleasesHeard.ASK_INTERVAL_NS);
        assertThat(heard.buriedOrAsk("mn0", E2 | 77)).isFalse();
        assertThat(record.asked).containsExactly(E1, E2, E2);
        // Rate-limited by answer too: while that question is unanswered, no second one goes, however long it takes.
        now.addAndGet(5 * ReleasesHeard.ASK_INTERVAL_NS);
        assertThat(heard.buriedOrAsk("mn0", E2 | 77)).isFalse();
        assertThat(heard.releasedOrAsk("cn0.e2")).isFalse();
        assertThat(record.asked).as("one in flight per key").containsExactly(E1, E2, E2, "cn0.e2");
        assertThat(heard.inFlight()).isEqualTo(2);
        record.answer();
        assertThat(heard.inFlight()).isZero();
        now.addAndGet(ReleasesHeard.ASK_INTERVAL_NS);
        assertThat(heard.buriedOrAsk("mn0", E2 | 77)).isFalse();
        assertThat(record.asked).containsExactly(E1, E2, E2, "cn0.e2", E2);
    }

    /**
     * Issue 21: a handover to cn0.e1 landed while nothing said it was dead (the check right after the FAA), and the
     * news of its release was missed or forgotten (the latest {@link ReleasesHeard#KEPT} are kept). Watched, it is
     * taken back once the host's record says the recovery finished; before, it stayed naming the dead participant.
     * A handover to a live incarnation waits and is given up past the window.
     */
    @Test
    void shouldTakeBackAWatchedHandoverOnceTheRecordSaysItsRequesterWasRecovered() {
        final Record record = new Record();
        final ReleasesHeard heard = new ReleasesHeard(record, new AtomicLong()::get);
        heard.heard("cn0.e1", new long[] {E1}, "mn0");
        for (int e = 3; e < 3 + ReleasesHeard.KEPT; e++) {
            heard.heard("cn9.e" + e, new long[] {(long) e << 48}, "mn0"); // later deaths: cn0.e1 forgotten
        }
        assertThat(heard.released("cn0.e1")).isFalse();
        final LineCache.Told fromDead = new LineCache.Told("cn0.e1");
        final LineCache.Told fromLive = new LineCache.Told("cn0.e2");
        final long window = 10;

        assertThat(LineCache.lateDecision(fromDead, heard, 1, window)).isEqualTo(LineCache.LateStep.WAIT);
        assertThat(LineCache.lateDecision(fromLive, heard, 1, window)).isEqualTo(LineCache.LateStep.WAIT);
        record.recovered.put("cn0.e1", E1);
        record.answer();
        assertThat(LineCache.lateDecision(fromDead, heard, 2, window)).isEqualTo(LineCache.LateStep.TAKE_BACK);
        assertThat(LineCache.lateDecision(fromLive, heard, 2, window)).isEqualTo(LineCache.LateStep.WAIT);
        assertThat(LineCache.lateDecision(fromLive, heard, window, window)).isEqualTo(LineCache.LateStep.GIVE_UP);
        assertThat(LineCache.lateDecision(fromLive, heard, 2, window)).as("the old incarnation's recovery told late: "
            + "the live one's handover stays").isEqualTo(LineCache.LateStep.WAIT);

        // A failed take-back CAS is tried again at each check, past the window too, and stays pending to the barrier
        // meanwhile (before: given up past the window yet left pending for good, nothing retrying it).
        final LineCache.Late failed = new LineCache.Late(null, HOLDER, fromDead, LatchWord.exclusive(HOLDER), 0)
            .againAfterAFailedTakeBack();
        final ReleasesHeard forgot = new ReleasesHeard(); // its news forgotten: the window alone would give it up
        assertThat(LineCache.lateDecision(failed, forgot, 10 * window, window)).isEqualTo(LineCache.LateStep.TAKE_BACK);
        assertThat(LineCache.lateDecision(new LineCache.Late(null, HOLDER, fromDead, LatchWord.exclusive(HOLDER), 0),
            forgot, 10 * window, window)).isEqualTo(LineCache.LateStep.GIVE_UP);
        assertThat(LineCache.settled("cn0.e1", java.util.Map.of(), java.util.List.of(failed))).isFalse();

        final AtomicLong word = new AtomicLong(LatchWord.exclusive(HOLDER)); // the handover FAA landed after the step
        LineCache.takeBack(HOLDER, LatchWord.exclusive(HOLDER), (e, n) -> Future.succeededFuture(
            word.compareAndExchange(e, n)));
        assertThat(word.get()).isEqualTo(LatchWord.FREE);
    }

    /**
     * Only a call cut off or timed out, or a holder's in-doubt reply (its handover verbs failed after posting), may
     * still be handed over late; any other error reply fails the call at once instead of polling the word (review,
     * stop 39).
     */
    @Test
    void shouldWaitForTheWordOnlyWhenTheCallWasCutOffOrTimedOut() {
        assertThat(LineCache.mayHandOverLate(new io.scythe.rrpc.RpcException(io.scythe.rrpc.RpcException.DISCONNECTED,
            "compute node cn1 left"))).isTrue();
        assertThat(LineCache.mayHandOverLate(new io.scythe.rrpc.RpcException(io.scythe.rrpc.RpcException.TIMED_OUT,
            "no reply"))).isTrue();
        assertThat(LineCache.mayHandOverLate(new io.scythe.rrpc.RpcException(Invalidation.HANDOVER_IN_DOUBT,
            "the holder's handover FAA failed after it was posted"))).as("the holder's in-doubt reply").isTrue();
        assertThat(LineCache.mayHandOverLate(new io.scythe.rrpc.RpcException(1,
            "selcc invalidation handler failed before posting"))).isFalse();
        assertThat(LineCache.mayHandOverLate(new io.scythe.rrpc.RpcException(
            io.scythe.rrpc.RpcException.HANDLER_FAILED, "the holder failed the call"))).isFalse();
        assertThat(LineCache.mayHandOverLate(new io.scythe.rrpc.RpcException(
            io.scythe.rrpc.RpcException.FIRST_APPLICATION_CODE + 2, "the holder's own code"))).isFalse();
        assertThat(LineCache.mayHandOverLate(new IllegalStateException("not an RPC failure"))).isFalse();
    }
}
