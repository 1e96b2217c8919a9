package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class SimulationTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ", "farm-occ"})
    void shouldRunSmallBankInVirtualTimeWithMoneyConservedAndLocksFree(final String protocol) throws Exception {
        final SimResult r = new Simulation(new SimOptions().protocol(protocol).clientsPerComputeNode(16)
            .durationNs(2_000_000).seed(7), new SmallBankSpec(1000, 0.99, "scythe")).run(vertx);
        assertThat(r.invariantsOk()).isTrue();
        assertThat(r.run().toJson().getLong("committed")).isGreaterThan(100);
    }

    @ParameterizedTest
    @ValueSource(strings = {"takeout", "cas-lock"})
    void shouldRunTheLockMicroBenchmarkInVirtualTimeAndFreeEveryLock(final String lock) throws Exception {
        final SimResult r = LockSim.simulation(new SimOptions().loopsPerComputeNode(2).clientsPerComputeNode(16)
            .memoryNodes(1).durationNs(300_000).seed(3), new LockSim.Spec(lock, 100, 0.99, 25_000)).run(vertx);
        final io.vertx.core.json.JsonObject run = r.run().toJson();
        assertThat(r.invariantsOk()).isTrue();
        assertThat(run.getLong("locks_left_held")).isZero();
        // 16 clients each holding a lock 25 us for 300 us: at most 16 x 12 acquisitions, and contention costs some.
        assertThat(run.getLong("committed")).isBetween(16L, 16L * 12);
        assertThat(run.getJsonObject("latency_us").getDouble("p50")).isGreaterThan(1.0);
    }

    @org.junit.jupiter.api.Test
    void shouldFailARunWhoseCommitsBypassTheHistoryRecorder() throws Exception {
        // A protocol that silences the recorder before each attempt: the checker would see an empty history.
        final io.scythe.txn.Protocol silent = io.scythe.txn.Protocol.of("silent", (runtime, hot) -> {
            runtime.recorder(null);
            return io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ").begin(runtime, hot);
        });
        final io.scythe.bench.history.HistoryCollector recorded = new io.scythe.bench.history.HistoryCollector(0, "x");
        final SimResult r = new Simulation(new SimOptions().protocol("ford-occ").clientsPerComputeNode(4)
            .durationNs(100_000).seed(1), new SmallBankSpec(1000, 0.99, "scythe")).protocol(silent)
            .recorder(recorded).run(vertx);
        final io.vertx.core.json.JsonObject history = r.run().toJson().getJsonObject("sim").getJsonObject("history");
        assertThat(history.getLong("committed")).isPositive();
        assertThat(history.getLong("recorded")).isEqualTo(recorded.transactions()).isLessThan(
            history.getLong("committed"));
        assertThat(history.getBoolean("complete")).isFalse();
        assertThat(r.invariantsOk()).isFalse();
    }
}
