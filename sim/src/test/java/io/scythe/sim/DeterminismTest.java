package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Same seed, same run, bit for bit: every finished transaction and every metric; another seed, another run. */
class DeterminismTest {
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = SimVertx.create();
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().await();
    }

    private static SimOptions contended(final String protocol, final long seed) {
        return new SimOptions().protocol(protocol).loopsPerComputeNode(2).clientsPerComputeNode(8)
            .durationNs(300_000).seed(seed);
    }

    private static JsonObject metrics(final SimResult r) {
        final JsonObject json = r.run().toJson().copy();
        json.getJsonObject("sim").remove("wall_ms"); // the only wall-clock number: reported, never steering
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
}
