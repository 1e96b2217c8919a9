package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.txn.selcc.LineCache;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SELCC's priority matching (§5.3.2, opt-in: {@code scythe.selcc.priorityMatching}): a writer that took a line
 * Exclusive after retrying drops global readers' PeerRd of lower priority until they aged to its own. On skewed
 * SmallBank at 4 compute nodes it must engage (readers' requests dropped for it) and leave the run correct: quiescent,
 * money conserved, no latch set.
 */
class SelccPriorityMatchingSimTest extends SimVertxTest {
    @Test
    void shouldDropLowerPriorityReadersAndStayCorrect() throws Exception {
        final String key = "scythe.selcc.priorityMatching";
        final String before = System.getProperty(key);
        System.setProperty(key, "true");
        LineCache.countCauses(true);
        final long dropsBefore = LineCache.counted("drop kind 1 priority matching");
        try {
            final SimOptions o = new SimOptions().protocol("selcc-2pl").computeNodes(4).loopsPerComputeNode(4)
                .clientsPerComputeNode(8).memoryNodes(2).durationNs(2_000_000).seed(1);
            final SimResult r = new Simulation(o, new SmallBankSpec(10_000, 0.99, "standard")).run(vertx);
            final JsonObject run = r.run().toJson();
            final JsonObject sim = run.getJsonObject("sim");
            assertThat(sim.getJsonArray("violations")).as(sim.encode()).isEmpty();
            assertThat(sim.getBoolean("quiescent")).isTrue();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(run.getJsonObject("conserved").encode())
                .isTrue();
            assertThat(run.getInteger("locks_left_held")).isZero();
            assertThat(LineCache.counted("drop kind 1 priority matching") - dropsBefore)
                .as("readers' PeerRd dropped by priority matching").isPositive();
        } finally {
            LineCache.countCauses(false);
            if (before == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, before);
            }
        }
    }
}
