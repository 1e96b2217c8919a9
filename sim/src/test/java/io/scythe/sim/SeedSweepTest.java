package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A few hundred seeds of a small contended SmallBank per protocol, with jitter, every invariant and the history check. */
class SeedSweepTest extends SimVertxTest {
    static final int SEEDS = Integer.getInteger("scythe.sim.seeds", 200);
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ", "farm-occ"})
    void shouldKeepEveryInvariantOverManySeeds(final String protocol) throws Exception {
        final List<Explorer.Failure> failures = Explorer.explore(vertx, List.of(protocol), 1, SEEDS,
            Explorer::options, new PrintStream(System.out));
        assertThat(failures).isEmpty();
    }
}
