package io.scythe.sim;

import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Scythe Table 1 (RDMA CAS on one MN's host memory, 8 threads) in virtual time: deterministic, so exact bounds. */
class CasSimTest extends SimVertxTest {
    private JsonObject table1(final CostModel model, final int inFlight, final double theta) throws Exception {
        return table1(model, inFlight, theta, 100_000, 1_000_000);
    }

    private JsonObject table1(final CostModel model, final int inFlight, final double theta, final long warmupNs,
                              final long durationNs) throws Exception {
        final SimResult r = CasSim.simulation(new SimOptions().costModel(model).loopsPerComputeNode(8)
            .clientsPerComputeNode(inFlight).memoryNodes(1).warmupNs(warmupNs).durationNs(durationNs).seed(1),
            new CasSim.Spec(1000, theta)).run(vertx);
        assertThat(r.invariantsOk()).isTrue();
        return r.run().toJson();
    }

    @Test
    void shouldReproduceTable1UniformRowWithTheCalibratedProfile() throws Exception {
        // 8 threads x 2 CASes in flight (Little's law on the paper's row): 1.76 Mops at P50 ~9.1 us (paper 8.4 us).
        final JsonObject run = table1(CostModel.profile(CostModel.PROFILE_CX5_TABLE1), 16, 0);
        assertThat(run.getDouble("committed_per_s") / 1e6).isCloseTo(1.76, within(1.76 * 0.05));
        assertThat(run.getJsonObject("latency_us").getDouble("p50")).isCloseTo(8.4, within(8.4 * 0.15));
    }

    @Test
    void shouldReproduceBothRowsOfTable1WithTheDefaultProfile() throws Exception {
        // 8 threads, one CAS each in flight, 1000 words: the default cx5 gives Table 1's throughput on both rows.
        final JsonObject uniform = table1(CostModel.cx5(), 8, 0);
        final JsonObject zipf = table1(CostModel.cx5(), 8, 0.99);
        final double[][] paper = CasSim.PAPER_TABLE_1;
        assertThat(uniform.getDouble("committed_per_s") / 1e6).isCloseTo(paper[0][2], within(paper[0][2] * 0.15));
        assertThat(zipf.getDouble("committed_per_s") / 1e6).isCloseTo(paper[1][2], within(paper[1][2] * 0.15));
        // the conflict hold shows where the paper's does: in the tail of the Zipf row, not at its median
        assertThat(zipf.getJsonObject("latency_us").getDouble("p90"))
            .isGreaterThan(5 * uniform.getJsonObject("latency_us").getDouble("p90"));
    }

    @Test
    void shouldReproduceBothTable1ThroughputsAndTheZipfTailWithThePcieScaleQueuedHold() throws Exception {
        // cx5-queue: no 18 us constant; a conflicting CAS holds its word 600 ns + 2.4 us per CAS it finds there
        // (itself included). The hot word's queue then feeds on itself: Table 1's Zipf row collapses, the uniform row
        // (conflicts ~0.1 %) does not.
        final CostModel queue = CostModel.profile(CostModel.PROFILE_CX5_QUEUE);
        // the documented run (conf/fabric/cx5-queue.yaml): the hot word's queue takes a while to build and then holds
        final JsonObject uniform = table1(queue, 8, 0, 200_000, 4_000_000);
        final JsonObject zipf = table1(queue, 8, 0.99, 200_000, 4_000_000);
        final double[][] paper = CasSim.PAPER_TABLE_1;
        assertThat(uniform.getDouble("committed_per_s") / 1e6).isCloseTo(paper[0][2], within(paper[0][2] * 0.15));
        assertThat(zipf.getDouble("committed_per_s") / 1e6).isCloseTo(paper[1][2], within(paper[1][2] * 0.15));
        // the Zipf row's P90 (72.9 us) is a hot-word CAS that waited in the queue: ours ~84 us (+15 %)
        assertThat(zipf.getJsonObject("latency_us").getDouble("p90")).isCloseTo(paper[1][1], within(paper[1][1] * 0.2));
        // the uniform row's P90 is not: no queue forms there (ours 4.5 us, paper 16.3 us; see the next test)
        assertThat(uniform.getJsonObject("latency_us").getDouble("p90")).isLessThan(paper[0][1] / 3);
        // same perftest ratio: the mechanism only acts on a word that has a queue
        assertThat(perftest(queue, CasSim.Verb.CAS))
            .isCloseTo(CasSim.LOTUS_CAS_MOPS, within(CasSim.LOTUS_CAS_MOPS * 0.15));
    }

    @Test
    void shouldShowThatTable1CannotHaveOneCasPerThreadInFlight() {
        // Little's law on the paper's own uniform row: 8 threads with one CAS each in flight at 1.76 Mops have a mean
        // latency of 8 / 1.76 = 4.55 us; but with P50 8.4 us and P90 16.3 us the mean is at least 0.4 x 8.4 + 0.1 x
        // 16.3 = 4.99 us. So Table 1's latencies and throughput are not one closed loop of 8 one-CAS threads: no NIC
        // model fits all six numbers with 8 in flight, and the fits here match the throughputs (what protocols pay).
        final double[] uniform = CasSim.PAPER_TABLE_1[0];
        final double meanWithEightInFlight = 8 / uniform[2];
        final double meanAtLeast = 0.4 * uniform[0] + 0.1 * uniform[1];
        assertThat(meanAtLeast).isGreaterThan(meanWithEightInFlight * 1.09);
        // with two per thread (16) the row is consistent: mean 9.1 us next to P50 8.4 us
        assertThat(16 / uniform[2]).isGreaterThan(meanAtLeast).isCloseTo(uniform[0], within(uniform[0] * 0.15));
    }

    @Test
    void shouldReproduceLotusPerftestWriteToCasRatioWithTheDefaultProfile() throws Exception {
        // perftest: many requests in flight against one MN's NIC (4 CNs x 256 here), 8 B WRITE vs 8 B CAS.
        final double write = perftest(CostModel.cx5(), CasSim.Verb.WRITE);
        final double cas = perftest(CostModel.cx5(), CasSim.Verb.CAS);
        assertThat(write).isCloseTo(CasSim.LOTUS_WRITE_MOPS, within(CasSim.LOTUS_WRITE_MOPS * 0.15));
        assertThat(cas).isCloseTo(CasSim.LOTUS_CAS_MOPS, within(CasSim.LOTUS_CAS_MOPS * 0.15));
        final double lotus = CasSim.LOTUS_WRITE_MOPS / CasSim.LOTUS_CAS_MOPS;
        assertThat(write / cas).isCloseTo(lotus, within(lotus * 0.15));
    }

    private double perftest(final CostModel model, final CasSim.Verb verb) throws Exception {
        final SimResult r = CasSim.simulation(new SimOptions().costModel(model).computeNodes(4).loopsPerComputeNode(8)
            .clientsPerComputeNode(64).memoryNodes(1).warmupNs(100_000).durationNs(500_000).seed(1),
            new CasSim.Spec(1000, 0, verb)).run(vertx);
        assertThat(r.invariantsOk()).isTrue();
        return r.run().toJson().getDouble("committed_per_s") / 1e6;
    }

    @Test
    void shouldSaturateAtTheAtomicRateWithThePcieOnlyProfile() throws Exception {
        // cx5-pcie (the default before the Table 1 fit) keeps Lotus' 2.5 Mops and a 2.3 us CAS: 16 in flight
        // saturate the atomic unit, faster than Table 1 says.
        final JsonObject run = table1(CostModel.profile(CostModel.PROFILE_CX5_PCIE), 16, 0);
        assertThat(run.getDouble("committed_per_s") / 1e6).isCloseTo(2.5, within(2.5 * 0.05));
        assertThat(run.getJsonObject("latency_us").getDouble("p50")).isCloseTo(6.4, within(0.5));
    }

    @Test
    void shouldNotReproduceTheZipfRowWithAPcieScaleAddressHold() throws Exception {
        // The known gap (cx5-table1.yaml): with ~600 ns per hot-word CAS the hottest word (13% of draws) caps at
        // ~12 Mops, so the NIC's rate still binds under Zipf 0.99; Table 1's 0.42 Mops is not explained.
        final JsonObject run = table1(CostModel.profile(CostModel.PROFILE_CX5_TABLE1), 16, 0.99);
        assertThat(run.getDouble("committed_per_s") / 1e6).isCloseTo(1.76, within(1.76 * 0.05)); // paper: 0.42
    }

    @Test
    void shouldRefuseBadParameters() {
        assertThatThrownBy(() -> new CasSim.Spec(0, 0)).hasMessageContaining("words=0");
        assertThatThrownBy(() -> new CasSim.Spec(10, -1)).hasMessageContaining("theta=-1");
        assertThatThrownBy(() -> CasSim.Verb.named("read")).hasMessageContaining("cas or write");
    }
}
