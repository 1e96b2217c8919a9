package io.scythe.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The YCSB profiles draw what their papers say; RCC's hot-area profile in particular (RCC §6.1). */
class YcsbSpecTest {
    @Test
    void shouldDrawRccHotAreaProfile() {
        final long records = 1_000_000;
        final YcsbSpec spec = YcsbSpec.profile("hot-area", records, 0.99, null, null, YcsbSpec.RCC_HOT_PROBABILITY);
        assertThat(spec.params().getLong("hot_keys")).isEqualTo(1000); // 0.1 % of the records
        assertThat(spec.params().getInteger("ops_per_txn")).isEqualTo(10);
        assertThat(spec.params().getInteger("writes_per_txn")).isEqualTo(2);
        final SplittableRandom random = new SplittableRandom(11);
        final int txns = 40_000;
        long hot = 0;
        final int[] hotKeyCounts = new int[1000];
        for (int t = 0; t < txns; t++) {
            final YcsbSpec.Plan plan = spec.plan(random);
            assertThat(plan.keys()).hasSize(10).doesNotHaveDuplicates();
            int writes = 0;
            for (int i = 0; i < 10; i++) {
                final long k = plan.keys()[i];
                assertThat(k).isBetween(0L, records - 1);
                writes += plan.writes()[i] ? 1 : 0;
                if (spec.isHot(k)) {
                    hot++;
                    hotKeyCounts[(int) k]++;
                }
            }
            assertThat(writes).isEqualTo(2); // 20 % of 10, every transaction
            assertThat(plan.writesCount()).isEqualTo(2);
        }
        final double ops = txns * 10.0;
        // 10 % of the operations in the hot area: 5 sigma is +-0.0034 at 400,000 operations.
        assertThat(hot / ops).isBetween(0.0966, 0.1034);
        // Uniform within the hot area: 40 visits per hot key expected, none starved or hogging.
        for (final int n : hotKeyCounts) {
            assertThat(n).isBetween(10, 85);
        }
    }

    @Test
    void shouldFollowTheHotAccessProbabilityAndOverrides() {
        final YcsbSpec spec = YcsbSpec.profile("hot-area", 100_000, 0.99, 5, 0.4, 0.9); // RCC Fig. 10's 90 %
        final SplittableRandom random = new SplittableRandom(3);
        long hot = 0;
        for (int t = 0; t < 20_000; t++) {
            final YcsbSpec.Plan plan = spec.plan(random);
            assertThat(plan.keys()).hasSize(5);
            assertThat(plan.writesCount()).isEqualTo(2);
            for (final long k : plan.keys()) {
                hot += spec.isHot(k) ? 1 : 0;
            }
        }
        assertThat(hot / 100_000.0).isBetween(0.89, 0.91);
    }

    @Test
    void shouldKeepTheZipfProfilesAndRejectBadOnes() {
        final YcsbSpec standard = YcsbSpec.profile("standard", 1000, 0.5, null, null, 0.1);
        assertThat(standard.params().getDouble("write_ratio")).isEqualTo(0.7);
        assertThat(standard.params().getInteger("ops_per_txn")).isEqualTo(4);
        assertThat(standard.params().getDouble("theta")).isEqualTo(0.5);
        assertThat(YcsbSpec.profile("write-only", 1000, 0.5, null, null, 0.1).params().getDouble("write_ratio"))
            .isEqualTo(1.0);
        assertThatThrownBy(() -> YcsbSpec.profile("hot", 1000, 0.5, null, null, 0.1))
            .hasMessageContaining("unknown YCSB profile 'hot'").hasMessageContaining("hot-area");
        // 0.1 % of 1000 records is one hot key: too few for the 10 distinct keys of a transaction.
        assertThatThrownBy(() -> YcsbSpec.profile("hot-area", 1000, 0.5, null, null, 0.1))
            .hasMessageContaining("cannot each hold the 10 distinct keys");
        assertThatThrownBy(() -> YcsbSpec.profile("hot-area", 1_000_000, 0.5, null, null, 1.5))
            .hasMessageContaining("hot probability=1.5");
    }
}
