package io.scythe.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Aurogon's TPC-C variants (ATC'23 §6.1): the /N and /NP mixes, the home warehouse per server or loop; SELCC Fig. 19a's
 * read-only and update mixes.
 */
class TpccMixTest {
    private static TpccSpec spec(final TpccSpec.Mix mix, final TpccSpec.Home home, final int warehouses) {
        return new TpccSpec(new Tpcc.Scale(warehouses, 30, 100, TpccSpec.headroomFor(0)), 0.99, 1, mix, 0.5, home);
    }

    private static Map<String, Integer> types(final TpccSpec spec, final int n) {
        final SplittableRandom r = new SplittableRandom(7);
        final Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < n; i++) {
            counts.merge(spec.draw(r, i % 5, i % 20).type(), 1, Integer::sum);
        }
        return counts;
    }

    @Test
    void shouldDrawOnlyNewOrdersForTpccN() {
        assertThat(types(spec(TpccSpec.Mix.N, TpccSpec.Home.RANDOM, 5), 2_000)).containsOnlyKeys("NewOrder");
    }

    @Test
    void shouldDrawNewOrderAndPaymentAt45To43ForTpccNp() {
        final Map<String, Integer> counts = types(spec(TpccSpec.Mix.NP, TpccSpec.Home.RANDOM, 5), 20_000);
        assertThat(counts).containsOnlyKeys("NewOrder", "Payment");
        assertThat(counts.get("NewOrder") / 20_000.0).isBetween(0.49, 0.53); // 45/88 = 0.511
    }

    /** SELCC Fig. 19a's read-only (T3, T5) and update (T1, T2, T4) mixes. */
    @Test
    void shouldDrawFig19asReadOnlyAndUpdateMixes() {
        final Map<String, Integer> ro = types(spec(TpccSpec.Mix.RO, TpccSpec.Home.RANDOM, 5), 20_000);
        assertThat(ro).containsOnlyKeys("OrderStatus", "StockLevel");
        assertThat(ro.get("OrderStatus") / 20_000.0).isBetween(0.48, 0.52);
        final Map<String, Integer> rw = types(spec(TpccSpec.Mix.RW, TpccSpec.Home.RANDOM, 5), 20_000);
        assertThat(rw).containsOnlyKeys("NewOrder", "Payment", "Delivery");
        assertThat(rw.get("Delivery") / 20_000.0).isBetween(0.035, 0.052); // 4/92 = 0.043
        assertThat(rw.get("NewOrder") / 20_000.0).isBetween(0.47, 0.51); // 45/92 = 0.489
        assertThat(TpccSpec.Mix.of("ro")).isEqualTo(TpccSpec.Mix.RO);
    }

    @Test
    void shouldBindTheHomeWarehouseToTheServerOrTheLoop() {
        final SplittableRandom r = new SplittableRandom(1);
        final TpccSpec perServer = spec(TpccSpec.Mix.N, TpccSpec.Home.SERVER, 5);
        final TpccSpec perLoop = spec(TpccSpec.Mix.N, TpccSpec.Home.LOOP, 20);
        for (int i = 0; i < 100; i++) {
            assertThat(perServer.draw(r, 3, i).routingKey()).isEqualTo(4);
            assertThat(perLoop.draw(r, i % 5, 17).routingKey()).isEqualTo(18);
        }
        assertThatThrownBy(() -> perServer.draw(r)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("needs the client's node and loop");
    }

    @Test
    void shouldRefuseBadMixesHomesAndRatios() {
        assertThatThrownBy(() -> TpccSpec.Mix.of("nop")).hasMessageContaining("available: standard, n, np");
        assertThatThrownBy(() -> TpccSpec.Home.of("rack")).hasMessageContaining("available: random, server, loop");
        assertThatThrownBy(() -> new TpccSpec(new Tpcc.Scale(1, 30, 100, 10_000), 0.99, 1, TpccSpec.Mix.N, 1.5,
            TpccSpec.Home.RANDOM)).hasMessageContaining("--local-item-ratio 1.5");
    }
}
