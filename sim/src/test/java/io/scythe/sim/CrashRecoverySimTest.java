package io.scythe.sim;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compute node crashed at a seeded point and recovered by another with the cluster's recovery code
 * ({@link CrashRecovery}): nothing lost, nothing applied twice, no lock left held, the conserved quantity right and
 * the history serializable. The smoke of {@code scythe sim --explore N --crashes} (the long runs are its notes').
 */
class CrashRecoverySimTest extends SimVertxTest {
    private static final int SEEDS = Integer.getInteger("scythe.sim.crashSeeds", 5);

    private static SimOptions crashed(final String protocol, final long seed) {
        return Explorer.crash(Explorer.crashOptions(protocol, seed)).validate();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "scythe-occ", "ford-occ", "farm-occ", "scythe:exclusive"})
    void shouldRecoverACrashedComputeNodeWithEveryCheckOn(final String protocol) throws Exception {
        for (final Explorer.Workload w : List.of(Explorer.Workload.SMALLBANK, Explorer.Workload.CHURN)) {
            final ByteArrayOutputStream printed = new ByteArrayOutputStream();
            final List<Explorer.Failure> failures = Explorer.explore(vertx, w, List.of(protocol), 1, SEEDS,
                CrashRecoverySimTest::crashed, new PrintStream(printed, true));
            System.out.print(printed);
            assertThat(failures).isEmpty();
            // Every seed crashed a CN and recovered it (the census line counts them by stage).
            assertThat(printed.toString()).contains("crashes recovered");
        }
    }

    @Test
    void shouldCountTheCommitsRecoveryRollsForwardAndFreeWhatTheCrashedNodeHeld() throws Exception {
        // Among the first seeds, one crashes cn while a commit's redo record is durable and its write-back unfinished:
        // recovery rolls it forward; its result, which no client heard, is what the total needs to stay conserved.
        JsonObject rolled = null;
        JsonObject holding = null;
        for (long seed = 1; seed <= 40 && (rolled == null || holding == null); seed++) {
            final Explorer.Outcome o = Explorer.check(vertx, Explorer.Workload.SMALLBANK, crashed("scythe", seed));
            assertThat(o.failure()).as(String.valueOf(o.failure())).isNull();
            final JsonObject run = o.run();
            final JsonObject recovery = run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
            assertThat(recovery.getString("recovered_by")).isNotNull();
            assertThat(run.getLong("locks_left_held")).isZero();
            if (rolled == null && recovery.getLong("rolled_delta") != 0) {
                rolled = run;
            }
            if (holding == null && recovery.getJsonObject("at_crash").getLong("locks_held") > 0) {
                holding = run;
            }
        }
        assertThat(rolled).as("a seed whose crash left a commit to roll forward").isNotNull();
        final JsonObject conserved = rolled.getJsonObject("conserved");
        assertThat(conserved.getBoolean("ok")).isTrue();
        assertThat(conserved.getLong("final")).isEqualTo(conserved.getLong("initial")
            + conserved.getLong("committed_delta") + conserved.getLong("recovered_delta"));
        assertThat(conserved.getLong("recovered_delta")).isNotZero();
        assertThat(holding).as("a seed whose crash left locks held").isNotNull();
        final JsonObject report = holding.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery")
            .getJsonObject("report");
        assertThat(report.getInteger("tickets")).isPositive(); // recovery cancelled them; nothing is left held
    }

    /**
     * {@code scythe} (shared tickets, the default): a seed whose crash hits the node holding a shared (reader) ticket, granted and not
     * released; recovery cancels each such ticket once and skips it once (1 added to its object's {@code upper}: the
     * ledger counts both), and nothing is left held or released twice (a second +1 would serve a writer behind the run
     * early, which the history checker would see).
     */
    @Test
    void shouldReleaseTheSharedTicketsTheCrashedNodeHeldExactlyOnce() throws Exception {
        for (long seed = 1; seed <= 60; seed++) {
            for (final Explorer.Workload w : List.of(Explorer.Workload.TPCC, Explorer.Workload.SMALLBANK)) {
                final Explorer.Outcome o = Explorer.check(vertx, w, crashed("scythe", seed));
                assertThat(o.failure()).as(String.valueOf(o.failure())).isNull();
                final JsonObject crash = o.run().getJsonObject("sim").getJsonObject("crash");
                final long held = crash.getJsonObject("recovery").getJsonObject("at_crash").getLong("shared_held", 0L);
                if (held == 0) {
                    continue;
                }
                final JsonObject shared = crash.getJsonObject("shared_tickets");
                assertThat(shared.getLong("cancelled")).as("seed %d %s", seed, w).isGreaterThanOrEqualTo(held);
                assertThat(shared.getLong("skipped")).as("each once").isEqualTo(shared.getLong("cancelled"));
                assertThat(o.run().getLong("locks_left_held")).isZero();
                return;
            }
        }
        throw new AssertionError("no seed among the first 60 crashed a CN holding a shared ticket");
    }

    @Test
    void shouldLeaveTheLocksHeldWithoutRecovery() throws Exception {
        // The same crash without recovery: what the crashed node held stays held (the check recovery passes).
        for (long seed = 1; seed <= 40; seed++) {
            final SimOptions o = crashed("ford-occ", seed);
            final Explorer.Outcome with = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
            if (with.run().getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery")
                .getJsonObject("at_crash").getLong("locks_held") == 0) {
                continue;
            }
            o.faults().recover(false, Faults.DEFAULT_DETECT_NS);
            final Explorer.Outcome without = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
            assertThat(without.run().getLong("locks_left_held")).isPositive();
            assertThat(with.run().getLong("locks_left_held")).isZero();
            return;
        }
        throw new AssertionError("no seed among the first 40 crashed a CN holding locks");
    }

    @Test
    void shouldReplayACrashAndItsRecoveryBitForBit() throws Exception {
        final Explorer.Outcome a = Explorer.check(vertx, Explorer.Workload.SMALLBANK, crashed("scythe", 7));
        final Explorer.Outcome b = Explorer.check(vertx, Explorer.Workload.SMALLBANK, crashed("scythe", 7));
        assertThat(a.run().getJsonObject("sim").getString("history_hash"))
            .isEqualTo(b.run().getJsonObject("sim").getString("history_hash"));
        assertThat(a.run().getJsonObject("sim").getJsonObject("crash"))
            .isEqualTo(b.run().getJsonObject("sim").getJsonObject("crash"));
    }

    @ParameterizedTest(name = "{0} {1} seed {2}")
    @CsvSource({
        // The simulator's own insert observer replaced the memory nodes' RecoveryService's (LogDbService kept one):
        // recovery never abandoned the crashed node's locked inserts, so a reader saw an insert nobody committed
        // (phantom, G1a), a TPC-C order stayed without its district's counter, a Takeout-locked insert stayed held.
        // Fixed by chaining insert observers. (The third row was CHURN scythe-occ 4; after this stop's merges no seed
        // of 4..43 on churn crashes a CN holding a locked insert, for scythe, scythe-occ or farm-occ: the phantom
        // workload covers the Takeout-locked insert instead. Why churn changed is not yet traced.)
        "PHANTOM, farm-occ, 2",
        "TPCC, ford-occ, 4",
        "PHANTOM, scythe-occ, 4",
    })
    void shouldAbandonTheCrashedNodesLockedInserts(final Explorer.Workload workload, final String protocol,
                                                   final long seed) throws Exception {
        // Found under the NIC model before Table 1's fit (now the profile cx5-pcie), kept there. The seed is where the
        // search starts: a change to the protocols (issue 22's retry policy) moves which seed crashes a CN holding a
        // locked insert, so the test runs seeds from it until one does, each of them clean.
        for (long s = seed; s < seed + 40; s++) {
            final Explorer.Outcome o = Explorer.check(vertx, workload, crashed(protocol, s)
                .costModel(io.scythe.fabric.CostModel.profile("cx5-pcie")));
            assertThat(o.failure()).as("seed %d: %s", s, o.failure()).isNull();
            if (o.run().getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery").getJsonObject("report")
                .getInteger("inserts_abandoned") > 0) {
                return;
            }
        }
        throw new AssertionError("no seed of " + seed + ".." + (seed + 39) + " crashed a CN holding a locked insert");
    }

    @Test
    void shouldSkipATicketGrantedToTheCrashedNodeAfterItsReleaseOnceItsTurnComes() throws Exception {
        // Recovery at the crash's instant (--crash-detect 0us): cn0's lock request, held back by the hot-object
        // deferral, was granted after RELEASE_NODE had cancelled cn0's tickets, queued behind a live holder. The
        // ledger cancelled it but, the release's own ticket skipped at once, had never registered its poller: nothing
        // skipped it when upper reached it, and cn1's transactions waited on the counter for good (a lock held by
        // nobody known). Fixed in TicketLedger: whoever cancels a ticket it cannot skip yet registers the poller.
        final SimOptions o = crashed("scythe", 33);
        o.faults().recover(true, 0);
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.CHURN, o);
        assertThat(outcome.failure()).as(String.valueOf(outcome.failure())).isNull();
        assertThat(outcome.run().getLong("locks_left_held")).isZero();
    }

    @Test
    void shouldRefuseRecoveryWithoutARedoLogOrALiveNode() {
        final SimOptions noLog = Explorer.options("scythe", 1).computeNodes(2);
        noLog.faults().crash(1, 10_000).recover(true, Faults.DEFAULT_DETECT_NS);
        org.assertj.core.api.Assertions.assertThatThrownBy(noLog::validate).hasMessageContaining("--redo-log");
        final SimOptions alone = Explorer.options("scythe", 1).redoLog(true);
        alone.faults().crash(0, 10_000).recover(true, Faults.DEFAULT_DETECT_NS);
        org.assertj.core.api.Assertions.assertThatThrownBy(alone::validate).hasMessageContaining("--cns 2");
    }
}
