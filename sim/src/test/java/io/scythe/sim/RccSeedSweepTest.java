package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SeedSweepTest's sweep for RCC's protocols (issue 18) that are built (NOWAIT, WAITDIE, OCC), in their one-sided, RPC and one hybrid form:
 * each small contended workload over many seeds, with jitter, every invariant (SmallBank's money conserved, no lock
 * or tts word left held) and each run's history checked for serializability.
 */
class RccSeedSweepTest extends SimVertxTest {
    static final int SEEDS = Integer.getInteger("scythe.sim.seeds", 200);

    static Stream<Arguments> workloadsAndProtocols() {
        final List<Arguments> all = new ArrayList<>();
        for (final Explorer.Workload w : Explorer.Workload.values()) {
            for (final String protocol : List.of("rcc-nowait", "rcc-nowait:primitive=rpc", "rcc-nowait:hybrid=010111",
                "rcc-waitdie", "rcc-waitdie:primitive=rpc", "rcc-waitdie:hybrid=101000", "rcc-occ", "rcc-occ:primitive=rpc",
                "rcc-occ:hybrid=010111")) {
                all.add(Arguments.of(w, protocol));
            }
        }
        return all.stream();
    }

    @ParameterizedTest
    @MethodSource("workloadsAndProtocols")
    void shouldKeepEveryInvariantAndSerializabilityOverManySeeds(final Explorer.Workload workload,
                                                                 final String protocol) throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, workload, List.of(protocol), 1, SEEDS,
            Explorer::options, new PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).isEmpty();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) checked for serializability")
            .matcher(printed.toString());
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isGreaterThan(SEEDS * 5L);
    }
}
