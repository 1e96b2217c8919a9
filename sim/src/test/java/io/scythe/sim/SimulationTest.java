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

    /**
     * FORD's worker draws a new transaction after an abort (FordModule#FORD_OCC): every ford-occ transaction that aborts
     * is given up after its one attempt, on a hot bank where scythe's clients, which retry, commit after several.
     */
    @org.junit.jupiter.api.Test
    void shouldGiveUpEveryAbortedFordTransactionAfterOneAttempt() throws Exception {
        final io.vertx.core.json.JsonObject ford = new Simulation(new SimOptions().protocol("ford-occ")
            .clientsPerComputeNode(16).durationNs(1_000_000).seed(7), new SmallBankSpec(1000, 0.99, "scythe"))
            .run(vertx).run().toJson();
        final io.vertx.core.json.JsonObject scythe = new Simulation(new SimOptions().protocol("scythe")
            .clientsPerComputeNode(16).durationNs(1_000_000).seed(7), new SmallBankSpec(1000, 0.99, "scythe"))
            .run(vertx).run().toJson();
        assertThat(ford.getDouble("attempts_per_commit")).isEqualTo(1.0);
        final long userAborts = ford.getJsonObject("aborts_by_reason").getLong("user", 0L);
        assertThat(ford.getLong("gave_up")).isPositive().isEqualTo(ford.getLong("aborted") - userAborts);
        assertThat(scythe.getDouble("attempts_per_commit")).isGreaterThan(1.0);
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
