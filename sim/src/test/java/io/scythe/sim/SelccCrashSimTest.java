package io.scythe.sim;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A SELCC compute node crashed at a seeded point and recovered by a survivor (issue 21; package doc "Dead compute
 * nodes" of {@code txn.selcc}): every seed's checks on (no acknowledged write lost, nothing applied twice, money
 * conserved, no latch word left set once the run drained, the history serializable), the dead node's bits cleared by
 * the memory nodes' step in every seed, and a commit the dead node decided finished by recovery in some seed.
 */
class SelccCrashSimTest extends SimVertxTest {
    private static final int SEEDS = 5;

    @Test
    void shouldRecoverADeadSelccComputeNode() throws Exception {
        int decided = 0;
        for (long seed = 1; seed <= SEEDS; seed++) {
            final SimOptions o = Explorer.crash(Explorer.crashOptions("selcc-2pl", seed)).validate();
            final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
            assertThat(outcome.failure()).as("seed " + seed + ": " + outcome.failure()).isNull();
            final JsonObject run = outcome.run();
            assertThat(run.getLong("locks_left_held")).as("latch words left set, seed " + seed).isZero();
            final JsonObject recovery = run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
            assertThat(recovery.getString("recovered_by")).as("seed " + seed).isNotNull();
            // The dead node's loops held lines lazily (S or X bits) when it died: the dead-node step cleared them.
            assertThat(recovery.getJsonObject("report").getInteger("selccBits")).as("bits cleared, seed " + seed)
                .isPositive();
            decided += recovery.getInteger("committed_by_recovery");
        }
        assertThat(decided).as("commits of the dead node that recovery rolled forward or found finished").isPositive();
    }

    @Test
    void shouldRefuseACrashUnderProtocolsWhoseWritesAreNotLogged() {
        for (final String protocol : new String[] {"selcc-to", "sel-2pl", "selcc-occ"}) {
            assertThatThrownBy(() -> Explorer.crash(Explorer.crashOptions(protocol, 1)).validate())
                .as(protocol).hasMessageContaining("issue 21");
        }
    }
}
