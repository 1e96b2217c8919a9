package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class SimulationTest {
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = SimVertx.create();
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().await();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ", "farm-occ"})
    void shouldRunSmallBankInVirtualTimeWithMoneyConservedAndLocksFree(final String protocol) throws Exception {
        final SimResult r = new Simulation(new SimOptions().protocol(protocol).clientsPerComputeNode(16)
            .durationNs(2_000_000).seed(7), new SmallBankSpec(1000, 0.99, "scythe")).run(vertx);
        System.out.println(r.run().toJson().encode());
        assertThat(r.invariantsOk()).isTrue();
        assertThat(r.run().toJson().getLong("committed")).isGreaterThan(100);
    }
}
