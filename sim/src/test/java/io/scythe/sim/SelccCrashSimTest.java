package io.scythe.sim;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A SELCC compute node crashed at a seeded point and recovered by a survivor (issue 21; package doc "Dead compute
 * nodes" of {@code txn.selcc}), under each SELCC protocol and SEL (its commits log before the write-back): every seed's checks on (no acknowledged
 * write lost, nothing applied twice, money conserved, no latch word left set once the run drained, the history
 * serializable), the dead node's bits cleared by the memory nodes' step in every seed, and a commit the dead node
 * decided finished by recovery in each SmallBank seed (one per protocol: seeds 1 of the three cached protocols were
 * dropped for SEL's and the two insert cases, keeping the class's time). {@code selcc-occ}'s seed 8 created 10000 before its
 * write-through wrote the version last (a crash cut its doorbell between the version and the value).
 */
class SelccCrashSimTest extends SimVertxTest {
    @Test
    void shouldRecoverADeadSelccComputeNode() throws Exception {
        recovers("selcc-2pl", Explorer.Workload.SMALLBANK, 3);
        recovers("selcc-occ", Explorer.Workload.SMALLBANK, 8);
        recovers("selcc-to", Explorer.Workload.SMALLBANK, 2);
        recovers("sel-2pl", Explorer.Workload.SMALLBANK, 12);
    }

    /**
     * A survivor's call to the dead node failed by the peerLeft of another line's watch, before this line's memory
     * node cleared the dead participant (CLEARED is per memory node): it waits for that step and aborts as recovered,
     * instead of failing its transaction with the peerLeft's error (stop 38: selcc-2pl smallbank seed 4, seeds 53 and
     * a dozen of selcc-occ / selcc-to in 100).
     */
    @Test
    void shouldAbortNotFailACallToADeadNodeClearedOnlyElsewhere() throws Exception {
        checked("selcc-2pl", Explorer.Workload.SMALLBANK, 4);
    }

    /**
     * Inserts under the redo log: {@code selcc-occ}'s seed 14 of the phantom workload has recovery decide the dead
     * node's insert of a mark (its history showed a read of a version nobody made while the record's insert did not
     * count as a write over an absent key); {@code sel-2pl}'s seed 23 kills a node holding an insert it created and
     * never committed, which the memory nodes bury in place (their ABANDON let reclamation free the slot under a
     * survivor's latch FAA: a latch word of -2 was left).
     */
    @Test
    void shouldRecoverInsertsOfADeadSelccComputeNode() throws Exception {
        final JsonObject decided = recovers("selcc-occ", Explorer.Workload.PHANTOM, 14);
        assertThat(decided.getInteger("committed_by_recovery")).as("the dead node's insert decided").isPositive();
        final JsonObject buried = recovers("sel-2pl", Explorer.Workload.PHANTOM, 23);
        assertThat(buried.getJsonObject("report").getInteger("selccInsertsBuried")).as("its uncommitted insert buried")
            .isPositive();
    }

    /**
     * A survivor must not hand a line to a dead requester after the recovery: {@code selcc-to}'s churn seed 14 kills a
     * node whose loop (participant 2) holds nothing when the memory nodes' step runs (no bit to clear) but whose PeerWr
     * a survivor served before the recovery; its handover FAA landed after the step and left the word held Exclusive
     * by the dead participant for good (0.64 s, the survivors chasing it through the drain). Now taken back by CAS.
     */
    @Test
    void shouldHandNoLatchToARecoveredRequester() throws Exception {
        assertThat(countedDuring("handover to a recovered participant taken back",
            () -> checked("selcc-to", Explorer.Workload.CHURN, 14)))
            .as("the handover that landed after the dead requester was cleared, taken back").isEqualTo(1);
    }

    /**
     * A survivor's cached copy of a dead node's uncommitted insert must not outlive its burial: {@code selcc-to}'s
     * phantom seed 308 kills a node whose mark (an absent key's insert) a survivor had cached CAS-locked; the memory
     * node buried it in place, but the survivor's loops kept forwarding the old copy between them and aborted every
     * read of the line to the end (abort rate 0.999, 1.46 M events, 3 latch words left held). Now the copy is READ
     * again once the line's memory node ran the dead node's step.
     */
    @Test
    void shouldReadAgainACopyOlderThanABurial() throws Exception {
        final JsonObject[] recovery = new JsonObject[1];
        assertThat(countedDuring("copy older than a dead inserter's burial: READ again",
            () -> recovery[0] = checked("selcc-to", Explorer.Workload.PHANTOM, 308)))
            .as("the stale copy READ again").isPositive();
        assertThat(recovery[0].getJsonObject("report").getInteger("selccInsertsBuried")).as("the dead node's mark "
            + "buried").isPositive();
    }

    /**
     * How often the cache counted {@code cause} while {@code run} ran (counts are cumulative within the JVM, whose
     * forks are reused: the run's own is the difference).
     */
    private static long countedDuring(final String cause, final java.util.concurrent.Callable<?> run)
        throws Exception {
        io.scythe.txn.selcc.LineCache.countCauses(true);
        try {
            final long before = io.scythe.txn.selcc.LineCache.counted(cause);
            run.call();
            return io.scythe.txn.selcc.LineCache.counted(cause) - before;
        } finally {
            io.scythe.txn.selcc.LineCache.countCauses(false);
        }
    }

    /** Checks one seed of {@code protocol} with a crash; returns its recovery's JSON. */
    private JsonObject recovers(final String protocol, final Explorer.Workload workload, final long seed)
        throws Exception {
        final JsonObject recovery = checked(protocol, workload, seed);
        final String what = protocol + " " + workload + " seed " + seed;
        // The dead node's loops held lines (S or X bits) when it died: the dead-node step cleared them (SEL, which
        // holds latches only in transactions, may have had only its decided commit's: released by the roll-forward).
        final JsonObject report = recovery.getJsonObject("report");
        assertThat(report.getInteger("selccBits") + (protocol.startsWith("selcc") ? 0 : report.getInteger("applied")))
            .as("bits cleared, " + what).isPositive();
        if (workload == Explorer.Workload.SMALLBANK) {
            assertThat(recovery.getInteger("committed_by_recovery")).as(what + ": commits of the dead node that "
                + "recovery rolled forward or found finished").isPositive();
        }
        return recovery;
    }

    /** One seed of {@code protocol} with a crash: every check passed, no latch left set, recovered; its recovery. */
    private JsonObject checked(final String protocol, final Explorer.Workload workload, final long seed)
        throws Exception {
        final SimOptions o = Explorer.crash(Explorer.crashOptions(protocol, seed)).validate();
        final Explorer.Outcome outcome = Explorer.check(vertx, workload, o);
        final String what = protocol + " " + workload + " seed " + seed;
        assertThat(outcome.failure()).as(what + ": " + outcome.failure()).isNull();
        final JsonObject run = outcome.run();
        assertThat(run.getLong("locks_left_held")).as("latch words left set, " + what).isZero();
        final JsonObject recovery = run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
        assertThat(recovery.getString("recovered_by")).as(what).isNotNull();
        return recovery;
    }
}
