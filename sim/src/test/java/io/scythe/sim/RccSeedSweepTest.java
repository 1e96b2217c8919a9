package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

/**
 * SeedSweepTest's sweep for RCC's protocols (issue 18) that are built (NOWAIT, WAITDIE, OCC), in their one-sided, RPC
 * and one hybrid form: each small contended workload over {@link SeedSweepTest#paperSeeds} seeds (TPC-C fewer), with jitter, every
 * invariant (SmallBank's money conserved, no lock or tts word left held) and each run's history checked for
 * serializability.
 */
class RccSeedSweepTest extends SimVertxTest {
    static Stream<Arguments> workloadsAndProtocols() {
        return SeedSweepTest.everyWorkloadUnder("rcc-nowait", "rcc-nowait:primitive=rpc", "rcc-nowait:hybrid=100111",
            "rcc-waitdie", "rcc-waitdie:primitive=rpc", "rcc-waitdie:hybrid=111100", "rcc-occ", "rcc-occ:primitive=rpc",
            "rcc-occ:hybrid=010111");
    }

    @ParameterizedTest
    @MethodSource("workloadsAndProtocols")
    void shouldKeepEveryInvariantAndSerializabilityOverManySeeds(final Explorer.Workload workload,
                                                                 final String protocol) throws Exception {
        SeedSweepTest.sweep(vertx, workload, protocol, SeedSweepTest.paperSeeds(workload));
    }
}
