package io.scythe.storage;

import io.scythe.fabric.RemoteRegion;

/**
 * Where a table's data is on its memory node: what a compute node needs to address it with one-sided verbs (and
 * caches). {@code versions} is {@code null} when the table keeps no older versions.
 */
public record TableDescriptor(TableSchema schema, RemoteRegion objects, RemoteRegion index, RemoteRegion versions,
                              int hashBuckets) {

    /** Bytes of one object slot (header plus the largest value). */
    public int objectSlotBytes() {
        return ObjectLayout.slotBytes(schema.maxValueBytes());
    }

    /** Remote address of the absent bound in the index region's trailer ({@link IndexRegionLayout}). */
    public long absentBoundAddress() {
        return index.address() + IndexRegionLayout.absentBoundOffset(index.length());
    }

    /** Remote address of the home bucket of {@code key} plus {@code probe} (hash index only). */
    public long bucketAddress(final long key, final int probe) {
        final int home = HashIndexLayout.homeBucket(key, hashBuckets);
        return index.address() + HashIndexLayout.bucketOffset(home, probe, hashBuckets);
    }
}
