package io.scythe.cluster;

/**
 * The split-brain merge policy of the maps holding one epoch-numbered document (configured in {@code cluster.xml}):
 * {@code scythe.mnconfig}, the memory-node configuration, and {@code scythe.routing}, the shard map. Each value is the
 * JSON text its writer encoded with a numeric {@code epoch}, and each is only ever replaced by compare-and-set with the
 * next epoch: of an entry both sides of a split hold, the one with the higher epoch stays (issue 18). Hazelcast's
 * default ({@code PutIfAbsentMergePolicy}) keeps the larger side's value, so a configuration the smaller side moved on
 * (a memory node removed there, its backups promoted and written to) would go back to an older one on every member:
 * copies that stopped serving would serve again, missing what was written since. At equal epochs (one writer per
 * epoch within a side; two sides that each wrote that epoch cannot both be kept) the existing side's stays, as the
 * default would; a value with no readable epoch ranks below every readable one.
 */
public final class HigherEpochMergePolicy extends KeepRankedMergePolicy {

    /** For Hazelcast, which creates it by its class name. */
    public HigherEpochMergePolicy() {
    }

    @Override
    boolean prefersMerging(final Object in, final Object have) {
        return epochOf(in) > epochOf(have);
    }

    /** The {@code epoch} of a JSON text, or -1 when it is none (not text, not JSON, no numeric epoch). */
    static long epochOf(final Object value) {
        if (!(value instanceof String text)) {
            return -1;
        }
        try {
            final Object epoch = new io.vertx.core.json.JsonObject(text).getValue("epoch");
            return epoch instanceof Number n ? n.longValue() : -1;
        } catch (final RuntimeException notJson) {
            return -1;
        }
    }
}
