package io.scythe.sim;

import io.scythe.bench.workload.GclSpec;
import io.scythe.txn.selcc.LatchInvariants;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SELCC's latch-word invariants (digest §7.2; issue 21 acceptance "sampled under load"), sampled during GAM's
 * micro-benchmark on {@code selcc-2pl} with small caches (evictions), short leases and one receive slot a loop: at
 * each sample every cached frame with no global step in flight must agree with its line's latch word at the memory
 * node (Modified: the word's exclusive holder; Shared: its reader bit set; never a settled Shared frame beside another
 * participant's Modified one), and every line's word must agree with the caches it names (its exclusive holder has
 * the line Modified, each reader Shared, or a step on it in flight there). The end checks the writes against the
 * counters as {@link GclSimTest} does.
 */
class SelccLatchInvariantSimTest extends SimVertxTest {
    @AfterEach
    void defaults() {
        for (final String p : List.of("cacheFrames", "evictBatch", "leaseNs", "receiveSlots")) {
            System.clearProperty("scythe.selcc." + p);
        }
    }

    @ParameterizedTest(name = "seed {0}, read ratio {1}, theta {2}")
    @CsvSource({"1, 0.5, 0.99", "2, 0.9, 0.99", "3, 0.2, 0", "4, 0.5, 0"})
    void shouldKeepEveryFramesMemoInStepWithItsLatchWord(final long seed, final double readRatio,
                                                        final double theta) throws Exception {
        System.setProperty("scythe.selcc.cacheFrames", "8");
        System.setProperty("scythe.selcc.evictBatch", "2");
        System.setProperty("scythe.selcc.leaseNs", "30000");
        System.setProperty("scythe.selcc.receiveSlots", "1");
        final GclSpec spec = new GclSpec(40, 256, 2);
        final LatchInvariants invariants = new LatchInvariants();
        final SimResult result = run(spec, invariants, seed, readRatio, theta);
        assertThat(invariants.violations()).as(invariants.samples() + " samples").isEmpty();
        assertThat(invariants.words()).as("latch words checked (reverse direction)")
            .isGreaterThanOrEqualTo(invariants.samples() * 40).isPositive(); // every line's word, each sample
        final JsonObject o = spec.checked();
        assertThat(o.getLong("counters_sum")).as(o.encode()).isEqualTo(o.getLong("writes"));
        assertThat(result.invariantsOk()).as(result.run().toJson().encodePrettily()).isTrue();
        assertThat(invariants.frames()).as("settled frames checked").isGreaterThan(1000);
        assertThat(o.getDouble("invalidations_per_access")).as("lines moving between participants").isPositive();
        System.out.println("seed " + seed + ": " + invariants.samples() + " samples, " + invariants.frames()
            + " frames and " + invariants.words() + " words checked; " + o.encode());
    }

    /**
     * The reverse direction can fail: a planted bug, an eviction of a Modified frame that flushes but forgets its
     * release FAA, leaves words naming a holder whose cache no longer has the line (the forward direction, which
     * checks cached frames only, sees nothing of it).
     */
    @ParameterizedTest(name = "seed {0}")
    @CsvSource({"1", "2"})
    void shouldCatchAWordWhoseHolderNoLongerCachesTheLine(final long seed) throws Exception {
        System.setProperty("scythe.selcc.cacheFrames", "8");
        System.setProperty("scythe.selcc.evictBatch", "2");
        System.setProperty("scythe.selcc.leaseNs", "30000");
        System.setProperty("scythe.selcc.receiveSlots", "1");
        final LatchInvariants invariants = new LatchInvariants();
        LatchInvariants.plantLeakOnEviction(true);
        try {
            run(new GclSpec(40, 256, 2), invariants, seed, 0.5, 0);
        } finally {
            LatchInvariants.plantLeakOnEviction(false);
        }
        assertThat(invariants.violations()).as(invariants.samples() + " samples").isNotEmpty()
            .anyMatch(v -> v.contains("holder but its cache has the line not at all, no step in flight"));
    }

    private SimResult run(final GclSpec spec, final LatchInvariants invariants, final long seed,
                          final double readRatio, final double theta) throws Exception {
        final SimOptions options = new SimOptions().protocol("selcc-2pl").computeNodes(3).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).memoryNodes(2).durationNs(500_000).seed(seed);
        final Simulation.Operation accesses = GclSim.accesses(spec, "selcc", 3, 2, 2, readRatio, theta, 1, 0.3, 0);
        return new Simulation(options, spec).operation((runtime, random) -> {
            invariants.saw(runtime);
            invariants.sample(spec.memoryNodes()); // before the access, and once it finished
            return accesses.run(runtime, random).onComplete(ar -> invariants.sample(spec.memoryNodes()));
        }).run(vertx);
    }
}
