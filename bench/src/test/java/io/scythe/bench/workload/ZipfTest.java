package io.scythe.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ZipfTest {
    @Test
    void shouldDrawRanksWithTheirZipfProbabilities() {
        for (final double theta : new double[] {0, 0.99, 1.2}) {
            final Zipf zipf = new Zipf(1000, theta);
            final SplittableRandom random = new SplittableRandom(7);
            final int[] counts = new int[1000];
            final int draws = 400_000;
            for (int i = 0; i < draws; i++) {
                counts[zipf.next(random)]++;
            }
            for (final int rank : new int[] {0, 1, 9, 500}) {
                final double expected = zipf.probability(rank) * draws;
                assertThat((double) counts[rank]).as("theta %s rank %d", theta, rank)
                    .isBetween(expected - 5 * Math.sqrt(expected) - 1, expected + 5 * Math.sqrt(expected) + 1);
            }
        }
        // theta 0.99 over 1000 keys: the hottest key takes about 13 % (H(1000, 0.99) ~ 7.5).
        assertThat(new Zipf(1000, 0.99).probability(0)).isBetween(0.12, 0.14);
    }

    /** The guide table draws exactly what the binary search of the cumulative distribution drew, draw for draw. */
    @Test
    void shouldDrawTheRankABinarySearchWouldFind() {
        for (final double theta : new double[] {0, 0.5, 0.99, 3}) {
            for (final int n : new int[] {1, 2, 7, 1000, 100_000}) {
                final double[] cdf = new double[n]; // built as Zipf builds it
                double sum = 0;
                for (int i = 0; i < n; i++) {
                    sum += Math.pow(i + 1, -theta);
                    cdf[i] = sum;
                }
                for (int i = 0; i < n; i++) {
                    cdf[i] /= sum;
                }
                cdf[n - 1] = 1.0;
                final Zipf zipf = new Zipf(n, theta);
                final SplittableRandom random = new SplittableRandom(11);
                final SplittableRandom same = new SplittableRandom(11);
                for (int d = 0; d < 20_000; d++) {
                    final int i = java.util.Arrays.binarySearch(cdf, same.nextDouble());
                    final int expected = i >= 0 ? i : Math.min(-i - 1, n - 1);
                    assertThat(zipf.next(random)).as("theta %s n %d draw %d", theta, n, d).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void shouldScrambleWithinRangeAndRefuseBadParameters() {
        final Zipf zipf = new Zipf(100, 0.9);
        final SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < 10_000; i++) {
            assertThat(zipf.scrambled(random)).isBetween(0, 99);
        }
        assertThatThrownBy(() -> new Zipf(0, 0.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Zipf(10, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Zipf(10, Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }
}
