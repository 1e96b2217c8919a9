package io.scythe.storage;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import org.agrona.concurrent.AtomicBuffer;

/**
 * The reclamation horizon of a memory node: one 8-byte slot per compute node, into which that node RDMA-WRITEs the
 * start timestamp of its oldest live transaction (0 when it has none). No transaction reads below the smallest
 * non-zero slot, so versions only older readers could see may be reclaimed ({@link Table#reclaim}).
 *
 * <pre>
 *   slot i (offset 8 x i): u64 oldest live start timestamp of compute node i, 0 = none
 * </pre>
 */
public final class HorizonBoard {
    public static final String REGION = "horizon";
    public static final int SLOTS = 256;

    private final MemoryRegion region;
    private final AtomicBuffer slots;

    public HorizonBoard(final Nic nic) {
        this.region = nic.register(REGION, SLOTS * Long.BYTES, MemoryKind.HOST);
        this.slots = region.buffer();
    }

    public MemoryRegion region() {
        return region;
    }

    /** Offset of compute node {@code index}'s slot. */
    public static int slotOffset(final int index) {
        if (index < 0 || index >= SLOTS) {
            throw new IllegalArgumentException("horizon slot " + index + " out of [0, " + SLOTS + ")");
        }
        return index * Long.BYTES;
    }

    /** The smallest announced timestamp, or {@code whenIdle} when no compute node has a live transaction. */
    public long horizon(final long whenIdle) {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < SLOTS; i++) {
            final long ts = slots.getLongVolatile(i * Long.BYTES);
            if (ts != 0 && ts < min) {
                min = ts;
            }
        }
        return min == Long.MAX_VALUE ? whenIdle : min;
    }

    /** Clears a compute node's slot (it left, or recovery cleaned up after it). */
    public void clear(final int index) {
        slots.putLongVolatile(slotOffset(index), 0);
    }
}
