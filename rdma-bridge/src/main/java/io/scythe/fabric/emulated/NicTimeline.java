package io.scythe.fabric.emulated;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.MemoryKind;
import org.agrona.BitUtil;
import org.agrona.concurrent.AtomicBuffer;

/**
 * The shared timing state of one virtual NIC: for each resource that serialises work on real hardware, the clock
 * time at which it next falls free. Requesters on any thread (and, over shared memory, in any process) reserve a
 * resource with a CAS on its word, so work queues first come, first served, exactly where the hardware queues.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  TX port free at (ns, 64 bit)               + 56 B padding     |  offset 0    egress link: requests and responses
 *  +---------------------------------------------------------------+
 *  |  responder unit free at                     + 56 B padding     |  offset 64   inbound READ/WRITE/SEND processing
 *  +---------------------------------------------------------------+
 *  |  atomic unit (host memory) free at          + 56 B padding     |  offset 128
 *  +---------------------------------------------------------------+
 *  |  atomic unit (device memory) free at        + 56 B padding     |  offset 192
 *  +---------------------------------------------------------------+
 *  |  address bucket 0 free at | bucket 1 | ... | bucket n-1        |  offset 256  per-address atomic locks
 *  +---------------------------------------------------------------+
 *  |  QP cache: entry 0 | entry 1 | ... | entry m-1  (QP ids, u64)  |  after the buckets: direct-mapped
 *  +---------------------------------------------------------------+
 * </pre>
 * Each word on its own cache line, so requesters reserving different resources do not slow each other down.
 */
public final class NicTimeline {
    public static final int TX_PORT_OFFSET = 0;
    public static final int RESPONDER_UNIT_OFFSET = 64;
    public static final int ATOMIC_UNIT_HOST_OFFSET = 128;
    public static final int ATOMIC_UNIT_DEVICE_OFFSET = 192;
    public static final int BUCKETS_OFFSET = 256;

    private final AtomicBuffer buffer;
    private final int bucketMask;
    private final int qpCacheOffset;
    private final int qpCacheEntries;

    /**
     * @param buffer at least {@link #length(int, int)} bytes, 8-byte aligned, zeroed or left by an earlier timeline
     */
    public NicTimeline(final AtomicBuffer buffer, final int buckets, final int qpCacheEntries) {
        if (Integer.bitCount(buckets) != 1) {
            throw new IllegalArgumentException("buckets=" + buckets + " must be a power of two");
        }
        if (buffer.capacity() < length(buckets, qpCacheEntries)) {
            throw new IllegalArgumentException("timeline buffer capacity=" + buffer.capacity() + " < "
                + length(buckets, qpCacheEntries));
        }
        buffer.verifyAlignment();
        this.buffer = buffer;
        this.bucketMask = buckets - 1;
        this.qpCacheOffset = BUCKETS_OFFSET + buckets * Long.BYTES;
        this.qpCacheEntries = qpCacheEntries;
    }

    public NicTimeline(final AtomicBuffer buffer, final CostModel model) {
        this(buffer, model.atomicBuckets(), model.qpCacheEntries());
    }

    /** Bytes a timeline with {@code buckets} address buckets and a QP cache of {@code qpCacheEntries} needs. */
    public static int length(final int buckets, final int qpCacheEntries) {
        return BUCKETS_OFFSET + (buckets + qpCacheEntries) * Long.BYTES;
    }

    public static int length(final CostModel model) {
        return length(model.atomicBuckets(), model.qpCacheEntries());
    }

    /**
     * Looks the context of queue pair {@code qpId} up in this NIC's QP cache (direct-mapped, as a cheap stand-in
     * for the NIC's), installing it on a miss.
     *
     * @return whether it missed (the request pays a PCIe round trip to fetch the context)
     */
    public boolean qpContextMiss(final long qpId) {
        if (qpCacheEntries == 0) {
            return false;
        }
        final int entry = qpCacheOffset + (int) Long.remainderUnsigned(qpId * 0x9E3779B97F4A7C15L, qpCacheEntries)
            * Long.BYTES;
        if (buffer.getLongVolatile(entry) == qpId) {
            return false;
        }
        buffer.putLongVolatile(entry, qpId);
        return true;
    }

    /**
     * Reserves the resource whose word is at {@code offset} for {@code durationNs}, starting no earlier than
     * {@code readyAtNs}.
     *
     * @return the reservation's start time
     */
    public long reserve(final int offset, final long readyAtNs, final long durationNs) {
        long free = buffer.getLongVolatile(offset);
        while (true) {
            final long start = Math.max(free, readyAtNs);
            final long witness = buffer.compareAndExchangeLong(offset, free, start + durationNs);
            if (witness == free) {
                return start;
            }
            free = witness;
        }
    }

    public static int atomicUnitOffset(final MemoryKind kind) {
        return kind == MemoryKind.DEVICE ? ATOMIC_UNIT_DEVICE_OFFSET : ATOMIC_UNIT_HOST_OFFSET;
    }

    /** Word of the address bucket that serialises atomics on the 8-byte word at {@code remoteAddress}. */
    public int bucketOffset(final long remoteAddress) {
        long h = remoteAddress >>> 3;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return BUCKETS_OFFSET + (((int) h) & bucketMask) * Long.BYTES;
    }

    /** When the resource at {@code offset} falls free (for tests and diagnostics). */
    public long freeAt(final int offset) {
        return buffer.getLongVolatile(offset);
    }

    static {
        if (!BitUtil.isAligned(BUCKETS_OFFSET, 64)) {
            throw new AssertionError("bucket table must start on a cache line");
        }
    }
}
