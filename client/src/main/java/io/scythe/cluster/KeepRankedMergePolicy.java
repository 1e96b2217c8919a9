package io.scythe.cluster;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.spi.merge.MergingValue;
import com.hazelcast.spi.merge.SplitBrainMergePolicy;

/**
 * What Scythe's split-brain merge policies share: an entry only one side holds is kept; of an entry both sides hold,
 * the merging side's value replaces the existing one only when {@link #prefersMerging} says so. Stateless, as
 * Hazelcast creates each by its class name.
 */
abstract class KeepRankedMergePolicy implements SplitBrainMergePolicy<Object, MergingValue<Object>, Object> {

    @Override
    public final Object merge(final MergingValue<Object> merging, final MergingValue<Object> existing) {
        if (existing == null) {
            return merging.getRawValue();
        }
        if (merging == null) {
            return existing.getRawValue();
        }
        return prefersMerging(merging.getDeserializedValue(), existing.getDeserializedValue())
            ? merging.getRawValue() : existing.getRawValue();
    }

    /** Whether the merging side's value {@code in} replaces the existing side's {@code have}. */
    abstract boolean prefersMerging(Object in, Object have);

    @Override
    public final void writeData(final ObjectDataOutput out) {
        // stateless
    }

    @Override
    public final void readData(final ObjectDataInput in) {
        // stateless
    }
}
