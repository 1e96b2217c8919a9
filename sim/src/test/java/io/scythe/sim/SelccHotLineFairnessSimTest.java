package io.scythe.sim;

import io.scythe.bench.workload.GclSpec;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 21 (selcc21): no side of one hot line starves under the GCL API's waiting locks. Writers (XLock, counter + 1,
 * XUnlock, 5-20 us apart) and readers (SLock, read, hold 0-1 us, SUnlock) each on their own compute node, all on one
 * line, for 1.2 ms. Before the fix (400 us runs) one writer against four readers 2-10 us apart got its XLock only as
 * the readers stopped (1 write a run, waiting 558 us), two writers 2 writes (622-645 us), readers 6-26 us apart 2-5.
 * Now a writer's failed attempts age its priority even when they end "moved on" (new sharers joined its case 3) and
 * the readers' spin window is scaled by the line's atomic round trip, so the writer gets the line within a bound:
 * 7-35 writes a run, the longest XLock wait 351-722 us across the six cases (a tie to the run's length before).
 */
class SelccHotLineFairnessSimTest extends SimVertxTest {
    private static final long RUN_NS = 1_200_000;

    @ParameterizedTest(name = "{0} writers, readers {1}-{2} us apart, seed {3}")
    @CsvSource({"1, 2, 10, 1", "1, 2, 10, 3", "2, 2, 10, 1", "2, 2, 10, 2", "1, 6, 26, 1", "1, 6, 26, 2"})
    void shouldBoundTheWaitOfEachSideOnOneHotLine(final int writers, final int readerMinUs, final int readerMaxUs,
                                                  final long seed) throws Exception {
        run(writers, readerMinUs, readerMaxUs, seed, false, true);
    }

    /**
     * Issue 21 (selread, selcc24), {@code scythe.selcc.readerGrants=true}: every remembered reader granted in one
     * case-2 FAA, a PeerRd (and since selcc24 a PeerWrShared) to a participant busy serving answered once that lands,
     * and an upgrade yields to a writer of higher priority. The writers keep their bound in all six cases (selread's
     * grants alone: 945 and 1,523 us with two writers; traced by selcc24: the second writer's case-3 PeerWrShared was
     * dropped by every reader busy releasing for the first, and the first, Shared after granting its readers, won
     * every upgrade race by the participant tie-break at priority 1 against the starved one's 3-4). The readers' bound
     * holds with one writer only: with two, the writers hand the line to each other by case 1 and every reader's
     * PeerRd reaches the old holder after it passed it on (1,4-1,5 ms, as without the grants: 804-1,063 us), so the
     * grants stay off by default (package doc, TODO(selread)).
     */
    @ParameterizedTest(name = "with the grants: {0} writers, readers {1}-{2} us apart, seed {3}")
    @CsvSource({"1, 2, 10, 1", "1, 2, 10, 3", "2, 2, 10, 1", "2, 2, 10, 2", "1, 6, 26, 1", "1, 6, 26, 2"})
    void shouldBoundTheWritersWaitWithTheGrants(final int writers, final int readerMinUs, final int readerMaxUs,
                                                final long seed) throws Exception {
        final HotLineScript script = run(writers, readerMinUs, readerMaxUs, seed, true, true);
        if (writers == 1) {
            assertThat(script.maxReadWaitNs).as("the longest SLock wait").isLessThan(READER_BOUND_NS);
        }
    }

    /**
     * Issue 21 (selread): the readers' bound is the grants' doing. With {@code scythe.selcc.readerGrants=false} (a
     * PeerRd to a holder busy with a handover dropped, each remembered reader served alone) the same runs keep their
     * writer-side and coherence checks but a reader waits past the bound. A control: it asserts today's default's
     * starvation, so it fails the day the default path bounds readers for another reason; drop it once the grants are
     * on by default.
     */
    @ParameterizedTest(name = "without the grants: {0} writers, readers {1}-{2} us apart, seed {3}")
    @CsvSource({"2, 2, 10, 1", "2, 2, 10, 2"})
    void shouldStarveAReaderWithoutTheGrants(final int writers, final int readerMinUs, final int readerMaxUs,
                                             final long seed) throws Exception {
        final HotLineScript script = run(writers, readerMinUs, readerMaxUs, seed, false, true);
        assertThat(script.maxReadWaitNs).as("the longest SLock wait without the grants")
            .isGreaterThanOrEqualTo(READER_BOUND_NS);
    }

    private HotLineScript run(final int writers, final int readerMinUs, final int readerMaxUs, final long seed,
                       final boolean grants, final boolean writerBound) throws Exception {
        final int readers = 4;
        final GclSpec spec = new GclSpec(2, 256, 2);
        final SimOptions options = new SimOptions().protocol("selcc-2pl").computeNodes(writers + readers)
            .loopsPerComputeNode(1).clientsPerComputeNode(1).memoryNodes(2).durationNs(RUN_NS).seed(seed);
        final HotLineScript script = new HotLineScript(writers, readerMinUs * 1_000, readerMaxUs * 1_000);
        final String property = "scythe.selcc.readerGrants";
        final String before = System.getProperty(property);
        final SimResult result;
        System.setProperty(property, String.valueOf(grants));
        try {
            result = new Simulation(options, spec).operation(script::step).run(vertx);
        } finally {
            if (before == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, before);
            }
        }
        final JsonObject run = result.run().toJson();
        System.out.println(writers + " writers, readers " + readerMinUs + "-" + readerMaxUs + " us, seed " + seed
            + (grants ? "" : " (no reader grants)") + ": " + script.completed + " writes (max wait "
            + script.maxWriteWaitNs / 1_000 + " us), " + script.reads + " reads (max wait "
            + script.maxReadWaitNs / 1_000 + " us)");
        assertThat(result.invariantsOk()).as(run.encodePrettily()).isTrue();
        script.assertCoherent(spec);
        if (writerBound) {
            assertThat(script.maxWriteWaitNs).as("the longest XLock wait").isLessThan(WRITER_BOUND_NS);
        }
        assertThat(script.completed).as("writes").isGreaterThanOrEqualTo(5L * writers);
        // With the grants and two writers the readers get 28-59 reads a run (selcc24; the class doc of the grants' case)
        assertThat(script.reads).as("reads").isGreaterThan(grants && writers > 1 ? 20 : 50);
        return script;
    }

    /** Before the fix the writer's first XLock waited until the readers stopped, the whole run (1.2 ms). */
    private static final long WRITER_BOUND_NS = 800_000;

    /** Without the grants a reader's SLock waited 804-1,063 us with two writers; with them at most 578 us. */
    private static final long READER_BOUND_NS = 700_000;
}
