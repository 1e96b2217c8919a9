package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Same seed, same run, bit for bit: every finished transaction and every metric; another seed, another run. */
class DeterminismTest extends SimVertxTest {
    private static SimOptions contended(final String protocol, final long seed) {
        return new SimOptions().protocol(protocol).loopsPerComputeNode(2).clientsPerComputeNode(8)
            .durationNs(300_000).seed(seed);
    }

    private static JsonObject metrics(final SimResult r) {
        final JsonObject json = r.run().toJson().copy();
        json.getJsonObject("sim").remove("wall_ms"); // the wall-clock numbers: reported, never steering
        json.getJsonObject("sim").remove("setup_wall_ms");
        return json;
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ", "farm-occ"})
    void shouldRepeatARunBitForBitAndVaryWithTheSeed(final String protocol) throws Exception {
        final List<TxnRecord> first = new ArrayList<>();
        final List<TxnRecord> second = new ArrayList<>();
        final SimResult a = new Simulation(contended(protocol, 42), new SmallBankSpec(50, 0.99, "scythe"))
            .listener(first::add).run(vertx);
        final SimResult b = new Simulation(contended(protocol, 42), new SmallBankSpec(50, 0.99, "scythe"))
            .listener(second::add).run(vertx);
        final SimResult c = new Simulation(contended(protocol, 43), new SmallBankSpec(50, 0.99, "scythe"))
            .run(vertx);

        assertThat(first).hasSizeGreaterThan(50);
        assertThat(second).isEqualTo(first);
        assertThat(b.historyHash()).isEqualTo(a.historyHash());
        assertThat(metrics(b).encode()).isEqualTo(metrics(a).encode());
        assertThat(c.historyHash()).isNotEqualTo(a.historyHash());
        assertThat(a.invariantsOk()).isTrue();
        assertThat(c.invariantsOk()).isTrue();
    }

    @org.junit.jupiter.api.Test
    void shouldRecordTheSameCommittedHistoryForTheSameSeedWithoutChangingTheRun() throws Exception {
        final io.scythe.bench.history.HistoryCollector first = new io.scythe.bench.history.HistoryCollector(0, "a");
        final io.scythe.bench.history.HistoryCollector second = new io.scythe.bench.history.HistoryCollector(0, "a");
        final SimResult a = new Simulation(contended("scythe", 42), new SmallBankSpec(50, 0.99, "scythe"))
            .recorder(first).run(vertx);
        final SimResult b = new Simulation(contended("scythe", 42), new SmallBankSpec(50, 0.99, "scythe"))
            .recorder(second).run(vertx);
        final SimResult unrecorded = new Simulation(contended("scythe", 42), new SmallBankSpec(50, 0.99, "scythe"))
            .run(vertx);

        assertThat(unrecorded.historyHash()).as("recording does not steer the run").isEqualTo(a.historyHash());
        assertThat(b.historyHash()).isEqualTo(a.historyHash());
        final io.scythe.bench.history.History h = first.history();
        assertThat(h.transactions()).isGreaterThan(50).isEqualTo(second.history().transactions());
        for (int t = 0; t < h.transactions(); t++) {
            assertThat(second.history().txnId(t)).isEqualTo(h.txnId(t));
        }
        final var verdict = io.scythe.bench.history.SerializabilityChecker.check(h, 3);
        assertThat(verdict.serializable()).isTrue();
        assertThat(io.scythe.bench.history.SerializabilityChecker.check(second.history(), 3).lines())
            .isEqualTo(verdict.lines());
        final JsonObject recorded = a.run().toJson().getJsonObject("sim").getJsonObject("history");
        assertThat(recorded.getLong("recorded")).isEqualTo(h.transactions()).isEqualTo(recorded.getLong("committed"));
        assertThat(recorded.getBoolean("complete")).isTrue();
    }

    @org.junit.jupiter.api.Test
    void shouldRepeatARunWithTsoProxiesJitterAndQueueSamplingBitForBit() throws Exception {
        final java.util.function.Supplier<SimOptions> options = () -> new SimOptions().protocol("scythe")
            .computeNodes(2).loopsPerComputeNode(2).clientsPerComputeNode(6).memoryNodes(3).tsoProxies(2)
            .queueSampleNs(10_000).durationNs(200_000).seed(9).faults(new Faults().jitterNs(1_500));
        final SimResult a = new Simulation(options.get(), new SmallBankSpec(100, 0.99, "scythe")).run(vertx);
        final SimResult b = new Simulation(options.get(), new SmallBankSpec(100, 0.99, "scythe")).run(vertx);
        assertThat(metrics(b).encode()).isEqualTo(metrics(a).encode());
        assertThat(a.invariantsOk()).isTrue();
        assertThat(a.run().toJson().getJsonObject("sim").getJsonObject("tso").getLong("counter_faas")).isPositive();
        assertThat(a.run().toJson().getJsonObject("queues").getLong("samples")).isEqualTo(20);
    }

    /**
     * One TSO group per compute node (§4.5 (2)): its loops' timestamps come back on their own simulated loops, the run
     * repeats bit for bit, its committed history is serializable, and it differs from the per-loop groups' run.
     */
    @org.junit.jupiter.api.Test
    void shouldRepeatARunWithOneTsoGroupPerComputeNodeBitForBit() throws Exception {
        final java.util.function.Function<Boolean, SimOptions> options = perCn -> new SimOptions().protocol("scythe")
            .computeNodes(2).loopsPerComputeNode(4).clientsPerComputeNode(16).memoryNodes(3).tsoProxies(2)
            .tsoGroupPerComputeNode(perCn).durationNs(200_000).seed(9);
        final io.scythe.bench.history.HistoryCollector recorded = new io.scythe.bench.history.HistoryCollector(0, "a");
        final SimResult a = new Simulation(options.apply(true), new SmallBankSpec(100, 0.99, "scythe"))
            .recorder(recorded).run(vertx);
        final SimResult b = new Simulation(options.apply(true), new SmallBankSpec(100, 0.99, "scythe")).run(vertx);
        final SimResult perLoop = new Simulation(options.apply(false), new SmallBankSpec(100, 0.99, "scythe"))
            .run(vertx);
        final JsonObject recordedRun = metrics(a);
        recordedRun.getJsonObject("sim").remove("history"); // what the recorder saw, reported only when recording
        assertThat(metrics(b).encode()).isEqualTo(recordedRun.encode());
        assertThat(a.invariantsOk()).isTrue();
        assertThat(a.run().toJson().getLong("committed")).isGreaterThan(50);
        assertThat(io.scythe.bench.history.SerializabilityChecker.check(recorded.history(), 3).serializable())
            .isTrue();
        assertThat(perLoop.historyHash()).isNotEqualTo(a.historyHash());
    }
}

