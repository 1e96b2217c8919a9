package io.scythe.sim;

import io.scythe.txn.Protocol;
import io.scythe.txn.UnknownKeyException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Acceptance: the explorer finds the planted bug. The {@code unsafe} protocol (no locking, no validation) comes from
 * another branch; until it is merged this test is skipped, not faked.
 */
class PlantedBugTest extends SimVertxTest {
    @Test
    void shouldFindTheUnsafeProtocolsAnomaliesWithinTheSweepsSeeds() throws Exception {
        boolean exists;
        try {
            Protocol.named("unsafe");
            exists = true;
        } catch (final UnknownKeyException e) {
            exists = false;
        }
        Assumptions.assumeTrue(exists, "protocol 'unsafe' is not on this branch yet");
        final List<Explorer.Failure> failures = Explorer.explore(vertx, List.of("unsafe"), 1, SeedSweepTest.SEEDS,
            Explorer::options, new PrintStream(System.out));
        assertThat(failures).isNotEmpty();
        assertThat(failures.get(0).replay()).contains("--protocols unsafe").contains("--seed " + failures.get(0).seed());
    }
}
