package io.scythe.sim;

import io.scythe.bench.history.SerializabilityChecker;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Acceptance: the explorer finds planted bugs through the serializability checker. The {@code unsafe} protocol (no
 * locking, no validation) loses updates under contention; within the sweep's seeds the explorer must report its
 * histories as cyclic (a dependency cycle, not only money that was not conserved), each with the command that replays
 * the seed. A protocol that skips only the re-check of absent keys lets phantoms through, which the checker sees in
 * the recorded absent reads.
 */
class PlantedBugTest extends SimVertxTest {
    /**
     * Seeds the planted bugs must show up in: 200 (not the sweeps' fewer), as the planted phantom's window is narrow
     * (a few seeds in a hundred).
     */
    private static final int SEEDS = 200;

    @Test
    void shouldFindTheUnsafeProtocolsCyclesWithinTheSweepsSeeds() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, List.of("unsafe"), 1, SEEDS,
            Explorer::options, new PrintStream(printed, true));

        final List<Explorer.Failure> cyclic = failures.stream().filter(Explorer.Failure::cyclic).toList();
        assertThat(cyclic).as("seeds whose history the checker found cyclic").hasSizeGreaterThan(SEEDS / 2);
        final Explorer.Failure first = cyclic.get(0);
        // A lost update: two transactions each read the version the other overwrote (rw both ways), a G2 cycle.
        final SerializabilityChecker.Cycle cycle = first.history().cycles().get(0);
        assertThat(cycle.anomaly()).isEqualTo("G2");
        assertThat(cycle.steps()).extracting(SerializabilityChecker.Step::kind)
            .contains(SerializabilityChecker.EdgeKind.RW);
        assertThat(cycle.steps().get(cycle.steps().size() - 1).toTxn()).isEqualTo(cycle.steps().get(0).fromTxn());
        assertThat(first.reason()).contains("NOT SERIALIZABLE").contains("G2");
        assertThat(first.replay()).contains("--protocols unsafe").contains("--check-history")
            .endsWith("--seed " + first.seed());
        assertThat(printed.toString()).contains("FAILED unsafe seed " + first.seed())
            .contains("replay: " + first.replay()).contains("G2 cycle of");
    }

    @Test
    void shouldFindAPlantedPhantomThroughTheRecordedAbsentReads() throws Exception {
        final List<Explorer.Outcome> outcomes = new ArrayList<>();
        for (long seed = 1; seed <= SEEDS; seed++) {
            outcomes.add(Explorer.check(vertx, Explorer.Workload.PHANTOM,
                Explorer.options("planted-phantom", seed))); // found in the registry (PlantedPhantomModule)
        }
        final List<Explorer.Outcome> cyclic = outcomes.stream().filter(o -> o.failure() != null
            && o.failure().cyclic()).toList();
        // The window is narrow (the insert is a lock taken before validation even here): a few seeds in a hundred.
        assertThat(cyclic).as("seeds with a phantom the checker saw").hasSizeGreaterThanOrEqualTo(
            SEEDS / 50);
        // The write skew goes through the absence of a mark: a reader of it absent, an inserter after it.
        assertThat(cyclic).anySatisfy(o -> assertThat(o.history().cycles()).anySatisfy(c -> {
            assertThat(c.anomaly()).isEqualTo("G2");
            assertThat(c.steps()).anySatisfy(step -> {
                assertThat(step.kind()).isEqualTo(SerializabilityChecker.EdgeKind.RW);
                assertThat(step.detail()).startsWith("mark:").contains("read the absence at version");
            });
        }));
        assertThat(outcomes).allSatisfy(o -> assertThat(o.history().impossibleCount()).isZero());
    }
}
