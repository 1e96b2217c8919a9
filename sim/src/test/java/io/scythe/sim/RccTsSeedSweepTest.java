package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

/**
 * SeedSweepTest's sweep for RCC's timestamp protocols (issue 18: MVCC and SUNDIAL) in their one-sided, RPC and one
 * hybrid form (RCC's SmallBank candidates, §5.1: MVCC with RPC Read and Lock, SUNDIAL with RPC Read and Renew): each
 * small contended workload over {@link SeedSweepTest#paperSeeds} seeds (TPC-C fewer), with jitter, every invariant (SmallBank's
 * money conserved, no lock or tts word left held) and each run's history checked for serializability.
 */
class RccTsSeedSweepTest extends SimVertxTest {
    static Stream<Arguments> workloadsAndProtocols() {
        return SeedSweepTest.everyWorkloadUnder("rcc-mvcc", "rcc-mvcc:primitive=rpc",
            "rcc-mvcc:hybrid=001111", "rcc-sundial", "rcc-sundial:primitive=rpc", "rcc-sundial:hybrid=010111");
    }

    @ParameterizedTest
    @MethodSource("workloadsAndProtocols")
    void shouldKeepEveryInvariantAndSerializabilityOverManySeeds(final Explorer.Workload workload,
                                                                 final String protocol) throws Exception {
        SeedSweepTest.sweep(vertx, workload, protocol, SeedSweepTest.paperSeeds(workload));
    }
}
