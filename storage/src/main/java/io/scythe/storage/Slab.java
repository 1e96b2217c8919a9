package io.scythe.storage;

import io.scythe.fabric.MemoryRegion;
import org.agrona.collections.LongArrayList;

/**
 * Fixed-size slots carved from one registered region: a bump pointer, then a free list of returned slots. Used by
 * the memory node's CPU under its table's writer lock.
 */
final class Slab {
    private final MemoryRegion region;
    private final int slotBytes;
    private final long slots;
    private final LongArrayList free = new LongArrayList();
    private long bumped;

    Slab(final MemoryRegion region, final int slotBytes) {
        this.region = region;
        this.slotBytes = slotBytes;
        this.slots = region.length() / slotBytes;
    }

    /** Offset of a free slot in the region, or -1 when the slab is full. */
    long allocate() {
        if (!free.isEmpty()) {
            return free.removeAt(free.size() - 1);
        }
        if (bumped == slots) {
            return -1;
        }
        return slotBytes * bumped++;
    }

    void free(final long offset) {
        free.addLong(offset);
    }

    long used() {
        return bumped - free.size();
    }

    long capacity() {
        return slots;
    }

    int slotBytes() {
        return slotBytes;
    }

    MemoryRegion region() {
        return region;
    }

    /** Slots handed out at least once (their headers hold meaningful incarnations). */
    long touched() {
        return bumped;
    }
}
