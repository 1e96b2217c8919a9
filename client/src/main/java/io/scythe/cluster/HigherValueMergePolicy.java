package io.scythe.cluster;

/**
 * The split-brain merge policy of {@code scythe.epochs} (configured for that map only, in {@code cluster.xml}): of an
 * entry both sides of a split hold, the higher value stays.
 * <p>
 * Every value there is a counter (a CN's last epoch, the slots used) or an incarnation's claim on an epoch or a slot
 * ({@link EpochClaims}). Hazelcast's default ({@code PutIfAbsentMergePolicy}) keeps the larger side's value: a counter
 * the smaller side raised further (a CN restarted there) would go back down, and the next epoch would be one already
 * handed out. With the higher value, a counter only rises across a merge, as it does within one cluster
 * ({@link MapLockStep#raise}). Of two claims on one epoch or slot, exactly one survives, on both sides alike: the
 * incarnation whose claim lost finds it so and leaves ({@link EpochClaims#conflict}). A value that is not a number
 * (none is written there) keeps the existing side's, as the default would.
 */
public final class HigherValueMergePolicy extends KeepRankedMergePolicy {

    /** For Hazelcast, which creates it by its class name. */
    public HigherValueMergePolicy() {
    }

    @Override
    boolean prefersMerging(final Object in, final Object have) {
        return in instanceof Long a && have instanceof Long b && a > b;
    }
}
