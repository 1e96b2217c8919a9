package io.scythe.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

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

    @Test
    void shouldDrawDistinctKeysInBoundedTimeFromBarelyEnoughRecords() {
        // 4 keys of 5 records: the scrambled Zipf ranks reach only some keys, so redrawing alone looped forever. The
        // bound is a hang guard, not a speed check: under 3 s in CI, over 20 s beside recovery's node JVMs at load ~40.
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(120), () -> {
            for (final double theta : new double[] {0, 0.99, 5}) {
                for (final int[] shape : new int[][] {{5, 4}, {4, 4}, {64, 64}, {100, 10}}) {
                    final YcsbSpec spec = new YcsbSpec(shape[0], theta, shape[1], 0.7);
                    final SplittableRandom random = new SplittableRandom(7);
                    final java.util.Set<Long> seen = new java.util.HashSet<>();
                    for (int t = 0; t < 5_000; t++) {
                        final long[] keys = spec.plan(random).keys();
                        assertThat(keys).hasSize(shape[1]).doesNotHaveDuplicates();
                        for (final long k : keys) {
                            assertThat(k).isBetween(0L, shape[0] - 1L);
                            seen.add(k);
                        }
                    }
                    if (shape[0] == 5) {
                        assertThat(seen).as("every key of 5 is drawn at theta " + theta).hasSize(5);
                    }
                }
            }
        });
    }

    @Test
    void shouldKeepTheZipfSkewWhereRedrawsSuffice() {
        // 1000 records: the stand-in key is almost never needed, and the hottest key leads as Zipf(0.99) says.
        final YcsbSpec spec = new YcsbSpec(1000, 0.99, 4, 0.7);
        final Zipf zipf = new Zipf(1000, 0.99);
        final SplittableRandom random = new SplittableRandom(5);
        final java.util.Map<Long, Integer> counts = new java.util.HashMap<>();
        for (int t = 0; t < 20_000; t++) {
            for (final long k : spec.plan(random).keys()) {
                counts.merge(k, 1, Integer::sum);
            }
        }
        final int max = counts.values().stream().max(Integer::compare).orElseThrow();
        final double expected = 1 - Math.pow(1 - zipf.probability(0), 4); // rank 0 among 4 draws
        assertThat(max / 20_000.0).as("share of transactions with the hottest key")
            .isCloseTo(expected, org.assertj.core.data.Offset.offset(0.05));
    }

    @Test
    void shouldRefuseMoreKeysPerTransactionThanRecordsNamingTheOptions() {
        assertThatThrownBy(() -> new YcsbSpec(3, 0.99, 4, 0.7)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--ops 4 is more than --records 3: a transaction's keys are distinct");
        assertThatThrownBy(() -> new YcsbSpec(100, 0.99, 0, 0.7)).hasMessageContaining("--ops 0 must be within");
    }
}
