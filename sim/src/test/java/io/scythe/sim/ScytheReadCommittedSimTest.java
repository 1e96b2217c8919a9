package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.Tpcc;
import io.scythe.bench.workload.TpccSpec;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * TPC-C's StockLevel at read committed under {@code scythe} (issue 22, helper scythe24; clause 2.8.2.3), end to end in
 * the simulator: StockLevels commit, the simulator's recorder reports them as read committed (stop-58 review 1: its
 * wrapper turned them into serializable commits), and the history is checked at the declared levels: serializable.
 * Failed before the wrapper's fix: no transaction of the history was read committed.
 */
class ScytheReadCommittedSimTest extends SimVertxTest {
    @Test
    void shouldCommitStockLevelsAtReadCommittedAndCheckThemSo() throws Exception {
        final HistoryCollector recorded = new HistoryCollector(io.scythe.storage.ObjectLayout.LOADED_VERSION,
            "tpcc scythe");
        final SimResult r = new Simulation(new SimOptions().protocol("scythe").computeNodes(1).loopsPerComputeNode(2)
            .clientsPerComputeNode(16).memoryNodes(2).durationNs(3_000_000).seed(1),
            new TpccSpec(new Tpcc.Scale(1, 30, 100, TpccSpec.headroomFor(0)), 0.99, 1, TpccSpec.Mix.STANDARD, 0.99,
                TpccSpec.Home.RANDOM)).recorder(recorded).run(vertx);
        final JsonObject run = r.run().toJson();
        assertThat(r.invariantsOk()).as(String.valueOf(run)).isTrue();
        final JsonObject byType = run.getJsonObject("committed_by_type");
        final long stockLevels = byType.getLong("StockLevel", 0L);
        assertThat(stockLevels).as(byType.encode()).isPositive();
        assertThat(byType.getLong("NewOrder", 0L)).as(byType.encode()).isPositive();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat((long) history.readCommitted()).as(Explorer.verdict(history)).isGreaterThanOrEqualTo(stockLevels);
        assertThat(history.serializable()).as(Explorer.verdict(history)).isTrue();
    }
}
