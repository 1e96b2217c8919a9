package io.scythe.sim;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A SELCC compute node crashed at a seeded point and recovered by a survivor (issue 21; package doc "Dead compute
 * nodes" of {@code txn.selcc}), under each protocol that logs its commits: every seed's checks on (no acknowledged
 * write lost, nothing applied twice, money conserved, no latch word left set once the run drained, the history
 * serializable), the dead node's bits cleared by the memory nodes' step in every seed, and a commit the dead node
 * decided finished by recovery in some seed of each protocol. {@code selcc-occ}'s seed 8 created 10000 before its
 * write-through wrote the version last (a crash cut its doorbell between the version and the value).
 */
class SelccCrashSimTest extends SimVertxTest {
    @Test
    void shouldRecoverADeadSelccComputeNode() throws Exception {
        recovers("selcc-2pl", 3, 1);
        recovers("selcc-occ", 8, 1);
        recovers("selcc-to", 2, 1);
    }

    private void recovers(final String protocol, final long... seeds) throws Exception {
        int decided = 0;
        for (final long seed : seeds) {
            final SimOptions o = Explorer.crash(Explorer.crashOptions(protocol, seed)).validate();
            final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
            final String what = protocol + " seed " + seed;
            assertThat(outcome.failure()).as(what + ": " + outcome.failure()).isNull();
            final JsonObject run = outcome.run();
            assertThat(run.getLong("locks_left_held")).as("latch words left set, " + what).isZero();
            final JsonObject recovery = run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
            assertThat(recovery.getString("recovered_by")).as(what).isNotNull();
            // The dead node's loops held lines lazily (S or X bits) when it died: the dead-node step cleared them.
            assertThat(recovery.getJsonObject("report").getInteger("selccBits")).as("bits cleared, " + what)
                .isPositive();
            decided += recovery.getInteger("committed_by_recovery");
        }
        assertThat(decided).as(protocol + ": commits of the dead node that recovery rolled forward or found finished")
            .isPositive();
    }

    @Test
    void shouldRefuseACrashUnderSel2plWhoseWritesAreNotLogged() {
        assertThatThrownBy(() -> Explorer.crash(Explorer.crashOptions("sel-2pl", 1)).validate())
            .hasMessageContaining("issue 21");
    }
}
