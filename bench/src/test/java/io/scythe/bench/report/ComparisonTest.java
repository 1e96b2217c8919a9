package io.scythe.bench.report;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ComparisonTest {
    private static JsonObject run(final String protocol, final int clients, final double perS, final double p99,
                                  final double cpu) {
        return new JsonObject().put("protocol", protocol).put("clients", clients).put("committed_per_s", perS)
            .put("abort_rate", 0.5).put("latency_us", new JsonObject().put("p50", 10.0).put("p99", p99)
                .put("p999", 2 * p99)).put("cpu_us_per_txn", cpu).put("verbs_per_txn", 4.0);
    }

    private static JsonObject results(final JsonObject... runs) {
        return new JsonObject().put("workload", "smallbank").put("runs", new JsonArray(java.util.List.of(runs)));
    }

    @Test
    void shouldPairRunsByProtocolAndClientsAndGiveRatios() {
        final Comparison c = Comparison.of(
            results(run("scythe", 8, 100, 50, 10), run("scythe", 64, 200, 500, 12), run("ford-occ", 8, 80, 60, 9)),
            results(run("scythe", 8, 150, 25, 5), run("scythe", 64, 100, 1000, 12), run("farm-occ", 8, 1, 1, 1)));
        assertThat(c.pairs()).extracting(Comparison.Pair::key)
            .containsExactly("scythe, clients=8", "scythe, clients=64");
        final var eight = c.pairs().get(0).rows();
        assertThat(eight).extracting(Comparison.Row::figure).contains("committed/s", "abort rate", "P99 µs",
            "P99.9 µs", "cpu us per txn", "verbs per txn");
        assertThat(eight.stream().filter(r -> r.figure().equals("committed/s")).findFirst().orElseThrow().ratio())
            .isCloseTo(1.5, within(1e-9));
        assertThat(eight.stream().filter(r -> r.figure().equals("P99 µs")).findFirst().orElseThrow().ratio())
            .isCloseTo(0.5, within(1e-9));
        assertThat(c.pairs().get(1).rows().stream().filter(r -> r.figure().equals("P99.9 µs")).findFirst()
            .orElseThrow().ratio()).isCloseTo(2.0, within(1e-9));
        assertThat(c.unpaired()).containsExactly("A only: ford-occ, clients=8", "B only: farm-occ, clients=8");
        final String md = c.markdown("before", "after");
        assertThat(md).contains("# after against before").contains("| committed/s | 100 | 150 | 1.50× |")
            .contains("- A only: ford-occ, clients=8");
    }

    @Test
    void shouldPairByClientsAloneWhenEachSideRanOneOtherProtocol() {
        final Comparison c = Comparison.of(results(run("ford-occ", 8, 100, 50, 10), run("ford-occ", 64, 90, 80, 10)),
            results(run("scythe", 64, 180, 40, 10), run("scythe", 8, 120, 50, 10)));
        assertThat(c.pairs()).extracting(Comparison.Pair::key)
            .containsExactly("ford-occ vs scythe, clients=8", "ford-occ vs scythe, clients=64");
        assertThat(c.pairs().get(1).rows().get(0).ratio()).isCloseTo(2.0, within(1e-9));
        assertThat(c.unpaired()).isEmpty();
    }

    @Test
    void shouldShowNoRatioAgainstZeroAndRefuseWhatIsNotResults() {
        final Comparison c = Comparison.of(results(run("scythe", 8, 0, 50, 10)), results(run("scythe", 8, 5, 50, 10)));
        assertThat(c.pairs().get(0).rows().get(0).ratio()).isNaN();
        assertThat(c.markdown("a", "b")).contains("| committed/s | 0 | 5 | – |");
        assertThatThrownBy(() -> Comparison.of(new JsonObject().put("workload", "x"), results()))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no \"runs\" array");
    }
}
