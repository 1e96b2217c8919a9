package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A few hundred seeds of a small contended SmallBank per protocol, with jitter, every invariant and each run's history
 * checked for serializability.
 */
class SeedSweepTest extends SimVertxTest {
    static final int SEEDS = Integer.getInteger("scythe.sim.seeds", 200);

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ", "farm-occ"})
    void shouldKeepEveryInvariantAndSerializabilityOverManySeeds(final String protocol) throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, List.of(protocol), 1, SEEDS,
            Explorer::options, new PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).isEmpty();
        // The checker saw the histories: a contended run commits dozens of transactions per seed.
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) checked for serializability")
            .matcher(printed.toString());
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isGreaterThan(SEEDS * 20L);
    }
}
