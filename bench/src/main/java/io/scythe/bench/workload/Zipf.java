package io.scythe.bench.workload;

import java.util.SplittableRandom;

/**
 * Zipf-distributed ranks in {@code [0, n)}: rank r is drawn with probability proportional to {@code 1/(r+1)^theta},
 * for any {@code theta >= 0} (0 is uniform; the papers use 0.5-1.2). Exact, by inverting the cumulative
 * distribution held in a table ({@code 8n} bytes, built once) through a guide table ({@code 4n} bytes: the first
 * rank of each of {@code n} equal slices of [0, 1), Chen and Asau's indexed search), so a draw is a jump and a step
 * or two, not a binary search whose every probe misses the cache (it was 7 % of the driver loop's CPU at 100,000
 * keys). Rank 0 is the hottest;
 * {@link #scrambled} spreads the hot ranks over the key space, as YCSB does, so that hot keys are not neighbours.
 * Immutable and thread-safe; each caller brings its own random source.
 */
public final class Zipf {
    private final double theta;
    private final double[] cdf;
    /** guide[k]: the smallest rank whose cumulative probability reaches k / guide.length. */
    private final int[] guide;

    public Zipf(final int n, final double theta) {
        if (n <= 0) {
            throw new IllegalArgumentException("n=" + n + " must be positive");
        }
        if (!(theta >= 0 && theta <= 10)) {
            throw new IllegalArgumentException("theta=" + theta + " must be within [0, 10]");
        }
        this.theta = theta;
        cdf = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Math.pow(i + 1, -theta);
            cdf[i] = sum;
        }
        for (int i = 0; i < n; i++) {
            cdf[i] /= sum;
        }
        cdf[n - 1] = 1.0;
        guide = new int[n];
        int rank = 0;
        for (int k = 0; k < n; k++) {
            final double from = (double) k / n;
            while (cdf[rank] < from) {
                rank++;
            }
            guide[k] = rank;
        }
    }

    /** A rank: 0 is the most frequent. */
    public int next(final SplittableRandom random) {
        final double u = random.nextDouble();
        // The smallest rank whose cumulative probability reaches u (what a binary search of cdf for u finds).
        int i = guide[Math.min((int) (u * guide.length), guide.length - 1)];
        while (cdf[i] < u) {
            i++;
        }
        return i;
    }

    /** A rank mapped through a fixed permutation-like hash onto {@code [0, n)}: hot keys spread out. */
    public int scrambled(final SplittableRandom random) {
        final long h = (next(random) + 1L) * 0x9E3779B97F4A7C15L;
        return (int) Long.remainderUnsigned(h ^ (h >>> 29), cdf.length);
    }

    /** A multiplier coprime with {@code records}: {@link #scatter} is then a bijection of {@code [0, records)}. */
    public static long scatterMultiplier(final long records) {
        long m = 0x9E3779B1L % Math.max(1, records);
        while (records > 1 && java.math.BigInteger.valueOf(m).gcd(java.math.BigInteger.valueOf(records)).intValue()
            != 1) {
            m++;
        }
        return Math.max(1, m);
    }

    /**
     * Rank {@code rank} of {@code records} to a key index, a bijection ({@code multiplier} from
     * {@link #scatterMultiplier}): the hot ranks are not neighbours (the simulator's B-link tree, the GCL lines).
     */
    public static long scatter(final long rank, final long records, final long multiplier) {
        return Math.floorMod(rank * multiplier, records); // both below 2^31 (YCSB's bound): no overflow
    }

    /** Probability of rank {@code r}. */
    public double probability(final int r) {
        return r == 0 ? cdf[0] : cdf[r] - cdf[r - 1];
    }

    public int n() {
        return cdf.length;
    }

    public double theta() {
        return theta;
    }
}
