package io.scythe.bench.workload;

import java.util.List;
import java.util.SplittableRandom;
import java.util.function.ToIntFunction;

/** Picks one of a workload mix's transaction types with probability proportional to its weight. */
public final class WeightedPick {
    private WeightedPick() {
    }

    public static <T> T pick(final List<T> mix, final ToIntFunction<T> weight, final SplittableRandom random) {
        int total = 0;
        for (final T t : mix) {
            total += weight.applyAsInt(t);
        }
        int r = random.nextInt(total);
        for (final T t : mix) {
            r -= weight.applyAsInt(t);
            if (r < 0) {
                return t;
            }
        }
        return mix.get(mix.size() - 1);
    }
}
